#include "minfer/toolbox/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "minfer/gguf/text.hpp"

namespace minfer::toolbox {

void json_writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty()) return;
    level& l = stack_.back();
    if (!l.first) out_.put(',');
    if (l.compact) {
        if (!l.first) out_.put(' ');
    } else {
        out_.put('\n');
        for (std::size_t i = 0; i < stack_.size(); ++i) out_.write("  ");
    }
    l.first = false;
}

void json_writer::open(char c, bool compact) {
    before_value();
    out_.put(c);
    // Inside a compact container everything stays on its line.
    const bool inner_compact = compact || (!stack_.empty() && stack_.back().compact);
    stack_.push_back({inner_compact, true});
}

void json_writer::close(char c) {
    const level l = stack_.back();
    stack_.pop_back();
    if (!l.compact && !l.first) {
        out_.put('\n');
        for (std::size_t i = 0; i < stack_.size(); ++i) out_.write("  ");
    }
    out_.put(c);
}

void json_writer::begin_object(bool compact) { open('{', compact); }
void json_writer::end_object() { close('}'); }
void json_writer::begin_array(bool compact) { open('[', compact); }
void json_writer::end_array() { close(']'); }

void json_writer::key(std::string_view k) {
    before_value();
    quoted(k);
    out_.write(": ");
    after_key_ = true;
}

void json_writer::string(std::string_view s) {
    before_value();
    quoted(s);
}

void json_writer::quoted(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out_.put('"');
    std::size_t run = 0;  // start of the bytes not yet written: copied in one piece when nothing needs escaping
    std::size_t i = 0;
    auto flush_run = [&] {
        if (i > run) out_.write(s.substr(run, i - run));
    };
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        if (c >= 0x80) {
            const std::size_t n = gguf::utf8_length_at(s, i);
            if (n == 2 || n == 3) {
                // Characters a reader cannot see or that reorder a line (the set gguf::escape shows as
                // \uXXXX, U+2028/U+2029 included, which also end a line in JavaScript) are written as
                // JSON escapes: the same string for a parser, visible in a terminal.
                std::uint32_t cp = static_cast<unsigned char>(s[i]) & (n == 2 ? 0x1Fu : 0x0Fu);
                for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
                if (gguf::hidden_code_point(cp)) {
                    flush_run();
                    {
                        char u[8];
                        std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(cp));
                        out_.write(std::string_view(u, 6));
                    }
                    i += n;
                    run = i;
                    continue;
                }
            }
            if (n > 0) {
                i += n;
                continue;
            }
            flush_run();
            out_.write("\\ufffd");
            ++i;
            run = i;
            continue;
        }
        flush_run();
        switch (c) {
            case '"': out_.write("\\\""); break;
            case '\\': out_.write("\\\\"); break;
            case '\n': out_.write("\\n"); break;
            case '\r': out_.write("\\r"); break;
            case '\t': out_.write("\\t"); break;
            case '\b': out_.write("\\b"); break;
            case '\f': out_.write("\\f"); break;
            default: {
                const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                out_.write(std::string_view(esc, 6));
            }
        }
        ++i;
        run = i;
    }
    flush_run();
    out_.put('"');
}

void json_writer::number(std::uint64_t v) {
    before_value();
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    out_.write(std::string_view(b, static_cast<std::size_t>(r.ptr - b)));
}

void json_writer::number(std::int64_t v) {
    before_value();
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    out_.write(std::string_view(b, static_cast<std::size_t>(r.ptr - b)));
}

void json_writer::float_text(const std::string& text, bool finite) {
    if (!finite) {
        string(text);
        return;
    }
    before_value();
    out_.write(text);
    // "2" would read back as an integer: keep it a float, as "2.0".
    if (text.find_first_of(".e") == std::string::npos) out_.write(".0");
}

void json_writer::number(double v) {
    if (std::isnan(v)) return string("nan");
    if (std::isinf(v)) return string(v > 0 ? "inf" : "-inf");
    float_text(fmt::format("{}", v), true);
}

void json_writer::number(float v) {
    if (std::isnan(v)) return string("nan");
    if (std::isinf(v)) return string(v > 0 ? "inf" : "-inf");
    float_text(fmt::format("{}", v), true);
}

void json_writer::boolean(bool v) {
    before_value();
    out_.write(v ? "true" : "false");
}

void json_writer::null() {
    before_value();
    out_.write("null");
}

void json_writer::finish() {
    out_.put('\n');
    out_.flush();
}

bool valid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string json_text(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : gguf::utf8_length_at(s, i);
        if (n == 0) {
            out += fmt::format("\\x{:02X}", c);
            ++i;
        } else if (c == '\\') {
            out += "\\\\";
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string hex_bytes(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

}  // namespace minfer::toolbox

namespace minfer::toolbox {

void string_member(json_writer& w, std::string_view name, std::string_view raw, std::string_view flag) {
    w.key(name);
    if (valid_utf8(raw)) {
        w.string(raw);
        return;
    }
    w.string(json_text(raw));
    w.key(fmt::format("{}_hex", name));
    w.string(hex_bytes(raw));
    w.key(flag.empty() ? fmt::format("{}_invalid_utf8", name) : std::string(flag));
    w.boolean(true);
}

}  // namespace minfer::toolbox
