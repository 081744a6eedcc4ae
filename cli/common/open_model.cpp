#include "open_model.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "sigbus_guard.hpp"

namespace minfer::cli {

gguf::result<gguf::model> open_model(const std::string& path, bool no_mmap) {
    // Armed before the mapping exists: parsing reads the mapping too.
    sigbus_guard_file(path, "(or one of its split parts)");
    gguf::open_options oo;
    oo.mode = no_mmap ? gguf::load_mode::read : gguf::load_mode::map;
    auto m = gguf::model::open(std::filesystem::path(path), oo);
    if (m && m->parts().size() == 1) sigbus_guard_file(path);
    return m;
}

int exit_code_for(const gguf::error& e) noexcept {
    switch (e.code) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory: return exit_io;
        default: return exit_parse;
    }
}

int report_error(const gguf::error& e) {
    const int code = exit_code_for(e);
    if (code == exit_parse) {
        fmt::print(stderr, "Error: failed to parse GGUF: {}\n", e.message());
    } else {
        fmt::print(stderr, "Error: {}\n", e.message());
    }
    std::fflush(stderr);
    return code;
}

}  // namespace minfer::cli
