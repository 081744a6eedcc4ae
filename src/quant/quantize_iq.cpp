// The codebook quantizers (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m): not written yet.
#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

row_quantizer iq_quantizer(gguf::tensor_type) noexcept { return nullptr; }

}  // namespace minfer::quant::detail
