// minfer-make-arch-model ARCH OUT.gguf: write one of the synthetic per-architecture models.
#include <cstdio>
#include <string>

#include "arch_models.hpp"

int main(int argc, char** argv) {
    namespace et = minfer::estimate_test;
    if (argc != 3) {
        std::fputs("usage: minfer-make-arch-model ARCH OUT.gguf\narchitectures:", stderr);
        for (const std::string& a : et::arch_names()) std::fprintf(stderr, " %s", a.c_str());
        std::fputs("\n", stderr);
        return 2;
    }
    auto r = et::make_arch_model(argv[1], argv[2]);
    if (!r) {
        std::fprintf(stderr, "minfer-make-arch-model: %s\n", r.error().message().c_str());
        return 1;
    }
    return 0;
}
