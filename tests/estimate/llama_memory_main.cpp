// minfer-llama-memory MODEL [--ctx N] [--batch N] [--ubatch N] [--parallel N] [--cache-type-k T]
//   [--cache-type-v T] [--flash-attn auto|on|off] [--swa-full on|off] [--no-decode]: what llama.cpp (the library MINFER_LLAMA_LIB names,
//   see scripts/llama-ref.sh) allocates for that context, as one JSON line. Exit 0 ok, 1 llama.cpp
//   refused, 2 usage, 3 library unavailable.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "llama_memory.hpp"

int main(int argc, char** argv) {
    namespace et = minfer::estimate_test;
    namespace part = minfer::llama_ref::part;
    auto usage = [] {
        std::fputs("usage: minfer-llama-memory MODEL [--ctx N] [--batch N] [--ubatch N] [--parallel N]\n"
                   "         [--cache-type-k T] [--cache-type-v T] [--flash-attn auto|on|off] [--swa-full on|off]\n"
                   "         [--no-decode]\n", stderr);
        return 2;
    };
    et::llama_memory_request req;
    std::string model;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        auto number = [&](std::uint32_t& out) {
            const char* v = value();
            if (v == nullptr) return false;
            char* end = nullptr;
            const unsigned long n = std::strtoul(v, &end, 10);
            if (*end != '\0' || n == 0 || n > 0xffffffffu) return false;
            out = static_cast<std::uint32_t>(n);
            return true;
        };
        auto text = [&](std::string& out) {
            const char* v = value();
            if (v == nullptr) return false;
            out = v;
            return true;
        };
        bool ok = true;
        if (a == "--ctx") ok = number(req.n_ctx);
        else if (a == "--batch") ok = number(req.n_batch);
        else if (a == "--ubatch") ok = number(req.n_ubatch);
        else if (a == "--parallel") ok = number(req.n_seq_max);
        else if (a == "--cache-type-k") ok = text(req.cache_type_k);
        else if (a == "--cache-type-v") ok = text(req.cache_type_v);
        else if (a == "--flash-attn") ok = text(req.flash_attn) && (req.flash_attn == "auto" || req.flash_attn == "on" || req.flash_attn == "off");
        else if (a == "--swa-full") {
            std::string v;
            ok = text(v) && (v == "on" || v == "off");
            req.swa_full = v == "on";
        }
        else if (a == "--no-decode") req.decode_one = false;
        else if (!a.empty() && a[0] != '-' && model.empty()) model = a;
        else ok = false;
        if (!ok) return usage();
    }
    if (model.empty()) return usage();
    std::string why;
    const minfer::llama_ref::llama_lib* lib = minfer::llama_ref::llama_lib::require(part::llama_model, why);
    if (lib == nullptr || !lib->llama_ready()) {
        std::fprintf(stderr, "minfer-llama-memory: %s\n", why.empty() ? "llama backend not ready" : why.c_str());
        return 3;
    }
    const auto f = et::llama_memory(*lib, model, req, why);
    if (!f) {
        std::fprintf(stderr, "minfer-llama-memory: %s\n", why.c_str());
        return 1;
    }
    std::printf("%s\n", et::to_json(*f).c_str());
    return 0;
}
