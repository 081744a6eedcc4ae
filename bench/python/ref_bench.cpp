// The C++ reference of the Python benchmark (bench/python/bench_open.py, scripts/bench-python.sh).
// Each timing is taken in this process, as the Python ones are in the interpreter's, so that the
// comparison leaves process start-up aside on both sides.
//
//   minfer-py-bench-ref fixture DIR                      write the Qwen-shaped fixture; print its path
//   minfer-py-bench-ref open FILE REPS                   model::open (+ close), REPS times
//   minfer-py-bench-ref vocab FILE REPS                  open, then walk tokenizer.ggml.tokens REPS times
//   minfer-py-bench-ref dequant FILE NAME REPS THREADS   dequantize_parallel of one tensor into one
//                                                        buffer, REPS times after an untimed one
//
// Output: one line `min_s median_s extra` (extra: items walked, or values converted) on stdout;
// errors on stderr with exit 1.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"
#include "minfer/gguf.hpp"
#include "minfer/quant/dequantize.hpp"

namespace {

namespace gguf = minfer::gguf;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void report(std::vector<double> t, unsigned long long extra) {
    std::sort(t.begin(), t.end());
    const double median = t.size() % 2 != 0 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    std::printf("%.9f %.9f %llu\n", t.front(), median, extra);
}

int fail(const std::string& what) {
    std::fprintf(stderr, "minfer-py-bench-ref: %s\n", what.c_str());
    return 1;
}

int reps_of(const char* s) {
    const int n = std::atoi(s);
    return n > 0 ? n : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view cmd = argc > 1 ? argv[1] : "";
    try {
        if (cmd == "fixture" && argc == 3) {
            const auto f = minfer::bench::write_qwen(argv[2], "qwen", "qwen2.5-0.5b-instruct-q4_0");
            std::printf("%s\n", f.entry.c_str());
            return 0;
        }
        if (cmd == "open" && argc == 4) {
            const int reps = reps_of(argv[3]);
            std::vector<double> t;
            unsigned long long n_kv = 0;
            for (int i = 0; i < reps; ++i) {
                const auto t0 = clock_type::now();
                auto m = gguf::model::open(argv[2]);
                if (!m) return fail(m.error().message());
                t.push_back(seconds_since(t0));
                n_kv = m->metadata().metadata().size();
            }
            report(std::move(t), n_kv);
            return 0;
        }
        if (cmd == "vocab" && argc == 4) {
            auto m = gguf::model::open(argv[2]);
            if (!m) return fail(m.error().message());
            const gguf::kv* tokens = m->find("tokenizer.ggml.tokens");
            if (tokens == nullptr) return fail("no tokenizer.ggml.tokens");
            auto arr = tokens->get<gguf::array_view>();
            if (!arr) return fail(arr.error().message());
            std::vector<double> t;
            unsigned long long bytes = 0;
            for (int i = 0, reps = reps_of(argv[3]); i < reps; ++i) {
                const auto t0 = clock_type::now();
                bytes = 0;
                for (std::string_view s : arr->strings()) bytes += s.size() + static_cast<unsigned char>(s.empty() ? 0 : s[0]);
                t.push_back(seconds_since(t0));
            }
            std::fprintf(stderr, "checksum %llu\n", bytes);
            report(std::move(t), arr->size());
            return 0;
        }
        if (cmd == "dequant" && argc == 6) {
            auto m = gguf::model::open(argv[2]);
            if (!m) return fail(m.error().message());
            const gguf::tensor_ref* tr = m->find_tensor(argv[3]);
            if (tr == nullptr) return fail(std::string("no tensor ").append(argv[3]));
            const auto threads = static_cast<unsigned>(std::atoi(argv[5]));
            const auto src = m->tensor_data(*tr);
            // One buffer, touched before the clock starts, and one untimed conversion that faults in
            // the tensor's pages: what is timed is the conversion alone (page faults are expensive
            // on a virtual machine; numpy's allocator gets huge pages for large arrays, new[] not).
            std::vector<float> out(tr->info->n_elements);
            if (auto r = minfer::quant::dequantize_parallel(tr->info->type, src, out, threads); !r)
                return fail(r.error().message());
            std::vector<double> t;
            for (int i = 0, reps = reps_of(argv[4]); i < reps; ++i) {
                const auto t0 = clock_type::now();
                auto r = minfer::quant::dequantize_parallel(tr->info->type, src, out, threads);
                if (!r) return fail(r.error().message());
                t.push_back(seconds_since(t0));
            }
            report(std::move(t), tr->info->n_elements);
            return 0;
        }
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    std::fprintf(stderr,
                 "usage: minfer-py-bench-ref fixture DIR | open FILE REPS | vocab FILE REPS | "
                 "dequant FILE NAME REPS THREADS\n");
    return 2;
}
