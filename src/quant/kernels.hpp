#pragma once
// The kernel tables behind minfer::quant's dispatch (internal).
//
// A kernel converts `n_blocks` whole blocks of one type, read from `src` (n_blocks * block_bytes
// bytes, any alignment), to n_blocks * block_elems floats at `dst`. It never fails: sizes are
// checked before it is called, and every bit pattern has a value.
//
// Each instruction set's kernels live in their own .cpp, compiled with that set's flags
// (-mavx2 …) and called only after the CPU is known to support it. So that no code compiled for a
// newer set can be chosen by the linker for an older caller (an inline function or template
// emitted in both), those files use raw pointers, intrinsics and functions of their own (static or
// in their own namespace) only: no std templates. Every quant .cpp is compiled with
// -ffp-contract=off: a fused multiply-add would round differently from ggml's x*d + m.
#include <cstddef>
#include <cstdint>

#include "minfer/gguf/types.hpp"

namespace minfer::quant::detail {

using block_kernel = void (*)(const std::uint8_t* src, float* dst, std::size_t n_blocks);

/// One kernel per ggml type id; nullptr where the set has none.
struct kernel_table {
    block_kernel by_type[gguf::tensor_type_count];
    /// The same kernels with non-temporal stores, for outputs too large to stay in cache (see
    /// stream_min_bytes); nullptr where the set has none. They need a 16-byte aligned output and a
    /// store_fence() after them.
    block_kernel streaming[gguf::tensor_type_count];
    void (*store_fence)();
};

/// Outputs of at least this many bytes are written with the streaming kernels when the set has
/// them: 8 MiB, well past a core's share of L2 (and above the 4 MiB chunks the CLI streams through
/// and reads right away, which must stay in cache).
inline constexpr std::uint64_t stream_min_bytes = std::uint64_t{8} << 20;

/// The reference kernels (scalar.cpp): one for every convertible type, portable C++.
const kernel_table& scalar_kernels() noexcept;
/// The AVX2 (+FMA, F16C, BMI2) kernels (avx2.cpp), nullptr when this build has none (not x86-64).
/// Types without an AVX2 kernel are nullptr in it and run the scalar kernel.
const kernel_table* avx2_kernels() noexcept;
/// The part of the AVX2 table that avx2_iq.cpp provides (the iq2/iq3/iq1 codebook formats);
/// only in x86-64 builds.
const kernel_table& avx2_iq_kernels() noexcept;

}  // namespace minfer::quant::detail
