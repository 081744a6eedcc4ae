#pragma once
// The output store of the AVX2 kernels (internal; included by avx2.cpp and avx2_iq.cpp only, both
// compiled with -mavx2). `static`, so each of those files has its own copy and none can be chosen
// by the linker for a caller elsewhere (see kernels.hpp).
#include <immintrin.h>

namespace minfer::quant::detail {

/// One 8-float output store: normal (S = false), or non-temporal (S = true) for outputs too large
/// to stay in cache, which then go to memory without first being read for ownership (about 1.4x
/// the store rate of a large output here). Non-temporal stores are two 16-byte halves: a caller's
/// buffer is only sure to be 16-byte aligned (the dispatcher checks it), and it fences after.
template <bool S>
static inline void store8(float* y, __m256 v) {
    if constexpr (S) {
        _mm_stream_ps(y, _mm256_castps256_ps128(v));
        _mm_stream_ps(y + 4, _mm256_extractf128_ps(v, 1));
    } else {
        _mm256_storeu_ps(y, v);
    }
}

}  // namespace minfer::quant::detail
