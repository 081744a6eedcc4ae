// minfer-sample: write the sample Qwen2-shaped model (see sample_model.hpp).
//   minfer-sample <out.gguf> [--split N]
// Prints one line per file written with its size. Exit status: 0 written, 1 write failed, 2 usage.
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "sample_model.hpp"

namespace {

void usage(std::FILE* to) {
    std::fputs("usage: minfer-sample <out.gguf> [--split N]\n"
               "  Write a small Qwen2-shaped GGUF model (F32, F16, Q4_0 and Q8_0 tensors).\n"
               "  --split N   write N parts <stem>-0000k-of-0000N.gguf instead, like llama.cpp's gguf-split\n",
               to);
}

bool parse_count(std::string_view s, int& out) {
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc() && p == end;
}

}  // namespace

int main(int argc, char** argv) {
    std::string out;
    int n_splits = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        }
        if (a == "--split" || a.starts_with("--split=")) {
            std::string_view v;
            if (a == "--split") {
                if (i + 1 >= argc) {
                    std::fputs("minfer-sample: --split needs a count\n", stderr);
                    return 2;
                }
                v = argv[++i];
            } else {
                v = a.substr(8);
            }
            if (!parse_count(v, n_splits) || n_splits < 1) {
                std::fprintf(stderr, "minfer-sample: bad split count '%.*s' (want an integer >= 1)\n",
                             static_cast<int>(v.size()), v.data());
                return 2;
            }
            if (static_cast<unsigned>(n_splits) > minfer::sample::tensor_count) {
                std::fprintf(stderr, "minfer-sample: --split %d: the model has only %u tensors (at most one part each)\n",
                             n_splits, minfer::sample::tensor_count);
                return 2;
            }
            continue;
        }
        if (a.starts_with("-") && a.size() > 1) {
            std::fprintf(stderr, "minfer-sample: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (!out.empty()) {
            std::fputs("minfer-sample: more than one output path\n", stderr);
            usage(stderr);
            return 2;
        }
        out = a;
    }
    if (out.empty()) {
        usage(stderr);
        return 2;
    }

    auto files = minfer::sample::make_sample_model(out, n_splits);
    if (!files) {
        std::fprintf(stderr, "minfer-sample: %s\n", files.error().message().c_str());
        return 1;
    }
    for (const minfer::sample::written_file& f : *files)
        std::printf("%s: %llu bytes\n", f.path.string().c_str(), static_cast<unsigned long long>(f.bytes));
    return 0;
}
