#pragma once
// Counts heap allocations while enabled (a replacement of the global operator new for this binary),
// so the benchmarks can report how much memory an open allocates next to how long it takes.
#include <cstddef>

namespace minfer::bench {

struct alloc_totals {
    std::size_t calls = 0;
    std::size_t bytes = 0;
};

/// Start counting (resets the totals). Counting is off by default, so llama.cpp's reader (which
/// allocates through the same operator new) is not slowed by it.
void alloc_count_start() noexcept;
/// Stop counting and return what was allocated since the start.
alloc_totals alloc_count_stop() noexcept;

}  // namespace minfer::bench
