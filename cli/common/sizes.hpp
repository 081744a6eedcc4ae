#pragma once
// Sizes for a person. One convention everywhere: binary units, labelled as such (MiB = 2^20 bytes), so
// the label never lies about the divisor.
#include <cstdint>
#include <string>

namespace minfer::cli {

/// "1.1 MiB": bytes / 1048576 with one decimal and the unit.
std::string mib_text(std::uint64_t bytes);

}  // namespace minfer::cli
