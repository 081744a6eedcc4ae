// find(), get() and find_tensor() of a temporary model are deleted too.
#include <utility>

#include "minfer/gguf.hpp"

int main() {
    minfer::gguf::model m;
    (void)m.find("general.architecture");
    (void)m.find_tensor("w");
#ifdef MINFER_COMPILE_FAIL
    (void)std::move(m).find("general.architecture");
#endif
    return 0;
}
