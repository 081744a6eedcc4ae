#pragma once
// The model fuzz_journal recovers, and the journal an in-place edit of it would write: shared by the
// target and the seed writer so the seeds are journals of exactly this file.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "minfer/gguf_write/writer.hpp"

namespace minfer::fuzz {

inline gguf::writer journal_model(std::string_view name) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", name);
    const std::int64_t ne[] = {16};
    std::vector<std::byte> data(64);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i);
    w.add_tensor("w", gguf::tensor_type::f32, ne, std::span<const std::byte>(data));
    return w;
}

inline std::uint64_t journal_checksum(const std::byte* p, std::size_t n) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64, as src/gguf_write/in_place.cpp
    for (std::size_t i = 0; i < n; ++i) {
        h ^= static_cast<std::uint8_t>(p[i]);
        h *= 0x100000001b3ull;
    }
    return h;
}

/// Magic, file size, head size, checksum, old head, new head (in_place.cpp's format).
inline std::vector<std::byte> journal_bytes(std::uint64_t file_size, const std::vector<std::byte>& old_head,
                                            const std::vector<std::byte>& new_head) {
    // Sized once and filled with memcpy (GCC 12 -O3 sees a false bounds problem in inserts after 40).
    const std::uint64_t head = old_head.size();
    std::vector<std::byte> j(40 + old_head.size() + new_head.size());
    std::memcpy(j.data(), "MINFER-UNDO-1\n\0\0", 16);
    std::memcpy(j.data() + 16, &file_size, 8);
    std::memcpy(j.data() + 24, &head, 8);
    if (!old_head.empty()) std::memcpy(j.data() + 40, old_head.data(), old_head.size());
    if (!new_head.empty()) std::memcpy(j.data() + 40 + old_head.size(), new_head.data(), new_head.size());
    const std::uint64_t sum = journal_checksum(j.data() + 40, j.size() - 40);
    std::memcpy(j.data() + 32, &sum, 8);
    return j;
}

}  // namespace minfer::fuzz
