// mapped_file::bytes() is deleted on rvalues, even when reached without result's operator->.
#include <utility>

#include "minfer/gguf.hpp"

int main() {
    minfer::gguf::mapped_file f;
    (void)f.bytes();
#ifdef MINFER_COMPILE_FAIL
    auto b = std::move(f).bytes();
    (void)b;
#endif
    return 0;
}
