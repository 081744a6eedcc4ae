#pragma once
// A usage error: the message on stderr, exit 2.
#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "exit_codes.hpp"

namespace minfer::cli {

inline int usage_error(std::string_view message) {
    fmt::print(stderr, "Error: {}\n", message);
    return exit_usage;
}

}  // namespace minfer::cli
