#pragma once
// The lower bound for opening a GGUF file: open + fstat + mmap, one bare walk over the header,
// metadata and tensor table that reads each length and skips (no allocation, no index, no shape or
// layout checks beyond staying inside the mapping), then munmap. Anything a real loader does on
// top of this is the price of its checks and its index.
#include <cstddef>
#include <cstdint>

namespace minfer::bench {

struct walk_result {
    bool ok = false;             ///< false: unreadable file, bad magic, or a length past the end
    std::uint64_t n_kv = 0;
    std::uint64_t n_tensors = 0;
    std::uint64_t table_end = 0;  ///< offset just past the tensor table
    std::uint64_t checksum = 0;   ///< sum of lengths and fields seen, so the walk cannot be elided
};

/// Walk bytes [0, size) of a GGUF file already in memory.
walk_result walk_gguf(const std::byte* data, std::size_t size) noexcept;

/// open + fstat + mmap + walk_gguf + munmap + close.
walk_result floor_open(const char* path) noexcept;

/// As floor_open, but keeps the mapping until release_mapping() (for RSS measurements).
walk_result floor_open_hold(const char* path, void** map, std::size_t* size) noexcept;
void release_mapping(void* map, std::size_t size) noexcept;

}  // namespace minfer::bench
