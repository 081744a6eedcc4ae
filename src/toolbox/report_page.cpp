#include "minfer/toolbox/report_page.hpp"

#include "report_page_assets.hpp"

namespace minfer::toolbox {
namespace {

// Text of an element or an attribute value: the five characters markup could take for its own.
void append_html_escaped(std::string& out, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
}

// The text of a <script> element ends at the first "</script" and changes state at "<!--"; both
// need a '<'. In valid JSON a '<' can only be inside a string, where "\u003c" is the same character,
// so replacing every one keeps the document's meaning and leaves the element nothing to end it.
void append_json_for_script(std::string& out, std::string_view json) {
    std::size_t pos = 0;
    for (std::size_t lt = json.find('<'); lt != std::string_view::npos; lt = json.find('<', pos)) {
        out.append(json.substr(pos, lt - pos)).append("\\u003c");
        pos = lt + 1;
    }
    out.append(json.substr(pos));
}

}  // namespace

std::string render_report_page(std::string_view report_json, std::string_view title) {
    namespace assets = report_page_assets;
    const std::string_view page = assets::page_html;
    std::string out;
    out.reserve(page.size() + assets::page_css.size() + assets::page_js.size() + report_json.size() +
                report_json.size() / 32 + 2 * 6 * title.size());
    // One pass over the skeleton: a replacement is never scanned again, so a title or document
    // holding "{{script}}" stays text.
    std::size_t pos = 0;
    while (true) {
        const std::size_t open = page.find("{{", pos);
        const std::size_t close = open == std::string_view::npos ? open : page.find("}}", open + 2);
        if (close == std::string_view::npos) break;
        out.append(page.substr(pos, open - pos));
        const std::string_view name = page.substr(open + 2, close - open - 2);
        if (name == "title") {
            append_html_escaped(out, title);
        } else if (name == "style") {
            out.append(assets::page_css);
        } else if (name == "script") {
            out.append(assets::page_js);
        } else if (name == "report_data") {
            append_json_for_script(out, report_json);
        } else {
            out.append(page.substr(open, close + 2 - open));  // not a placeholder of ours
        }
        pos = close + 2;
    }
    out.append(page.substr(pos));
    return out;
}

}  // namespace minfer::toolbox
