// toolbox::write_report_page (report.hpp): the page drawn from the document, written atomically.
#include <unistd.h>

#include <cerrno>
#include <new>

#include "minfer/gguf/split.hpp"
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/report.hpp"
#include "minfer/toolbox/report_page.hpp"

namespace minfer::toolbox {

std::optional<std::string> report_output_is_input(const report_request& request, const std::filesystem::path& output) noexcept {
    try {
        std::error_code ec;
        if (!std::filesystem::exists(output, ec)) return std::nullopt;
        for (const std::string& m : request.models) {
            if (names_remote_model(m)) continue;
            // Every file of the model: its split set's parts when it is part 1 of one, else itself.
            auto parts = gguf::resolve_splits(m);
            const std::vector<std::filesystem::path> files = parts ? *parts : std::vector<std::filesystem::path>{m};
            for (const std::filesystem::path& f : files)
                if (std::filesystem::equivalent(f, output, ec)) return m;
        }
        return std::nullopt;
    } catch (...) {  // an allocation failure: the write that follows reports its own errors
        return std::nullopt;
    }
}

gguf::result<void> write_report_page(const report_result& report, const std::filesystem::path& output, bool overwrite) noexcept {
    try {
        if (auto checked = gguf::check_output_path(output, overwrite); !checked) return gguf::unexpected(std::move(checked).error());
        const std::string page = render_report_page(report.json, report.title);
        gguf::atomic_file_options fo;
        fo.replace_existing = overwrite;
        auto f = gguf::atomic_file::create(output, fo);
        if (!f) return gguf::unexpected(std::move(f).error());
        std::size_t done = 0;
        while (done < page.size()) {
            const ssize_t w = ::write(f->fd(), page.data() + done, page.size() - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                gguf::error e;
                e.code = gguf::errc::io_error;
                e.file = output.string();
                e.detail = "write the page";
                e.sys_errno = w < 0 ? errno : ENOSPC;
                return gguf::unexpected(std::move(e));
            }
            done += static_cast<std::size_t>(w);
        }
        return f->commit();
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("writing the report page"));
    }
}

}  // namespace minfer::toolbox
