// `auto md = m->metadata();` used to copy every record and both indexes of the file, silently.
// file_view is move-only: take a reference (`const auto& md = m->metadata();`).
#include "minfer/gguf.hpp"

int main() {
    auto m = minfer::gguf::model::open("x.gguf");
    if (!m) return 1;
    const auto& md = m->metadata();  // fine: a reference
    (void)md.data_offset();
#ifdef MINFER_COMPILE_FAIL
    auto copy = m->metadata();
    (void)copy;
#endif
    return 0;
}
