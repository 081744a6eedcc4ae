// convert::bpe_tokenizer on any tokenizer.json, and its encoder and decoder on any text. The input is
// a 2-byte little-endian text length (cut to 4096), the text, then the tokenizer.json. A refusal is
// bad_tokenizer or unsupported_tokenizer (or out_of_memory) at an offset inside the file; an accepted
// tokenizer must hold the header's promises (ids 0..n-1, the 256 byte-level characters, added tokens
// past or in the vocabulary, a ByteLevel step last), encode must give ids that exist (or refuse text
// that is not UTF-8 at a byte inside it), and a byte-level BPE must be lossless: where nothing drops
// or adds characters (no NFC, no prefix space, no stripping added token, added tokens of printable
// ASCII), decode(encode(text)) is the text. A broken promise traps.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/errors.hpp"

namespace {

namespace cv = minfer::convert;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_bpe_tokenizer: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

constexpr std::size_t max_text = 4096;

bool lossless(const cv::bpe_tokenizer& t) {
    if (t.normalizes_nfc()) return false;
    for (const cv::pre_tokenizer_step& s : t.pre_tokenizer())
        if (s.add_prefix_space) return false;
    for (const cv::added_token& a : t.added_tokens()) {
        if (a.lstrip || a.rstrip) return false;
        for (char c : a.content)
            if (c < 0x21 || c > 0x7E) return false;
    }
    return true;
}

void check_accepted(const cv::bpe_tokenizer& t, std::string_view text) {
    const auto vocab = t.model_tokens();
    require(!vocab.empty() && vocab.size() <= cv::tokenizer_max_tokens, "vocabulary size");
    for (std::size_t id = 0; id < vocab.size(); ++id)
        require(t.model_token_id(vocab[id]) == id, "ids 0..n-1, once each");
    for (unsigned b = 0; b < 256; ++b) {
        std::string ch;
        const char32_t c = cv::byte_level_char(static_cast<std::uint8_t>(b));
        require(cv::byte_level_byte(c) == b, "byte-level map");
        if (c < 0x80) ch += static_cast<char>(c);
        else {
            ch += static_cast<char>(0xC0 | (c >> 6));
            ch += static_cast<char>(0x80 | (c & 0x3F));
        }
        require(t.model_token_id(ch).has_value(), "every byte-level character is a token");
    }
    for (const cv::added_token& a : t.added_tokens()) {
        require(!a.content.empty(), "added content");
        require(a.id < t.id_count(), "added id");
        require(t.find_added(a.id) == &a, "added by id");
        if (a.id < vocab.size()) require(vocab[a.id] == a.content, "an added token in the vocabulary keeps its id");
    }
    require(!t.pre_tokenizer().empty() && t.pre_tokenizer().back().type == cv::pre_tokenizer_step::kind::byte_level,
            "ByteLevel last");
    (void)t.gguf_merges();
    for (bool special : {false, true}) {
        auto ids = t.encode(text, special);
        if (!ids) {
            const minfer::gguf::error& e = ids.error();
            require(e.code == cv::codes::bad_tokenizer || e.code == minfer::gguf::errc::out_of_memory, "encode error code");
            continue;
        }
        for (std::uint32_t id : *ids) require(id < t.id_count(), "encoded ids exist");
        auto back = t.decode(*ids);
        require(back.has_value(), "decode");
        if (!special && lossless(t)) require(*back == text, "decode(encode(text)) is the text");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    std::size_t text_size = static_cast<std::size_t>(data[0] | (data[1] << 8));
    if (text_size > max_text) text_size = max_text;
    if (text_size > size - 2) text_size = size - 2;
    const std::string_view text(reinterpret_cast<const char*>(data + 2), text_size);
    const std::string_view json(reinterpret_cast<const char*>(data + 2 + text_size), size - 2 - text_size);
    auto t = cv::bpe_tokenizer::parse(json, "tokenizer.json");
    if (t) {
        check_accepted(*t, text);
        return 0;
    }
    const minfer::gguf::error& e = t.error();
    require(e.code == cv::codes::bad_tokenizer || e.code == cv::codes::unsupported_tokenizer ||
                e.code == minfer::gguf::errc::out_of_memory,
            "error code");
    require(e.offset <= json.size(), "error offset inside the file");
    require(!e.message().empty(), "message");
    return 0;
}
