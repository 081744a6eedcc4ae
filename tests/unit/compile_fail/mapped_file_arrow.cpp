// The bytes of a temporary mapping would be unmapped at the end of the statement.
#include "minfer/gguf.hpp"

int main() {
    auto f = minfer::gguf::mapped_file::open("x.gguf");
    if (f) (void)f->bytes().size();
#ifdef MINFER_COMPILE_FAIL
    auto b = minfer::gguf::mapped_file::open("x.gguf")->bytes();
    (void)b;
#endif
    return 0;
}
