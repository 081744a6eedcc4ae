// A model owns its mappings: it moves, it does not copy.
#include <utility>

#include "minfer/gguf.hpp"

int main() {
    minfer::gguf::model a;
    minfer::gguf::model b = std::move(a);
    (void)b.tensors();
#ifdef MINFER_COMPILE_FAIL
    minfer::gguf::model c = b;
    (void)c.tensors();
#endif
    return 0;
}
