// apply_in_place rewrites the bytes the planning model maps: a caller that kept the model open (an
// lvalue, const or not) would read garbage through it afterwards. Only an rvalue is accepted; the
// model is consumed.
#include <utility>

#include "minfer/gguf.hpp"
#include "minfer/gguf_write/in_place.hpp"

int main() {
    auto m = minfer::gguf::model::open("x.gguf");
    if (!m) return 1;
    minfer::gguf::in_place_edit edit;
#ifdef MINFER_COMPILE_FAIL
    const minfer::gguf::model& kept = *m;
    (void)minfer::gguf::apply_in_place(edit, kept);
#endif
    (void)minfer::gguf::apply_in_place(edit, std::move(*m));  // fine: the model is given up
    return 0;
}
