// The block quantizers of the non-codebook types: not written yet.
#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

row_quantizer basic_quantizer(gguf::tensor_type) noexcept { return nullptr; }

}  // namespace minfer::quant::detail
