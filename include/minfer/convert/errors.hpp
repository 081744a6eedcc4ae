#pragma once
// minfer::convert's own error codes: what is wrong with a Hugging Face checkpoint given to `minfer
// convert` (its safetensors files, its index, its config.json, its tokenizer files). Constants of gguf::errc in domain 8
// (the high byte), so that adding one changes this header only: src/convert/errors.cpp names and
// describes them, and the variable below registers them with the loader in every program that
// includes this header (docs/ERRORS.md lists them; toolbox/exit_code.cpp classifies each).
//
// Every error of this library says where: `file` (the path), `offset` (the absolute byte of the
// offending value in that file: a JSON value's first character, the header length's first byte),
// `subject` (the tensor name, the config key or the shard), `expected`/`found` where numbers say it,
// and `detail` (why, in words, with the offending text escaped).
#include <cstdint>

#include "minfer/gguf/error.hpp"

namespace minfer::convert {

/// The domain of this library's codes (the loader's `domains` stop at 6, the C API is 7).
inline constexpr std::uint8_t error_domain_id = 8;

namespace codes {
/// a safetensors file that is not what the format says: shorter than its 8-byte header length, a
/// header length above 100,000,000 bytes or past the end of the file, a header that is not one JSON
/// object (syntax, duplicate keys, a UTF-8 BOM, nesting), a tensor entry with a field missing, unknown
/// or of the wrong kind, an unknown dtype name, a shape whose element count overflows or whose byte
/// size (elements × dtype size) is not its data_offsets range, offsets reversed, past the data, or
/// not covering the data section exactly (overlaps, holes, bytes after the last tensor), a duplicate
/// tensor name. subject = the tensor (or `__metadata__`), offset = the offending value in the header,
/// expected/found per case (docs/ERRORS.md)
inline constexpr gguf::errc bad_safetensors = gguf::make_code(error_domain_id, 1);
/// a valid safetensors tensor whose dtype the converter does not read (F8_E4M3, F8_E5M2, U16, C64, …);
/// subject = the tensor, detail names the dtype and the supported ones, offset = the tensor's entry
inline constexpr gguf::errc unsupported_dtype = gguf::make_code(error_domain_id, 2);
/// config.json missing, not one JSON object, or a field the supported architectures need absent, of the
/// wrong kind or out of range; subject = the key, offset = its value (the object's for an absent one),
/// expected/found for ranges, detail = why
inline constexpr gguf::errc bad_model_config = gguf::make_code(error_domain_id, 3);
/// model.safetensors.index.json that is not an object with a `weight_map` of tensor → shard file names,
/// a shard name that is not a bare file name (a '/', '..', an absolute path), a shard that does not exist
/// or is not a regular file, a tensor the index puts in a shard that does not hold it, a tensor a shard
/// holds that the index does not put there (absent from it, or in two shards); subject = the tensor or
/// the shard, file = the index or the shard, offset = the value in it, detail = why
inline constexpr gguf::errc bad_checkpoint_index = gguf::make_code(error_domain_id, 4);
/// config.json names an architecture the converter does not convert (architectures[0]); subject = the
/// name, detail = the supported ones
inline constexpr gguf::errc unsupported_architecture = gguf::make_code(error_domain_id, 5);
/// a directory with no safetensors weights: no model*.safetensors and no model.safetensors.index.json;
/// detail says when PyTorch pickle files (pytorch_model*.bin) are there instead (never read: loading a
/// pickle runs code)
inline constexpr gguf::errc no_weights = gguf::make_code(error_domain_id, 6);
/// a tokenizer file that is not what its format says, or that the reference could not read. A
/// tokenizer.model that is not sentencepiece's ModelProto (protobuf wire format broken: a varint
/// truncated or longer than 10 bytes, a length past the end of its message, a group or an invalid wire
/// type, a known field of another wire type; a value out of its range: an enum value the schema does
/// not have, a bool other than 0/1, an int32 beyond 32 bits) or that sentencepiece refuses to load (a
/// piece empty or not UTF-8, twice in its class, no or two unknown pieces, byte pieces without
/// byte_fallback or not all 256 with it, a broken normalization map). A tokenizer.json that is not what
/// Hugging Face tokenizers' format says (not JSON, a field missing, unknown or of the wrong kind, a
/// vocabulary id repeated or out of range, a merge whose parts or result are not tokens, an added token
/// whose id is not the one the Rust core would give it). A tokenizer_config.json, added_tokens.json,
/// chat_template.jinja/json that is not JSON or not UTF-8, or holds a value of the wrong kind where the
/// reference reads one. Any of them larger than its cap. file = that file, offset = the offending field
/// (a protobuf field's tag, a JSON value's first byte), subject = the field, key or token, item = the
/// piece's index where one is at fault, detail = why
inline constexpr gguf::errc bad_tokenizer = gguf::make_code(error_domain_id, 7);
/// a checkpoint whose vocabulary the converter does not reproduce although its files may be sound: a
/// tokenizer.json model other than byte-level BPE (WordPiece, Unigram, BPE with byte fallback), a
/// normalizer other than NFC, a pre-tokenizer step, pattern escape, post-processor or decoder it does
/// not implement, a chat template list, a pre-tokenizer whose check hash is not in the table (detail =
/// the hash and the names `--pre` takes); no tokenizer.model where a SentencePiece vocabulary is asked
/// for, a tokenizer.json beside tokenizer.model, tekken.json (Mistral's own format), a tokenizer_class
/// the reference builds otherwise (HybridDNATokenizer); subject = the file, key or hash, detail = why
inline constexpr gguf::errc unsupported_tokenizer = gguf::make_code(error_domain_id, 8);
/// a tensor of the checkpoint that does not fit its architecture: a name the architecture has no GGUF
/// name for (the reference stops: "Can not map tensor"), a block number not below num_hidden_layers, an
/// expert tensor not of the form the reference stacks or a layer's experts incomplete, a shape that
/// does not match config.json (the vocabulary, hidden size, heads, head size, feed-forward or expert
/// sizes), two tensors of one GGUF name; file = its shard, offset = its header entry, subject = its
/// name, detail = why
inline constexpr gguf::errc bad_tensor = gguf::make_code(error_domain_id, 9);
/// README.md or generation_config.json holding what convert_hf_to_gguf.py fails on when it reads the
/// general.* metadata (model_metadata.hpp): README.md not UTF-8, its YAML front matter not YAML (a second
/// document, a list or mapping as a key, a character the YAML reader refuses, an invalid date) or a value of
/// the wrong type where the reference writes one (a number as the version, a license list of non-strings,
/// tags of mixed types); generation_config.json not UTF-8, JSON that is not an object, a sampling value of
/// the wrong type or beyond 32 bits. Also what is not read here although the reference reads it: YAML
/// anchors, aliases, merge keys and explicit tags, tags or languages of floats, booleans or lists; either
/// file larger than 16 MiB; a --outfile template field other than {ftype}/{outtype}/{FTYPE}/{OUTTYPE}/{}.
/// file = the file, subject = the key (or the key path in the YAML), offset = the JSON value's byte or the
/// README's (0 for YAML: detail gives the line), detail = why
inline constexpr gguf::errc bad_model_card = gguf::make_code(error_domain_id, 10);
}  // namespace codes

/// This library's codes as the loader's to_string and error::description see them.
const gguf::error_domain& errors_domain() noexcept;

namespace detail {
// Registered by every TU that includes this header (every TU that can name a code), before main: one
// atomic store each. Internal linkage on purpose, as in toolbox/errors.hpp: an inline variable's guard
// is one symbol per process, so a second extension module holding its own loader table would skip it.
[[maybe_unused]] static const bool error_domain_registered =
    (gguf::register_error_domain(errors_domain()), true);
}  // namespace detail

}  // namespace minfer::convert
