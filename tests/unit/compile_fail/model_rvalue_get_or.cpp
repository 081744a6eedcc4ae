// get_or<std::string_view> on a temporary model returned a view into a mapping unmapped at the end
// of the statement (a use after free under ASan): the overload is deleted on rvalues.
#include <string_view>

#include "minfer/gguf.hpp"

int main() {
    auto m = minfer::gguf::model::open("x.gguf");
    if (!m) return 1;
    (void)m->get_or<std::string_view>("general.name", "none");  // fine: the model lives on
#ifdef MINFER_COMPILE_FAIL
    auto name = (*minfer::gguf::model::open("x.gguf")).get_or<std::string_view>("general.name", "none");
    (void)name;
#endif
    return 0;
}
