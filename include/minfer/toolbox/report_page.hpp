#pragma once
// The report page (`minfer report … -o FILE.html`): one self-contained offline HTML file that draws a
// report document (docs/REPORT_JSON.md) with its own inline CSS and JavaScript. The page makes no
// request (its Content-Security-Policy allows none) and draws every string of the document as DOM
// text, never as markup; the assets are src/toolbox/report_page/, compiled into the library.
#include <string>
#include <string_view>

namespace minfer::toolbox {

/// The complete HTML page for `report_json`, a report document as docs/REPORT_JSON.md describes it
/// (not checked here: the page reports a document it cannot read). The document is embedded as the
/// text of `<script type="application/json" id="report-data">` with every `<` written as `\u003c`, so
/// that no string of it can end the element or open a comment and the text stays the same JSON;
/// `title` is HTML-escaped (the page's <title> and heading). Throws std::bad_alloc only.
std::string render_report_page(std::string_view report_json, std::string_view title);

}  // namespace minfer::toolbox
