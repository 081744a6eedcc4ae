#include "named_input.hpp"

#include <unistd.h>

#include "minfer/gguf/read_capped.hpp"

namespace minfer::cli {

gguf::result<std::string> read_named_input(const std::string& path, std::uint64_t cap, const std::string& what) {
    auto r = path == "-" ? gguf::read_capped_fd(STDIN_FILENO, "standard input", cap) : gguf::read_capped(path, cap);
    if (!r && r.error().code == gguf::errc::input_too_large) {
        gguf::error e = std::move(r).error();
        e.detail = what;
        return gguf::unexpected(std::move(e));
    }
    return r;
}

}  // namespace minfer::cli
