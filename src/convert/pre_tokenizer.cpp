// The check text, the reference's table and the hash (pre_tokenizer.hpp).
#include "minfer/convert/pre_tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "minfer/check/digest.hpp"
#include "minfer/convert/errors.hpp"

namespace minfer::convert {

namespace {

// Compatibility data, not code: `chktxt` of llama.cpp's conversion/base.py (get_vocab_base_pre,
// commit 305ba519), the text whose ids name a pre-tokenizer. It must stay byte for byte what the
// reference encodes (431 bytes; SHA-256 a36179c1…26da, tested); U+200D and U+FE0F are written as
// escapes because they are invisible.
constexpr std::string_view check_text =
    "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n"
    "🚀 (normal) 😶\u200d🌫\ufe0f (multiple emojis concatenated) ✅ 🦙🦙 "
    "3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 "
    "កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български "
    "''''''```````\"\"\"\"......!!!!!!?????? "
    "I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL";

// The reference's table entries for the names this converter writes (its comments name the models).
constexpr std::array<known_pre_tokenizer, 4> table{{
    {"llama-bpe", "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5", "meta-llama/Meta-Llama-3-8B"},
    {"qwen2", "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea", "Qwen/Qwen1.5-7B"},
    {"qwen2", "d4540891389ea895b53b399da6ac824becc30f2fba0e9ddbb98f92e55ca0e97c", "Qwen/Qwen3-Embedding-0.6B"},
    {"smaug-bpe", "c136ed14d01c2745d4f60a9596ae66800e2b61fa45643e72436041855ad4089d",
     "abacusai/Smaug-Llama-3-70B-Instruct"},
}};

}  // namespace

std::string_view pre_tokenizer_check_text() noexcept { return check_text; }

std::span<const known_pre_tokenizer> known_pre_tokenizers() noexcept { return table; }

std::string supported_pre_tokenizer_names() {
    std::vector<std::string_view> names;
    for (const known_pre_tokenizer& k : table) names.push_back(k.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string out;
    for (std::string_view n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

bool is_supported_pre_tokenizer(std::string_view name) noexcept {
    return std::any_of(table.begin(), table.end(), [&](const known_pre_tokenizer& k) { return k.name == name; });
}

std::string python_list_text(std::span<const std::uint32_t> ids) {
    std::string s = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(ids[i]);
    }
    s += ']';
    return s;
}

gguf::result<std::string> pre_tokenizer_hash(const bpe_tokenizer& tokenizer) noexcept {
    // transformers' encode(text) adds the special tokens (add_special_tokens defaults to True)
    auto ids = tokenizer.encode(check_text, true);
    if (!ids) return gguf::unexpected(std::move(ids).error());
    try {
        const std::string text = python_list_text(*ids);
        auto h = check::hasher::make(check::hash_kind::sha256);
        if (!h) return gguf::unexpected(std::move(h).error());
        h->update(std::as_bytes(std::span<const char>(text.data(), text.size())));
        return h->finish().text();
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("hashing the check text's ids"));
    }
}

gguf::result<std::string> find_pre_tokenizer(const bpe_tokenizer& tokenizer) noexcept {
    auto hash = pre_tokenizer_hash(tokenizer);
    if (!hash) return hash;
    try {
        for (const known_pre_tokenizer& k : table)
            if (k.sha256 == *hash) return std::string(k.name);
        gguf::error e;
        e.code = codes::unsupported_tokenizer;
        e.where = gguf::section::metadata;
        e.file = tokenizer.file();
        e.subject = *hash;
        e.detail = "the pre-tokenizer's check hash " + *hash +
                   " is not one convert_hf_to_gguf.py knows for the supported pre-tokenizers; if you know which "
                   "it is, pass --pre NAME (one of: " + supported_pre_tokenizer_names() + ")";
        return gguf::unexpected(std::move(e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("naming the pre-tokenizer"));
    }
}

}  // namespace minfer::convert
