// capped_file.hpp: a small input file read whole, with the converter's error above its cap.
#include "capped_file.hpp"

#include <cerrno>

#include "minfer/gguf/read_capped.hpp"

namespace minfer::convert::detail {

gguf::result<std::string> read_capped_file(const std::filesystem::path& path, std::uint64_t cap, gguf::errc code,
                                           when_missing missing) noexcept {
    auto text = gguf::read_capped(path, cap, code);
    if (text) return text;
    gguf::error e = std::move(text).error();
    try {
        if (e.code == code) {
            e.where = gguf::section::file;
            e.detail = "larger than " + std::to_string(cap) + " bytes";
        } else if (missing == when_missing::refuse && e.code == gguf::errc::io_error && e.sys_errno == ENOENT) {
            e.code = code;
            e.where = gguf::section::file;
            e.detail = "the file is missing";
        }
    } catch (...) {  // the detail's allocation: the code and the numbers still say it
    }
    return gguf::unexpected(std::move(e));
}

}  // namespace minfer::convert::detail
