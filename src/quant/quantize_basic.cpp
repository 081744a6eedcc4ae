// The basic family's entry point: every quantizable type except the codebook ones (those are in
// quantize_iq.cpp). The plain and 32-value-block types are in quantize_legacy.cpp, the k-quants
// in quantize_k.cpp.
#include "quantize_basic.hpp"

namespace minfer::quant::detail {

row_quantizer basic_quantizer(gguf::tensor_type type) noexcept {
    if (row_quantizer q = qb::legacy_quantizer(type)) return q;
    return qb::k_quantizer(type);
}

}  // namespace minfer::quant::detail
