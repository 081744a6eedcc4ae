// Views of a model that is being moved from (or is a temporary) do not compile.
#include <utility>

#include "minfer/gguf.hpp"

int main() {
    minfer::gguf::model m;
    (void)m.tensors().size();
#ifdef MINFER_COMPILE_FAIL
    auto t = std::move(m).tensors();
    (void)t;
#endif
    return 0;
}
