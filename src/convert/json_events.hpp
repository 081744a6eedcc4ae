#pragma once
// The one way this library reads JSON: nlohmann-json's SAX parser (a strict RFC 8259 lexer that
// checks UTF-8; iterative, so nesting cannot overflow the stack), with the byte offset of every value
// and a depth limit, feeding a handler. Internal: no public header names nlohmann.
//
// Why events and not json::parse: an error must say at which byte the offending value starts (the
// DOM keeps no positions), the depth is cut as the parse goes instead of after a tree of any depth
// was built, a duplicate key is an error instead of nlohmann's silent "last one wins", and a
// safetensors header of 100 MB becomes its tensor table without a DOM many times its size.
//
// Offsets: nlohmann's SAX interface does not give positions, so the input is read through an iterator
// that records how far the lexer has read. When an event arrives the lexer has read exactly its token
// (strings end at their closing quote, literals at their last letter), plus one character after a
// number, which is always whitespace, ',', ']' or '}' in valid JSON. A value's first byte is then the
// first byte after the previous event that is not whitespace, ',' or ':'; a closing bracket is the
// last byte read (after a number, the lexer hands back the bracket it read ahead without reading
// further). Each byte is scanned once.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "minfer/gguf/text.hpp"

namespace minfer::convert::detail {

/// Untrusted text (a key, a name, a value) for a message: escaped, in quotes, at most 200 bytes of it.
inline std::string in_quotes(std::string_view raw) {
    constexpr std::size_t max_shown = 200;
    const bool cut = raw.size() > max_shown;
    // Appended rather than "'" + std::string: g++ 12 -O3 warns (-Werror=restrict) on that operator+.
    std::string out(1, '\'');
    out += gguf::escape(cut ? raw.substr(0, max_shown) : raw);
    out += cut ? "…'" : "'";
    return out;
}

/// Why a JSON text was refused, and where (relative to the text).
struct json_failure {
    std::uint64_t offset = 0;
    std::string detail;
    bool out_of_memory = false;
};

/// An input iterator over a byte range that tells `*reached` where the lexer has read to.
class counting_iterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    counting_iterator(const char* p, const char** reached) noexcept : p_(p), reached_(reached) {}
    reference operator*() const noexcept { return *p_; }
    counting_iterator& operator++() noexcept {
        ++p_;
        *reached_ = p_;
        return *this;
    }
    counting_iterator operator++(int) noexcept {
        counting_iterator before = *this;
        ++*this;
        return before;
    }
    friend bool operator==(const counting_iterator& a, const counting_iterator& b) noexcept { return a.p_ == b.p_; }

private:
    const char* p_;
    const char** reached_;
};

/// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, column 2: "
/// prefix (the offset says where), at most 400 bytes of it, with the input's bytes it quotes escaped.
inline std::string syntax_message(const std::string& what) {
    std::string_view m(what);
    if (m.starts_with("[json.exception.")) {
        if (const auto bracket = m.find("] "); bracket != std::string_view::npos) m.remove_prefix(bracket + 2);
    }
    if (m.starts_with("parse error")) {
        if (const auto colon = m.find(": "); colon != std::string_view::npos) m.remove_prefix(colon + 2);
    }
    // "last read" quotes the whole token so far: a string of megabytes would be said whole
    constexpr std::size_t max_shown = 400;
    const bool cut = m.size() > max_shown;
    if (cut) m = m.substr(0, max_shown);
    return gguf::escape(m, '\0') + (cut ? "…" : "");  // nlohmann quotes with ' itself: nothing more to backslash
}

/// The SAX interface nlohmann calls, turned into a handler's events with offsets. A handler has:
///   bool on_begin_object(std::uint64_t at), on_end_object(at), on_begin_array(at), on_end_array(at),
///   on_key(std::string& key, at), on_string(std::string& s, at), on_unsigned(std::uint64_t, at),
///   on_signed(std::int64_t, at), on_float(double, at), on_bool(bool, at), on_null(at);
/// `at` is the offset of the value's first byte (of the bracket for on_end_*). A handler that returns
/// false has recorded why: the parse stops there.
template <class Handler>
class event_adapter {
public:
    using json = nlohmann::json;

    event_adapter(std::string_view text, Handler& handler, std::size_t max_depth, json_failure& failure) noexcept
        : text_(text), reached_(text.data()), handler_(handler), max_depth_(max_depth), failure_(failure) {}

    const char** reached() noexcept { return &reached_; }

    bool null() { return handler_.on_null(value_start()); }
    bool boolean(bool v) { return handler_.on_bool(v, value_start()); }
    bool number_integer(json::number_integer_t v) { return handler_.on_signed(static_cast<std::int64_t>(v), value_start()); }
    bool number_unsigned(json::number_unsigned_t v) {
        return handler_.on_unsigned(static_cast<std::uint64_t>(v), value_start());
    }
    bool number_float(json::number_float_t v, const json::string_t& /*text*/) {
        return handler_.on_float(static_cast<double>(v), value_start());
    }
    bool string(json::string_t& v) { return handler_.on_string(v, value_start()); }
    bool binary(json::binary_t& /*v*/) {  // never produced by the JSON format; refused should it be
        failure_.offset = value_start();
        failure_.detail = "binary value";
        return false;
    }
    bool key(json::string_t& k) { return handler_.on_key(k, value_start()); }
    bool start_object(std::size_t /*unknown*/) {
        const std::uint64_t at = value_start();
        return deeper(at) && handler_.on_begin_object(at);
    }
    bool end_object() {
        --depth_;
        return handler_.on_end_object(bracket());
    }
    bool start_array(std::size_t /*unknown*/) {
        const std::uint64_t at = value_start();
        return deeper(at) && handler_.on_begin_array(at);
    }
    bool end_array() {
        --depth_;
        return handler_.on_end_array(bracket());
    }
    bool parse_error(std::size_t position, const std::string& /*last_token*/, const json::exception& e) {
        // position counts the characters the lexer read, the offending one included (and the end of
        // the input as one more): the offending byte is the one before it
        failure_.offset = position > 0 ? position - 1 : 0;
        if (failure_.offset > text_.size()) failure_.offset = text_.size();
        // a number too large for a double (out_of_range.406) is refused once read whole: say where it starts
        if (e.id == 406) failure_.offset = value_start();
        failure_.detail = syntax_message(e.what());
        return false;
    }

private:
    std::size_t reached_offset() const noexcept { return static_cast<std::size_t>(reached_ - text_.data()); }

    std::uint64_t value_start() noexcept {
        const std::size_t end = reached_offset();
        std::size_t i = scanned_;
        while (i < end) {
            const char c = text_[i];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ',' && c != ':') break;
            ++i;
        }
        scanned_ = end;
        return i;
    }
    std::uint64_t bracket() noexcept {
        const std::size_t end = reached_offset();
        scanned_ = end;
        return end > 0 ? end - 1 : 0;
    }
    bool deeper(std::uint64_t at) {
        if (++depth_ <= max_depth_) return true;
        failure_.offset = at;
        failure_.detail = "nested deeper than " + std::to_string(max_depth_) + " levels";
        return false;
    }

    std::string_view text_;
    const char* reached_;
    std::size_t scanned_ = 0;
    std::size_t depth_ = 0;
    Handler& handler_;
    std::size_t max_depth_;
    json_failure& failure_;
};

/// Parse `text` as one JSON value (whitespace around it allowed, nothing else), giving its events to
/// `handler`. False when the text is not JSON, is nested deeper than max_depth, or the handler
/// refused an event: `failure` then says where and why (a handler that refused fills it itself).
/// Never throws: an allocation failure is `failure.out_of_memory`.
template <class Handler>
bool parse_json_events(std::string_view text, Handler& handler, std::size_t max_depth, json_failure& failure) noexcept {
    try {
        // A UTF-8 byte order mark is not JSON (RFC 8259 §8.1: implementations must not add one);
        // nlohmann would skip it, Python's json and serde_json refuse it.
        if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") {
            failure.offset = 0;
            failure.detail = "a UTF-8 byte order mark before the JSON text";
            return false;
        }
        event_adapter<Handler> events(text, handler, max_depth, failure);
        const char* begin = text.data();
        const char* end = begin + text.size();
        if (!nlohmann::json::sax_parse(counting_iterator(begin, events.reached()),
                                       counting_iterator(end, events.reached()), &events,
                                       nlohmann::json::input_format_t::json, /*strict=*/true,
                                       /*ignore_comments=*/false)) {
            if (failure.offset < text.size() && text[failure.offset] == '\0' && failure.detail.starts_with("syntax"))
                failure.detail = "a NUL byte, which JSON does not allow outside strings (and there only escaped)";
            return false;
        }
        // nlohmann's lexer takes a NUL byte for the end of the text: a value followed by one would be
        // accepted with whatever comes after it unread. JSON allows no raw NUL anywhere.
        if (const void* nul = std::memchr(begin, 0, text.size()); nul != nullptr) {
            failure.offset = static_cast<std::uint64_t>(static_cast<const char*>(nul) - begin);
            failure.detail = "a NUL byte after the JSON value";
            return false;
        }
        return true;
    } catch (const std::bad_alloc&) {
        failure.out_of_memory = true;
    } catch (const std::exception& e) {  // nlohmann reports through parse_error; this is a safety net
        try {
            failure.detail = syntax_message(e.what());
        } catch (...) {
            failure.out_of_memory = true;
        }
    } catch (...) {
        try {
            failure.detail = "unexpected failure while reading JSON";
        } catch (...) {
            failure.out_of_memory = true;
        }
    }
    return false;
}

}  // namespace minfer::convert::detail
