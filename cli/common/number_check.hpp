#pragma once
// Validators for numeric options whose failures read as a person writes the range: "--threads: '-3'
// is not a whole number from 0 to 4294967295", where CLI11's NonNegativeNumber/PositiveNumber print
// "Value -3 not in range 0.000000 to 1797693134862315708145274237317043567980..." (DBL_MAX, 309 digits).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace minfer::cli {

/// A whole number in [lo, hi] (decimal digits only: no sign, no fraction, no exponent).
inline CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            std::uint64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [p, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || p != end || v < lo || v > hi)
                return fmt::format("'{}' is not a whole number from {} to {}", text, lo, hi);
            return {};
        },
        fmt::format("{}..{}", lo, hi));
}

/// A number of seconds above 0 (a fraction is allowed).
inline CLI::Validator positive_seconds() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            double v = 0;
            const char* end = text.data() + text.size();
            const auto [p, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v) || !(v > 0))
                return fmt::format("'{}' is not a number of seconds above 0", text);
            return {};
        },
        "SECONDS > 0");
}

}  // namespace minfer::cli
