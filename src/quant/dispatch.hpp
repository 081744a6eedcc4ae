#pragma once
// The active kernel set (internal): isa.cpp chooses it, dequantize.cpp reads it.
#include "kernels.hpp"
#include "minfer/quant/isa.hpp"

namespace minfer::quant::detail {

/// The table of the active instruction set (chosen on first use, see isa.hpp).
const kernel_table& active_kernels() noexcept;
/// The table this build has for `i` (whatever the CPU), nullptr when none.
const kernel_table* kernels_of_build(isa i) noexcept;
/// The table of `i`, nullptr when !isa_supported(i).
const kernel_table* kernels_of(isa i) noexcept;

}  // namespace minfer::quant::detail
