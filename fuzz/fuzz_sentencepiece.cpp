// convert::parse_sentencepiece_model on arbitrary bytes. A refusal is bad_tokenizer (or out_of_memory)
// at an offset inside the input, naming a field, with a message that renders. An acceptance must hold
// every promise of the header: exactly one UNKNOWN piece; every piece non-empty UTF-8, unique in its
// class, at an offset inside the input and after the previous one; BYTE pieces only with byte_fallback,
// all 256 of them then, spelled <0xXX>; a unigram model with a normal piece and no NUL in one; a
// normalization map's frame. And what was kept must be a fixed point: the model written back as
// protobuf (by this target's own encoder, fields in another order than the input's) reads back equal.
// A broken promise traps.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "minfer/gguf/text.hpp"

namespace {

namespace cv = minfer::convert;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_sentencepiece: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

bool utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = minfer::gguf::utf8_length_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

bool normal_class(cv::piece_type t) {
    return t == cv::piece_type::normal || t == cv::piece_type::user_defined || t == cv::piece_type::unused;
}

void check_map(const std::string& map) {
    if (map.empty()) return;
    require(map.size() > 4, "a map holds its size and data");
    std::uint32_t trie = 0;
    std::memcpy(&trie, map.data(), 4);  // little-endian hosts only, as the fuzz build is
    require(trie <= map.size() - 4, "the trie lies in the map");
}

void check_accepted(const cv::sentencepiece_model& m, std::size_t size) {
    require(size <= cv::sentencepiece_model_max_bytes, "size cap");
    require(!m.pieces.empty() && m.size() <= cv::sentencepiece_max_pieces, "piece count");
    std::set<std::string_view> normal, reserved;
    std::size_t unknown = 0, bytes = 0, normals = 0;
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
        const cv::sentencepiece_piece& p = m.pieces[i];
        require(p.offset < size, "a piece's offset is inside the input");
        require(i == 0 || p.offset > previous, "pieces in file order");
        previous = p.offset;
        require(!p.piece.empty() && utf8(p.piece), "pieces are non-empty UTF-8");
        const auto t = static_cast<int>(p.type);
        require(t >= 1 && t <= 6, "a known piece type");
        require((normal_class(p.type) ? normal : reserved).insert(p.piece).second, "unique in its class");
        unknown += m.is_unknown(i);
        if (m.is_byte(i)) {
            ++bytes;
            require(m.trainer_spec.byte_fallback, "byte pieces need byte_fallback");
            require(p.piece.size() == 6 && p.piece.starts_with("<0x") && p.piece.ends_with(">"), "a byte piece's spelling");
        }
        if (normal_class(p.type)) {
            ++normals;
            if (m.trainer_spec.model_type == cv::spm_model_type::unigram)
                require(p.piece.find('\0') == std::string::npos, "no NUL in a unigram trie key");
        }
        // exactly one classification holds, or none for NORMAL and USER_DEFINED
        const int classes = m.is_unknown(i) + m.is_control(i) + m.is_unused(i) + m.is_byte(i);
        require(classes == (p.type == cv::piece_type::normal || p.type == cv::piece_type::user_defined ? 0 : 1),
                "one classification");
    }
    require(unknown == 1, "one UNKNOWN piece");
    require(!m.trainer_spec.byte_fallback || bytes == 256, "256 byte pieces with byte_fallback");
    require(m.trainer_spec.model_type != cv::spm_model_type::unigram || normals > 0, "a unigram model has a normal piece");
    const auto type = static_cast<int>(m.trainer_spec.model_type);
    require(type >= 1 && type <= 4, "a known model type");
    check_map(m.normalizer_spec.precompiled_charsmap);
    if (m.denormalizer_spec) check_map(m.denormalizer_spec->precompiled_charsmap);
    require(!m.is_unknown(m.size()) && !m.is_byte(m.size()), "ids past the end are nothing");
}

// ---- the kept fields written back as protobuf ----------------------------------------------------------

void varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7Fu) | 0x80u);
        v >>= 7;
    }
    out += static_cast<char>(v);
}
void tag(std::string& out, std::uint32_t number, unsigned wire) { varint(out, (std::uint64_t{number} << 3) | wire); }
void field(std::string& out, std::uint32_t number, std::uint64_t v) {
    tag(out, number, 0);
    varint(out, v);
}
void int32(std::string& out, std::uint32_t number, std::int32_t v) {
    field(out, number, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
}
void bytes(std::string& out, std::uint32_t number, std::string_view v) {
    tag(out, number, 2);
    varint(out, v.size());
    out += v;
}

std::string normalizer(const cv::sentencepiece_normalizer_spec& n) {
    std::string out;
    // in reverse field order: the reader must not depend on the writer's order
    bytes(out, 6, n.normalization_rule_tsv);
    field(out, 5, n.escape_whitespaces);
    field(out, 4, n.remove_extra_whitespaces);
    field(out, 3, n.add_dummy_prefix);
    bytes(out, 2, n.precompiled_charsmap);
    bytes(out, 1, n.name);
    return out;
}

std::string encode(const cv::sentencepiece_model& m) {
    std::string out;
    const cv::sentencepiece_trainer_spec& t = m.trainer_spec;
    std::string trainer;
    int32(trainer, 43, t.pad_id);
    int32(trainer, 42, t.eos_id);
    int32(trainer, 41, t.bos_id);
    int32(trainer, 40, t.unk_id);
    bytes(trainer, 44, t.unk_surface);
    bytes(trainer, 45, t.unk_piece);
    bytes(trainer, 46, t.bos_piece);
    bytes(trainer, 47, t.eos_piece);
    bytes(trainer, 48, t.pad_piece);
    field(trainer, 35, t.byte_fallback);
    field(trainer, 26, t.allow_whitespace_only_pieces);
    field(trainer, 25, t.split_digits);
    field(trainer, 24, t.treat_whitespace_as_suffix);
    int32(trainer, 4, t.vocab_size);
    field(trainer, 3, static_cast<std::uint64_t>(t.model_type));
    bytes(out, 2, trainer);  // the trainer spec before the pieces
    bytes(out, 3, normalizer(m.normalizer_spec));
    if (m.denormalizer_spec) bytes(out, 5, normalizer(*m.denormalizer_spec));
    for (const cv::sentencepiece_piece& p : m.pieces) {
        std::string piece;
        field(piece, 3, static_cast<std::uint64_t>(p.type));
        std::uint32_t score = 0;
        std::memcpy(&score, &p.score, sizeof score);
        tag(piece, 2, 5);
        for (int i = 0; i < 4; ++i) piece += static_cast<char>((score >> (8 * i)) & 0xFFu);
        bytes(piece, 1, p.piece);
        bytes(out, 1, piece);
    }
    return out;
}

bool same(const cv::sentencepiece_normalizer_spec& a, const cv::sentencepiece_normalizer_spec& b) {
    return a.name == b.name && a.precompiled_charsmap == b.precompiled_charsmap && a.add_dummy_prefix == b.add_dummy_prefix &&
           a.remove_extra_whitespaces == b.remove_extra_whitespaces && a.escape_whitespaces == b.escape_whitespaces &&
           a.normalization_rule_tsv == b.normalization_rule_tsv;
}

void check_round_trip(const cv::sentencepiece_model& m) {
    const std::string again = encode(m);
    auto r = cv::parse_sentencepiece_model(std::as_bytes(std::span(again.data(), again.size())), "again");
    if (!r) {
        if (r.error().code == minfer::gguf::errc::out_of_memory) return;
        std::fprintf(stderr, "%s\n", r.error().message().c_str());
        fail("the model written back reads back");
    }
    require(r->size() == m.size(), "round trip: piece count");
    for (std::size_t i = 0; i < m.size(); ++i) {
        const auto& a = m.pieces[i];
        const auto& b = r->pieces[i];
        require(a.piece == b.piece && a.type == b.type, "round trip: a piece");
        require(std::memcmp(&a.score, &b.score, sizeof a.score) == 0, "round trip: a score's bits");
    }
    const auto& t = m.trainer_spec;
    const auto& u = r->trainer_spec;
    require(t.model_type == u.model_type && t.vocab_size == u.vocab_size && t.byte_fallback == u.byte_fallback &&
                t.split_digits == u.split_digits && t.treat_whitespace_as_suffix == u.treat_whitespace_as_suffix &&
                t.allow_whitespace_only_pieces == u.allow_whitespace_only_pieces && t.unk_id == u.unk_id &&
                t.bos_id == u.bos_id && t.eos_id == u.eos_id && t.pad_id == u.pad_id && t.unk_piece == u.unk_piece &&
                t.bos_piece == u.bos_piece && t.eos_piece == u.eos_piece && t.pad_piece == u.pad_piece &&
                t.unk_surface == u.unk_surface,
            "round trip: the trainer spec");
    require(same(m.normalizer_spec, r->normalizer_spec), "round trip: the normalizer spec");
    require(m.denormalizer_spec.has_value() == r->denormalizer_spec.has_value(), "round trip: a denormalizer spec");
    if (m.denormalizer_spec) require(same(*m.denormalizer_spec, *r->denormalizer_spec), "round trip: the denormalizer spec");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = std::as_bytes(std::span(data, size));
    auto m = cv::parse_sentencepiece_model(input, "tokenizer.model");
    if (m) {
        check_accepted(*m, size);
        check_round_trip(*m);
        return 0;
    }
    const minfer::gguf::error& e = m.error();
    require(e.code == cv::codes::bad_tokenizer || e.code == minfer::gguf::errc::out_of_memory, "error code");
    require(e.offset <= size, "error offset inside the input");
    require(e.code != cv::codes::bad_tokenizer || !e.subject.empty(), "a refusal names a field");
    require(e.item >= -1, "item");
    require(!e.message().empty(), "message");
    return 0;
}
