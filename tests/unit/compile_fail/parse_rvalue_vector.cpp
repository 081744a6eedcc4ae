// Parsing a temporary buffer would leave the view dangling: the rvalue-vector overload is deleted.
#include <vector>

#include "minfer/gguf.hpp"

int main() {
    const std::vector<std::byte> bytes(24);
    auto ok = minfer::gguf::file_view::parse(bytes);  // fine: the buffer outlives the view
    (void)ok.has_value();
#ifdef MINFER_COMPILE_FAIL
    auto bad = minfer::gguf::file_view::parse(std::vector<std::byte>{});
    (void)bad.has_value();
#endif
    return 0;
}
