#pragma once
// A small streaming JSON writer (RFC 8259) into a text_sink (the CLI's buffered stdout, a string):
// what is written to a buffered sink is gone from memory, so
// a document with 10^7 array items costs no more than one with ten. Layout: objects and arrays one
// member per line, indented by two spaces, unless opened `compact` (then on one line, ", " between
// members). The writer does not check nesting: callers pair begin/end and put key() before each
// member of an object.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minfer::toolbox {

/// Where a json_writer's text goes.
class text_sink {
public:
    virtual ~text_sink() = default;
    virtual void put(char c) = 0;
    virtual void write(std::string_view s) = 0;
    /// Called by json_writer::finish(); false once a write has failed.
    virtual bool flush() { return true; }
};

/// A sink appending to a string the caller owns (the report document, which the page embeds).
class string_sink final : public text_sink {
public:
    explicit string_sink(std::string& out) noexcept : out_(out) {}
    void put(char c) override { out_.push_back(c); }
    void write(std::string_view s) override { out_.append(s); }

private:
    std::string& out_;
};

class json_writer {
public:
    explicit json_writer(text_sink& out) : out_(out) {}

    void begin_object(bool compact = false);
    void end_object();
    void begin_array(bool compact = false);
    void end_array();
    /// The name of the next object member (valid UTF-8: see string()).
    void key(std::string_view k);

    /// A string. `s` must be valid UTF-8; an invalid byte that slips through is written as U+FFFD so
    /// the document stays valid (the printers never rely on this: see json_text()).
    void string(std::string_view s);
    void number(std::uint64_t v);
    void number(std::int64_t v);
    /// The shortest text that reads back as the same double; NaN and infinities, which JSON cannot
    /// hold, as the strings "nan", "inf", "-inf".
    void number(double v);
    /// Same for a float: the shortest text that reads back as the same f32 (0.1f is 0.1, not
    /// 0.10000000149011612).
    void number(float v);
    void boolean(bool v);
    void null();

    /// End the document with a newline and flush.
    void finish();

private:
    struct level {
        bool compact;
        bool first;
    };
    void before_value();
    void open(char c, bool compact);
    void close(char c);
    void quoted(std::string_view s);
    void float_text(const std::string& text, bool finite);

    text_sink& out_;
    std::vector<level> stack_;
    bool after_key_ = false;
};

/// Whether `s` is entirely valid UTF-8.
bool valid_utf8(std::string_view s) noexcept;

/// The text shown for a string that is not valid UTF-8: each byte outside a valid sequence becomes the
/// four characters \xNN and each backslash is doubled, so different byte strings always give different
/// texts (a literal "\x41" reads "\\x41", an invalid 0x41… cannot occur, an invalid 0xFF reads "\xFF").
std::string json_text(std::string_view s);

/// The bytes as lowercase hex, two digits each ("abc" -> "616263").
std::string hex_bytes(std::string_view s);

/// An object member holding file bytes, losslessly: `name`: the string itself when it is valid UTF-8;
/// otherwise `name`: json_text(raw), `name`_hex: hex_bytes(raw), and a flag, `name`_invalid_utf8: true
/// (or `flag`: true when given).
void string_member(json_writer& w, std::string_view name, std::string_view raw, std::string_view flag = {});

}  // namespace minfer::toolbox
