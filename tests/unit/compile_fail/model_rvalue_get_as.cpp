// get_as on a temporary model: deleted like every other accessor of a temporary (its result may be
// a view for some T, and a temporary model is a mistake whatever T is).
#include <cstdint>

#include "minfer/gguf.hpp"

int main() {
    auto m = minfer::gguf::model::open("x.gguf");
    if (!m) return 1;
    (void)m->get_as<std::uint32_t>("llama.block_count");  // fine
#ifdef MINFER_COMPILE_FAIL
    auto n = (*minfer::gguf::model::open("x.gguf")).get_as<std::uint32_t>("llama.block_count");
    (void)n;
#endif
    return 0;
}
