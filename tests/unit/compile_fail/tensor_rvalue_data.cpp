// The bytes of a temporary tensor (an owned one would free them) are not reachable.
#include "minfer/core/tensor.hpp"

int main() {
    const std::int64_t ne[] = {4};
    auto t = minfer::core::tensor::owned("x", minfer::gguf::tensor_type::f32, ne);
    if (t) (void)t->data().size();
#ifdef MINFER_COMPILE_FAIL
    auto d = minfer::core::tensor::owned("x", minfer::gguf::tensor_type::f32, ne).value().data();
    (void)d;
#endif
    return 0;
}
