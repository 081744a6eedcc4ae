// Load each GGUF file given with llama.cpp (node-llama-cpp 3.22.1's prebuilt CPU library, installed by
// `scripts/convert-ref.sh --llama` into build/convert-ref/llama/, where this file is copied), tokenize a short text,
// evaluate it and sample 4 tokens greedily. Prints "OK FILE ..." or "FAIL FILE: why" per file, then
// "N passed, N failed"; exits 1 if any failed.
//
//   node build/convert-ref/llama/llama_load_check.mjs OUT1.gguf OUT2.gguf ...
import { getLlama } from "node-llama-cpp";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const model = await llama.loadModel({ modelPath: file });
    const context = await model.createContext({ contextSize: 64 });
    const sequence = context.getSequence();
    const tokens = model.tokenize("Hello world, 12345!");
    const generated = [];
    for await (const token of sequence.evaluate(tokens, { temperature: 0 })) {
      generated.push(token);
      if (generated.length >= 4) break;
    }
    console.log(`OK ${file}: ${tokens.length} tokens in, generated ${generated.join(",")}`);
    await context.dispose();
    await model.dispose();
    passed++;
  } catch (e) {
    console.log(`FAIL ${file}: ${String(e).slice(0, 400)}`);
    failed++;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
