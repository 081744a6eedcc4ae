#pragma once
// Internal: what a bpe_tokenizer holds once read (bpe_tokenizer.cpp fills it, bpe_encoder.cpp runs it).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bpe_text.hpp"
#include "json_tree.hpp"
#include "minfer/convert/bpe_tokenizer.hpp"

namespace minfer::convert {

namespace detail {

/// The added tokens of one matching pass as a byte trie, for leftmost-longest matching.
struct token_trie {
    struct node {
        std::vector<std::pair<unsigned char, std::uint32_t>> next;  // sorted by byte
        std::int32_t token = -1;                                    // index into added, when a content ends here
    };
    std::vector<node> nodes;  // nodes[0] is the root once a content is inserted (empty: none, no allocation)

    void insert(std::string_view text, std::uint32_t token);
    /// The longest content starting at text[at]: its index into added and its length.
    std::optional<std::pair<std::uint32_t, std::size_t>> longest_at(std::string_view text, std::size_t at) const noexcept;
};

}  // namespace detail

struct bpe_tokenizer_data {
    std::string file;
    std::shared_ptr<const detail::json_tree> document;

    std::vector<std::string> vocab;                                 // id -> token
    std::unordered_map<std::string_view, std::uint32_t> vocab_ids;  // views into vocab
    struct merge {
        std::uint32_t left = 0, right = 0;
    };
    std::vector<merge> merges;  // file order
    struct merge_result {
        std::uint32_t rank = 0;
        std::uint32_t merged = 0;
    };
    std::unordered_map<std::uint64_t, merge_result> merge_of;  // (left << 32 | right) -> rank, result
    bool merges_are_pairs = false;
    bool ignore_merges = false;
    bool fuse_unk = false;
    std::optional<std::uint32_t> unk_id;

    std::vector<added_token> added;
    std::unordered_map<std::uint32_t, std::uint32_t> added_by_id;  // id -> index into added
    std::size_t id_count = 0;
    detail::token_trie raw_trie;         // the non-normalized added tokens, matched in the raw text
    detail::token_trie normalized_trie;  // the normalized ones, by their normalized content

    bool nfc = false;
    std::vector<pre_tokenizer_step> steps;
    std::vector<detail::regex> step_regex;  // per step (byte_level with use_regex: GPT-2's pattern)
    std::vector<template_piece> single;
};

struct bpe_tokenizer_access {
    static const bpe_tokenizer_data& data(const bpe_tokenizer& t) noexcept { return *t.data_; }
    static void set(bpe_tokenizer& t, std::shared_ptr<const bpe_tokenizer_data> d) noexcept { t.data_ = std::move(d); }
};

}  // namespace minfer::convert
