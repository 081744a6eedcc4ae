// minfer-render-report: a report document (docs/REPORT_JSON.md) as the report page, through the
// library's render_report_page. A development tool: the browser tests (tests/browser) draw their own
// documents with it, independently of the builder of `minfer report`.
//   minfer-render-report IN.json OUT.html [TITLE]
// IN.json may be - (standard input). TITLE defaults to IN's file name. Exit status: 0 written,
// 2 usage, 3 I/O error. The document is not checked: the page says what it cannot draw.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "minfer/gguf/read_capped.hpp"
#include "minfer/toolbox/report_page.hpp"

namespace {

constexpr std::uint64_t max_document = std::uint64_t{1} << 30;  // far above a 1M-token vocabulary

bool write_file(const std::string& path, std::string_view bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && wrote;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        std::fputs("usage: minfer-render-report IN.json OUT.html [TITLE]\n"
                   "  Write the report page of a report document (IN.json, or - for standard input).\n",
                   stderr);
        return 2;
    }
    const std::string in = argv[1];
    const std::string out = argv[2];
    auto json = in == "-" ? minfer::gguf::read_capped_fd(0, "standard input", max_document)
                          : minfer::gguf::read_capped(in, max_document);
    if (!json) {
        std::fprintf(stderr, "minfer-render-report: %s\n", json.error().message().c_str());
        return 3;
    }
    const std::string title = argc == 4 ? std::string(argv[3])
                              : in == "-" ? std::string("report")
                                          : std::filesystem::path(in).filename().string();
    const std::string page = minfer::toolbox::render_report_page(*json, title);
    if (!write_file(out, page)) {
        std::fprintf(stderr, "minfer-render-report: cannot write %s: %s\n", out.c_str(), std::strerror(errno));
        return 3;
    }
    return 0;
}
