#pragma once
// minfer::quant: tensor values as f32. Every ggml type that has a to_float converts bit for bit as
// ggml's does (the f32 bits are equal; a NaN stays a NaN), plus f32 (copied), f64 and i8/i16/i32
// (converted as C does) and q8_K. Block layouts and formulas: docs/QUANT.md.
//
// Sizes are checked and errors are data (minfer::gguf::error), never a crash: `src` must hold
// exactly the bytes of dst.size() values, and dst.size() must be a whole number of blocks. The
// bytes themselves are never "invalid": any bit pattern converts (NaN/Inf scales give NaN/Inf
// values, as in ggml).
//
//     std::vector<float> out(info.n_elements);
//     if (auto r = minfer::quant::dequantize(info.type, model.tensor_data(t), out); !r) report(r.error());
#include <cstddef>
#include <cstdint>
#include <span>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::quant {

using gguf::result;
using gguf::tensor_type;

/// Whether values of `type` convert to f32: every type ggml's to_float knows, f32, f64, i8, i16,
/// i32 and q8_K. False for q8_1 (ggml has no to_float for it), i64, removed and unknown ids.
bool can_dequantize(tensor_type type) noexcept;

/// Bytes that hold `n_values` values of `type`: n_values / block_elems * block_bytes. 0 when the
/// type is not convertible or n_values is not a whole number of blocks (check with can_dequantize
/// and the type's block size first; overflow also gives 0).
std::uint64_t bytes_for(tensor_type type, std::uint64_t n_values) noexcept;

/// Convert dst.size() values of `type` from `src` (exactly bytes_for(type, dst.size()) bytes) into
/// `dst`, on the calling thread, with the kernels active_isa() names.
/// @returns type_not_convertible (found = the type id), not_block_multiple (expected = the block's
/// values, found = dst.size()), buffer_size_mismatch (expected = bytes needed, found = src.size()).
/// On error nothing is written.
result<void> dequantize(tensor_type type, std::span<const std::byte> src, std::span<float> dst) noexcept;

/// Values [first, first + dst.size()) of a tensor whose whole bytes are `tensor_bytes`: first and
/// dst.size() must be whole blocks (streaming a large tensor through a bounded buffer).
/// @returns the errors of dequantize(); not_block_multiple also when `first` is not on a block
/// boundary (found = first); index_out_of_range when the range passes the tensor's end
/// (expected = values in the tensor, found = first + dst.size()). `threads` as dequantize_parallel's
/// (1: on the calling thread only).
result<void> dequantize_range(tensor_type type, std::span<const std::byte> tensor_bytes, std::uint64_t first,
                              std::span<float> dst, unsigned threads = 1) noexcept;

/// dequantize() on up to `threads` threads (0: one per hardware thread), each taking a contiguous
/// run of whole blocks, on the process's persistent worker threads (started on the first call, not
/// per call). Small inputs (under a quarter of a million values per thread) use fewer threads; if a
/// thread cannot be started the work is done on the threads that could. Same errors.
result<void> dequantize_parallel(tensor_type type, std::span<const std::byte> src, std::span<float> dst,
                                 unsigned threads = 0) noexcept;

}  // namespace minfer::quant
