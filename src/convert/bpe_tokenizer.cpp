// tokenizer.json into bpe_tokenizer_data: the JSON read into a json_tree, then each part checked as
// the table in bpe_tokenizer.hpp says, the merges and added tokens resolved to ids, the patterns
// compiled.
#include "minfer/convert/bpe_tokenizer.hpp"

#include <algorithm>
#include <cerrno>
#include <initializer_list>

#include "bpe_tokenizer_data.hpp"
#include "minfer/convert/errors.hpp"
#include "capped_file.hpp"

namespace minfer::convert {

namespace detail {

void token_trie::insert(std::string_view text, std::uint32_t token) {
    if (nodes.empty()) nodes.emplace_back();
    std::uint32_t at = 0;
    for (char ch : text) {
        const auto b = static_cast<unsigned char>(ch);
        auto& next = nodes[at].next;
        auto it = std::lower_bound(next.begin(), next.end(), b, [](const auto& e, unsigned char v) { return e.first < v; });
        if (it != next.end() && it->first == b) {
            at = it->second;
            continue;
        }
        const auto child = static_cast<std::uint32_t>(nodes.size());
        next.insert(it, {b, child});
        nodes.emplace_back();
        at = child;
    }
    if (nodes[at].token < 0) nodes[at].token = static_cast<std::int32_t>(token);
}

std::optional<std::pair<std::uint32_t, std::size_t>> token_trie::longest_at(std::string_view text,
                                                                          std::size_t at) const noexcept {
    std::optional<std::pair<std::uint32_t, std::size_t>> best;
    if (nodes.empty()) return best;
    std::uint32_t n = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        const auto& next = nodes[n].next;
        auto it = std::lower_bound(next.begin(), next.end(), b, [](const auto& e, unsigned char v) { return e.first < v; });
        if (it == next.end() || it->first != b) break;
        n = it->second;
        if (nodes[n].token >= 0) best = {static_cast<std::uint32_t>(nodes[n].token), i + 1 - at};
    }
    return best;
}

}  // namespace detail

namespace {

constexpr detail::json_tree_limits tokenizer_json_limits{64, std::size_t{1} << 22};
// An added token's content above this many bytes is refused (real ones are under 100): it bounds the
// trie walk at each byte of a text.
constexpr std::size_t added_token_max_bytes = 1024;
constexpr std::size_t added_tokens_max = std::size_t{1} << 17;

// GPT-2's pre-tokenization pattern, which the ByteLevel pre-tokenizer applies with use_regex: compatibility
// data (the tokenizers crate's ByteLevel, from OpenAI's GPT-2 encoder).
constexpr std::string_view gpt2_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Thrown inside this file only; read and parse turn it into their result.
struct tokenizer_failure {
    gguf::error e;
};

class tokenizer_reader {
public:
    tokenizer_reader(const detail::json_tree& tree, std::string_view file)
        : root_(json_access::view(&tree, 0)), file_(file) {}

    void read(bpe_tokenizer_data& d) {
        if (root_.kind() != json_kind::object)
            bad(root_, "", "the document is " + std::string(describe(root_.kind())) + ", not a JSON object");
        only_keys(root_, "", {"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                              "post_processor", "decoder", "model"});
        if (const json_value v = root_.member("version"); v.present() && !v.as_string())
            bad(v, "version", "not a string");
        for (std::string_view key : {"truncation", "padding"})
            if (const json_value v = root_.member(key); !v.is_none())
                unsupported(v, key, "set: it changes the ids an encode gives (only null is supported)");
        model(d);
        added_tokens(d);
        normalizer(d);
        pre_tokenizer(d);
        post_processor(d, root_.member("post_processor"), 0);
        decoder();
    }

private:
    [[noreturn]] void fail(gguf::errc code, const json_value& at, std::string_view subject, std::string detail,
                           std::uint64_t expected = 0, std::uint64_t found = 0) const {
        tokenizer_failure f;
        f.e.code = code;
        f.e.where = gguf::section::metadata;
        f.e.file = std::string(file_);
        f.e.offset = at.present() ? at.offset() : root_.offset();
        f.e.subject = subject;
        f.e.detail = std::move(detail);
        f.e.expected = expected;
        f.e.found = found;
        throw f;
    }
    [[noreturn]] void bad(const json_value& at, std::string_view subject, std::string detail, std::uint64_t expected = 0,
                          std::uint64_t found = 0) const {
        fail(codes::bad_tokenizer, at, subject, std::move(detail), expected, found);
    }
    [[noreturn]] void unsupported(const json_value& at, std::string_view subject, std::string detail) const {
        fail(codes::unsupported_tokenizer, at, subject, std::move(detail));
    }

    // A field we do not know could change what encode gives: refused, not ignored.
    void only_keys(const json_value& object, std::string_view where, std::initializer_list<std::string_view> known) const {
        for (std::size_t i = 0; i < object.size(); ++i) {
            const std::string_view key = object.key_at(i);
            if (std::find(known.begin(), known.end(), key) == known.end())
                unsupported(object.at(i), where.empty() ? key : where,
                            "the field " + detail::in_quotes(key) + " is not read by this converter");
        }
    }
    json_value required(const json_value& object, std::string_view key, json_kind kind, std::string_view subject) const {
        const json_value v = object.member(key);
        if (!v.present()) bad(object, subject, "no " + detail::in_quotes(key));
        if (v.kind() != kind)
            bad(v, subject, detail::in_quotes(key) + " is " + std::string(describe(v.kind())) + ", not " +
                                std::string(describe(kind)));
        return v;
    }
    bool required_bool(const json_value& object, std::string_view key, std::string_view subject) const {
        return *required(object, key, json_kind::boolean, subject).as_bool();
    }
    std::string_view type_of(const json_value& object, std::string_view subject) const {
        if (object.kind() != json_kind::object)
            bad(object, subject, std::string(describe(object.kind())) + ", not an object");
        return *required(object, "type", json_kind::string, subject).as_string();
    }

    void model(bpe_tokenizer_data& d) {
        const json_value m = root_.member("model");
        if (!m.present()) bad(root_, "model", "no model");
        const std::string_view type = type_of(m, "model");
        if (type != "BPE")
            unsupported(m.member("type"), "model", "model type " + detail::in_quotes(type) +
                                                       "; only byte-level BPE (GPT-2, Llama 3, Qwen) is converted");
        only_keys(m, "model", {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                               "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"});
        if (const json_value v = m.member("dropout"); !v.is_none())
            unsupported(v, "model.dropout", "BPE dropout (random merges) is not reproducible");
        for (std::string_view key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
            const json_value v = m.member(key);
            if (v.is_none()) continue;
            if (!v.as_string()) bad(v, key, "not a string or null");
            if (!v.as_string()->empty()) unsupported(v, key, "a non-empty affix (not a byte-level BPE)");
        }
        if (const json_value v = m.member("byte_fallback"); v.present()) {
            if (!v.as_bool()) bad(v, "model.byte_fallback", "not a boolean");
            if (*v.as_bool())
                unsupported(v, "model.byte_fallback", "byte fallback (a SentencePiece-style BPE, not a byte-level one)");
        }
        if (const json_value v = m.member("ignore_merges"); v.present()) {
            if (!v.as_bool()) bad(v, "model.ignore_merges", "not a boolean");
            d.ignore_merges = *v.as_bool();
        }
        if (const json_value v = m.member("fuse_unk"); v.present()) {
            if (!v.as_bool()) bad(v, "model.fuse_unk", "not a boolean");
            d.fuse_unk = *v.as_bool();
        }
        vocab(d, required(m, "vocab", json_kind::object, "model.vocab"));
        // A byte-level BPE can spell any text: each of the 256 byte-level characters is a token. So
        // the encoder never meets an unknown character (unk_token and fuse_unk never apply).
        const json_value vocab_at = m.member("vocab");
        for (unsigned b = 0; b < 256; ++b) {
            std::string ch;
            detail::append_utf8(ch, byte_level_char(static_cast<std::uint8_t>(b)));
            if (!d.vocab_ids.contains(ch))
                unsupported(vocab_at, "model.vocab", "the byte-level character " + detail::in_quotes(ch) + " (byte " +
                                                         std::to_string(b) + ") is not a token: not a byte-level BPE");
        }
        if (const json_value v = m.member("unk_token"); !v.is_none()) {
            if (!v.as_string()) bad(v, "model.unk_token", "not a string or null");
            const auto it = d.vocab_ids.find(*v.as_string());
            if (it == d.vocab_ids.end()) bad(v, "model.unk_token", "not a token of the vocabulary");
            d.unk_id = it->second;
        }
        merges(d, required(m, "merges", json_kind::array, "model.merges"));
    }

    void vocab(bpe_tokenizer_data& d, const json_value& v) {
        const std::size_t n = v.size();
        if (n == 0) bad(v, "model.vocab", "an empty vocabulary");
        if (n > tokenizer_max_tokens)
            bad(v, "model.vocab", "more tokens than " + std::to_string(tokenizer_max_tokens), tokenizer_max_tokens, n);
        d.vocab.assign(n, std::string());
        std::vector<bool> seen(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            const json_value id = v.at(i);
            const std::string_view token = v.key_at(i);
            if (id.kind() != json_kind::number || !id.is_integer() || !id.as_uint())
                bad(id, token, "the id is " + std::string(describe(id.kind())) + ", not an integer ≥ 0");
            const std::uint64_t u = *id.as_uint();
            // the Rust core numbers added tokens from the vocabulary's size: ids must be 0..n-1
            if (u >= n) bad(id, token, "id " + std::to_string(u) + " is not below the vocabulary's size", n, u);
            if (seen[u]) bad(id, token, "id " + std::to_string(u) + " is given to two tokens");
            if (token.empty()) bad(id, token, "an empty token");
            seen[u] = true;
            d.vocab[u] = token;
        }
        d.vocab_ids.reserve(n);
        for (std::size_t id = 0; id < n; ++id) d.vocab_ids.emplace(d.vocab[id], static_cast<std::uint32_t>(id));
    }

    std::uint32_t token_of(const bpe_tokenizer_data& d, std::string_view text, const json_value& at, std::size_t rank) const {
        const auto it = d.vocab_ids.find(text);
        if (it == d.vocab_ids.end())
            bad(at, text, "merge " + std::to_string(rank) + " names " + detail::in_quotes(text) +
                              ", which is not a token of the vocabulary");
        return it->second;
    }

    void merges(bpe_tokenizer_data& d, const json_value& list) {
        const std::size_t n = list.size();
        if (n > tokenizer_max_merges)
            bad(list, "model.merges", "more merges than " + std::to_string(tokenizer_max_merges), tokenizer_max_merges, n);
        d.merges.reserve(n);
        d.merge_of.reserve(n);
        std::string joined;
        for (std::size_t rank = 0; rank < n; ++rank) {
            const json_value m = list.at(rank);
            std::string_view left, right;
            const bool pair = m.kind() == json_kind::array;
            if (rank == 0) d.merges_are_pairs = pair;
            if (pair != d.merges_are_pairs)
                bad(m, "model.merges", "merge " + std::to_string(rank) + " is " + std::string(describe(m.kind())) +
                                           " where the first is " + (d.merges_are_pairs ? "a pair" : "a string") +
                                           " (convert_hf_to_gguf.py reads the list by its first item)");
            if (pair) {
                if (m.size() != 2 || !m.at(0).as_string() || !m.at(1).as_string())
                    bad(m, "model.merges", "merge " + std::to_string(rank) + " is not a pair of two strings");
                left = *m.at(0).as_string();
                right = *m.at(1).as_string();
            } else {
                if (!m.as_string()) bad(m, "model.merges", "merge " + std::to_string(rank) + " is " +
                                                               std::string(describe(m.kind())) + ", not a string");
                const std::string_view s = *m.as_string();
                const std::size_t space = s.find(' ');
                // the Rust core splits on ' ' and wants exactly two parts
                if (space == std::string_view::npos || s.find(' ', space + 1) != std::string_view::npos)
                    bad(m, "model.merges", "merge " + std::to_string(rank) + " " + detail::in_quotes(s) +
                                               " is not two tokens separated by one space");
                left = s.substr(0, space);
                right = s.substr(space + 1);
            }
            const std::uint32_t l = token_of(d, left, m, rank);
            const std::uint32_t r = token_of(d, right, m, rank);
            joined.assign(left);
            joined.append(right);
            const std::uint32_t merged = token_of(d, joined, m, rank);
            const std::uint64_t key = (std::uint64_t{l} << 32) | r;
            // the Rust core keeps the last rank of a repeated pair, llama.cpp the first: refused
            if (!d.merge_of.emplace(key, bpe_tokenizer_data::merge_result{static_cast<std::uint32_t>(rank), merged}).second)
                bad(m, "model.merges", "merge " + std::to_string(rank) + " repeats the pair of merge " +
                                           std::to_string(d.merge_of[key].rank));
            d.merges.push_back({l, r});
        }
    }

    void added_tokens(bpe_tokenizer_data& d) {
        d.id_count = d.vocab.size();
        const json_value list = root_.member("added_tokens");
        if (list.is_none()) return;
        if (list.kind() != json_kind::array) bad(list, "added_tokens", "not an array");
        if (list.size() > added_tokens_max)
            bad(list, "added_tokens", "more added tokens than " + std::to_string(added_tokens_max), added_tokens_max,
                list.size());
        std::unordered_map<std::string_view, std::uint32_t> by_content;
        std::uint32_t next_new = static_cast<std::uint32_t>(d.vocab.size());
        d.added.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            const json_value t = list.at(i);
            if (t.kind() != json_kind::object) bad(t, "added_tokens", "an entry is " + std::string(describe(t.kind())));
            only_keys(t, "added_tokens", {"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"});
            const json_value content = required(t, "content", json_kind::string, "added_tokens");
            added_token a;
            a.content = *content.as_string();
            a.offset = t.offset();
            const std::string_view subject = *content.as_string();
            if (a.content.empty()) bad(content, "added_tokens", "an empty content");
            if (a.content.size() > added_token_max_bytes)
                bad(content, "added_tokens", "a content of more than " + std::to_string(added_token_max_bytes) + " bytes",
                    added_token_max_bytes, a.content.size());
            const json_value id = required(t, "id", json_kind::number, subject);
            if (!id.is_integer() || !id.as_uint() || *id.as_uint() >= tokenizer_max_tokens)
                bad(id, subject, "the id is not an integer in [0, " + std::to_string(tokenizer_max_tokens) + ")");
            a.id = static_cast<std::uint32_t>(*id.as_uint());
            a.single_word = required_bool(t, "single_word", subject);
            a.lstrip = required_bool(t, "lstrip", subject);
            a.rstrip = required_bool(t, "rstrip", subject);
            a.normalized = required_bool(t, "normalized", subject);
            a.special = required_bool(t, "special", subject);
            if (by_content.contains(a.content)) bad(content, subject, "added twice");
            // The id the Rust core gives it when it reads the list in order (it warns and uses its own
            // when the file says otherwise): the vocabulary's id, else the next one after the others.
            const auto in_vocab = d.vocab_ids.find(a.content);
            const std::uint32_t expected = in_vocab != d.vocab_ids.end() ? in_vocab->second : next_new;
            if (a.id != expected)
                bad(id, subject, "id " + std::to_string(a.id) + " where the Rust core would give it " +
                                     std::to_string(expected) +
                                     (in_vocab != d.vocab_ids.end() ? " (its vocabulary id)" : " (the next free id)"),
                    expected, a.id);
            if (in_vocab == d.vocab_ids.end()) ++next_new;
            d.added.push_back(std::move(a));
            by_content.emplace(d.added.back().content, d.added.back().id);
        }
        for (std::size_t i = 0; i < d.added.size(); ++i) d.added_by_id.emplace(d.added[i].id, static_cast<std::uint32_t>(i));
        d.id_count = std::max<std::size_t>(d.vocab.size(), next_new);
    }

    void normalizer(bpe_tokenizer_data& d) {
        const json_value n = root_.member("normalizer");
        if (n.is_none()) return;
        const std::string_view type = type_of(n, "normalizer");
        if (type != "NFC") unsupported(n.member("type"), "normalizer", "normalizer " + detail::in_quotes(type) + " (null and NFC are supported)");
        only_keys(n, "normalizer", {"type"});
        d.nfc = true;
    }

    void byte_level_fields(const json_value& s, pre_tokenizer_step* step, std::string_view subject) const {
        only_keys(s, subject, {"type", "add_prefix_space", "trim_offsets", "use_regex"});
        const bool prefix = required_bool(s, "add_prefix_space", subject);
        // trim_offsets changes offsets only, never ids
        if (const json_value v = s.member("trim_offsets"); v.present() && !v.as_bool()) bad(v, subject, "trim_offsets is not a boolean");
        bool use_regex = true;  // the Rust core's default
        if (const json_value v = s.member("use_regex"); v.present()) {
            if (!v.as_bool()) bad(v, subject, "use_regex is not a boolean");
            use_regex = *v.as_bool();
        }
        if (step != nullptr) {
            step->add_prefix_space = prefix;
            step->use_regex = use_regex;
        }
    }

    void pre_tokenizer(bpe_tokenizer_data& d) {
        const json_value p = root_.member("pre_tokenizer");
        if (p.is_none()) unsupported(root_, "pre_tokenizer", "no pre-tokenizer: a byte-level BPE needs ByteLevel");
        std::vector<json_value> items;
        if (type_of(p, "pre_tokenizer") == "Sequence") {
            only_keys(p, "pre_tokenizer", {"type", "pretokenizers"});
            const json_value list = required(p, "pretokenizers", json_kind::array, "pre_tokenizer");
            for (std::size_t i = 0; i < list.size(); ++i) items.push_back(list.at(i));
        } else {
            items.push_back(p);
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
            const json_value s = items[i];
            const std::string_view type = type_of(s, "pre_tokenizer");
            pre_tokenizer_step step;
            step.offset = s.offset();
            if (type == "Split") {
                if (!d.steps.empty() && d.steps.back().type == pre_tokenizer_step::kind::byte_level)
                    unsupported(s, "pre_tokenizer", "a Split after ByteLevel");
                only_keys(s, "pre_tokenizer", {"type", "pattern", "behavior", "invert"});
                const json_value pattern = required(s, "pattern", json_kind::object, "pre_tokenizer");
                const json_value regex = pattern.member("Regex");
                if (pattern.size() != 1 || !regex.as_string())
                    unsupported(pattern, "pre_tokenizer", "a Split pattern other than {\"Regex\": \"…\"}");
                const std::string_view behavior = *required(s, "behavior", json_kind::string, "pre_tokenizer").as_string();
                if (behavior != "Isolated")
                    unsupported(s.member("behavior"), "pre_tokenizer",
                                "Split behavior " + detail::in_quotes(behavior) + " (only Isolated is supported)");
                if (required_bool(s, "invert", "pre_tokenizer"))
                    unsupported(s.member("invert"), "pre_tokenizer", "an inverted Split");
                step.type = pre_tokenizer_step::kind::split;
                step.pattern = *regex.as_string();
                d.step_regex.push_back(compile(step.pattern, regex));
            } else if (type == "ByteLevel") {
                step.type = pre_tokenizer_step::kind::byte_level;
                byte_level_fields(s, &step, "pre_tokenizer");
                d.step_regex.push_back(step.use_regex ? compile(gpt2_pattern, s) : detail::regex());
            } else {
                unsupported(s.member("type"), "pre_tokenizer", "pre-tokenizer " + detail::in_quotes(type) +
                                                                   " (Split and ByteLevel are supported)");
            }
            d.steps.push_back(std::move(step));
        }
        if (d.steps.empty() || d.steps.back().type != pre_tokenizer_step::kind::byte_level)
            unsupported(p, "pre_tokenizer", "no ByteLevel step last: not a byte-level BPE");
        for (std::size_t i = 0; i + 1 < d.steps.size(); ++i)
            if (d.steps[i].type == pre_tokenizer_step::kind::byte_level)
                unsupported(items[i], "pre_tokenizer", "two ByteLevel steps");
    }

    detail::regex compile(std::string_view pattern, const json_value& at) const {
        detail::pattern_failure failure;
        std::optional<detail::regex> r = detail::regex::compile(pattern, failure);
        if (r) return *std::move(r);
        const std::string detail = failure.detail + " (at byte " + std::to_string(failure.offset) + " of " +
                                   detail::in_quotes(pattern) + ")";
        if (failure.unsupported) unsupported(at, "pre_tokenizer", detail);
        bad(at, "pre_tokenizer", detail);
    }

    void post_processor(bpe_tokenizer_data& d, const json_value& p, int depth) {
        if (p.is_none()) return;
        const std::string_view type = type_of(p, "post_processor");
        if (type == "ByteLevel") {
            byte_level_fields(p, nullptr, "post_processor");  // offsets only
        } else if (type == "Sequence" && depth == 0) {
            only_keys(p, "post_processor", {"type", "processors"});
            const json_value list = required(p, "processors", json_kind::array, "post_processor");
            for (std::size_t i = 0; i < list.size(); ++i) post_processor(d, list.at(i), depth + 1);
        } else if (type == "TemplateProcessing") {
            if (!d.single.empty()) unsupported(p, "post_processor", "two TemplateProcessing steps");
            template_processing(d, p);
        } else {
            unsupported(p.member("type"), "post_processor", "post-processor " + detail::in_quotes(type) +
                                                                " (ByteLevel, TemplateProcessing and a Sequence of them are supported)");
        }
    }

    void template_processing(bpe_tokenizer_data& d, const json_value& p) {
        only_keys(p, "post_processor", {"type", "single", "pair", "special_tokens"});
        const json_value specials = required(p, "special_tokens", json_kind::object, "post_processor");
        for (std::size_t i = 0; i < specials.size(); ++i) {
            const json_value s = specials.at(i);
            if (s.kind() != json_kind::object) bad(s, specials.key_at(i), "a special token is not an object");
            const json_value ids = required(s, "ids", json_kind::array, specials.key_at(i));
            required(s, "id", json_kind::string, specials.key_at(i));
            for (std::size_t k = 0; k < ids.size(); ++k)
                if (!ids.at(k).is_integer() || !ids.at(k).as_uint() || *ids.at(k).as_uint() >= d.id_count)
                    bad(ids.at(k), specials.key_at(i), "an id that is not a token");
        }
        // pair is checked for shape only: convert_hf_to_gguf.py reads it, encode(text) never uses it
        for (std::string_view which : {"single", "pair"}) {
            const json_value list = required(p, which, json_kind::array, "post_processor");
            for (std::size_t i = 0; i < list.size(); ++i) {
                const json_value piece = list.at(i);
                if (piece.kind() != json_kind::object || piece.size() != 1)
                    bad(piece, "post_processor", "a template piece is not {\"SpecialToken\": …} or {\"Sequence\": …}");
                const json_value special = piece.member("SpecialToken");
                const json_value sequence = piece.member("Sequence");
                template_piece t;
                if (special.kind() == json_kind::object) {
                    const std::string_view name = *required(special, "id", json_kind::string, "post_processor").as_string();
                    const json_value entry = specials.member(name);
                    if (!entry.present()) bad(special, name, "a template token missing from special_tokens");
                    t.special = name;
                    const json_value ids = entry.member("ids");
                    for (std::size_t k = 0; k < ids.size(); ++k) t.ids.push_back(static_cast<std::uint32_t>(*ids.at(k).as_uint()));
                } else if (sequence.kind() == json_kind::object) {
                    const std::string_view id = *required(sequence, "id", json_kind::string, "post_processor").as_string();
                    if (id != "A" && id != "B") bad(sequence, "post_processor", "a sequence other than A or B");
                    if (which == "single" && id != "A") unsupported(sequence, "post_processor", "sequence B in the single template");
                    t.is_sequence = true;
                } else {
                    bad(piece, "post_processor", "a template piece is not {\"SpecialToken\": …} or {\"Sequence\": …}");
                }
                if (which == "single") d.single.push_back(std::move(t));
            }
        }
    }

    void decoder() const {
        const json_value dec = root_.member("decoder");
        if (dec.is_none()) unsupported(root_, "decoder", "no decoder: a byte-level BPE needs ByteLevel");
        const std::string_view type = type_of(dec, "decoder");
        if (type != "ByteLevel") unsupported(dec.member("type"), "decoder", "decoder " + detail::in_quotes(type) + " (ByteLevel is supported)");
        byte_level_fields(dec, nullptr, "decoder");
    }

    json_value root_;
    std::string_view file_;
};

gguf::error tokenizer_error(std::string file, std::uint64_t offset, std::string detail) {
    gguf::error e;
    e.code = codes::bad_tokenizer;
    e.where = gguf::section::metadata;
    e.file = std::move(file);
    e.offset = offset;
    e.detail = std::move(detail);
    return e;
}

}  // namespace

gguf::result<bpe_tokenizer> bpe_tokenizer::parse(std::string_view text, std::string file) noexcept {
    try {
        auto tree = std::make_shared<detail::json_tree>();
        detail::json_failure failure;
        if (!detail::build_json_tree(text, 0, tokenizer_json_limits, *tree, failure)) {
            if (failure.out_of_memory) return gguf::unexpected(gguf::out_of_memory_error("reading tokenizer.json"));
            return gguf::unexpected(tokenizer_error(std::move(file), failure.offset, "not valid JSON: " + failure.detail));
        }
        auto d = std::make_shared<bpe_tokenizer_data>();
        d->file = file;
        d->document = tree;
        tokenizer_reader(*tree, d->file).read(*d);
        // the added tokens' tries: the non-normalized by their content, the normalized by its NFC
        std::string normalized;
        for (std::size_t i = 0; i < d->added.size(); ++i) {
            const added_token& a = d->added[i];
            if (!a.normalized) {
                d->raw_trie.insert(a.content, static_cast<std::uint32_t>(i));
            } else if (d->nfc) {
                if (!detail::nfc(a.content, normalized))
                    return gguf::unexpected(gguf::out_of_memory_error("normalizing an added token"));
                d->normalized_trie.insert(normalized, static_cast<std::uint32_t>(i));
            } else {
                d->normalized_trie.insert(a.content, static_cast<std::uint32_t>(i));
            }
        }
        bpe_tokenizer t;
        bpe_tokenizer_access::set(t, std::move(d));
        return t;
    } catch (tokenizer_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {  // std::bad_alloc
        return gguf::unexpected(gguf::out_of_memory_error("reading tokenizer.json"));
    }
}

gguf::result<bpe_tokenizer> bpe_tokenizer::read(const std::filesystem::path& path) noexcept {
    auto text = detail::read_capped_file(path, tokenizer_json_max_bytes, codes::bad_tokenizer, detail::when_missing::refuse);
    if (!text) return gguf::unexpected(std::move(text).error());
    try {
        return parse(*text, path.string());
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading tokenizer.json"));
    }
}

bpe_tokenizer::bpe_tokenizer() noexcept = default;
bpe_tokenizer::bpe_tokenizer(const bpe_tokenizer&) noexcept = default;
bpe_tokenizer::bpe_tokenizer(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer& bpe_tokenizer::operator=(const bpe_tokenizer&) noexcept = default;
bpe_tokenizer& bpe_tokenizer::operator=(bpe_tokenizer&&) noexcept = default;
bpe_tokenizer::~bpe_tokenizer() = default;

const bpe_tokenizer_data& bpe_tokenizer::data() const noexcept {
    static const bpe_tokenizer_data empty;  // what a default-constructed tokenizer reads
    return data_ ? *data_ : empty;
}

const std::string& bpe_tokenizer::file() const noexcept { return data().file; }
std::span<const std::string> bpe_tokenizer::model_tokens() const noexcept { return data().vocab; }
std::optional<std::uint32_t> bpe_tokenizer::model_token_id(std::string_view text) const noexcept {
    const auto& d = data();
    const auto it = d.vocab_ids.find(text);
    if (it == d.vocab_ids.end()) return std::nullopt;
    return it->second;
}
std::span<const added_token> bpe_tokenizer::added_tokens() const noexcept { return data().added; }
const added_token* bpe_tokenizer::find_added(std::uint32_t id) const noexcept {
    const auto& d = data();
    const auto it = d.added_by_id.find(id);
    return it == d.added_by_id.end() ? nullptr : &d.added[it->second];
}
std::size_t bpe_tokenizer::id_count() const noexcept { return data().id_count; }
std::string_view bpe_tokenizer::token_text(std::uint32_t id) const noexcept {
    if (const added_token* a = find_added(id)) return a->content;
    const auto& d = data();
    return id < d.vocab.size() ? std::string_view(d.vocab[id]) : std::string_view();
}
std::size_t bpe_tokenizer::merge_count() const noexcept { return data().merges.size(); }
bool bpe_tokenizer::merges_are_pairs() const noexcept { return data().merges_are_pairs; }
bool bpe_tokenizer::ignore_merges() const noexcept { return data().ignore_merges; }
bool bpe_tokenizer::normalizes_nfc() const noexcept { return data().nfc; }
std::span<const pre_tokenizer_step> bpe_tokenizer::pre_tokenizer() const noexcept { return data().steps; }
std::span<const template_piece> bpe_tokenizer::single_template() const noexcept { return data().single; }

std::vector<std::string> bpe_tokenizer::gguf_merges() const {
    const auto& d = data();
    std::vector<std::string> out;
    out.reserve(d.merges.size());
    for (const auto& m : d.merges) {
        std::string s;
        const auto part = [&](std::string_view t) {
            // SpecialVocab writes a space inside a pair's part as chr(ord(' ') + 256), U+0120, so that
            // the one space left separates the parts
            if (!d.merges_are_pairs) {
                s += t;
                return;
            }
            for (char ch : t) {
                if (ch == ' ') s += "\xC4\xA0";
                else s += ch;
            }
        };
        part(d.vocab[m.left]);
        s += ' ';
        part(d.vocab[m.right]);
        out.push_back(std::move(s));
    }
    return out;
}

json_value bpe_tokenizer::raw() const& noexcept {
    if (!data_ || !data_->document) return {};
    return json_access::view(data_->document.get(), 0);
}

}  // namespace minfer::convert
