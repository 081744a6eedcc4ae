#!/usr/bin/env node
// Hugging Face tokenizers' Rust core (npm @anush008/tokenizers, tokenizers 0.22) behind a line protocol,
// for the stub `transformers.AutoTokenizer` of the convert_hf_to_gguf.py reference harness
// (scripts/convert-ref.sh copies this file into build/convert-ref/, beside its node_modules).
//
//   node hf_tokenizer.js TOKENIZER_JSON
//
// Reads one JSON request per line on stdin, writes one JSON answer per line on stdout, in order:
//   {"op":"vocab"}                                   -> {"vocab":{token:id,...}}   (get_vocab(with_added_tokens=true))
//   {"op":"vocab_size","with_added":bool}            -> {"size":n}
//   {"op":"encode","text":s,"add_special_tokens":b}  -> {"ids":[...]}
//   {"op":"decode","ids":[...],"skip_special_tokens":b} -> {"text":s}
//   {"op":"token_to_id","token":s}                   -> {"id":n|null}
// A failed request answers {"error":"..."}; the process ends when stdin closes.
'use strict';
const readline = require('readline');
const { Tokenizer } = require('@anush008/tokenizers');

async function main() {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: hf_tokenizer.js TOKENIZER_JSON\n');
    process.exit(2);
  }
  const tok = Tokenizer.fromFile(file);
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of rl) {
    if (line.length === 0) continue;
    let answer;
    try {
      const req = JSON.parse(line);
      switch (req.op) {
        case 'vocab':
          answer = { vocab: tok.getVocab(true) };
          break;
        case 'vocab_size':
          answer = { size: tok.getVocabSize(!!req.with_added) };
          break;
        case 'encode': {
          const enc = await tok.encode(req.text, null, { addSpecialTokens: !!req.add_special_tokens });
          answer = { ids: enc.getIds() };
          break;
        }
        case 'decode':
          answer = { text: await tok.decode(req.ids, !!req.skip_special_tokens) };
          break;
        case 'token_to_id': {
          const id = tok.tokenToId(req.token);
          answer = { id: id === undefined ? null : id };
          break;
        }
        default:
          answer = { error: `unknown op ${JSON.stringify(req.op)}` };
      }
    } catch (e) {
      answer = { error: String(e && e.stack ? e.stack : e) };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`hf_tokenizer.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
