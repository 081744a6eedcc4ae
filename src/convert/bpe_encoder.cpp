// bpe_tokenizer::encode and decode: the Rust core's pipeline for a byte-level BPE, written from its
// documented behaviour and checked against it (tests/convert/bpe_expected.json): added tokens,
// normalizer, pre-tokenizer, byte-level map, merges by rank, template.
#include <array>
#include <queue>

#include "bpe_tokenizer_data.hpp"
#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/errors.hpp"

namespace minfer::convert {

namespace {

// GPT-2's bytes_to_unicode, computed: the printable Latin-1 bytes keep their code point, the others
// take 256, 257, … in byte order, so every byte is a visible character.
struct byte_level_table {
    static constexpr char32_t chars = 256 + 68;  // the code points used: 0..255 and 256..323
    std::array<char32_t, 256> to_char{};
    std::array<std::string, 256> utf8{};  // 1 or 2 bytes: never allocates
    std::array<std::int16_t, chars> to_byte{};
    byte_level_table() {
        to_byte.fill(-1);
        char32_t next = 256;
        for (unsigned b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            to_char[b] = printable ? static_cast<char32_t>(b) : next++;
            detail::append_utf8(utf8[b], to_char[b]);
            to_byte[to_char[b]] = static_cast<std::int16_t>(b);
        }
    }
};

const byte_level_table& table() {
    static const byte_level_table t;
    return t;
}

struct encode_failure {
    gguf::error e;
};

// A piece of the text between added tokens, or an added token.
struct segment {
    std::string text;
    std::int64_t token = -1;  // the added token's id
};

class encoder {
public:
    explicit encoder(const bpe_tokenizer_data& d) : d_(d) {}

    std::vector<std::uint32_t> run(std::string_view text, bool add_special_tokens) {
        // 1. the non-normalized added tokens in the raw text; 2. the rest normalized, then the
        // normalized added tokens in it (AddedVocabulary::extract_and_normalize)
        std::vector<segment> raw;
        split_on_added(text, d_.raw_trie, raw);
        std::vector<segment> segments;
        std::string normalized;
        for (segment& s : raw) {
            if (s.token >= 0) {
                segments.push_back(std::move(s));
                continue;
            }
            if (d_.nfc) {
                if (!detail::nfc(s.text, normalized)) throw std::bad_alloc();
            } else {
                normalized = std::move(s.text);
            }
            split_on_added(normalized, d_.normalized_trie, segments);
        }
        std::vector<std::uint32_t> ids;
        for (const segment& s : segments) {
            if (s.token >= 0) {
                ids.push_back(static_cast<std::uint32_t>(s.token));
                continue;
            }
            for (const std::string& piece : pre_tokenize(s.text)) bpe(piece, ids);
        }
        if (!add_special_tokens || d_.single.empty()) return ids;
        std::vector<std::uint32_t> out;
        for (const template_piece& p : d_.single) {
            if (p.is_sequence) out.insert(out.end(), ids.begin(), ids.end());
            else out.insert(out.end(), p.ids.begin(), p.ids.end());
        }
        return out;
    }

private:
    // AddedVocabulary::find_matches: leftmost-longest matches; one that is not a single word where it
    // must be is skipped (the search goes on after it, not inside it); lstrip takes the whitespace
    // before (not past the previous split), rstrip the whitespace after.
    void split_on_added(std::string_view s, const detail::token_trie& trie, std::vector<segment>& out) const {
        if (trie.nodes.empty()) {  // no added token to match
            if (!s.empty()) out.push_back({std::string(s), -1});
            return;
        }
        std::size_t start_offset = 0;
        std::size_t at = 0;
        while (at < s.size()) {
            const auto found = trie.longest_at(s, at);
            if (!found) {
                at += detail::utf8_at(s, at).length;
                continue;
            }
            const added_token& a = d_.added[found->first];
            std::size_t start = at;
            std::size_t stop = at + found->second;
            at = stop;  // the matcher resumes after the match, whatever is done with it
            if (a.single_word) {
                const bool word_before = start > 0 && detail::is_word_char(detail::utf8_at(s, detail::utf8_previous(s, start)).c);
                const bool word_after = stop < s.size() && detail::is_word_char(detail::utf8_at(s, stop).c);
                if (word_before || word_after) continue;
            }
            if (a.lstrip) {
                std::size_t b = start;
                while (b > 0) {
                    const std::size_t prev = detail::utf8_previous(s, b);
                    if (!detail::is_white_space(detail::utf8_at(s, prev).c)) break;
                    b = prev;
                }
                start = std::max(b, start_offset);
            }
            if (a.rstrip) {
                while (stop < s.size()) {
                    const detail::utf8_char c = detail::utf8_at(s, stop);
                    if (!detail::is_white_space(c.c)) break;
                    stop += c.length;
                }
            }
            if (start_offset < start) out.push_back({std::string(s.substr(start_offset, start - start_offset)), -1});
            out.push_back({std::string(), static_cast<std::int64_t>(a.id)});
            start_offset = stop;
        }
        if (start_offset < s.size()) out.push_back({std::string(s.substr(start_offset)), -1});
    }

    std::vector<std::string> pre_tokenize(const std::string& text) const {
        std::vector<std::string> pieces{text};
        std::vector<std::string> next;
        std::vector<std::pair<std::size_t, std::size_t>> matches;
        for (std::size_t k = 0; k < d_.steps.size(); ++k) {
            const pre_tokenizer_step& step = d_.steps[k];
            next.clear();
            for (std::string& piece : pieces) {
                if (step.type == pre_tokenizer_step::kind::byte_level && step.add_prefix_space && !piece.starts_with(' '))
                    piece.insert(piece.begin(), ' ');
                const bool split = step.type == pre_tokenizer_step::kind::split || step.use_regex;
                if (!split) {
                    next.push_back(std::move(piece));
                    continue;
                }
                matches.clear();
                std::size_t failed_at = 0;
                if (!d_.step_regex[k].find_all(piece, matches, failed_at)) {
                    encode_failure f;
                    f.e.code = codes::bad_tokenizer;
                    f.e.where = gguf::section::metadata;
                    f.e.file = d_.file;
                    f.e.offset = step.offset;
                    f.e.subject = "pre_tokenizer";
                    f.e.detail = "the pattern exceeded PCRE2's match limits on a piece of " + std::to_string(piece.size()) +
                                 " bytes (at its byte " + std::to_string(failed_at) + ")";
                    throw f;
                }
                // Isolated: every match is a piece, and so is every stretch between matches
                std::size_t last = 0;
                for (const auto& [b, e] : matches) {
                    if (b > last) next.push_back(piece.substr(last, b - last));
                    next.push_back(piece.substr(b, e - b));
                    last = e;
                }
                if (last < piece.size()) next.push_back(piece.substr(last));
            }
            if (step.type == pre_tokenizer_step::kind::byte_level) {
                const byte_level_table& t = table();
                for (std::string& piece : next) {
                    std::string mapped;
                    mapped.reserve(piece.size() * 2);
                    for (char ch : piece) mapped += t.utf8[static_cast<unsigned char>(ch)];
                    piece = std::move(mapped);
                }
            }
            pieces.swap(next);
        }
        return pieces;
    }

    // The BPE model on one byte-level piece: with ignore_merges, a piece that is a token is that
    // token; else its characters (each a token: the reader checked the 256 are) merged pair by pair,
    // always the pair of lowest rank first, the leftmost of equal ranks first.
    void bpe(const std::string& piece, std::vector<std::uint32_t>& ids) const {
        if (d_.ignore_merges) {
            if (const auto it = d_.vocab_ids.find(piece); it != d_.vocab_ids.end()) {
                ids.push_back(it->second);
                return;
            }
        }
        struct symbol {
            std::uint32_t id;
            std::int32_t prev, next;
            bool alive;
        };
        std::vector<symbol> symbols;
        for (std::size_t i = 0; i < piece.size();) {
            const std::size_t n = detail::utf8_at(piece, i).length;
            const auto it = d_.vocab_ids.find(std::string_view(piece).substr(i, n));
            const auto index = static_cast<std::int32_t>(symbols.size());
            // every byte-level character is a token (checked when read)
            symbols.push_back({it != d_.vocab_ids.end() ? it->second : 0u, index - 1, index + 1, true});
            i += n;
        }
        if (symbols.empty()) return;
        symbols.back().next = -1;
        struct candidate {
            std::uint32_t rank;
            std::int32_t pos;
            std::uint32_t merged;
            bool operator>(const candidate& o) const noexcept { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<candidate, std::vector<candidate>, std::greater<>> queue;
        const auto consider = [&](std::int32_t left) {
            if (left < 0 || symbols[static_cast<std::size_t>(left)].next < 0) return;
            const symbol& l = symbols[static_cast<std::size_t>(left)];
            const symbol& r = symbols[static_cast<std::size_t>(l.next)];
            const auto it = d_.merge_of.find((std::uint64_t{l.id} << 32) | r.id);
            if (it != d_.merge_of.end()) queue.push({it->second.rank, left, it->second.merged});
        };
        for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size()); ++i) consider(i);
        while (!queue.empty()) {
            const candidate top = queue.top();
            queue.pop();
            symbol& l = symbols[static_cast<std::size_t>(top.pos)];
            if (!l.alive || l.next < 0) continue;
            symbol& r = symbols[static_cast<std::size_t>(l.next)];
            // the pair may have changed since it was queued: merge only if it still makes this token
            const auto it = d_.merge_of.find((std::uint64_t{l.id} << 32) | r.id);
            if (it == d_.merge_of.end() || it->second.merged != top.merged) continue;
            l.id = top.merged;
            r.alive = false;
            l.next = r.next;
            if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = top.pos;
            consider(l.prev);
            consider(top.pos);
        }
        for (std::int32_t i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) ids.push_back(symbols[static_cast<std::size_t>(i)].id);
    }

    const bpe_tokenizer_data& d_;
};

const bpe_tokenizer_data& data_of(const bpe_tokenizer& t) noexcept { return bpe_tokenizer_access::data(t); }

}  // namespace

char32_t byte_level_char(std::uint8_t byte) noexcept {
    try {
        return table().to_char[byte];
    } catch (...) {  // the table's strings are a few bytes each; a failure here is out of memory at start
        return 0;
    }
}

std::optional<std::uint8_t> byte_level_byte(char32_t c) noexcept {
    try {
        const byte_level_table& t = table();
        if (c >= byte_level_table::chars || t.to_byte[c] < 0) return std::nullopt;
        return static_cast<std::uint8_t>(t.to_byte[c]);
    } catch (...) {
        return std::nullopt;
    }
}

gguf::result<std::vector<std::uint32_t>> bpe_tokenizer::encode(std::string_view text, bool add_special_tokens) const noexcept {
    if (!data_) return std::vector<std::uint32_t>{};
    if (text.size() > encode_max_bytes) {
        gguf::error e;
        e.code = gguf::errc::input_too_large;
        e.expected = encode_max_bytes;
        e.found = text.size();
        try {
            e.detail = "a text to encode";
        } catch (...) {
        }
        return gguf::unexpected(std::move(e));
    }
    try {
        if (const std::size_t bad = detail::first_invalid_utf8(text); bad != std::string_view::npos) {
            gguf::error e;
            e.code = codes::bad_tokenizer;
            e.offset = bad;
            e.detail = "the text to encode is not UTF-8 at its byte " + std::to_string(bad);
            return gguf::unexpected(std::move(e));
        }
        return encoder(data_of(*this)).run(text, add_special_tokens);
    } catch (encode_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("encoding a text"));
    }
}

gguf::result<std::string> bpe_tokenizer::decode(std::span<const std::uint32_t> ids) const noexcept {
    try {
        std::string bytes;
        for (std::uint32_t id : ids) {
            const std::string_view token = token_text(id);
            // The ByteLevel decoder: a token all of whose characters are byte-level characters is
            // those bytes; any other token (an added token like "<|im_end|> " with a raw space) is
            // its own text.
            std::string mapped;
            bool all = true;
            for (std::size_t i = 0; i < token.size() && all;) {
                const detail::utf8_char c = detail::utf8_at(token, i);
                const auto b = byte_level_byte(c.c);
                if (!b) all = false;
                else mapped += static_cast<char>(*b);
                i += c.length;
            }
            bytes += all ? mapped : std::string(token);
        }
        return detail::utf8_lossy(bytes);
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("decoding ids"));
    }
}

}  // namespace minfer::convert
