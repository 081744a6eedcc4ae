// minfer-bench-quantize-run: toolbox::quantize called directly, the minfer side of
// scripts/bench-quantize.sh while `minfer quantize` (the CLI over the same function) is not built;
// MINFER_CMD=build/release/bench/minfer-bench-quantize-run selects it. Same arguments as the CLI's
// subset the benchmark uses:
//
//   minfer-bench-quantize-run IN OUT TYPE [--threads N] [--imatrix FILE]
//
// Prints to stderr the seconds spent inside toolbox::quantize and its warnings; nothing else.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/quantize.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> pos;
    minfer::toolbox::quantize_request rq;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--threads" && i + 1 < argc) {
            rq.threads = static_cast<unsigned>(std::atoi(argv[++i]));
        } else if (a == "--imatrix" && i + 1 < argc) {
            rq.imatrix = argv[++i];
        } else {
            pos.emplace_back(a);
        }
    }
    if (pos.size() != 3) {
        std::fputs("usage: minfer-bench-quantize-run IN OUT TYPE [--threads N] [--imatrix FILE]\n", stderr);
        return 2;
    }
    const auto type = minfer::quant::parse_file_type(pos[2]);
    if (!type) {
        std::fprintf(stderr, "minfer-bench-quantize-run: %s\n", type.error().message().c_str());
        return 2;
    }
    rq.input = pos[0];
    rq.output = pos[1];
    rq.type = *type;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = minfer::toolbox::quantize(rq);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r) {
        std::fprintf(stderr, "minfer-bench-quantize-run: %s\n", r.error().message().c_str());
        return 1;
    }
    for (const auto& w : r->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::fprintf(stderr, "toolbox::quantize %s: %.3f s\n", std::string(type->name).c_str(), s);
    return 0;
}
