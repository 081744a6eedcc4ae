// quantize.hpp's entry points (size checks, threads, the choice of row quantizer): not written yet.
#include "quantize_kernels.hpp"
