// in_place_driver FILE NAME: set general.name of FILE to NAME in place (the library path of
// `minfer edit --in-place`), for the crash tests to kill at every step. Exit 0 done, 1 refused, 3 I/O.
#include <cstdio>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/rewrite.hpp"

namespace gguf = minfer::gguf;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fputs("usage: in_place_driver FILE NAME\n", stderr);
        return 2;
    }
    auto fail = [](const gguf::error& e) {
        std::fprintf(stderr, "%s\n", e.message().c_str());
        return e.code == gguf::errc::io_error ? 3 : 1;
    };
    auto m = gguf::model::open(argv[1]);
    if (!m) return fail(m.error());
    auto src = gguf::model_source::open(*m);
    if (!src) return fail(src.error());
    const std::vector<gguf::metadata_change> changes{gguf::metadata_change::set_string("general.name", argv[2])};
    std::vector<gguf::tensor_ref> refs(m->tensors().begin(), m->tensors().end());
    auto w = gguf::rewrite(*m, *src, changes, refs);
    if (!w) return fail(w.error());
    auto plan = gguf::plan_in_place(*m, 0, *w);
    if (!plan) return fail(plan.error());
    if (auto r = gguf::apply_in_place(*plan, std::move(*m)); !r) return fail(r.error());
    return 0;
}
