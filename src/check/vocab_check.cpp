#include "minfer/check/vocab_check.hpp"

#include <array>
#include <deque>
#include <new>
#include <string>
#include <functional>

#include "errors.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::check {

std::string_view to_string(vocab_problem p) noexcept {
    switch (p) {
        case vocab_problem::tokens_not_strings: return "tokens_not_strings";
        case vocab_problem::duplicate_token: return "duplicate_token";
        case vocab_problem::empty_token: return "empty_token";
        case vocab_problem::array_short: return "array_short";
        case vocab_problem::array_long: return "array_long";
        case vocab_problem::array_not_array: return "array_not_array";
        case vocab_problem::array_element_type: return "array_element_type";
        case vocab_problem::array_reinterpreted: return "array_reinterpreted";
        case vocab_problem::special_id_type: return "special_id_type";
        case vocab_problem::special_id_out_of_range: return "special_id_out_of_range";
        case vocab_problem::merges_not_strings: return "merges_not_strings";
        case vocab_problem::merge_without_space: return "merge_without_space";
        case vocab_problem::merge_part_absent: return "merge_part_absent";
    }
    return "unknown";
}

namespace {

constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";
constexpr std::string_view scores_key = "tokenizer.ggml.scores";
constexpr std::string_view types_key = "tokenizer.ggml.token_type";
constexpr std::string_view merges_key = "tokenizer.ggml.merges";
constexpr std::string_view model_key = "tokenizer.ggml.model";

// The special-token ids llama.cpp reads with get_key<uint32_t> (its list, deprecated names too).
constexpr std::array<std::string_view, 17> special_keys{
    "tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",      "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",     "tokenizer.ggml.unknown_token_id",  "tokenizer.ggml.seperator_token_id",
    "tokenizer.ggml.padding_token_id", "tokenizer.ggml.mask_token_id",     "tokenizer.ggml.fim_pre_token_id",
    "tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.fim_mid_token_id",  "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id",  "tokenizer.ggml.prefix_token_id",
    "tokenizer.ggml.suffix_token_id",  "tokenizer.ggml.middle_token_id"};

// Tokenizer models whose loader reads tokenizer.ggml.merges.
bool reads_merges(std::string_view model) noexcept {
    return model == "gpt2" || model == "hybriddna" || model == "whitespace" || model == "gemma4";
}

// Text from pieces: strings, string_views, C strings and integers (the library does not use fmt).
void append(std::string& s, std::string_view v) { s.append(v); }
void append(std::string& s, const char* v) { s.append(v); }
void append(std::string& s, const std::string& v) { s.append(v); }
void append(std::string& s, std::uint64_t v) { s.append(std::to_string(v)); }
template <class... A>
std::string cat(const A&... a) {
    std::string s;
    (append(s, a), ...);
    return s;
}

std::string type_text(const gguf::kv& e) {
    return e.is_array() ? cat("an array of ", gguf::to_string(e.element_type)) : cat("of type ", gguf::to_string(e.type));
}

std::string shown(std::string_view raw) {
    constexpr std::size_t limit = 60;
    if (raw.size() <= limit) return cat("'", gguf::escape(raw), "'");
    return cat("'", gguf::escape(raw.substr(0, limit)), "'...");
}

// Token text -> its first id: open addressing over one slot array (hash bits and id in 8 bytes) and
// the texts by id as views into the file. A node-based std::unordered_map spent most of its time
// chasing 256k nodes and freeing them; this is two allocations and one probe sequence per lookup.
class token_table {
public:
    void reserve(std::uint64_t n) {
        std::size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        slots_.assign(cap, 0);
        text_.reserve(static_cast<std::size_t>(n));
    }
    /// Add the next id's text. @returns the earlier id with the same text, or -1.
    std::int64_t insert(std::string_view s) {
        const std::uint64_t h = hash(s);
        const auto id = static_cast<std::uint32_t>(text_.size());
        text_.push_back(s);
        for (std::size_t i = slot_of(h);; i = (i + 1) & (slots_.size() - 1)) {
            const std::uint64_t v = slots_[i];
            if (v == 0) {
                slots_[i] = (h & 0xffffffff00000000u) | (std::uint64_t{id} + 1);
                return -1;
            }
            if ((v >> 32) == (h >> 32) && text_[(v & 0xffffffffu) - 1] == s) return static_cast<std::int64_t>((v & 0xffffffffu) - 1);
        }
    }
    bool contains(std::string_view s) const {
        const std::uint64_t h = hash(s);
        for (std::size_t i = slot_of(h);; i = (i + 1) & (slots_.size() - 1)) {
            const std::uint64_t v = slots_[i];
            if (v == 0) return false;
            if ((v >> 32) == (h >> 32) && text_[(v & 0xffffffffu) - 1] == s) return true;
        }
    }
    std::string_view text(std::uint64_t id) const { return text_[static_cast<std::size_t>(id)]; }

private:
    static std::uint64_t hash(std::string_view s) noexcept {
        std::uint64_t h = std::hash<std::string_view>{}(s);
        return h ^ (h >> 29) ^ (h << 31);  // spread the bits: the high half is stored, the low half places
    }
    std::size_t slot_of(std::uint64_t h) const noexcept { return static_cast<std::size_t>(h) & (slots_.size() - 1); }
    std::vector<std::uint64_t> slots_;  // 0: empty; else (high 32 bits of the hash) | (id + 1)
    std::vector<std::string_view> text_;
};

struct checker {
    const gguf::file_view& md;
    std::vector<vocab_finding> out;
    std::uint64_t n_vocab = 0;
    token_table ids;  // token text (as llama.cpp keys it) -> its first index
    std::deque<std::string> renamed;  // "[EMPTY_<i>]" texts of empty tokens (stable addresses)

    void add(vocab_problem p, bool warning, std::string_view key, std::uint64_t index, std::uint64_t count,
             std::string what) {
        out.push_back(vocab_finding{p, warning, key, index, count, std::move(what)});
    }

    bool tokens() {
        const gguf::kv* e = md.find(tokens_key);
        auto a = e->get<gguf::array_view>();  // check_vocab calls this only when the key exists
        if (!a || a->element_type() != gguf::value_type::string) {
            add(vocab_problem::tokens_not_strings, false, tokens_key, 0, 1,
                cat("is ", type_text(*e), ", not an array of strings: llama.cpp asserts on it (abort)"));
            return false;
        }
        n_vocab = a->size();
        if (n_vocab >= 0xffffffffu) {  // a vocabulary of 4G tokens cannot be in a verified file's memory anyway
            add(vocab_problem::tokens_not_strings, false, tokens_key, 0, 1, "holds too many tokens to check");
            return false;
        }
        ids.reserve(n_vocab);
        std::uint64_t i = 0, dups = 0, first_dup = 0, first_dup_of = 0, empties = 0, first_empty = 0;
        std::string_view dup_text;
        for (std::string_view s : a->strings()) {
            if (i == n_vocab) break;
            if (s.empty()) {
                if (empties++ == 0) first_empty = i;
                renamed.push_back(cat("[EMPTY_", i, "]"));
                s = renamed.back();
            }
            const std::int64_t earlier = ids.insert(s);
            if (earlier >= 0 && dups++ == 0) {
                first_dup = i;
                first_dup_of = static_cast<std::uint64_t>(earlier);
                dup_text = s;
            }
            ++i;
        }
        if (dups > 0) {
            add(vocab_problem::duplicate_token, false, tokens_key, first_dup, dups,
                cat("token ", first_dup, " repeats token ", first_dup_of, " (", shown(dup_text), ")",
                    dups > 1 ? cat("; ", dups, " tokens repeat an earlier one") : std::string(),
                    ": llama.cpp aborts loading the vocabulary (GGML_ASSERT id_to_token.size() == "
                    "token_to_id.size())"));
        }
        if (empties > 0)
            add(vocab_problem::empty_token, true, tokens_key, first_empty, empties,
                cat("token ", first_empty, " is empty", empties > 1 ? cat(" (", empties, " empty tokens)") : std::string(),
                    ": llama.cpp loads it as \"[EMPTY_", first_empty, "]\""));
        return true;
    }

    // scores (f32) and token_type (i32): llama.cpp takes the array's data as float* / int* and reads
    // n_vocab entries of 4 bytes.
    void per_token_array(std::string_view key, gguf::value_type want, std::string_view what_for) {
        const gguf::kv* e = md.find(key);
        if (e == nullptr) return;
        if (!e->is_array()) {
            add(vocab_problem::array_not_array, false, key, 0, 1,
                cat("is ", type_text(*e), ", not an array: llama.cpp asserts on it (abort)"));
            return;
        }
        const gguf::value_type t = e->element_type;
        if (t == gguf::value_type::string) {
            add(vocab_problem::array_element_type, false, key, 0, 1,
                "is an array of strings: llama.cpp asserts on it (abort)");
            return;
        }
        if (gguf::value_size(t) != 4) {
            add(vocab_problem::array_element_type, false, key, 0, 1,
                cat("is ", type_text(*e), ": llama.cpp reads it as ", gguf::to_string(want),
                    " (4 bytes per token), past or across its elements"));
            return;
        }
        const bool same = t == want || (want == gguf::value_type::i32 && t == gguf::value_type::u32);
        if (!same)
            add(vocab_problem::array_reinterpreted, true, key, 0, 1,
                cat("is ", type_text(*e), ": llama.cpp reads its bits as ", gguf::to_string(want)));
        if (e->count < n_vocab) {
            add(vocab_problem::array_short, false, key, e->count, n_vocab - e->count,
                cat("has ", e->count, " ", what_for, " for ", n_vocab, " tokens: token ", e->count,
                    " has none, and llama.cpp refuses the model (Index out of array bounds)"));
        } else if (e->count > n_vocab) {
            add(vocab_problem::array_long, true, key, n_vocab, e->count - n_vocab,
                cat("has ", e->count, " ", what_for, " for ", n_vocab, " tokens: llama.cpp ignores those from index ",
                    n_vocab, " on"));
        }
    }

    void special_ids() {
        for (std::string_view key : special_keys) {
            const gguf::kv* e = md.find(key);
            if (e == nullptr) continue;
            auto id = e->get<std::uint32_t>();
            if (!id) {
                add(vocab_problem::special_id_type, false, key, 0, 1,
                    cat("is ", type_text(*e),
                        ": llama.cpp reads it as u32 and refuses the model (key has wrong type)"));
            } else if (*id >= n_vocab) {
                add(vocab_problem::special_id_out_of_range, true, key, *id, 1,
                    cat("is ", std::uint64_t{*id}, ", not below the vocabulary's ", n_vocab,
                        " tokens: llama.cpp ignores it (bad special token) and uses its default id"));
            }
        }
    }

    bool known(std::string_view s) const { return ids.contains(s); }

    void merges() {
        const gguf::kv* mk = md.find(model_key);
        const auto model = mk == nullptr ? gguf::result<std::string_view>(std::string_view()) : mk->get<std::string_view>();
        const gguf::kv* e = md.find(merges_key);
        if (e == nullptr || !model || !reads_merges(*model)) return;
        auto a = e->get<gguf::array_view>();
        if (!a || a->element_type() != gguf::value_type::string) {
            add(vocab_problem::merges_not_strings, false, merges_key, 0, 1,
                cat("is ", type_text(*e), ", not an array of strings, and the ", shown(*model),
                    " tokenizer model reads it: llama.cpp asserts on it (abort)"));
            return;
        }
        std::uint64_t i = 0, no_space = 0, first_no_space = 0, absent = 0, first_absent = 0;
        std::string first_absent_text, joined;
        for (std::string_view w : a->strings()) {
            if (i == a->size()) break;
            // llama.cpp splits at the first space after the first byte.
            const std::size_t pos = w.size() > 1 ? w.find(' ', 1) : std::string_view::npos;
            if (pos == std::string_view::npos) {
                if (no_space++ == 0) first_no_space = i;
            } else {
                const std::string_view left = w.substr(0, pos), right = w.substr(pos + 1);
                joined.assign(left);
                joined.append(right);
                const bool l = known(left), r = known(right), j = known(joined);
                if (!(l && r && j) && absent++ == 0) {
                    first_absent = i;
                    first_absent_text = !l ? shown(left) : !r ? shown(right) : shown(joined);
                }
            }
            ++i;
        }
        if (no_space > 0)
            add(vocab_problem::merge_without_space, true, merges_key, first_no_space, no_space,
                cat("merge ", first_no_space, " has no space between two parts",
                    no_space > 1 ? cat(" (", no_space, " merges)") : std::string(), ": llama.cpp never applies it"));
        if (absent > 0)
            add(vocab_problem::merge_part_absent, true, merges_key, first_absent, absent,
                cat("merge ", first_absent, " names ", first_absent_text, ", which is not a token",
                    absent > 1 ? cat(" (", absent, " merges name absent tokens)") : std::string(),
                    ": it can never produce a token"));
    }
};

}  // namespace

gguf::result<std::vector<vocab_finding>> check_vocab(const gguf::file_view& metadata) noexcept {
    try {
        const gguf::kv* mk = metadata.find(model_key);
        if (mk != nullptr) {
            auto model = mk->get<std::string_view>();
            if (model && (*model == "none" || *model == "no_vocab")) return std::vector<vocab_finding>{};
        }
        if (metadata.find(tokens_key) == nullptr) return std::vector<vocab_finding>{};
        checker c{metadata, {}, 0, {}, {}};
        if (c.tokens()) {
            c.per_token_array(scores_key, gguf::value_type::f32, "scores");
            c.per_token_array(types_key, gguf::value_type::i32, "token types");
            c.special_ids();
            c.merges();
        }
        // Findings first, then warnings, keeping the order within each.
        std::vector<vocab_finding> sorted;
        sorted.reserve(c.out.size());
        for (auto& f : c.out)
            if (!f.warning) sorted.push_back(std::move(f));
        for (auto& f : c.out)
            if (f.warning) sorted.push_back(std::move(f));
        return sorted;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(detail::code_error(gguf::errc::out_of_memory));
    }
}

}  // namespace minfer::check
