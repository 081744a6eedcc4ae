// A result must not be ignored: result<T> is [[nodiscard]] (an error under -Werror).
#include "minfer/gguf.hpp"

int main() {
    auto r = minfer::gguf::model::open("x.gguf");
    (void)r.has_value();
#ifdef MINFER_COMPILE_FAIL
    minfer::gguf::model::open("x.gguf");
#endif
    return 0;
}
