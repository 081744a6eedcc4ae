#pragma once
// The report page's assets (src/toolbox/report_page/page.html, page.css, page.js), compiled in by
// cmake/embed_text.cmake: the generated report_page_assets.cpp in the build directory defines them.
#include <string_view>

namespace minfer::toolbox::report_page_assets {

extern const std::string_view page_html;  // the skeleton, with {{name}} placeholders
extern const std::string_view page_css;
extern const std::string_view page_js;

}  // namespace minfer::toolbox::report_page_assets
