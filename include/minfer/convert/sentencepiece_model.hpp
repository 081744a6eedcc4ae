#pragma once
// sentencepiece_model: a SentencePiece tokenizer.model read strictly, without libsentencepiece or
// libprotobuf: the protobuf wire format decoded here against sentencepiece's schema, then checked as
// sentencepiece's SentencePieceProcessor::Load checks a model before convert_hf_to_gguf.py can use it.
//
// The file is one serialized `ModelProto` (google/sentencepiece, src/sentencepiece_model.proto,
// proto2). The fields read, with their numbers and wire types (V varint, I32 fixed 32-bit, LEN
// length-delimited):
//
//   ModelProto        pieces = 1 (LEN, repeated SentencePiece), trainer_spec = 2 (LEN), normalizer_spec = 3
//                     (LEN), self_test_data = 4 (LEN), denormalizer_spec = 5 (LEN, a NormalizerSpec)
//   SentencePiece     piece = 1 (LEN), score = 2 (I32 float), type = 3 (V: NORMAL 1, UNKNOWN 2, CONTROL 3,
//                     USER_DEFINED 4, UNUSED 5, BYTE 6; default NORMAL)
//   TrainerSpec       model_type = 3 (V: UNIGRAM 1, BPE 2, WORD 3, CHAR 4; default UNIGRAM), vocab_size = 4,
//                     treat_whitespace_as_suffix = 24, split_digits = 25, allow_whitespace_only_pieces = 26,
//                     byte_fallback = 35, unk_id = 40, bos_id = 41, eos_id = 42, pad_id = 43 (int32 V),
//                     unk_surface = 44, unk_piece = 45, bos_piece = 46, eos_piece = 47, pad_piece = 48 (LEN)
//   NormalizerSpec    name = 1, precompiled_charsmap = 2 (LEN), add_dummy_prefix = 3,
//                     remove_extra_whitespaces = 4, escape_whitespaces = 5 (bool V),
//                     normalization_rule_tsv = 6 (LEN)
//   SelfTestData      samples = 1 (LEN, repeated Sample {input = 1, expected = 2})
//
// Every other field of the schema (TrainerSpec's input, character_coverage, num_threads, …) has its
// wire type and value range checked too, and is not kept. A field the schema does not name (a newer
// field, an extension, 200 and up) is skipped by its wire type, as protobuf skips it. Nesting is the
// schema's (at most ModelProto → SelfTestData → Sample): unknown fields are skipped, never descended
// into, and groups are refused, so no input can nest deeper.
//
// What protobuf's parser accepts and this reader refuses, on purpose (sentencepiece never writes any of
// it, and each would let two readers see different models):
//   - a known field with another wire type (protobuf keeps it as an unknown field: the field would
//     silently take its default);
//   - an enum value the schema does not have (proto2 keeps it as unknown: a piece typed 7 would be NORMAL);
//   - a bool other than 0 or 1, an int32 whose varint is not a sign-extended 32-bit value;
//   - groups (wire types 3 and 4; protobuf skips them in unknown fields) and wire types 6 and 7;
//   - a varint of more than 10 bytes, or of 10 whose last byte carries bits beyond 64.
// A singular field given twice takes its last value, and a message field given twice is merged, as
// protobuf does.
//
// Then what SentencePieceProcessor::Load refuses (model_interface.cc InitializePieces, the model
// classes' constructors, normalizer.cc DecodePrecompiledCharsMap): no piece of type UNKNOWN or two of
// them; an empty piece; a piece twice among NORMAL/USER_DEFINED/UNUSED pieces or twice among
// UNKNOWN/CONTROL/BYTE pieces (the same text may be in both: sentencepiece keeps two maps); a BYTE piece
// without byte_fallback, or one not spelled <0xXX> (two upper-case hex digits); byte_fallback without
// all 256 byte pieces; a unigram model without a NORMAL/USER_DEFINED/UNUSED piece; a precompiled
// charsmap of 4 bytes or fewer, or whose trie size runs past its end. And what convert_hf_to_gguf.py
// cannot do with what it reads: a piece that is not UTF-8 (the Python API decodes each piece to str,
// which raises), a unigram piece holding a NUL byte (its trie keys are C strings).
//
// Left to the reference: self_test_data's samples (Load encodes each and compares; this reader counts
// them, it does not tokenize). Bounded: the file at sentencepiece_model_max_bytes, the pieces at
// sentencepiece_max_pieces (the largest real vocabularies have about 2^18).
//
// Errors are codes::bad_tokenizer with `offset` the tag of the offending field (the first byte of a
// broken varint or length), `subject` the field's path in the schema ("pieces.type",
// "trainer_spec.byte_fallback"), `item` the piece's index when a piece is at fault, expected/found
// where numbers say it (docs/ERRORS.md).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// A tokenizer.model above this is refused (real ones are 0.5–5 MB).
inline constexpr std::uint64_t sentencepiece_model_max_bytes = std::uint64_t{64} << 20;
/// More pieces than this are refused: a 64 MiB file of empty pieces would otherwise ask for ~2 GB.
inline constexpr std::size_t sentencepiece_max_pieces = std::size_t{1} << 21;
/// The file name convert_hf_to_gguf.py reads in a checkpoint directory.
inline constexpr std::string_view sentencepiece_model_file_name = "tokenizer.model";

/// ModelProto.SentencePiece.Type, with the schema's numbers.
enum class piece_type : std::uint8_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };
/// TrainerSpec.ModelType, with the schema's numbers.
enum class spm_model_type : std::uint8_t { unigram = 1, bpe = 2, word = 3, character = 4 };

/// "NORMAL", "UNKNOWN", …; "UNIGRAM", "BPE", "WORD", "CHAR".
std::string_view to_string(piece_type t) noexcept;
std::string_view to_string(spm_model_type t) noexcept;

struct sentencepiece_piece {
    std::string piece;                     ///< UTF-8, non-empty
    float score = 0;
    piece_type type = piece_type::normal;
    std::uint64_t offset = 0;              ///< the tag of its `pieces` record in the file
};

/// The TrainerSpec fields kept, with the schema's defaults.
struct sentencepiece_trainer_spec {
    spm_model_type model_type = spm_model_type::unigram;
    std::int32_t vocab_size = 8000;        ///< what it was trained for; the pieces are the vocabulary
    bool treat_whitespace_as_suffix = false;
    bool split_digits = false;
    bool allow_whitespace_only_pieces = false;
    bool byte_fallback = false;
    std::int32_t unk_id = 0;
    std::int32_t bos_id = 1;
    std::int32_t eos_id = 2;
    std::int32_t pad_id = -1;
    std::string unk_surface = " \xE2\x81\x87 ";
    std::string unk_piece = "<unk>";
    std::string bos_piece = "<s>";
    std::string eos_piece = "</s>";
    std::string pad_piece = "<pad>";
};

/// A NormalizerSpec, with the schema's defaults.
struct sentencepiece_normalizer_spec {
    std::string name;
    std::string precompiled_charsmap;      ///< bytes: u32 trie size, the trie, the normalized strings
    bool add_dummy_prefix = true;
    bool remove_extra_whitespaces = true;
    bool escape_whitespaces = true;
    std::string normalization_rule_tsv;
};

struct sentencepiece_model {
    std::string file;                      ///< the name errors give
    std::vector<sentencepiece_piece> pieces;  ///< id i is pieces[i]
    sentencepiece_trainer_spec trainer_spec;
    sentencepiece_normalizer_spec normalizer_spec;
    std::optional<sentencepiece_normalizer_spec> denormalizer_spec;
    std::size_t self_test_samples = 0;     ///< SelfTestData's samples (not run here)

    /// SentencePieceProcessor's vocab_size(): the number of pieces.
    std::size_t size() const noexcept { return pieces.size(); }

    // The Python API's classification of an id (SentencePieceProcessor.IsUnknown, IsControl, IsUnused,
    // IsByte): each is the piece's type compared with one value, so exactly one of them (or none, for
    // NORMAL and USER_DEFINED) holds. False for an id out of range (the Python API raises there).
    bool is_unknown(std::size_t id) const noexcept { return type_is(id, piece_type::unknown); }
    bool is_control(std::size_t id) const noexcept { return type_is(id, piece_type::control); }
    bool is_unused(std::size_t id) const noexcept { return type_is(id, piece_type::unused); }
    bool is_byte(std::size_t id) const noexcept { return type_is(id, piece_type::byte); }
    bool is_user_defined(std::size_t id) const noexcept { return type_is(id, piece_type::user_defined); }

private:
    bool type_is(std::size_t id, piece_type t) const noexcept { return id < pieces.size() && pieces[id].type == t; }
};

/// Decode and check `bytes`, a serialized ModelProto; `file` is the name errors give.
/// @returns codes::bad_tokenizer (also above sentencepiece_model_max_bytes: expected = the cap,
/// found = the size), out_of_memory.
gguf::result<sentencepiece_model> parse_sentencepiece_model(std::span<const std::byte> bytes, std::string file) noexcept;

/// Read and check `path`. @returns what parse_sentencepiece_model returns, io_error (a missing file:
/// sys_errno ENOENT).
gguf::result<sentencepiece_model> read_sentencepiece_model(const std::filesystem::path& path) noexcept;

}  // namespace minfer::convert
