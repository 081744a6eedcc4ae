// toolbox::report on whatever the loader accepts: the input is a GGUF file; when it opens, its report
// (with values: every tensor dequantized, statistics and histograms) must be built, must be one valid
// JSON document (checked here by a strict recursive-descent reader: the page parses it with
// JSON.parse), and its page must hold it with no '<' of the document left unescaped.
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

#include "fuzz_common.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/toolbox/report.hpp"
#include "minfer/toolbox/report_page.hpp"

namespace {

// RFC 8259, strictly: one value and nothing after it.
class json_check {
public:
    explicit json_check(std::string_view s) : s_(s) {}
    bool document() {
        ws();
        if (!value(0)) return false;
        ws();
        return i_ == s_.size();
    }

private:
    bool value(int depth) {
        if (depth > 64 || i_ >= s_.size()) return false;
        const char c = s_[i_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return string();
        if (c == 't') return word("true");
        if (c == 'f') return word("false");
        if (c == 'n') return word("null");
        return number();
    }
    bool object(int depth) {
        ++i_;
        ws();
        if (peek('}')) return ++i_, true;
        for (;;) {
            ws();
            if (!string()) return false;
            ws();
            if (!peek(':')) return false;
            ++i_;
            ws();
            if (!value(depth + 1)) return false;
            ws();
            if (peek('}')) return ++i_, true;
            if (!peek(',')) return false;
            ++i_;
        }
    }
    bool array(int depth) {
        ++i_;
        ws();
        if (peek(']')) return ++i_, true;
        for (;;) {
            ws();
            if (!value(depth + 1)) return false;
            ws();
            if (peek(']')) return ++i_, true;
            if (!peek(',')) return false;
            ++i_;
        }
    }
    bool string() {
        if (!peek('"')) return false;
        ++i_;
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') return ++i_, true;
            if (c < 0x20) return false;
            if (c == '\\') {
                if (++i_ >= s_.size()) return false;
                const char e = s_[i_];
                if (e == 'u') {
                    for (int k = 0; k < 4; ++k)
                        if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
                } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
                    return false;
                }
            }
            ++i_;
        }
        return false;
    }
    bool number() {
        const std::size_t start = i_;
        if (peek('-')) ++i_;
        if (!digits()) return false;
        if (s_[start + (s_[start] == '-' ? 1 : 0)] == '0' && i_ - start > 1 + (s_[start] == '-' ? 1u : 0u)) return false;
        if (peek('.')) {
            ++i_;
            if (!digits()) return false;
        }
        if (peek('e') || peek('E')) {
            ++i_;
            if (peek('+') || peek('-')) ++i_;
            if (!digits()) return false;
        }
        return true;
    }
    bool digits() {
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        return i_ > start;
    }
    bool word(std::string_view w) {
        if (s_.substr(i_, w.size()) != w) return false;
        i_ += w.size();
        return true;
    }
    bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    }
    std::string_view s_;
    std::size_t i_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    const std::filesystem::path file = fuzz::input_file("report", "m.gguf", data, size);
    if (file.empty()) return 0;
    {
        auto m = gguf::model::open(file);
        if (!m || m->parts().size() != 1) return 0;  // the loader's verdict is fuzz_parse's business
    }
    toolbox::report_request rq;
    rq.models = {file.string()};
    rq.values = true;
    rq.threads = 1;
    auto r = toolbox::report(rq);
    if (!r) return 0;  // a type without a dequantizer, a value the library refuses: a result, not a crash
    fuzz::require(json_check(r->json).document());
    const std::string page = toolbox::render_report_page(r->json, r->title);
    const std::size_t open = page.find("id=\"report-data\">");
    fuzz::require(open != std::string::npos);
    const std::size_t close = page.find("</script>", open);
    fuzz::require(close != std::string::npos);
    // the embedded text is the document with every '<' escaped: nothing in it ends the element
    fuzz::require(page.substr(open, close - open).find('<') == std::string::npos);
    return 0;
}
