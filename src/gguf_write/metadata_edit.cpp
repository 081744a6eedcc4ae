// metadata_edit: a person's edits checked against a model and turned into rewrite changes.
#include "minfer/gguf_write/metadata_edit.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <unordered_map>
#include <utility>

#include "minfer/gguf/rules.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/gguf_write/known_keys.hpp"

namespace minfer::gguf {
namespace {

constexpr std::string_view chat_template_key = "tokenizer.chat_template";
constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";
constexpr std::string_view architecture_key = "general.architecture";
constexpr std::size_t shown_text_bytes = 64;  // value text quoted in a message is cut here

struct type_name {
    std::string_view name;
    value_type type;
};
constexpr std::array<type_name, 13> type_names{{
    {"u8", value_type::u8}, {"i8", value_type::i8}, {"u16", value_type::u16}, {"i16", value_type::i16},
    {"u32", value_type::u32}, {"i32", value_type::i32}, {"u64", value_type::u64}, {"i64", value_type::i64},
    {"f32", value_type::f32}, {"f64", value_type::f64}, {"bool", value_type::boolean}, {"str", value_type::string},
    {"string", value_type::string},
}};

// llama.cpp's special-token keys (gguf-py Keys.Tokenizer.*_ID), by the short names people use.
struct token_name {
    std::string_view name;
    std::string_view key_name;  // tokenizer.ggml.<key_name>_token_id
};
constexpr std::array<token_name, 19> token_names{{
    {"bos", "bos"}, {"eos", "eos"}, {"eot", "eot"}, {"eom", "eom"}, {"unk", "unknown"}, {"unknown", "unknown"},
    {"sep", "seperator"}, {"seperator", "seperator"}, {"separator", "seperator"}, {"pad", "padding"},
    {"padding", "padding"}, {"cls", "cls"}, {"mask", "mask"}, {"fim_pre", "fim_pre"}, {"fim_suf", "fim_suf"},
    {"fim_mid", "fim_mid"}, {"fim_pad", "fim_pad"}, {"fim_rep", "fim_rep"}, {"fim_sep", "fim_sep"},
}};

template <class T>
std::vector<std::byte> le_bytes(T v) {
    std::vector<std::byte> out(sizeof v);
    std::memcpy(out.data(), &v, sizeof v);  // GGUF is little-endian, as is every host we build for
    return out;
}

// u64 length + bytes, sized once (an insert after the length makes GCC 12 -O3 see a false
// out-of-bounds memcpy).
std::vector<std::byte> string_bytes(std::string_view s) {
    std::vector<std::byte> e(8 + s.size());
    const auto n = static_cast<std::uint64_t>(s.size());
    std::memcpy(e.data(), &n, 8);
    if (!s.empty()) std::memcpy(e.data() + 8, s.data(), s.size());
    return e;
}

// Text from the command line shown in a message: escaped, quoted, cut at a UTF-8 boundary.
std::string shown(std::string_view text) {
    std::string_view s = text;
    bool cut = false;
    if (s.size() > shown_text_bytes) {
        std::size_t n = shown_text_bytes;
        for (int k = 0; k < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
        s = s.substr(0, n);
        cut = true;
    }
    std::string out(1, '\'');
    out += escape(s);
    out += cut ? "…'" : "'";
    return out;
}

error make_error(errc code, std::string_view subject, std::string detail) {
    error e;
    e.code = code;
    e.subject = subject;
    e.detail = std::move(detail);
    return e;
}

error bad_text(std::string_view key, std::string detail) { return make_error(errc::bad_value_text, key, std::move(detail)); }

std::string_view article(value_type t) {
    const std::string_view n = to_string(t);
    return (n[0] == 'i' || n[0] == 'f') ? "an" : "a";
}

// The text of a type as the user spells it (str, not string).
std::string_view user_name(value_type t) { return t == value_type::string ? std::string_view("str") : to_string(t); }

template <class T>
result<std::vector<std::byte>> parse_integer(std::string_view key, value_type type, std::string_view text) {
    const auto refuse = [&] {
        std::string range = std::is_signed_v<T> ? std::to_string(std::numeric_limits<T>::min())
                                                : std::string("0");
        range += " to " + std::to_string(std::numeric_limits<T>::max());
        return unexpected(bad_text(key, shown(text) + " is not " + std::string(article(type)) + " " +
                                            std::string(to_string(type)) + " (" + range + ")"));
    };
    std::string_view digits = text;
    bool negative = false;
    if (!digits.empty() && digits.front() == '-') {
        negative = true;
        digits.remove_prefix(1);
    }
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    // from_chars of an unsigned type takes no sign, so "--5" and "-+5" fail here.
    if (digits.empty() || digits.front() == '-' || digits.front() == '+') return refuse();
    std::uint64_t magnitude = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    if (ec != std::errc() || end != digits.data() + digits.size()) return refuse();
    T value{};
    if (negative) {
        if constexpr (std::is_signed_v<T>) {
            // |min| = max + 1
            const auto limit = static_cast<std::uint64_t>(std::numeric_limits<T>::max()) + 1;
            if (magnitude > limit) return refuse();
            value = static_cast<T>(-static_cast<std::int64_t>(magnitude - 1) - 1);
        } else {
            if (magnitude != 0) return refuse();  // "-0" is 0: harmless, and exact
        }
    } else {
        if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return refuse();
        value = static_cast<T>(magnitude);
    }
    return le_bytes(value);
}

template <class T>
result<std::vector<std::byte>> parse_float(std::string_view key, value_type type, std::string_view text) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return unexpected(bad_text(key, shown(text) + " is not an " + std::string(to_string(type)) +
                                            " (a finite decimal number; nan and inf are refused)"));
    return le_bytes(value);
}

std::size_t first_invalid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length_at(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

// The rules a key given on the command line must pass: the loader's, and UTF-8 (GGUF keys are
// UTF-8 strings; the loader accepts other bytes only so it can show files written badly).
std::optional<error> check_new_key(std::string_view key) {
    const verdict v = rules::key(key);
    if (v.code == errc::empty_key) return bad_text(key, "a key cannot be empty");
    if (v.code == errc::nul_in_name)
        return bad_text(key, "a key cannot hold a NUL byte (found at position " + std::to_string(v.found) + ")");
    if (const std::size_t bad = first_invalid_utf8(key); bad != std::string_view::npos)
        return bad_text(key, "the key is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    return std::nullopt;
}

// What a key holds while the edits are applied one by one: the input's record, or a value an
// earlier edit set, or nothing.
struct slot {
    bool present = false;
    new_value value;
};

class overlay {
public:
    explicit overlay(const model& m) : m_(m) {}

    // The current state of `key`: a slot an edit made, or nullptr (then the input decides).
    const slot* touched(std::string_view key) const {
        const auto it = slots_.find(std::string(key));
        return it == slots_.end() ? nullptr : &it->second;
    }
    bool exists(std::string_view key) const {
        const slot* s = touched(key);
        return s != nullptr ? s->present : m_.find(key) != nullptr;
    }
    // The input's record when no edit has touched the key yet (only those can be arrays).
    const kv* original_if_current(std::string_view key) const {
        return touched(key) == nullptr ? m_.find(key) : nullptr;
    }
    value_type current_type(std::string_view key) const {
        const slot* s = touched(key);
        if (s != nullptr) return s->value.type;
        const kv* r = m_.find(key);
        return r != nullptr ? r->type : value_type::u8;
    }

    void set(std::string_view key, value_type type, std::vector<std::byte> bytes) {
        slot& s = at(key);
        s.present = true;
        s.value = new_value{type, std::move(bytes)};
    }
    void erase(std::string_view key) {
        if (!exists(key)) return;
        slot& s = at(key);
        s.present = false;
        s.value = {};
    }
    void erase_prefix(std::string_view prefix) {
        for (const kv& r : m_.metadata().metadata())
            if (r.key.starts_with(prefix)) erase(r.key);
        // Keys earlier edits added. A snapshot: erase() appends to order_ when it makes a slot.
        const std::vector<std::string> keys = order_;
        for (const std::string& k : keys)
            if (std::string_view(k).starts_with(prefix)) erase(k);
    }

    std::vector<metadata_diff_entry> diff() const {
        std::vector<metadata_diff_entry> out;
        for (const kv& r : m_.metadata().metadata()) {
            const slot* s = touched(r.key);
            if (s == nullptr) continue;
            if (!s->present) {
                out.push_back({std::string(r.key), &r, std::nullopt, {}});
            } else if (differs(r, s->value)) {
                out.push_back({std::string(r.key), &r, s->value, {}});
            }
        }
        for (const std::string& k : order_) {
            if (m_.find(k) != nullptr) continue;
            const slot& s = slots_.at(k);
            if (s.present) out.push_back({k, nullptr, s.value, {}});
        }
        return out;
    }

private:
    slot& at(std::string_view key) {
        auto [it, added] = slots_.try_emplace(std::string(key));
        if (added) order_.emplace_back(key);
        return it->second;
    }
    static bool differs(const kv& r, const new_value& v) {
        if (r.type != v.type) return true;
        std::span<const std::byte> now(v.bytes);
        if (v.type == value_type::string) now = now.size() >= 8 ? now.subspan(8) : now.subspan(now.size());
        return r.payload.size() != now.size() ||
               (now.size() > 0 && std::memcmp(r.payload.data(), now.data(), now.size()) != 0);
    }

    const model& m_;
    std::unordered_map<std::string, slot> slots_;
    std::vector<std::string> order_;  // keys in the order an edit first touched them
};

std::string file_of(const model& m) { return m.path().string(); }

// The type a key must keep, against which an explicit type is checked.
struct type_rule {
    std::optional<known_keys::key_type> llama;  // llama.cpp's type, when it reads the key
    std::optional<value_type> stored;           // otherwise the key's current type, when it exists
    std::string text;                           // what it is, for messages

    bool fits(value_type t) const {
        if (llama) return t == llama->type || (llama->per_layer_array && t == value_type::u32);
        return !stored || t == *stored;
    }
};

std::string arch_of(const model& m) {
    const kv* r = m.find(architecture_key);
    if (r == nullptr || r->type != value_type::string) return {};
    auto s = r->get<std::string_view>();
    return s ? std::string(*s) : std::string();
}

class planner {
public:
    planner(const model& m, metadata_edit_plan& plan, const metadata_edit_options& options)
        : m_(m), plan_(plan), options_(options), state_(m), arch_(arch_of(m)) {}

    result<void> apply(const metadata_edit& e) {
        switch (e.what) {
            case metadata_edit::op::set: return set_untyped(e.key, e.text);
            case metadata_edit::op::set_typed: return set_typed(e.key, e.type, e.text);
            case metadata_edit::op::erase: return erase(e.key);
            case metadata_edit::op::chat_template: return chat_template(e.text);
            case metadata_edit::op::special_token: return special_token(e.key, e.text);
        }
        return {};
    }

    void drop_padding() {
        plan_.changes.push_back(metadata_change::erase(std::string(in_place_padding_key)));
        state_.erase(in_place_padding_key);
    }

    void finish() {
        plan_.diff = state_.diff();
        for (metadata_diff_entry& d : plan_.diff) {
            const auto it = forced_.find(d.key);
            if (it != forced_.end() && d.after && !it->second.fits(d.after->type)) d.forced_over = it->second.text;
        }
    }

private:
    // split.* say how a model is cut into files; only split and merge write them (a lone file
    // with split.count 3 is a part 1 whose other parts do not exist: the loaders refuse it).
    std::optional<error> split_key(std::string_view key) const {
        if (!key.starts_with("split.")) return std::nullopt;
        if (m_.parts().size() > 1)
            return bad_text(key, "the split.* keys describe this split set of " + std::to_string(m_.parts().size()) +
                                     " parts and cannot be edited (merge the set first: minfer merge)");
        return bad_text(key, "the split.* keys say how a model is cut into files and only minfer split and "
                             "minfer merge write them (a single file with them is a split part whose other "
                             "parts do not exist)");
    }

    type_rule rule_for(std::string_view key) const {
        type_rule r;
        r.llama = known_keys::lookup(key, arch_);
        if (r.llama) {
            r.text = known_keys::describe(*r.llama);
        } else if (state_.exists(key)) {
            r.stored = state_.current_type(key);
            const kv* o = state_.original_if_current(key);
            r.text = o != nullptr && o->is_array() ? "an array of " + std::string(user_name(o->element_type))
                                                   : std::string(user_name(*r.stored));
        }
        return r;
    }

    // An explicit type must be the one the key keeps (llama.cpp's, or the stored one), unless the
    // caller allowed the change: a u32 hyperparameter stored as str makes llama.cpp refuse the model.
    std::optional<error> check_type(std::string_view key, value_type type) {
        const type_rule rule = rule_for(key);
        if (rule.fits(type)) return std::nullopt;
        const std::string given(user_name(type));
        if (!options_.allow_type_change) {
            const std::string a = rule.text.starts_with("an ") ? "" : "a ";
            std::string why = rule.llama ? "llama.cpp reads " + escape(key) + " as " + a + rule.text +
                                               " and refuses a model that stores another type"
                                         : "the model stores " + escape(key) + " as " + a + rule.text;
            why += ": expected " + rule.text + ", given " + given + "; ";
            if (!rule.llama || rule.llama->type != value_type::array)
                why += "give " + a + std::string(user_name(rule.llama ? rule.llama->type : *rule.stored)) +
                       " value (or leave the type out), or force the change";
            else
                why += "force the change";
            return bad_text(key, why + " with --allow-type-change (Python: allow_type_change=True)");
        }
        if (rule.llama)
            plan_.warnings.push_back(escape(key) + " becomes " + given + " although llama.cpp reads it as " +
                                     rule.text + ": llama.cpp will not load the model");
        forced_.insert_or_assign(std::string(key), rule);
        return std::nullopt;
    }

    result<void> put(std::string_view key, value_type type, std::vector<std::byte> bytes) {
        if (key == alignment_key) {
            std::uint32_t v = 0;
            if (type == value_type::u32 && bytes.size() == 4) std::memcpy(&v, bytes.data(), 4);
            const verdict ok = rules::alignment(type, v);
            if (!ok)
                return unexpected(bad_text(key, type != value_type::u32
                                                    ? std::string("general.alignment must be a u32, not ") +
                                                          std::string(user_name(type))
                                                    : std::to_string(v) + " is not a power of two above 0, which "
                                                                          "general.alignment must be"));
        }
        state_.set(key, type, bytes);
        plan_.changes.push_back(metadata_change::set_encoded(std::string(key), type, std::move(bytes)));
        return {};
    }

    result<void> set_untyped(std::string_view key, std::string_view text) {
        if (!state_.exists(key)) {
            const std::size_t colon = key.rfind(':');
            if (colon != std::string_view::npos) {
                const std::string_view type = key.substr(colon + 1);
                if (!type.empty() && type.find('.') == std::string_view::npos)
                    return unexpected(bad_text(key, "unknown type " + shown(type) + " (a type is one of " +
                                                        std::string(value_type_names()) + ")"));
            }
            error e = make_error(errc::key_not_found, key,
                                 "the model has no such key; to add it give its type: --set KEY:TYPE=VALUE with "
                                 "TYPE one of " + std::string(value_type_names()));
            e.file = file_of(m_);
            return unexpected(std::move(e));
        }
        if (const kv* r = state_.original_if_current(key); r != nullptr && r->is_array())
            return unexpected(bad_text(key, "the key is an array of " + std::string(to_string(r->element_type)) +
                                                " (" + std::to_string(r->count) +
                                                " items); only scalars and strings can be set"));
        if (auto bad = split_key(key)) return unexpected(std::move(*bad));
        const value_type type = state_.current_type(key);
        auto bytes = parse_value_text(key, type, text);
        if (!bytes) return unexpected(bytes.error());
        return put(key, type, std::move(*bytes));
    }

    result<void> set_typed(std::string_view key, value_type type, std::string_view text) {
        if (auto bad = check_new_key(key)) return unexpected(std::move(*bad));
        if (auto bad = split_key(key)) return unexpected(std::move(*bad));
        if (auto bad = check_type(key, type)) return unexpected(std::move(*bad));
        auto bytes = parse_value_text(key, type, text);
        if (!bytes) return unexpected(bytes.error());
        return put(key, type, std::move(*bytes));
    }

    result<void> erase(std::string_view key) {
        if (!state_.exists(key)) {
            error e = make_error(errc::key_not_found, key, "there is nothing to delete");
            e.file = file_of(m_);
            return unexpected(std::move(e));
        }
        if (auto bad = split_key(key)) return unexpected(std::move(*bad));
        if (key == architecture_key)
            plan_.warnings.push_back("general.architecture is deleted: llama.cpp will not load the model without it");
        state_.erase(key);
        plan_.changes.push_back(metadata_change::erase(std::string(key)));
        return {};
    }

    result<void> chat_template(std::string_view text) {
        if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
            return unexpected(bad_text(chat_template_key, "the chat template is not valid UTF-8 (byte " +
                                                              std::to_string(bad) + ")"));
        // As gguf_new_metadata: every tokenizer.chat_template* key goes (named templates, and
        // tokenizer.chat_templates), then the template is added.
        state_.erase_prefix(chat_template_key);
        plan_.changes.push_back(metadata_change::erase_prefix(std::string(chat_template_key)));
        std::vector<std::byte> bytes = string_bytes(text);
        state_.set(chat_template_key, value_type::string, bytes);
        plan_.changes.push_back(metadata_change::set_encoded(std::string(chat_template_key), value_type::string,
                                                             std::move(bytes)));
        return {};
    }

    result<void> special_token(std::string_view name, std::string_view token) {
        const std::optional<std::string> key = special_token_key(name);
        if (!key)
            return unexpected(bad_text(name, "unknown special token " + shown(name) +
                                                 " (bos, eos, eot, eom, unk, sep, pad, cls, mask, fim_pre, fim_suf, "
                                                 "fim_mid, fim_pad, fim_rep, fim_sep, or a full key "
                                                 "tokenizer.ggml.*_token_id)"));
        const bool is_id = !token.empty() && token.find_first_not_of("0123456789") == std::string_view::npos;
        const kv* vocab = m_.find(tokens_key);
        auto tokens = vocab != nullptr ? vocab->get<array_view>() : result<array_view>(unexpected(error{}));
        const bool has_vocab = tokens && tokens->element_type() == value_type::string;
        const std::uint64_t vocab_size = has_vocab ? tokens->size() : 0;
        const auto not_found = [&](std::uint64_t found, std::string detail) {
            error e = make_error(gguf::write_codes::token_not_found, *key, std::move(detail));
            e.expected = vocab_size;
            e.found = found;
            e.file = file_of(m_);
            return unexpected(std::move(e));
        };
        const std::string no_vocab = "the model has no vocabulary (no string array tokenizer.ggml.tokens)";
        std::uint32_t id = 0;
        if (is_id) {
            std::uint64_t v = std::numeric_limits<std::uint64_t>::max();
            (void)std::from_chars(token.data(), token.data() + token.size(), v);  // overflow keeps the max
            if (!has_vocab) return not_found(v, no_vocab);
            if (v >= vocab_size) return not_found(v, {});
            id = static_cast<std::uint32_t>(v);  // below the vocabulary size, which is at most 2^30
        } else {
            if (!has_vocab) return not_found(0, shown(token) + ": " + no_vocab);
            std::uint64_t i = 0;
            std::uint64_t matches = 0;
            std::string others;
            for (std::string_view s : tokens->strings()) {
                if (s == token) {
                    if (matches == 0) {
                        id = static_cast<std::uint32_t>(i);
                    } else if (matches <= 3) {
                        others += (matches > 1 ? ", " : "") + std::to_string(i);
                    }
                    ++matches;
                }
                ++i;
            }
            if (matches == 0) return not_found(0, shown(token));
            if (matches > 1)
                plan_.warnings.push_back(std::to_string(matches) + " tokens are " + shown(token) + " (ids " +
                                         std::to_string(id) + ", " + others + (matches > 4 ? ", …" : "") +
                                         "); " + escape(*key) + " takes the first, " + std::to_string(id));
        }
        // Written as u32: llama.cpp reads the special-token ids as u32 exactly (llama-vocab.cpp).
        return put(*key, value_type::u32, le_bytes(id));
    }

    const model& m_;
    metadata_edit_plan& plan_;
    const metadata_edit_options& options_;
    overlay state_;
    std::string arch_;                        // the input's general.architecture: the {arch}.* keys' prefix
    std::map<std::string, type_rule> forced_; // keys whose type an edit changed with allow_type_change
};

}  // namespace

std::optional<value_type> value_type_from_name(std::string_view name) noexcept {
    for (const type_name& t : type_names)
        if (t.name == name) return t.type;
    return std::nullopt;
}

std::string_view value_type_names() noexcept { return "u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool, str"; }

bool valid_utf8(std::string_view s) noexcept { return first_invalid_utf8(s) == std::string_view::npos; }

result<std::vector<std::byte>> parse_value_text(std::string_view key, value_type type, std::string_view text) noexcept {
    try {
        switch (type) {
            case value_type::u8: return parse_integer<std::uint8_t>(key, type, text);
            case value_type::i8: return parse_integer<std::int8_t>(key, type, text);
            case value_type::u16: return parse_integer<std::uint16_t>(key, type, text);
            case value_type::i16: return parse_integer<std::int16_t>(key, type, text);
            case value_type::u32: return parse_integer<std::uint32_t>(key, type, text);
            case value_type::i32: return parse_integer<std::int32_t>(key, type, text);
            case value_type::u64: return parse_integer<std::uint64_t>(key, type, text);
            case value_type::i64: return parse_integer<std::int64_t>(key, type, text);
            case value_type::f32: return parse_float<float>(key, type, text);
            case value_type::f64: return parse_float<double>(key, type, text);
            case value_type::boolean:
                if (text == "true") return le_bytes(std::uint8_t{1});
                if (text == "false") return le_bytes(std::uint8_t{0});
                return unexpected(bad_text(key, shown(text) + " is not a bool (true or false)"));
            case value_type::string:
                if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
                    return unexpected(bad_text(key, "the text is not valid UTF-8 (byte " + std::to_string(bad) +
                                                        "); GGUF strings are UTF-8"));
                return string_bytes(text);
            case value_type::array: break;
        }
        return unexpected(bad_text(key, "arrays cannot be given as text"));
    } catch (const std::bad_alloc&) {
        return unexpected(make_error(errc::out_of_memory, key, "parsing a value"));
    }
}

metadata_edit metadata_edit::set(std::string key, std::string text) {
    return {op::set, std::move(key), value_type::string, std::move(text)};
}
metadata_edit metadata_edit::set_typed(std::string key, value_type type, std::string text) {
    return {op::set_typed, std::move(key), type, std::move(text)};
}
metadata_edit metadata_edit::erase(std::string key) { return {op::erase, std::move(key), value_type::string, {}}; }
metadata_edit metadata_edit::chat_template(std::string text) {
    return {op::chat_template, std::string(chat_template_key), value_type::string, std::move(text)};
}
metadata_edit metadata_edit::special_token(std::string name, std::string token) {
    return {op::special_token, std::move(name), value_type::u32, std::move(token)};
}
metadata_edit metadata_edit::name(std::string text) { return set_typed("general.name", value_type::string, std::move(text)); }
metadata_edit metadata_edit::description(std::string text) {
    return set_typed("general.description", value_type::string, std::move(text));
}

result<metadata_edit> parse_set_text(std::string_view text) noexcept {
    try {
        const std::size_t eq = text.find('=');
        if (eq == std::string_view::npos)
            return unexpected(bad_text({}, shown(text) + " has no '=': give KEY=VALUE or KEY:TYPE=VALUE"));
        const std::string_view left = text.substr(0, eq);
        const std::string_view value = text.substr(eq + 1);
        if (const std::size_t colon = left.rfind(':'); colon != std::string_view::npos) {
            if (const auto type = value_type_from_name(left.substr(colon + 1)))
                return metadata_edit::set_typed(std::string(left.substr(0, colon)), *type, std::string(value));
        }
        return metadata_edit::set(std::string(left), std::string(value));
    } catch (const std::bad_alloc&) {
        return unexpected(make_error(errc::out_of_memory, {}, "parsing --set"));
    }
}

std::optional<std::string> special_token_key(std::string_view name) {
    constexpr std::string_view prefix = "tokenizer.ggml.";
    constexpr std::string_view suffix = "_token_id";
    if (name.starts_with(prefix) && name.ends_with(suffix) && name.size() > prefix.size() + suffix.size())
        return std::string(name);
    const auto key_of = [&](std::string_view key_name) {
        std::string k(prefix);
        k += key_name;
        k += suffix;
        return k;
    };
    for (const token_name& t : token_names)
        if (t.name == name) return key_of(t.key_name);
    return std::nullopt;
}

kv new_value::view(std::string_view key) const noexcept {
    std::span<const std::byte> payload(bytes);
    if (type == value_type::string) payload = payload.size() >= 8 ? payload.subspan(8) : payload.subspan(payload.size());
    return kv{key, type, type, 1, payload, 0};
}

result<metadata_edit_plan> plan_metadata_edit(const model& m, std::span<const metadata_edit> edits,
                                              const metadata_edit_options& options) noexcept {
    try {
        metadata_edit_plan plan;
        planner p(m, plan, options);
        for (const metadata_edit& e : edits) {
            auto r = p.apply(e);
            if (!r) return unexpected(r.error());
        }
        if (options.drop_padding) p.drop_padding();
        p.finish();
        return plan;
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("planning the metadata edit"));
    }
}

}  // namespace minfer::gguf
