// minfer-bench-quantize-rows: the quantizers alone, minfer::quant::quantize_rows against ggml's
// ggml_quantize_chunk (libggml-base.so, $MINFER_LLAMA_LIB), single-threaded, on the same values in
// the same run, taking turns, best of K. Where scripts/bench-quantize.sh times a whole model (read,
// convert, quantize, write), this says how much of a difference is the kernels'.
//
//   minfer-bench-quantize-rows [--values N] [--row N] [--reps K] [--types a,b,c] [--imatrix all|none|bench]
//
// Values: heavy-tailed (a Student t with 4 degrees of freedom times log-normal column scales, as
// bench/make_quant_model.cpp), N of them (default 4 Mi values = 16 MiB of f32) in rows of --row
// (default 2048). Importance weights (log-normal): "bench" (default) gives them to the types that
// scripts/bench-quantize.sh quantizes with an imatrix (IQ1_*, IQ2_*, IQ3_XXS); "all" to every
// type (the paths real imatrix quantizations take); "none" to none (types that need them are
// skipped). The bytes are compared first; a difference is reported and the type not timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"
#include "minfer/quant/quantize.hpp"

namespace {

namespace q = minfer::quant;
using minfer::gguf::tensor_type;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "minfer-bench-quantize-rows: %s\n", what.c_str());
    std::exit(1);
}

struct type_case {
    std::string_view name;
    tensor_type type;
    bool bench_imatrix;  ///< scripts/bench-quantize.sh gives these an imatrix
};
constexpr type_case all_types[] = {
    {"q4_0", tensor_type::q4_0, false},     {"q4_1", tensor_type::q4_1, false},
    {"q5_0", tensor_type::q5_0, false},     {"q5_1", tensor_type::q5_1, false},
    {"q8_0", tensor_type::q8_0, false},     {"q2_K", tensor_type::q2_k, false},
    {"q3_K", tensor_type::q3_k, false},     {"q4_K", tensor_type::q4_k, false},
    {"q5_K", tensor_type::q5_k, false},     {"q6_K", tensor_type::q6_k, false},
    {"iq4_nl", tensor_type::iq4_nl, false}, {"iq4_xs", tensor_type::iq4_xs, false},
    {"iq3_s", tensor_type::iq3_s, false},   {"iq3_xxs", tensor_type::iq3_xxs, true},
    {"iq2_s", tensor_type::iq2_s, true},    {"iq2_xs", tensor_type::iq2_xs, true},
    {"iq2_xxs", tensor_type::iq2_xxs, true}, {"iq1_s", tensor_type::iq1_s, true},
    {"iq1_m", tensor_type::iq1_m, true},
};

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t n_values = std::size_t{4} << 20;
    std::int64_t row = 2048;
    int reps = 3;
    std::string types_arg, imatrix_mode = "bench";
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool more = i + 1 < argc;
        if (a == "--values" && more) n_values = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--row" && more) row = std::atoll(argv[++i]);
        else if (a == "--reps" && more) reps = std::atoi(argv[++i]);
        else if (a == "--types" && more) types_arg = argv[++i];
        else if (a == "--imatrix" && more) imatrix_mode = argv[++i];
        else die("usage: minfer-bench-quantize-rows [--values N] [--row N] [--reps K] [--types a,b,c] [--imatrix all|none|bench]");
    }
    if (row <= 0 || row % 256 != 0 || n_values < static_cast<std::size_t>(row) || reps < 1)
        die("--row must be a positive multiple of 256, --values at least one row, --reps >= 1");
    if (imatrix_mode != "all" && imatrix_mode != "none" && imatrix_mode != "bench") die("--imatrix is all, none or bench");
    n_values -= n_values % static_cast<std::size_t>(row);
    const std::int64_t rows = static_cast<std::int64_t>(n_values) / row;

    std::string why;
    const auto* lib = minfer::llama_ref::llama_lib::require(minfer::llama_ref::part::quantize_chunk, why);
    if (lib == nullptr) die(why);
    const auto& api = lib->api();

    // The values and weights (fixed seeds: the same data every run).
    std::mt19937_64 rng(12345);
    std::normal_distribution<double> nd(0.0, 1.0);
    std::vector<double> col(static_cast<std::size_t>(row));
    for (auto& c : col) c = std::exp(0.5 * nd(rng));
    std::vector<float> src(n_values);
    std::chi_squared_distribution<double> chi(4.0);
    for (std::size_t i = 0; i < n_values; ++i)
        src[i] = static_cast<float>(0.02 * col[i % col.size()] * nd(rng) / std::sqrt(std::max(0.1, chi(rng)) / 4.0));
    std::vector<float> imatrix(static_cast<std::size_t>(row));
    for (auto& w : imatrix) w = static_cast<float>(std::exp(nd(rng)));

    std::printf("minfer-bench-quantize-rows: %zu values (%zu MiB f32), rows of %lld, best of %d, one thread, kernels %s, imatrix %s\n",
                n_values, n_values * 4 >> 20, static_cast<long long>(row), reps,
                std::string(q::to_string(q::active_isa())).c_str(), imatrix_mode.c_str());
    std::printf("\n| type | imatrix | ggml ms | minfer ms | ggml Mvalues/s | minfer Mvalues/s | ggml / minfer | bytes equal |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---|\n");
    for (const auto& tc : all_types) {
        if (!types_arg.empty()) {
            // Appended, not "," + string: GCC -O3's -Wrestrict misfires on the latter.
            std::string list(1, ',');
            list += types_arg;
            list += ',';
            std::string key(1, ',');
            key += tc.name;
            key += ',';
            if (list.find(key) == std::string::npos) continue;
        }
        if (!q::can_quantize(tc.type)) {
            std::printf("| %s | - | - | - | - | - | - | minfer has no quantizer |\n", std::string(tc.name).c_str());
            continue;
        }
        const bool use_im = imatrix_mode == "all" || (imatrix_mode == "bench" && tc.bench_imatrix);
        if (!use_im && q::requires_importance(tc.type)) continue;
        const std::span<const float> im = use_im ? std::span<const float>(imatrix) : std::span<const float>();
        const std::size_t bytes = static_cast<std::size_t>(q::bytes_for(tc.type, n_values));
        std::vector<std::byte> ours(bytes), theirs(bytes);
        const int gt = static_cast<int>(tc.type);  // minfer's ids are ggml's
        double best_g = 1e30, best_m = 1e30;
        bool equal = true;
        for (int r = 0; r < reps && equal; ++r) {
            // Take turns, starting with the other side every repetition.
            for (int side = 0; side < 2; ++side) {
                if ((side + r) % 2 == 0) {
                    const auto t0 = clock_type::now();
                    api.ggml_quantize_chunk(gt, src.data(), theirs.data(), 0, rows, row, use_im ? imatrix.data() : nullptr);
                    best_g = std::min(best_g, seconds_since(t0));
                } else {
                    const auto t0 = clock_type::now();
                    const auto res = q::quantize_rows(tc.type, src, row, im, ours);
                    best_m = std::min(best_m, seconds_since(t0));
                    if (!res) die(std::string(tc.name) + ": " + res.error().message());
                }
            }
            equal = ours == theirs;
        }
        const double mv = static_cast<double>(n_values) / 1e6;
        std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %s |\n", std::string(tc.name).c_str(),
                    use_im ? "yes" : "no", best_g * 1e3, best_m * 1e3, mv / best_g, mv / best_m, best_g / best_m,
                    equal ? "yes" : "NO");
        std::fflush(stdout);
    }
    return 0;
}
