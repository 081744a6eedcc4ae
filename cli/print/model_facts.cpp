#include "model_facts.hpp"

#include <algorithm>

#include "minfer/gguf/value.hpp"

namespace minfer::cli {

totals gather_totals(const gguf::model& m) noexcept {
    totals t;
    for (const gguf::tensor_ref& r : m.tensors()) {
        ++t.n_tensors;
        t.n_parameters += r.info->n_elements;
        t.n_bytes += r.info->n_bytes;
    }
    return t;
}

std::vector<type_totals> gather_type_totals(const gguf::model& m) {
    std::array<totals, gguf::tensor_type_count> by{};
    for (const gguf::tensor_ref& r : m.tensors()) {
        const auto id = static_cast<std::uint32_t>(r.info->type);
        if (id >= by.size()) continue;  // the parser refuses unknown ids; defensive only
        totals& t = by[id];
        ++t.n_tensors;
        t.n_parameters += r.info->n_elements;
        t.n_bytes += r.info->n_bytes;
    }
    std::vector<type_totals> out;
    for (std::uint32_t id = 0; id < by.size(); ++id) {
        if (by[id].n_tensors > 0) out.push_back({static_cast<gguf::tensor_type>(id), by[id]});
    }
    return out;
}

bool is_special_token_key(std::string_view key) noexcept {
    constexpr std::string_view prefix = "tokenizer.ggml.";
    constexpr std::string_view suffix = "_token_id";
    return key.size() > prefix.size() + suffix.size() && key.substr(0, prefix.size()) == prefix &&
           key.substr(key.size() - suffix.size()) == suffix;
}

const special_token* special_tokens::find(std::string_view key) const noexcept {
    for (const special_token& t : tokens)
        if (t.key == key) return &t;
    return nullptr;
}

special_tokens resolve_special_tokens(const gguf::model& m) {
    special_tokens out;
    for (const gguf::kv& e : m.metadata().metadata()) {
        if (e.is_array() || !is_special_token_key(e.key)) continue;
        auto id = e.as_i64();
        if (!id) {
            // A u64 above INT64_MAX is still an id, just never a valid one.
            if (e.as_u64()) out.tokens.push_back({e.key, -1, std::nullopt});
            continue;
        }
        out.tokens.push_back({e.key, *id, std::nullopt});
    }
    const gguf::kv* vocab = m.find("tokenizer.ggml.tokens");
    if (vocab == nullptr || !vocab->is_array() || vocab->element_type != gguf::value_type::string) return out;
    auto a = vocab->get<gguf::array_view>();
    if (!a) return out;
    out.has_vocab = true;
    out.vocab_size = a->size();
    if (out.tokens.empty()) return out;
    // Ids are file data: only those inside [0, size) are looked up (CVE-2025-49847 used one as an
    // index). Each through the parse's marks: no walk of a 150k-token vocabulary.
    for (special_token& t : out.tokens) {
        if (t.id < 0 || static_cast<std::uint64_t>(t.id) >= out.vocab_size) continue;
        if (auto s = m.metadata().string_item(*vocab, static_cast<std::uint64_t>(t.id))) t.text = *s;
    }
    return out;
}

}  // namespace minfer::cli
