// tokenizer.model: the protobuf wire format decoded against sentencepiece's schema (a table per
// message below), then the model checked as SentencePieceProcessor::Load checks it. Written from the
// protobuf encoding documentation and sentencepiece_model.proto; nothing of protobuf or sentencepiece
// is used or copied.
#include "minfer/convert/sentencepiece_model.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "minfer/convert/errors.hpp"
#include "minfer/gguf/text.hpp"
#include "capped_file.hpp"

namespace minfer::convert {

std::string_view to_string(piece_type t) noexcept {
    switch (t) {
        case piece_type::normal: return "NORMAL";
        case piece_type::unknown: return "UNKNOWN";
        case piece_type::control: return "CONTROL";
        case piece_type::user_defined: return "USER_DEFINED";
        case piece_type::unused: return "UNUSED";
        case piece_type::byte: return "BYTE";
    }
    return "?";
}

std::string_view to_string(spm_model_type t) noexcept {
    switch (t) {
        case spm_model_type::unigram: return "UNIGRAM";
        case spm_model_type::bpe: return "BPE";
        case spm_model_type::word: return "WORD";
        case spm_model_type::character: return "CHAR";
    }
    return "?";
}

namespace {

// ---- the schema -----------------------------------------------------------------------------------

// The wire types of the protobuf encoding (the low 3 bits of a tag).
enum class wire : std::uint8_t { varint = 0, fixed64 = 1, length = 2, start_group = 3, end_group = 4, fixed32 = 5 };

std::string_view wire_name(std::uint64_t w) noexcept {
    switch (w) {
        case 0: return "varint";
        case 1: return "64-bit";
        case 2: return "length-delimited";
        case 3: return "start-group";
        case 4: return "end-group";
        case 5: return "32-bit";
        default: return "invalid";
    }
}

// What a field of the schema holds; each kind has one wire type.
enum class field_kind : std::uint8_t {
    int32,            // varint, a sign-extended 32-bit value
    uint64,           // varint
    boolean,          // varint, 0 or 1
    model_type,       // varint, TrainerSpec.ModelType
    piece_type,       // varint, SentencePiece.Type
    float32,          // fixed32
    text,             // length-delimited (string or bytes: proto2 does not check UTF-8)
    message,          // length-delimited, parsed by the caller
};

constexpr wire wire_of(field_kind k) noexcept {
    switch (k) {
        case field_kind::float32: return wire::fixed32;
        case field_kind::text:
        case field_kind::message: return wire::length;
        default: return wire::varint;
    }
}

struct field_rule {
    std::uint32_t number;
    field_kind kind;
    std::string_view name;
};
using schema = std::span<const field_rule>;

constexpr std::array<field_rule, 5> model_proto_fields{{
    {1, field_kind::message, "pieces"},
    {2, field_kind::message, "trainer_spec"},
    {3, field_kind::message, "normalizer_spec"},
    {4, field_kind::message, "self_test_data"},
    {5, field_kind::message, "denormalizer_spec"},
}};

constexpr std::array<field_rule, 3> piece_fields{{
    {1, field_kind::text, "piece"},
    {2, field_kind::float32, "score"},
    {3, field_kind::piece_type, "type"},
}};

// Every field of TrainerSpec in sentencepiece_model.proto, kept or not: each one's wire type is checked.
constexpr auto trainer_spec_fields = std::to_array<field_rule>({
    {1, field_kind::text, "input"},
    {2, field_kind::text, "model_prefix"},
    {3, field_kind::model_type, "model_type"},
    {4, field_kind::int32, "vocab_size"},
    {5, field_kind::text, "accept_language"},
    {6, field_kind::int32, "self_test_sample_size"},
    {7, field_kind::text, "input_format"},
    {10, field_kind::float32, "character_coverage"},
    {11, field_kind::uint64, "input_sentence_size"},
    {12, field_kind::int32, "mining_sentence_size"},
    {13, field_kind::int32, "training_sentence_size"},
    {14, field_kind::int32, "seed_sentencepiece_size"},
    {15, field_kind::float32, "shrinking_factor"},
    {16, field_kind::int32, "num_threads"},
    {17, field_kind::int32, "num_sub_iterations"},
    {18, field_kind::int32, "max_sentence_length"},
    {19, field_kind::boolean, "shuffle_input_sentence"},
    {20, field_kind::int32, "max_sentencepiece_length"},
    {21, field_kind::boolean, "split_by_unicode_script"},
    {22, field_kind::boolean, "split_by_whitespace"},
    {23, field_kind::boolean, "split_by_number"},
    {24, field_kind::boolean, "treat_whitespace_as_suffix"},
    {25, field_kind::boolean, "split_digits"},
    {26, field_kind::boolean, "allow_whitespace_only_pieces"},
    {30, field_kind::text, "control_symbols"},
    {31, field_kind::text, "user_defined_symbols"},
    {32, field_kind::boolean, "vocabulary_output_piece_score"},
    {33, field_kind::boolean, "hard_vocab_limit"},
    {34, field_kind::boolean, "use_all_vocab"},
    {35, field_kind::boolean, "byte_fallback"},
    {36, field_kind::text, "required_chars"},
    {40, field_kind::int32, "unk_id"},
    {41, field_kind::int32, "bos_id"},
    {42, field_kind::int32, "eos_id"},
    {43, field_kind::int32, "pad_id"},
    {44, field_kind::text, "unk_surface"},
    {45, field_kind::text, "unk_piece"},
    {46, field_kind::text, "bos_piece"},
    {47, field_kind::text, "eos_piece"},
    {48, field_kind::text, "pad_piece"},
    {49, field_kind::boolean, "train_extremely_large_corpus"},
    {50, field_kind::boolean, "enable_differential_privacy"},
    {51, field_kind::float32, "differential_privacy_noise_level"},
    {52, field_kind::uint64, "differential_privacy_clipping_threshold"},
    {53, field_kind::text, "pretokenization_delimiter"},
    {54, field_kind::text, "seed_sentencepieces_file"},
    // (8, 9, 27-29 and 37-39 are numbers the schema does not use: skipped as unknown fields)
});

constexpr std::array<field_rule, 6> normalizer_spec_fields{{
    {1, field_kind::text, "name"},
    {2, field_kind::text, "precompiled_charsmap"},
    {3, field_kind::boolean, "add_dummy_prefix"},
    {4, field_kind::boolean, "remove_extra_whitespaces"},
    {5, field_kind::boolean, "escape_whitespaces"},
    {6, field_kind::text, "normalization_rule_tsv"},
}};

constexpr std::array<field_rule, 1> self_test_data_fields{{{1, field_kind::message, "samples"}}};

constexpr std::array<field_rule, 2> sample_fields{{{1, field_kind::text, "input"}, {2, field_kind::text, "expected"}}};

const field_rule* find_rule(schema fields, std::uint32_t number) noexcept {
    for (const field_rule& r : fields)
        if (r.number == number) return &r;
    return nullptr;
}

// ---- the wire format ------------------------------------------------------------------------------

// Thrown inside this file only; parse_sentencepiece_model turns it into its result.
struct tokenizer_failure {
    gguf::error e;
};

// One field as read: its tag, and its value decoded by wire type.
struct wire_field {
    std::uint32_t number = 0;
    wire type = wire::varint;
    std::uint64_t tag_offset = 0;   // absolute offset of the tag
    std::uint64_t varint = 0;       // wire::varint
    std::uint32_t fixed32 = 0;      // wire::fixed32
    std::size_t payload_begin = 0;  // wire::length: [payload_begin, payload_end)
    std::size_t payload_end = 0;
};

// A message is a range [begin, end) of the file: nested messages are sub-ranges, so every position is
// an absolute offset and a length is checked against the bytes left in its own message.
struct message_range {
    std::size_t begin;
    std::size_t end;
};

class model_parser {
public:
    model_parser(std::span<const std::byte> bytes, const std::string& file) : bytes_(bytes), file_(file) {}

    void parse(sentencepiece_model& m) {
        for_each_field({0, bytes_.size()}, model_proto_fields, "", [&](const wire_field& f, const field_rule&,
                                                                       const std::string& path) {
            const message_range inner{f.payload_begin, f.payload_end};
            switch (f.number) {
                case 1:
                    if (m.pieces.size() >= sentencepiece_max_pieces)
                        fail(f.tag_offset, path, "more than " + std::to_string(sentencepiece_max_pieces) + " pieces",
                             sentencepiece_max_pieces, m.pieces.size() + 1);
                    m.pieces.push_back(piece(inner, f.tag_offset, m.pieces.size()));
                    break;
                case 2: trainer_spec(inner, m.trainer_spec); break;
                case 3: normalizer_spec(inner, path, m.normalizer_spec); break;
                case 4: self_test_data(inner, m.self_test_samples); break;
                case 5:
                    if (!m.denormalizer_spec) m.denormalizer_spec.emplace();
                    normalizer_spec(inner, path, *m.denormalizer_spec);
                    break;
                default: break;
            }
        });
    }

    [[noreturn]] void fail(std::uint64_t offset, std::string_view subject, std::string detail,
                           std::uint64_t expected = 0, std::uint64_t found = 0, std::int64_t item = -1) const {
        tokenizer_failure f;
        f.e.code = codes::bad_tokenizer;
        f.e.where = gguf::section::metadata;
        f.e.file = file_;
        f.e.offset = offset;
        f.e.subject = subject;
        f.e.detail = std::move(detail);
        f.e.expected = expected;
        f.e.found = found;
        f.e.item = item;
        throw f;
    }

private:
    std::uint8_t byte_at(std::size_t pos) const noexcept { return static_cast<std::uint8_t>(bytes_[pos]); }

    // A base-128 varint, at most 10 bytes and 64 bits. `subject_of()` names what it was read for (made
    // only for an error).
    template <class Subject>
    std::uint64_t varint(std::size_t& pos, std::size_t end, const Subject& subject_of, std::string_view what) const {
        const std::size_t start = pos;
        std::uint64_t value = 0;
        for (unsigned i = 0;; ++i) {
            if (pos >= end)
                fail(start, subject_of(),
                     std::string(what) + ": a varint cut short (its message ends after " + std::to_string(i) +
                         (i == 1 ? " byte" : " bytes") + " of it)");
            const std::uint8_t b = byte_at(pos++);
            if (i == 9) {
                if ((b & 0x80u) != 0) fail(start, subject_of(), std::string(what) + ": a varint longer than 10 bytes", 10, 11);
                if (b > 1) fail(start, subject_of(), std::string(what) + ": a varint beyond 64 bits");
            }
            value |= std::uint64_t{b & 0x7Fu} << (7 * i);
            if ((b & 0x80u) == 0) return value;
        }
    }

    // The field at `pos` (which it passes), with its payload bounded by `end`; `fields` name it in errors.
    wire_field next(std::size_t& pos, std::size_t end, const std::string& message_path, schema fields) const {
        wire_field f;
        f.tag_offset = pos;
        const std::string_view subject = message_path.empty() ? std::string_view("ModelProto") : message_path;
        const std::uint64_t tag = varint(pos, end, [subject] { return subject; }, "a field's tag");
        if (tag > std::numeric_limits<std::uint32_t>::max())
            fail(f.tag_offset, subject, "a field's tag beyond 32 bits", std::numeric_limits<std::uint32_t>::max(), tag);
        const std::uint64_t w = tag & 7u;
        f.number = static_cast<std::uint32_t>(tag >> 3);
        if (f.number == 0) fail(f.tag_offset, subject, "a field numbered 0 (protobuf numbers fields from 1)");
        const auto field_subject = [&] {
            const field_rule* rule = find_rule(fields, f.number);
            return rule != nullptr ? path_of(message_path, rule->name) : path_of(message_path, f.number);
        };
        switch (w) {
            case 0:
                f.type = wire::varint;
                f.varint = varint(pos, end, field_subject, "the value");
                break;
            case 1:
                f.type = wire::fixed64;
                if (end - pos < 8)
                    fail(f.tag_offset, field_subject(), "a 64-bit value cut short", 8, end - pos);
                pos += 8;
                break;
            case 2: {
                f.type = wire::length;
                const std::size_t length_at = pos;
                const std::uint64_t n = varint(pos, end, field_subject, "the length");
                if (n > end - pos)
                    fail(length_at, field_subject(),
                         "a length of " + std::to_string(n) + " bytes, past the end of its message (" +
                             std::to_string(end - pos) + (end - pos == 1 ? " byte left)" : " bytes left)"),
                         end - pos, n);
                f.payload_begin = pos;
                f.payload_end = pos + static_cast<std::size_t>(n);
                pos = f.payload_end;
                break;
            }
            case 5: {
                f.type = wire::fixed32;
                if (end - pos < 4) fail(f.tag_offset, field_subject(), "a 32-bit value cut short", 4, end - pos);
                std::uint32_t v = 0;
                for (unsigned i = 0; i < 4; ++i) v |= std::uint32_t{byte_at(pos + i)} << (8 * i);
                f.fixed32 = v;
                pos += 4;
                break;
            }
            case 3:
            case 4:
                // protobuf would skip a group in an unknown field (nested to its recursion limit);
                // sentencepiece's schema has none and its writer never makes one
                fail(f.tag_offset, field_subject(),
                     "a group (wire type " + std::to_string(w) + ", " + std::string(wire_name(w)) +
                         "): groups are not part of sentencepiece's schema",
                     0, w);
            default:
                fail(f.tag_offset, field_subject(), "wire type " + std::to_string(w) + " does not exist", 0, w);
        }
        return f;
    }

    // "trainer_spec.1000" for a number the schema does not name (the name when it does is the caller's).
    static std::string path_of(const std::string& message_path, std::uint32_t number) {
        return message_path.empty() ? std::to_string(number) : message_path + "." + std::to_string(number);
    }
    static std::string path_of(const std::string& message_path, std::string_view name) {
        return message_path.empty() ? std::string(name) : message_path + "." + std::string(name);
    }

    // Every field of a message: unknown ones skipped (already, by next()), known ones checked against
    // their kind and handed to `store` with their path.
    template <class Store>
    void for_each_field(message_range range, schema fields, const std::string& message_path, Store&& store) const {
        std::size_t pos = range.begin;
        while (pos < range.end) {
            const wire_field f = next(pos, range.end, message_path, fields);
            const field_rule* rule = find_rule(fields, f.number);
            if (rule == nullptr) continue;
            const std::string path = path_of(message_path, rule->name);
            const wire expected = wire_of(rule->kind);
            if (f.type != expected)
                fail(f.tag_offset, path,
                     "a " + std::string(wire_name(static_cast<std::uint64_t>(f.type))) + " value where the schema has a " +
                         std::string(wire_name(static_cast<std::uint64_t>(expected))) + " one",
                     static_cast<std::uint64_t>(expected), static_cast<std::uint64_t>(f.type));
            check_value(f, *rule, path);
            store(f, *rule, path);
        }
    }

    void check_value(const wire_field& f, const field_rule& rule, const std::string& path) const {
        switch (rule.kind) {
            case field_kind::int32: {
                // protobuf writes an int32 as its sign extension to 64 bits (10 bytes when negative)
                const auto v = static_cast<std::int64_t>(f.varint);
                if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
                    fail(f.tag_offset, path, "an int32 field holding " + std::to_string(v) + ", beyond 32 bits", 0, f.varint);
                break;
            }
            case field_kind::boolean:
                if (f.varint > 1)
                    fail(f.tag_offset, path, "a bool of " + std::to_string(f.varint) + " (expected 0 or 1)", 1, f.varint);
                break;
            case field_kind::model_type:
                if (f.varint < 1 || f.varint > 4)
                    fail(f.tag_offset, path,
                         "model type " + std::to_string(f.varint) + " is not one of UNIGRAM (1), BPE (2), WORD (3), CHAR (4)",
                         0, f.varint);
                break;
            case field_kind::piece_type:
                if (f.varint < 1 || f.varint > 6)
                    fail(f.tag_offset, path,
                         "piece type " + std::to_string(f.varint) +
                             " is not one of NORMAL (1), UNKNOWN (2), CONTROL (3), USER_DEFINED (4), UNUSED (5), BYTE (6)",
                         0, f.varint);
                break;
            default: break;
        }
    }

    std::string text(const wire_field& f) const {
        return {reinterpret_cast<const char*>(bytes_.data() + f.payload_begin), f.payload_end - f.payload_begin};
    }
    static std::int32_t int32(const wire_field& f) { return static_cast<std::int32_t>(static_cast<std::int64_t>(f.varint)); }
    static float float32(const wire_field& f) {
        float v = 0;
        std::memcpy(&v, &f.fixed32, sizeof v);
        return v;
    }

    sentencepiece_piece piece(message_range range, std::uint64_t offset, std::size_t index) const {
        sentencepiece_piece p;
        p.offset = offset;
        const std::string path = "pieces";
        try {
            for_each_field(range, piece_fields, path, [&](const wire_field& f, const field_rule&, const std::string&) {
                switch (f.number) {
                    case 1: p.piece = text(f); break;
                    case 2: p.score = float32(f); break;
                    case 3: p.type = static_cast<piece_type>(f.varint); break;
                    default: break;
                }
            });
        } catch (tokenizer_failure& failure) {
            failure.e.item = static_cast<std::int64_t>(index);  // which piece the broken field is in
            throw;
        }
        return p;
    }

    void trainer_spec(message_range range, sentencepiece_trainer_spec& t) const {
        for_each_field(range, trainer_spec_fields, "trainer_spec", [&](const wire_field& f, const field_rule&, const std::string&) {
            switch (f.number) {
                case 3: t.model_type = static_cast<spm_model_type>(f.varint); break;
                case 4: t.vocab_size = int32(f); break;
                case 24: t.treat_whitespace_as_suffix = f.varint != 0; break;
                case 25: t.split_digits = f.varint != 0; break;
                case 26: t.allow_whitespace_only_pieces = f.varint != 0; break;
                case 35: t.byte_fallback = f.varint != 0; break;
                case 40: t.unk_id = int32(f); break;
                case 41: t.bos_id = int32(f); break;
                case 42: t.eos_id = int32(f); break;
                case 43: t.pad_id = int32(f); break;
                case 44: t.unk_surface = text(f); break;
                case 45: t.unk_piece = text(f); break;
                case 46: t.bos_piece = text(f); break;
                case 47: t.eos_piece = text(f); break;
                case 48: t.pad_piece = text(f); break;
                default: break;  // checked, not kept
            }
        });
    }

    void normalizer_spec(message_range range, const std::string& path, sentencepiece_normalizer_spec& n) const {
        for_each_field(range, normalizer_spec_fields, path, [&](const wire_field& f, const field_rule&, const std::string& field_path) {
            switch (f.number) {
                case 1: n.name = text(f); break;
                case 2:
                    check_charsmap(f, field_path);
                    n.precompiled_charsmap = text(f);
                    break;
                case 3: n.add_dummy_prefix = f.varint != 0; break;
                case 4: n.remove_extra_whitespaces = f.varint != 0; break;
                case 5: n.escape_whitespaces = f.varint != 0; break;
                case 6: n.normalization_rule_tsv = text(f); break;
                default: break;
            }
        });
    }

    // normalizer.cc's DecodePrecompiledCharsMap: a little-endian u32 trie size, the trie, then the
    // normalized strings. sentencepiece refuses a blob of 4 bytes or fewer and a trie size at or past
    // the blob's size, then takes the trie from after the 4 bytes, so a size in (blob − 4, blob) would
    // have it read past the blob: refused here too.
    void check_charsmap(const wire_field& f, const std::string& path) const {
        const std::size_t size = f.payload_end - f.payload_begin;
        if (size == 0) return;  // empty: no map (the identity normalization)
        if (size <= 4)
            fail(f.tag_offset, path, "a normalization map of " + std::to_string(size) + " bytes (at least 5: its trie size and data)",
                 5, size);
        std::uint32_t trie = 0;
        for (unsigned i = 0; i < 4; ++i) trie |= std::uint32_t{byte_at(f.payload_begin + i)} << (8 * i);
        if (trie > size - 4)
            fail(f.tag_offset, path,
                 "a normalization map whose trie of " + std::to_string(trie) + " bytes runs past its " +
                     std::to_string(size - 4) + " bytes",
                 size - 4, trie);
    }

    void self_test_data(message_range range, std::size_t& samples) const {
        for_each_field(range, self_test_data_fields, "self_test_data", [&](const wire_field& f, const field_rule&, const std::string& path) {
            for_each_field({f.payload_begin, f.payload_end}, sample_fields, path,
                           [](const wire_field&, const field_rule&, const std::string&) {});
            ++samples;
        });
    }

    std::span<const std::byte> bytes_;
    const std::string& file_;
};

// ---- what SentencePieceProcessor::Load checks -----------------------------------------------------

// A piece for a message: escaped, in quotes, at most 100 bytes of it.
std::string shown_piece(std::string_view raw) {
    constexpr std::size_t max_shown = 100;
    const bool cut = raw.size() > max_shown;
    // Appended rather than "'" + std::string: g++ 12 -O3 warns (-Werror=restrict) on that operator+.
    std::string out(1, '\'');
    out += gguf::escape(cut ? raw.substr(0, max_shown) : raw);
    out += cut ? "…'" : "'";
    return out;
}

bool valid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// The byte of a BYTE piece: exactly "<0xXX>" with upper-case hex digits (sentencepiece maps the 256
// spellings it prints with "<0x%02X>"), or -1.
int byte_of_piece(std::string_view piece) noexcept {
    if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return -1;
    const auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    const int hi = digit(piece[3]);
    const int lo = digit(piece[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool in_normal_class(piece_type t) noexcept {
    // sentencepiece keeps NORMAL, USER_DEFINED and UNUSED pieces in one map, the others in another
    return t == piece_type::normal || t == piece_type::user_defined || t == piece_type::unused;
}

void check_loadable(const sentencepiece_model& m, const model_parser& p) {
    std::unordered_map<std::string_view, std::size_t> normal_pieces, reserved_pieces;
    normal_pieces.reserve(m.pieces.size());
    std::array<bool, 256> byte_seen{};
    std::size_t bytes_seen = 0;
    std::size_t normal_count = 0;
    std::optional<std::size_t> unknown;
    const bool unigram = m.trainer_spec.model_type == spm_model_type::unigram;
    for (std::size_t i = 0; i < m.pieces.size(); ++i) {
        const sentencepiece_piece& sp = m.pieces[i];
        const auto item = static_cast<std::int64_t>(i);
        if (sp.piece.empty()) p.fail(sp.offset, "pieces.piece", "an empty piece (or none: the field is absent)", 0, 0, item);
        if (!valid_utf8(sp.piece))
            p.fail(sp.offset, "pieces.piece",
                   "piece " + shown_piece(sp.piece) + " is not valid UTF-8 (the reference decodes every piece to text)",
                   0, 0, item);
        const bool normal = in_normal_class(sp.type);
        auto& seen = normal ? normal_pieces : reserved_pieces;
        if (const auto [it, inserted] = seen.emplace(sp.piece, i); !inserted)
            p.fail(sp.offset, "pieces.piece",
                   "piece " + shown_piece(sp.piece) + " is already defined, by piece " + std::to_string(it->second) +
                       (normal ? " (among NORMAL, USER_DEFINED and UNUSED pieces)" : " (among UNKNOWN, CONTROL and BYTE pieces)"),
                   it->second, i, item);
        if (normal) {
            ++normal_count;
            if (unigram && sp.piece.find('\0') != std::string::npos)
                p.fail(sp.offset, "pieces.piece",
                       "piece " + shown_piece(sp.piece) +
                           " holds a NUL byte, which a unigram model's trie cannot hold (its keys are C strings)",
                       0, 0, item);
        }
        if (sp.type == piece_type::unknown) {
            if (unknown) p.fail(sp.offset, "pieces.type", "a second UNKNOWN piece (the first is piece " + std::to_string(*unknown) + ")",
                                *unknown, i, item);
            unknown = i;
        }
        if (sp.type == piece_type::byte) {
            if (!m.trainer_spec.byte_fallback)
                p.fail(sp.offset, "pieces.type",
                       "byte piece " + shown_piece(sp.piece) + " in a model without trainer_spec.byte_fallback", 0, 0, item);
            const int b = byte_of_piece(sp.piece);
            if (b < 0)
                p.fail(sp.offset, "pieces.piece",
                       "byte piece " + shown_piece(sp.piece) + " is not one of <0x00> … <0xFF> (upper-case hex)", 0, 0, item);
            byte_seen[static_cast<std::size_t>(b)] = true;  // a repeated byte piece was refused above, as a duplicate
            ++bytes_seen;
        }
    }
    if (!unknown) p.fail(0, "pieces", "no piece of type UNKNOWN (sentencepiece needs exactly one)", 1, 0);
    if (m.trainer_spec.byte_fallback && bytes_seen != 256) {
        std::size_t missing = 0;
        while (byte_seen[missing]) ++missing;
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(missing));
        p.fail(0, "trainer_spec.byte_fallback",
               "byte_fallback is on but there are " + std::to_string(bytes_seen) + " byte pieces, not 256 (" + name +
                   " is missing)",
               256, bytes_seen);
    }
    if (unigram && normal_count == 0)
        p.fail(0, "pieces", "a unigram model without a NORMAL, USER_DEFINED or UNUSED piece (its trie would be empty)", 1, 0);
}

}  // namespace

gguf::result<sentencepiece_model> parse_sentencepiece_model(std::span<const std::byte> bytes, std::string file) noexcept {
    try {
        if (bytes.size() > sentencepiece_model_max_bytes) {
            gguf::error e;
            e.code = codes::bad_tokenizer;
            e.where = gguf::section::file;
            e.file = std::move(file);
            e.expected = sentencepiece_model_max_bytes;
            e.found = bytes.size();
            e.detail = "larger than " + std::to_string(sentencepiece_model_max_bytes) + " bytes";
            return gguf::unexpected(std::move(e));
        }
        sentencepiece_model m;
        m.file = std::move(file);
        model_parser parser(bytes, m.file);
        parser.parse(m);
        check_loadable(m, parser);
        return m;
    } catch (tokenizer_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {  // std::bad_alloc
        return gguf::unexpected(gguf::out_of_memory_error("reading a tokenizer.model"));
    }
}

gguf::result<sentencepiece_model> read_sentencepiece_model(const std::filesystem::path& path) noexcept {
    auto text = detail::read_capped_file(path, sentencepiece_model_max_bytes, codes::bad_tokenizer);
    if (!text) return gguf::unexpected(std::move(text).error());
    try {
        return parse_sentencepiece_model(std::as_bytes(std::span(text->data(), text->size())), path.string());
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading a tokenizer.model"));
    }
}

}  // namespace minfer::convert
