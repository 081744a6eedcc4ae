// Untrusted YAML text into a bounded tree: the text checks, the flow pre-scan, yaml-cpp's event
// parser with every cap enforced as the events arrive, and PyYAML's reading of plain scalars.
#include "assemble_config_yaml.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>

#include "../common/pyyaml_scalars.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/toolbox/assemble_config.hpp"
#include "minfer/toolbox/errors.hpp"

namespace minfer::toolbox::config_yaml {
namespace {

using namespace minfer::detail::pyyaml;  // hex_code_point, digit, is_int11, is_float11, …

// Thrown by the checks below and by the event handler (through yaml-cpp's frames, which unwind
// cleanly: it throws its own exceptions from the same places), caught in parse().
struct refusal {
    failure why;
};

[[noreturn]] void refuse(gguf::errc code, std::uint64_t offset, std::string subject, std::string detail) {
    refusal r;
    r.why.code = code;
    r.why.offset = offset;
    r.why.subject = std::move(subject);
    r.why.detail = std::move(detail);
    throw r;
}

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string hex_byte(unsigned char c) {
    static constexpr char digits[] = "0123456789ABCDEF";
    return std::string("0x") + digits[c >> 4] + digits[c & 0xF];
}

// ---- the text: UTF-8 of the characters PyYAML's reader accepts (yaml/reader.py NON_PRINTABLE:
// tab, LF, CR, 0x20-0x7E, U+0085, U+00A0-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF) ----

void check_text(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            if (c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c < 0x7F)) {
                ++i;
                continue;
            }
            refuse(codes::bad_config, i, {},
                   "the control character " + hex_code_point(c) + " is not allowed in YAML (mergekit's reader refuses it)");
        }
        std::uint32_t cp = 0;
        std::size_t len = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1Fu;
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0Fu;
            len = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07u;
            len = 4;
        } else {
            refuse(codes::bad_config, i, {}, "the text is not UTF-8 (a byte " + hex_byte(c) + " cannot start a character)");
        }
        if (n - i < len) refuse(codes::bad_config, i, {}, "the text is not UTF-8 (a sequence cut by the end)");
        for (std::size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xC0u) != 0x80u) refuse(codes::bad_config, i, {}, "the text is not UTF-8 (a broken sequence)");
            cp = (cp << 6) | (p[i + k] & 0x3Fu);
        }
        const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
        if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            refuse(codes::bad_config, i, {}, "the text is not UTF-8 (an overlong or surrogate sequence)");
        const bool printable = cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
        if (!printable)
            refuse(codes::bad_config, i, {},
                   "the character " + hex_code_point(cp) + " is not allowed in YAML (mergekit's reader refuses it)");
        i += len;
    }
}

// ---- the flow pre-scan ----
// yaml-cpp's scanner keeps every token of an open flow collection ([ or {) queued until it closes
// (a flow collection may turn out to be a key), about 280 bytes per bracket: "[[[[...", refused by
// the depth cap only when the parser reaches it, would cost the memory first. The pre-scan counts
// flow nesting outside quoted scalars, comments and block scalars, and refuses the bracket that
// opens level max_config_depth + 1. Where it cannot tell (a quote in the middle of a plain scalar, a
// plain scalar continued on a line that starts with a bracket) it errs on counting; what it does
// not see is still refused by the event handler's exact depth count.

class flow_scan {
public:
    explicit flow_scan(std::string_view t) : t_(t) {}

    void run() {
        while (i_ < t_.size()) line();
    }

private:
    std::string_view t_;
    std::size_t i_ = 0;
    std::uint32_t flow_ = 0;
    long block_scalar_indent_ = -1;  // >= 0: inside a block scalar whose header line had this indentation

    bool at(std::size_t k, char c) const { return k < t_.size() && t_[k] == c; }
    bool blank_at(std::size_t k) const { return k >= t_.size() || t_[k] == ' ' || t_[k] == '\t' || t_[k] == '\n' || t_[k] == '\r'; }

    void skip_to_eol() {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
    }

    void skip_single_quoted() {  // i_ at the opening quote; '' is a quote inside
        ++i_;
        while (i_ < t_.size()) {
            if (t_[i_] == '\'') {
                if (at(i_ + 1, '\'')) {
                    i_ += 2;
                    continue;
                }
                ++i_;
                return;
            }
            ++i_;
        }
    }

    void skip_double_quoted() {  // i_ at the opening quote; backslash escapes
        ++i_;
        while (i_ < t_.size()) {
            if (t_[i_] == '\\') {
                i_ += 2;
                continue;
            }
            if (t_[i_] == '"') {
                ++i_;
                return;
            }
            ++i_;
        }
        i_ = t_.size();
    }

    void open() {
        if (++flow_ > max_config_depth)
            refuse(codes::bad_config, i_, {},
                   "the lists and maps nest deeper than " + num(max_config_depth) + " levels (the most read)");
    }

    // One line, from its first byte to after its newline (quoted scalars may carry the scan on).
    void line() {
        const std::size_t start = i_;
        while (i_ < t_.size() && t_[i_] == ' ') ++i_;
        const long indent = static_cast<long>(i_ - start);
        const bool empty = i_ >= t_.size() || t_[i_] == '\n' || t_[i_] == '\r';
        if (block_scalar_indent_ >= 0 && flow_ == 0) {
            if (empty || indent > block_scalar_indent_) {  // the block scalar's text: not YAML
                skip_to_eol();
                if (i_ < t_.size()) ++i_;
                return;
            }
            block_scalar_indent_ = -1;
        }
        bool node_start = true;  // a node can begin here (after indentation, "- ", "? ", ": ", [ { ,)
        if (flow_ == 0 && (t_.substr(i_, 3) == "---" || t_.substr(i_, 3) == "...") && blank_at(i_ + 3)) i_ += 3;
        while (i_ < t_.size() && t_[i_] != '\n') {
            const char c = t_[i_];
            if (c == ' ' || c == '\t' || c == '\r') {
                ++i_;
                continue;
            }
            if (c == '#' && (i_ == 0 || t_[i_ - 1] == ' ' || t_[i_ - 1] == '\t' || t_[i_ - 1] == '\n')) {
                skip_to_eol();
                break;
            }
            if (flow_ > 0) {
                if (c == '[' || c == '{') {
                    open();
                    node_start = true;
                } else if (c == ']' || c == '}') {
                    --flow_;
                    node_start = false;
                } else if (c == ',' || c == ':' || c == '?') {
                    node_start = true;
                } else if (node_start && c == '\'') {
                    skip_single_quoted();
                    node_start = false;
                    continue;
                } else if (node_start && c == '"') {
                    skip_double_quoted();
                    node_start = false;
                    continue;
                } else {
                    node_start = false;
                }
                ++i_;
                continue;
            }
            // block context
            if (node_start) {
                if ((c == '-' || c == '?' || c == ':') && blank_at(i_ + 1)) {
                    ++i_;
                    continue;
                }
                if (c == '[' || c == '{') {
                    open();
                    ++i_;
                    continue;
                }
                if (c == '\'') {
                    skip_single_quoted();
                    node_start = false;
                    continue;
                }
                if (c == '"') {
                    skip_double_quoted();
                    node_start = false;
                    continue;
                }
                if (c == '|' || c == '>') {
                    block_scalar_indent_ = indent;
                    skip_to_eol();
                    break;
                }
                if (c == '&' || c == '!') {  // an anchor or a tag before the node: skip the token
                    while (i_ < t_.size() && !blank_at(i_)) ++i_;
                    continue;
                }
                node_start = false;  // a plain scalar
                ++i_;
                continue;
            }
            if (c == ':' && blank_at(i_ + 1)) node_start = true;  // a map value follows
            ++i_;
        }
        if (i_ < t_.size()) ++i_;  // the newline
    }
};

// ---- the tree, built from yaml-cpp's events ----

class builder final : public YAML::EventHandler {
public:
    // bom: the bytes of a UTF-8 byte order mark at the start, which yaml-cpp's marks do not count.
    // size: the text's, the most an offset can be (yaml-cpp's marks can point past the end).
    builder(document& doc, std::uint64_t bom, std::uint64_t size) : doc_(doc), bom_(bom), size_(size) {}

    bool started() const { return documents_ > 0; }
    std::string path() const {
        std::string p;
        for (const frame& f : stack_) {
            if (f.map) {
                if (f.count == 0) break;
                if (!p.empty()) p += '.';
                p += f.key;
            } else {
                p += '[';
                p += num(f.count == 0 ? 0 : f.count - 1);
                p += ']';
            }
        }
        return p;
    }

    void OnDocumentStart(const YAML::Mark& mark) override {
        if (++documents_ > 1)
            refuse(codes::unsupported_config, offset(mark), {},
                   "a second YAML document (---): several documents are mergekit-multi's staged merges, which are "
                   "not supported; give one merge per config");
    }
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        check_anchor(mark, anchor);
        add(node::kind::null, mark, {}, false);
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
        refuse(codes::unsupported_config, offset(mark), path(),
               "YAML aliases (*name) are not read: an alias can repeat a node exponentially; write the value out");
    }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
        check_anchor(mark, anchor);
        check_tag(mark, tag);
        add(node::kind::scalar, mark, value, tag == "!");
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(node::kind::sequence, mark, tag, anchor);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(node::kind::map, mark, tag, anchor);
    }
    void OnMapEnd() override { close(); }
    void OnAnchor(const YAML::Mark& mark, const std::string&) override {
        refuse(codes::unsupported_config, offset(mark), path(),
               "YAML anchors (&name) are not read: with aliases they can repeat a node exponentially; write the value out");
    }

private:
    struct frame {
        std::uint32_t index = 0;  // the node
        bool map = false;
        bool has_key = false;     // a map: a key was read, its value comes next
        std::uint32_t count = 0;  // items (a map: entries) so far
        std::string key;          // a map: the last key's text (the path goes through it)
        std::unordered_set<std::string> keys;
    };

    document& doc_;
    std::uint64_t bom_;
    std::uint64_t size_;
    std::vector<frame> stack_;
    int documents_ = 0;

public:
    std::uint64_t offset(const YAML::Mark& m) const {
        return std::min(size_, (m.pos < 0 ? 0 : static_cast<std::uint64_t>(m.pos)) + bom_);
    }

private:

    void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) const {
        if (anchor != YAML::NullAnchor)
            refuse(codes::unsupported_config, offset(mark), path(),
                   "YAML anchors (&name) are not read: with aliases they can repeat a node exponentially; write the value out");
    }
    void check_tag(const YAML::Mark& mark, const std::string& tag) const {
        // "?": no tag (a plain node); "!": a quoted scalar (or the non-specific tag "!").
        if (tag != "?" && tag != "!")
            refuse(codes::unsupported_config, offset(mark), path(),
                   "explicit YAML tags (" + gguf::escape(tag.substr(0, 64)) + ") are not read; write the value plainly");
    }

    // A new node, attached to the open collection (a map alternates key, value).
    std::uint32_t add(node::kind k, const YAML::Mark& mark, const std::string& text, bool quoted) {
        if (doc_.nodes.size() >= max_config_nodes)
            refuse(codes::bad_config, offset(mark), path(),
                   "more than " + num(max_config_nodes) + " YAML nodes (the most read)");
        const auto index = static_cast<std::uint32_t>(doc_.nodes.size());
        if (!stack_.empty()) {
            frame& f = stack_.back();
            if (f.map && !f.has_key) {
                if (k != node::kind::scalar)
                    refuse(codes::bad_config, offset(mark), path(),
                           std::string("a key must be text, found ") + (k == node::kind::null ? "nothing" : "a list or a map"));
                if (++f.count > max_config_items)
                    refuse(codes::bad_config, offset(mark), path(),
                           "more than " + num(max_config_items) + " entries in one map (the most read)");
                if (!f.keys.insert(text).second) {
                    f.key = text;
                    f.has_key = true;
                    refuse(codes::bad_config, offset(mark), path(),
                           "the key appears twice in the same map (mergekit's reader would keep the last silently)");
                }
                f.key = text;
                f.has_key = true;
            } else if (f.map) {
                f.has_key = false;
            } else if (++f.count > max_config_items) {
                refuse(codes::bad_config, offset(mark), path(),
                       "more than " + num(max_config_items) + " items in one list (the most read)");
            }
            doc_.nodes[stack_.back().index].children.push_back(index);
        } else {
            doc_.root = index;
        }
        node n;
        n.type = k;
        n.quoted = quoted;
        n.offset = offset(mark);
        n.text = text;
        doc_.nodes.push_back(std::move(n));
        return index;
    }

    void open(node::kind k, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
        check_anchor(mark, anchor);
        check_tag(mark, tag);
        // Refused here, on the event that opens the level, before yaml-cpp recurses into it.
        if (stack_.size() + 1 > max_config_depth)
            refuse(codes::bad_config, offset(mark), path(),
                   "the lists and maps nest deeper than " + num(max_config_depth) + " levels (the most read)");
        const std::uint32_t index = add(k, mark, {}, false);
        frame f;
        f.index = index;
        f.map = k == node::kind::map;
        stack_.push_back(std::move(f));
    }

    void close() {
        if (!stack_.empty()) stack_.pop_back();
    }
};

// ---- PyYAML's implicit resolvers (yaml/resolver.py), by hand: no std::regex on untrusted text ----

bool is_timestamp11(std::string_view s) {
    auto digits_n = [&](std::size_t& k, std::size_t lo, std::size_t hi) {
        std::size_t n = 0;
        while (k < s.size() && digit(s[k]) && n < hi) {
            ++k;
            ++n;
        }
        return n >= lo;
    };
    std::size_t k = 0;
    if (!digits_n(k, 4, 4) || !(k < s.size() && s[k] == '-')) return false;
    ++k;
    const std::size_t month = k;
    if (!digits_n(k, 1, 2) || !(k < s.size() && s[k] == '-')) return false;
    const bool two_month = k - month == 2;
    ++k;
    const std::size_t day = k;
    if (!digits_n(k, 1, 2)) return false;
    if (k == s.size()) return two_month && k - day == 2;  // a date: YYYY-MM-DD exactly
    if (s[k] == 'T' || s[k] == 't') {
        ++k;
    } else if (s[k] == ' ' || s[k] == '\t') {
        while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    } else {
        return false;
    }
    if (!digits_n(k, 1, 2) || !(k < s.size() && s[k] == ':')) return false;
    ++k;
    if (!digits_n(k, 2, 2) || !(k < s.size() && s[k] == ':')) return false;
    ++k;
    if (!digits_n(k, 2, 2)) return false;
    if (k < s.size() && s[k] == '.') {
        ++k;
        while (k < s.size() && digit(s[k])) ++k;
    }
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    if (k == s.size()) return true;
    if (s[k] == 'Z') return k + 1 == s.size();
    if (s[k] != '-' && s[k] != '+') return false;
    ++k;
    if (!digits_n(k, 1, 2)) return false;
    if (k == s.size()) return true;
    if (s[k] != ':') return false;
    ++k;
    return digits_n(k, 2, 2) && k == s.size();
}

}  // namespace

bool bool_word(std::string_view s, bool& value) noexcept { return minfer::detail::pyyaml::bool_word(s, value); }

plain_kind resolve(std::string_view s) noexcept {
    bool b = false;
    if (is_null_word(s)) return plain_kind::null;
    if (bool_word(s, b)) return plain_kind::boolean;
    if (is_int11(s)) return plain_kind::integer;
    if (is_float11(s)) return plain_kind::floating;
    if (is_timestamp11(s)) return plain_kind::timestamp;
    return plain_kind::string;
}

bool parse(std::string_view text, document& out, failure& why) {
    out = document{};
    builder b(out, text.starts_with("\xEF\xBB\xBF") ? 3 : 0, text.size());
    try {
        if (text.size() > max_config_bytes) {
            why.code = gguf::errc::input_too_large;
            why.expected = max_config_bytes;
            why.found = text.size();
            why.detail = "an assembly config";
            return false;
        }
        check_text(text);
        flow_scan(text).run();
        std::istringstream in{std::string(text)};
        YAML::Parser parser(in);
        if (!parser.HandleNextDocument(b) || out.nodes.empty()) {
            why.code = codes::bad_config;
            why.detail = "the config is empty (expected a map with merge_method and models or slices)";
            return false;
        }
        parser.HandleNextDocument(b);  // a second document is refused by OnDocumentStart
        return true;
    } catch (refusal& r) {
        why = std::move(r.why);
        return false;
    } catch (const YAML::Exception& e) {
        why.code = codes::bad_config;
        why.offset = e.mark.is_null() ? 0 : b.offset(e.mark);
        why.subject = b.path();
        why.detail = "not valid YAML: " + e.msg;
        if (!e.mark.is_null())
            why.detail += " (line " + num(static_cast<std::uint64_t>(e.mark.line) + 1) + ", column " +
                          num(static_cast<std::uint64_t>(e.mark.column) + 1) + ")";
        return false;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {  // nothing else is expected from yaml-cpp; refused all the same
        why.code = codes::bad_config;
        why.subject = b.path();
        why.detail = std::string("not valid YAML: ") + e.what();
        return false;
    }
}

}  // namespace minfer::toolbox::config_yaml
