// README.md's YAML front matter as PyYAML's safe_load reads it (model_card.hpp).
#include "model_card.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <limits>
#include <sstream>
#include <utility>

#include "../common/pyyaml_scalars.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::convert::detail {

const py_node* py_tree::get(const py_node& d, std::string_view key) const noexcept {
    if (d.k != py_node::kind::dict) return nullptr;
    for (std::size_t i = 0; i + 1 < d.items.size(); i += 2) {
        const py_node& k = nodes[d.items[i]];
        if (k.k == py_node::kind::string && k.text == key) return &nodes[d.items[i + 1]];
    }
    return nullptr;
}

namespace {

using namespace minfer::detail::pyyaml;  // hex_code_point, digit, is_int11, is_float11, bool_word, …

struct refusal {
    card_failure why;
};

[[noreturn]] void refuse(std::uint64_t offset, std::string subject, std::string detail) {
    throw refusal{card_failure{offset, std::move(subject), std::move(detail)}};
}


// Decode the code point at i (the text is valid UTF-8); sets n to its length.
std::uint32_t code_point_at(std::string_view s, std::size_t i, std::size_t& n) noexcept {
    const auto c = static_cast<unsigned char>(s[i]);
    n = gguf::utf8_length_at(s, i);
    if (n <= 1) return c;
    std::uint32_t cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    return cp;
}

// PyYAML's reader refuses characters outside its printable set (yaml/reader.py NON_PRINTABLE).
void check_printable(std::string_view t) {
    for (std::size_t i = 0; i < t.size();) {
        std::size_t n = 1;
        const std::uint32_t cp = code_point_at(t, i, n);
        const bool ok = cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
                        (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
        if (!ok)
            refuse(i, {}, "the character " + hex_code_point(cp) +
                              " is not allowed in YAML (the reference's YAML reader refuses it)");
        i += n == 0 ? 1 : n;
    }
}

// ---- PyYAML's implicit resolvers (YAML 1.1, yaml/resolver.py) and constructors, by hand ----

int days_in_month(int y, int m) {
    static constexpr std::array<int, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[static_cast<std::size_t>(m - 1)];
}

// The timestamp regex; `valid` false when Python's datetime would refuse the fields (month 13, second 60).
bool is_timestamp11(std::string_view s, bool& valid) {
    valid = true;
    auto number = [&](std::size_t& k, std::size_t lo, std::size_t hi, int& v) {
        std::size_t n = 0;
        v = 0;
        while (k < s.size() && digit(s[k]) && n < hi) {
            v = v * 10 + (s[k] - '0');
            ++k;
            ++n;
        }
        return n >= lo;
    };
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, skip = 0;
    std::size_t k = 0;
    if (!number(k, 4, 4, year) || !(k < s.size() && s[k] == '-')) return false;
    ++k;
    const std::size_t m0 = k;
    if (!number(k, 1, 2, month) || !(k < s.size() && s[k] == '-')) return false;
    const bool two_month = k - m0 == 2;
    ++k;
    const std::size_t d0 = k;
    if (!number(k, 1, 2, day)) return false;
    auto date_ok = [&] { return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= days_in_month(year, month); };
    if (k == s.size()) {
        if (!(two_month && k - d0 == 2)) return false;
        valid = date_ok();
        return true;
    }
    if (s[k] == 'T' || s[k] == 't') {
        ++k;
    } else if (s[k] == ' ' || s[k] == '\t') {
        while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    } else {
        return false;
    }
    if (!number(k, 1, 2, hour) || !(k < s.size() && s[k] == ':')) return false;
    ++k;
    if (!number(k, 2, 2, minute) || !(k < s.size() && s[k] == ':')) return false;
    ++k;
    if (!number(k, 2, 2, second)) return false;
    if (k < s.size() && s[k] == '.') {
        ++k;
        while (k < s.size() && digit(s[k])) ++k;
    }
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    bool matched = false;
    if (k == s.size()) {
        matched = true;
    } else if (s[k] == 'Z') {
        matched = k + 1 == s.size();
    } else if (s[k] == '-' || s[k] == '+') {
        ++k;
        if (number(k, 1, 2, skip)) {
            if (k == s.size()) {
                matched = true;
            } else if (s[k] == ':') {
                ++k;
                matched = number(k, 2, 2, skip) && k == s.size();
            }
        }
    }
    if (matched) valid = date_ok() && hour <= 23 && minute <= 59 && second <= 59;
    return matched;
}

// Python's int() of a YAML 1.1 integer text (is_int11): whether it is zero, and its value if it fits.
void construct_int(std::string_view s, py_node& n) {
    std::string t;
    for (char c : s)
        if (c != '_') t += c;
    bool negative = false;
    std::size_t k = 0;
    if (k < t.size() && (t[k] == '-' || t[k] == '+')) negative = t[k++] == '-';
    std::string_view r = std::string_view(t).substr(k);
    unsigned base = 10;
    if (r.starts_with("0b")) {
        base = 2;
        r.remove_prefix(2);
    } else if (r.starts_with("0x")) {
        base = 16;
        r.remove_prefix(2);
    } else if (r.size() > 1 && r[0] == '0') {
        base = 8;
        r.remove_prefix(1);
    }
    // magnitude in unsigned 64 bits, with overflow noted; sexagesimal groups multiply by 60
    bool overflow = false, nonzero = false;
    std::uint64_t total = 0, group = 0;
    auto mul_add = [&](std::uint64_t& acc, std::uint64_t m, std::uint64_t a) {
        if (acc > (std::numeric_limits<std::uint64_t>::max() - a) / m) overflow = true;
        acc = acc * m + a;
    };
    for (char c : r) {
        if (c == ':') {
            mul_add(total, 1, group);
            mul_add(total, 60, 0);
            group = 0;
            continue;
        }
        const unsigned v = digit(c) ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
        if (v != 0) nonzero = true;
        mul_add(group, base, v);
    }
    if (r.find(':') != std::string_view::npos) {
        mul_add(total, 1, group);
    } else {
        total = group;
    }
    n.truthy = nonzero;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    n.int_fits = !overflow && total <= limit;
    if (n.int_fits) n.integer = negative ? static_cast<std::int64_t>(0 - total) : static_cast<std::int64_t>(total);
}

bool float_truthy(std::string_view s) {
    if (s.find("inf") != std::string_view::npos || s.find("Inf") != std::string_view::npos ||
        s.find("INF") != std::string_view::npos || s.find('n') != std::string_view::npos ||
        s.find('N') != std::string_view::npos)
        return true;
    for (char c : s) {
        if (c == 'e' || c == 'E') break;
        if (c >= '1' && c <= '9') return true;
    }
    return false;
}

// ---- the tree, from yaml-cpp's events ----

class builder final : public YAML::EventHandler {
public:
    explicit builder(py_tree& t) : t_(t) {}

    std::string path() const {
        std::string p;
        for (const frame& f : stack_) {
            if (f.map) {
                if (!f.has_key && f.key.empty()) break;
                if (!p.empty()) p += '.';
                p += f.key;
            } else {
                p += '[' + std::to_string(f.count == 0 ? 0 : f.count - 1) + ']';
            }
        }
        return p;
    }
    int documents = 0;

    void OnDocumentStart(const YAML::Mark& mark) override {
        if (++documents > 1)
            refuse(offset(mark), {}, "a second YAML document (the reference's safe_load expects a single document)");
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        no_anchor(mark, anchor);
        py_node n;
        add(std::move(n), mark, {});
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
        refuse(offset(mark), path(), "YAML aliases (*name) are not read (not supported here)");
    }
    void OnAnchor(const YAML::Mark& mark, const std::string&) override {
        refuse(offset(mark), path(), "YAML anchors (&name) are not read (not supported here)");
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
        no_anchor(mark, anchor);
        py_node n;
        if (tag == "!" || tag == "tag:yaml.org,2002:str") {
            n.k = py_node::kind::string;
        } else if (tag != "?") {
            refuse(offset(mark), path(),
                   "explicit YAML tags (" + gguf::escape(std::string_view(tag).substr(0, 64)) + ") are not read (not supported here)");
        } else {
            resolve(value, n, mark);
        }
        if (n.k == py_node::kind::string) n.truthy = !value.empty();
        add(std::move(n), mark, value);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(py_node::kind::list, mark, tag, anchor);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(py_node::kind::dict, mark, tag, anchor);
    }
    void OnMapEnd() override { close(); }

    std::uint64_t offset(const YAML::Mark& m) const { return m.pos < 0 ? 0 : static_cast<std::uint64_t>(m.pos); }

private:
    struct frame {
        std::uint32_t index = 0;
        bool map = false;
        bool has_key = false;          // a map: its key was read, the value comes next
        std::uint32_t count = 0;
        std::string key;
        std::uint32_t replace_at = 0;  // a map: where a repeated key's value goes (0: append)
    };
    py_tree& t_;
    std::vector<frame> stack_;

    void no_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) const {
        if (anchor != YAML::NullAnchor) refuse(offset(mark), path(), "YAML anchors (&name) are not read (not supported here)");
    }

    void resolve(const std::string& s, py_node& n, const YAML::Mark& mark) const {
        bool b = false;
        if (s == "<<" || s == "=")
            refuse(offset(mark), path(),
                   "a plain '" + s + "' (a YAML merge key or value key: the reference's safe_load fails on it or "
                   "merges, which is not supported here)");
        if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return;  // None
        if (bool_word(s, b)) {
            n.k = py_node::kind::boolean;
            n.truthy = b;
            return;
        }
        if (is_int11(s)) {
            n.k = py_node::kind::integer;
            construct_int(s, n);
            return;
        }
        if (is_float11(s)) {
            n.k = py_node::kind::floating;
            n.truthy = float_truthy(s);
            return;
        }
        bool valid = true;
        if (is_timestamp11(s, valid)) {
            if (!valid)
                refuse(offset(mark), path(),
                       "the date or time " + gguf::escape(std::string_view(s).substr(0, 64)) +
                           " is not a valid one (the reference's YAML reader fails on it)");
            n.k = py_node::kind::date;
            n.truthy = true;
            return;
        }
        n.k = py_node::kind::string;
    }

    std::uint32_t add(py_node n, const YAML::Mark& mark, const std::string& text) {
        if (t_.nodes.size() >= model_card_max_nodes)
            refuse(offset(mark), path(), "more than " + std::to_string(model_card_max_nodes) + " YAML nodes (the most read)");
        const auto index = static_cast<std::uint32_t>(t_.nodes.size());
        n.offset = offset(mark);
        if (n.k == py_node::kind::string) n.text = text;
        const bool container = n.k == py_node::kind::list || n.k == py_node::kind::dict;
        if (!stack_.empty()) {
            frame& f = stack_.back();
            py_node& parent = t_.nodes[f.index];
            if (f.map && !f.has_key) {
                if (container)
                    refuse(offset(mark), path(), "a mapping key that is a list or a mapping (Python cannot hash it: the "
                                                 "reference's YAML reader fails)");
                f.has_key = true;
                f.key = n.k == py_node::kind::string ? text : std::string(text.empty() ? "null" : text);
                f.replace_at = 0;
                // Python's dict: a repeated key keeps its place and takes the last value (str keys compared)
                if (n.k == py_node::kind::string)
                    for (std::size_t i = 0; i + 1 < parent.items.size(); i += 2)
                        if (t_.nodes[parent.items[i]].k == py_node::kind::string && t_.nodes[parent.items[i]].text == text)
                            f.replace_at = static_cast<std::uint32_t>(i + 1) + 1;  // +1: 0 means none
                ++f.count;
                if (f.replace_at != 0) {
                    t_.nodes.push_back(std::move(n));  // the repeated key itself is kept out of the dict
                    return index;
                }
                parent.items.push_back(index);
            } else if (f.map) {
                f.has_key = false;
                if (f.replace_at != 0)
                    parent.items[f.replace_at - 1] = index;
                else
                    parent.items.push_back(index);
            } else {
                ++f.count;
                parent.items.push_back(index);
            }
        } else {
            t_.root = index;
        }
        if (container) n.truthy = false;  // set when the first item arrives (close())
        t_.nodes.push_back(std::move(n));
        return index;
    }

    void open(py_node::kind k, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
        no_anchor(mark, anchor);
        if (tag != "?" && tag != "!" && tag != "tag:yaml.org,2002:seq" && tag != "tag:yaml.org,2002:map")
            refuse(offset(mark), path(),
                   "explicit YAML tags (" + gguf::escape(std::string_view(tag).substr(0, 64)) + ") are not read (not supported here)");
        if (stack_.size() + 1 > model_card_max_depth)
            refuse(offset(mark), path(),
                   "lists and mappings nested deeper than " + std::to_string(model_card_max_depth) + " levels (the most read)");
        py_node n;
        n.k = k;
        const std::uint32_t index = add(std::move(n), mark, {});
        frame f;
        f.index = index;
        f.map = k == py_node::kind::dict;
        stack_.push_back(std::move(f));
    }

    void close() {
        if (stack_.empty()) return;
        py_node& n = t_.nodes[stack_.back().index];
        n.truthy = !n.items.empty();
        stack_.pop_back();
    }
};

// yaml-cpp queues an open flow collection's tokens until it closes: nesting is counted before parsing
// (outside quotes, naively: a bracket inside a quoted scalar counts too, which can only refuse more).
void check_flow_depth(std::string_view t) {
    std::size_t depth = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '[' || t[i] == '{') {
            if (++depth > model_card_max_depth)
                refuse(i, {}, "brackets nested deeper than " + std::to_string(model_card_max_depth) + " levels (the most read)");
        } else if ((t[i] == ']' || t[i] == '}') && depth > 0) {
            --depth;
        }
    }
}

// str.splitlines()'s line boundaries besides "\n" (the text has no "\r" left): \v \f \x1c \x1d \x1e, U+0085,
// U+2028, U+2029. Returns the boundary's length at i, 0 when there is none.
std::size_t line_break_at(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E) return 1;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) return 2;
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9))
        return 3;
    return 0;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    for (;;) {
        const std::size_t j = s.find(from, i);
        if (j == std::string::npos) break;
        out.append(s, i, j - i);
        out += to;
        i = j + from.size();
    }
    out.append(s, i, std::string::npos);
    return out;
}

}  // namespace

bool parse_model_card(std::string_view text, py_tree& out, card_failure& why) {
    out = py_tree{};
    // Metadata.load_model_card: lines = content.splitlines(); the first must be "---"
    std::vector<std::string_view> lines;
    for (std::size_t i = 0, start = 0; i <= text.size();) {
        if (i == text.size()) {
            if (start < text.size()) lines.push_back(text.substr(start));
            break;
        }
        const std::size_t n = line_break_at(text, i);
        if (n == 0) {
            ++i;
            continue;
        }
        lines.push_back(text.substr(start, i - start));
        i += n;
        start = i;
        if (lines.size() > 1 && lines.back() == "---") break;  // the end of the front matter: the rest is not read
        if (lines.size() == 1 && lines.front() != "---") break;
    }
    if (lines.empty() || lines.front() != "---") return true;
    std::string yaml;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        if (lines[i] == "---") break;
        yaml += lines[i];
        yaml += '\n';
        if (yaml.size() > model_card_max_yaml_bytes) {
            why.detail = "a YAML front matter larger than " + std::to_string(model_card_max_yaml_bytes) + " bytes (the most read)";
            return false;
        }
    }
    if (yaml.empty()) yaml.push_back('\n');  // not = "\n": g++ 12 -O3 -Werror=restrict false positive
    // the reference's two hacks: the Norway problem, and tabs as two spaces
    yaml = replace_all(std::move(yaml), "- no\n", "- \"no\"\n");
    yaml = replace_all(std::move(yaml), "\t", "  ");
    builder b(out);
    try {
        check_printable(yaml);
        check_flow_depth(yaml);
        std::istringstream in{yaml};
        YAML::Parser parser(in);
        if (parser.HandleNextDocument(b)) parser.HandleNextDocument(b);  // a second document is refused
        return true;
    } catch (refusal& r) {
        why = std::move(r.why);
        // the README's line: the front matter starts on line 2, and the hacks keep the lines
        const std::uint64_t at = std::min<std::uint64_t>(why.offset, yaml.size());
        const auto line = std::count(yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 2;
        why.detail += " (line " + std::to_string(line) + " of README.md)";
    } catch (const YAML::Exception& e) {
        why.offset = e.mark.is_null() ? 0 : b.offset(e.mark);
        why.subject = b.path();
        why.detail = "not valid YAML: " + e.msg;
        if (!e.mark.is_null())
            why.detail += " (line " + std::to_string(e.mark.line + 2) + " of README.md, column " +
                          std::to_string(e.mark.column + 1) + ")";
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        why.subject = b.path();
        why.detail = std::string("not valid YAML: ") + e.what();
    }
    out = py_tree{};
    return false;
}

}  // namespace minfer::convert::detail
