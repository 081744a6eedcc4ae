// result<model>::value() on a temporary yields model&&, whose view accessors are deleted.
#include "minfer/gguf.hpp"

int main() {
    auto r = minfer::gguf::model::open("x.gguf");
    if (r) (void)r.value().metadata().data_offset();
#ifdef MINFER_COMPILE_FAIL
    const auto& v = minfer::gguf::model::open("x.gguf").value().metadata();
    (void)v;
#endif
    return 0;
}
