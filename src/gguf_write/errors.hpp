#pragma once
// Internal: the errors every part of the writing library makes the same way — a failed system call
// on a file (io_error with the path, the operation and errno) and a failed allocation.
#include <filesystem>
#include <string>
#include <utility>

#include "minfer/gguf/error.hpp"

namespace minfer::gguf::detail {

/// An error about a whole file: `file` = the path, `detail` = what was being done or why.
inline error file_error(errc code, const std::filesystem::path& file, std::string detail, int err = 0) {
    error e;
    e.code = code;
    e.where = section::file;
    e.file = file.string();
    e.detail = std::move(detail);
    e.sys_errno = err;
    return e;
}

inline error io_error(const std::filesystem::path& file, std::string what, int err) {
    return file_error(errc::io_error, file, std::move(what), err);
}

inline error oom(std::string_view what) noexcept { return out_of_memory_error(what); }

}  // namespace minfer::gguf::detail
