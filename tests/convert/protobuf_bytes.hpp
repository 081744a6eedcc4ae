#pragma once
// Protobuf messages written by the tests byte by byte (no libprotobuf): a field is its tag (number << 3
// | wire type, as a varint) then its value; and a builder of sentencepiece ModelProto files from pieces,
// with the TrainerSpec and NormalizerSpec fields the tests set. Written from the protobuf encoding
// documentation; every byte is the test's to choose, so the malformed inputs are as easy as the valid
// ones.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace minfer::test {

inline void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7Fu) | 0x80u);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

/// One protobuf message: fields appended in the order given.
class pb_message {
public:
    pb_message& tag(std::uint32_t number, std::uint8_t wire) {
        put_varint(bytes_, (std::uint64_t{number} << 3) | wire);
        return *this;
    }
    pb_message& varint(std::uint32_t number, std::uint64_t v) {
        tag(number, 0);
        put_varint(bytes_, v);
        return *this;
    }
    /// An int32 as protobuf writes it: sign-extended to 64 bits (10 bytes when negative).
    pb_message& int32(std::uint32_t number, std::int32_t v) {
        return varint(number, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    }
    pb_message& boolean(std::uint32_t number, bool v) { return varint(number, v ? 1 : 0); }
    pb_message& fixed32(std::uint32_t number, std::uint32_t v) {
        tag(number, 5);
        for (int i = 0; i < 4; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xFFu);
        return *this;
    }
    pb_message& float32(std::uint32_t number, float v) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        return fixed32(number, bits);
    }
    pb_message& fixed64(std::uint32_t number, std::uint64_t v) {
        tag(number, 1);
        for (int i = 0; i < 8; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xFFu);
        return *this;
    }
    pb_message& bytes(std::uint32_t number, std::string_view v) {
        tag(number, 2);
        put_varint(bytes_, v.size());
        bytes_ += v;
        return *this;
    }
    pb_message& message(std::uint32_t number, const pb_message& m) { return bytes(number, m.str()); }
    /// Bytes as they are (a broken field).
    pb_message& raw(std::string_view b) {
        bytes_ += b;
        return *this;
    }
    const std::string& str() const { return bytes_; }
    std::size_t size() const { return bytes_.size(); }

private:
    std::string bytes_;
};

/// sentencepiece's piece types (ModelProto.SentencePiece.Type).
enum class spm_type : std::uint8_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

/// A SentencePiece message: piece = 1, score = 2 (omitted when 0), type = 3 (omitted when NORMAL, its default).
inline pb_message spm_piece(std::string_view text, float score = 0, spm_type type = spm_type::normal) {
    pb_message p;
    p.bytes(1, text);
    if (score != 0 || std::signbit(score)) p.float32(2, score);
    if (type != spm_type::normal) p.varint(3, static_cast<std::uint64_t>(type));
    return p;
}

struct spm_piece_spec {
    std::string text;
    float score = 0;
    spm_type type = spm_type::normal;
};

/// A ModelProto: its pieces (field 1), then trainer_spec (2) with model_type and byte_fallback, then
/// normalizer_spec (3) as sentencepiece's trainer writes them (identity normalization here).
class spm_model_builder {
public:
    spm_model_builder& piece(std::string text, float score = 0, spm_type type = spm_type::normal) {
        pieces_.push_back({std::move(text), score, type});
        return *this;
    }
    /// <0x00> … <0xFF>, score 0, BYTE.
    spm_model_builder& byte_pieces() {
        static const char* hex = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) piece(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0, spm_type::byte);
        return *this;
    }
    spm_model_builder& model_type(std::uint64_t t) {
        model_type_ = t;
        return *this;
    }
    spm_model_builder& byte_fallback(bool on) {
        byte_fallback_ = on;
        return *this;
    }
    std::string bytes() const {
        pb_message m;
        for (const spm_piece_spec& p : pieces_) m.message(1, spm_piece(p.text, p.score, p.type));
        pb_message trainer;
        trainer.varint(3, model_type_).int32(4, static_cast<std::int32_t>(pieces_.size()));
        if (byte_fallback_) trainer.boolean(35, true);
        trainer.int32(40, 0).int32(41, 1).int32(42, 2).int32(43, -1);
        m.message(2, trainer);
        pb_message normalizer;
        normalizer.bytes(1, "identity").boolean(3, true).boolean(4, false);
        m.message(3, normalizer);
        return m.str();
    }

private:
    std::vector<spm_piece_spec> pieces_;
    std::uint64_t model_type_ = 2;  // BPE, as Llama's and Mistral's
    bool byte_fallback_ = false;
};

}  // namespace minfer::test
