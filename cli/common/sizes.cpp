#include "sizes.hpp"

#include <fmt/format.h>

namespace minfer::cli {

std::string mib_text(std::uint64_t bytes) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0);
}

}  // namespace minfer::cli
