#pragma once
// A count with its noun in the right number: "1 tensor", "3 tensors", "0 tensors". Every message
// that prints a count of things goes through it (no "1 tensors", no "part(s)").
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace minfer::cli {

inline std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// The noun alone, for "N of M tensors": "tensor" when m is 1.
inline std::string_view noun(std::uint64_t n, std::string_view one, std::string_view many) {
    return n == 1 ? one : many;
}

}  // namespace minfer::cli
