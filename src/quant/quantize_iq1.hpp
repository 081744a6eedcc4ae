#pragma once
// iq1_s and iq1_m, the 1.5 / 1.75 bit codebook quantizers (internal; quantize_iq1.cpp), for
// iq_quantizer() in quantize_iq.cpp.
#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

row_quantizer iq1_s_quantizer() noexcept;
row_quantizer iq1_m_quantizer() noexcept;

}  // namespace minfer::quant::detail
