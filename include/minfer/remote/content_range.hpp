#pragma once
// The Content-Range header of a 206 or 416 answer (RFC 9110 14.4), parsed strictly.
#include <cstdint>
#include <optional>
#include <string_view>

namespace minfer::remote {

struct content_range {
    bool unsatisfied = false;  ///< "bytes */TOTAL" (a 416's answer): first and last are 0
    std::uint64_t first = 0;   ///< the first byte sent
    std::uint64_t last = 0;    ///< the last byte sent (inclusive)
    std::uint64_t total = 0;   ///< the file's size
};

/// "bytes FIRST-LAST/TOTAL" (FIRST ≤ LAST < TOTAL) or "bytes */TOTAL", the unit in any case, optional
/// surrounding spaces; decimal numbers without sign that fit in 64 bits. An unknown total ("/*") or
/// anything else is nullopt.
std::optional<content_range> parse_content_range(std::string_view value) noexcept;

}  // namespace minfer::remote
