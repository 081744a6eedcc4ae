// A view of a temporary model: result<T>::operator-> is deleted on rvalues.
#include "minfer/gguf.hpp"

int main() {
    auto r = minfer::gguf::model::open("x.gguf");  // fine: a named result
    if (r) (void)r->metadata().version();
#ifdef MINFER_COMPILE_FAIL
    auto v = minfer::gguf::model::open("x.gguf")->metadata();  // the model dies at the ';'
    (void)v;
#endif
    return 0;
}
