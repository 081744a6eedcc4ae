// Choosing the kernels: what the build has, what the CPU can run, what MINFER_QUANT_ISA asks for.
#include <atomic>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <cstring>
#include <string>

#include "dispatch.hpp"
#include "minfer/quant/isa.hpp"

namespace minfer::quant {
namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// clang before 16 rejects __builtin_cpu_supports("f16c"): ask CPUID leaf 1 (ECX bit 29) directly.
bool has_f16c() noexcept {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

bool probe_cpu(isa i) noexcept {
    switch (i) {
        case isa::scalar: return true;
        case isa::avx2:
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
            // avx2.cpp is compiled with -mavx2 -mf16c -mbmi2 (never -mfma: see kernels.hpp).
            return __builtin_cpu_supports("avx2") && has_f16c() &&
                   __builtin_cpu_supports("bmi2");
#else
            return false;
#endif
        case isa::avx512:
        case isa::neon: return false;  // no kernels built for them yet
    }
    return false;
}

// What the CPU supports, probed once: CPUID is slow, and in a virtual machine each use may trap to
// the hypervisor (microseconds), which every dequantize() call would otherwise pay.
bool cpu_has(isa i) noexcept {
    static const bool has[4] = {probe_cpu(isa::scalar), probe_cpu(isa::avx2), probe_cpu(isa::avx512),
                                probe_cpu(isa::neon)};
    const auto k = static_cast<unsigned>(i);
    return k < 4 && has[k];
}

struct choice {
    isa chosen = isa::scalar;
    std::string note;
};

isa best_at_most(isa cap) noexcept {
    for (int k = static_cast<int>(cap); k > 0; --k)
        if (isa_supported(static_cast<isa>(k))) return static_cast<isa>(k);
    return isa::scalar;
}

isa best() noexcept { return best_at_most(isa::neon); }

choice from_environment() {
    choice c;
    const char* env = std::getenv("MINFER_QUANT_ISA");
    const std::string want = env != nullptr ? env : "";
    if (want.empty() || want == "auto") {
        c.chosen = best();
        return c;
    }
    for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
        if (want != to_string(i)) continue;
        c.chosen = best_at_most(i);
        if (c.chosen != i)
            c.note = "MINFER_QUANT_ISA=" + want + ": not available here, using " + std::string(to_string(c.chosen));
        return c;
    }
    c.chosen = best();
    c.note = "MINFER_QUANT_ISA=" + want + " is not one of auto, scalar, avx2, avx512, neon; using " +
             std::string(to_string(c.chosen));
    return c;
}

const choice& initial() noexcept {
    static const choice c = [] {
        try {
            return from_environment();
        } catch (...) {  // std::bad_alloc building the note: choose without it
            return choice{best(), {}};
        }
    }();
    return c;
}

std::atomic<int>& selected() noexcept {
    static std::atomic<int> s{static_cast<int>(initial().chosen)};
    return s;
}

}  // namespace

std::string_view to_string(isa i) noexcept {
    switch (i) {
        case isa::scalar: return "scalar";
        case isa::avx2: return "avx2";
        case isa::avx512: return "avx512";
        case isa::neon: return "neon";
    }
    return "unknown";
}

bool isa_supported(isa i) noexcept { return cpu_has(i) && detail::kernels_of_build(i) != nullptr; }

isa active_isa() noexcept { return static_cast<isa>(selected().load(std::memory_order_relaxed)); }

bool select_isa(isa i) noexcept {
    if (!isa_supported(i)) return false;
    selected().store(static_cast<int>(i), std::memory_order_relaxed);
    return true;
}

std::string_view isa_env_note() noexcept { return initial().note; }

namespace detail {

const kernel_table* kernels_of_build(isa i) noexcept {
    switch (i) {
        case isa::scalar: return &scalar_kernels();
        case isa::avx2: return avx2_kernels();
        case isa::avx512:
        case isa::neon: return nullptr;
    }
    return nullptr;
}

const kernel_table* kernels_of(isa i) noexcept { return isa_supported(i) ? kernels_of_build(i) : nullptr; }

const kernel_table& active_kernels() noexcept {
    const kernel_table* t = kernels_of(active_isa());
    return t != nullptr ? *t : scalar_kernels();
}

}  // namespace detail
}  // namespace minfer::quant
