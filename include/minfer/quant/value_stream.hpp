#pragma once
// quant::stream_values: a tensor's values as f32, streamed through a bounded buffer, so that a reader
// (tensor --stats and --dump, the frontends) takes tensors of any size with a few MiB of memory, never
// n_elements floats at once.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "minfer/gguf/page_advice.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"

namespace minfer::quant {

/// Values per chunk: 1 Mi (4 MiB of f32). Every block size (1 … 256 values, powers of two) divides
/// it, so every chunk but the last is whole blocks, and the last is too (a tensor is whole blocks).
inline constexpr std::size_t chunk_values = std::size_t{1} << 20;

/// Gives back the pages of values [first, first + n) of a tensor of `type` whose bytes are `bytes`,
/// a file mapping (gguf::release_pages on their blocks; nothing when the range passes the bytes).
/// Only for bytes of a mapping (mapped_file::mapped()).
inline void release_value_pages(gguf::tensor_type type, std::span<const std::byte> bytes, std::uint64_t first,
                                std::uint64_t n) noexcept {
    const std::uint64_t from = bytes_for(type, first), to = bytes_for(type, first + n);
    if (from <= to && to <= bytes.size()) gguf::release_pages(bytes.subspan(from, to - from));
}

/// How stream_values reads.
struct stream_options {
    /// Threads converting each chunk (0: one per hardware thread), on the process's persistent
    /// worker threads (dequantize_parallel).
    unsigned threads = 0;
    /// The bytes are a file mapping (mapped_file::mapped()): the kernel is told the read is
    /// sequential, and each chunk's pages are given back once converted, so that the resident set
    /// stays about one chunk whatever the tensor's size. Never set it for bytes in memory.
    bool mapped = false;
};

/// Call fn(first_index, values) for each consecutive chunk of the `n_values` values of a tensor of
/// `type` whose bytes are `bytes`, in ggml element order, converted into `buffer` (grown to at
/// most chunk_values). fn returns false to stop early. @returns dequantize_range's error.
template <class Fn>
gguf::result<void> stream_values(gguf::tensor_type type, std::span<const std::byte> bytes, std::uint64_t n_values,
                                 std::vector<float>& buffer, Fn&& fn, const stream_options& options = {}) {
    if (options.mapped) gguf::advise_sequential(bytes);
    for (std::uint64_t first = 0; first < n_values;) {
        const std::uint64_t left = n_values - first;
        const std::size_t n = left < chunk_values ? static_cast<std::size_t>(left) : chunk_values;
        if (buffer.size() < n) buffer.resize(n);
        const std::span<float> dst(buffer.data(), n);
        if (auto r = dequantize_range(type, bytes, first, dst, options.threads); !r) return r;
        if (options.mapped) release_value_pages(type, bytes, first, n);
        if (!fn(first, std::span<const float>(dst))) break;
        first += n;
    }
    return {};
}

}  // namespace minfer::quant
