// Control: ordinary, correct use of the API compiles cleanly with the same command, so a failure of
// the compile_fail snippets is caused by the line each one guards, not by the harness.
#include <cstdio>
#include <vector>

#include "minfer/core/tensor.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf_write/writer.hpp"

int main(int argc, char** argv) {
    using namespace minfer::gguf;
    auto m = model::open(argc > 1 ? argv[1] : "x.gguf");
    if (!m) {
        std::puts(m.error().message().c_str());
        return 1;
    }
    const model& mm = *m;
    auto arch = mm.get<std::string_view>("general.architecture");
    if (arch) std::printf("%.*s\n", static_cast<int>(arch->size()), arch->data());
    for (const tensor_ref& t : mm.tensors()) (void)mm.tensor_data(t).size();
    auto t = minfer::core::borrow(mm, "w");
    if (t) (void)t->data();
    model moved = std::move(*m);
    (void)moved.metadata().data_offset();
    const std::vector<std::byte> buf(24);
    auto v = file_view::parse(buf);
    (void)v.has_value();
    writer w;
    w.set_u32("a", 1);
    auto bytes = w.to_bytes();
    return bytes ? 0 : 1;
}
