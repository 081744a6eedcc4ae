// minfer-bench-llama-quantize: llama.cpp's quantizer, for scripts/bench-quantize.sh to time beside
// `minfer quantize`. What llama-quantize (tools/quantize/quantize.cpp) does around
// llama_model_quantize, without the tool (the npm package ships libllama, not llama-quantize):
//
//   minfer-bench-llama-quantize IN OUT TYPE [--threads N] [--imatrix FILE]
//
// TYPE is llama-quantize's name or number (parsed by minfer::quant::parse_file_type, the same table).
// With --imatrix the file is read by minfer::quant::read_importance (llama-quantize's reader, same
// values; docs/QUANT.md) and handed over as llama-quantize hands it: one llama_model_imatrix_data
// {name, data, size} per entry, ended by a null name, plus the quantize.imatrix.{file,dataset,
// entries_count,chunks_count} kv overrides in the tool's order, so that the output is the file
// llama-quantize would write and can be compared byte for byte with minfer's.
//
// libllama.v0.5.0.so is found beside $MINFER_LLAMA_LIB (libggml-base.so) through the tests' binding
// (tests/support/llama_ref), which loads the CPU backends, checks the quantize parameter layout and
// collects llama.cpp's log (printed here only on failure, or always with MINFER_REFERENCE_VERBOSE=1).
// Prints to stderr the seconds spent inside llama_model_quantize (the process's wall time, which the
// script measures, also has the dlopen and the imatrix read).
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/type_plan.hpp"

namespace {

namespace lr = minfer::llama_ref;
namespace q = minfer::quant;

// The structs of llama.h as the llama_ref binding declares them (layouts checked there).
using imatrix_data = lr::llama_model_imatrix_data;
using kv_override = lr::llama_model_kv_override;
constexpr std::int32_t kv_int = lr::kv_override_int;
constexpr std::int32_t kv_str = lr::kv_override_str;

kv_override kv_of_int(const char* key, std::int64_t v) {
    kv_override o{};
    o.tag = kv_int;
    std::strncpy(o.key, key, sizeof o.key - 1);
    o.val_i64 = v;
    return o;
}
// As the tool: strncpy of 127 bytes then a NUL (a longer string is cut, an embedded NUL ends it).
kv_override kv_of_str(const char* key, const std::string& v) {
    kv_override o{};
    o.tag = kv_str;
    std::strncpy(o.key, key, sizeof o.key - 1);
    std::strncpy(o.val_str, v.c_str(), 127);
    o.val_str[127] = '\0';
    return o;
}

using quantize_fn = std::uint32_t (*)(const char*, const char*, const lr::llama_model_quantize_params*);

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "minfer-bench-llama-quantize: %s\n", what.c_str());
    std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> pos;
    int threads = 0;
    std::string imatrix_path;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (a == "--imatrix" && i + 1 < argc) {
            imatrix_path = argv[++i];
        } else {
            pos.emplace_back(a);
        }
    }
    if (pos.size() != 3) die("usage: minfer-bench-llama-quantize IN OUT TYPE [--threads N] [--imatrix FILE]");
    const auto type = q::parse_file_type(pos[2]);
    if (!type) die(type.error().message());
    if (type->copy) die("COPY is not a file type this driver passes on");

    std::string why;
    const lr::llama_lib* lib = lr::llama_lib::require(lr::part::llama_model | lr::part::llama_quant, why);
    if (lib == nullptr) die(why);
    const std::string llama_path = (std::filesystem::path(lib->path()).parent_path() / "libllama.v0.5.0.so").string();
    // Already loaded by the binding: this only takes another reference to find the one symbol it lacks.
    void* h = ::dlopen(llama_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h == nullptr) die("cannot reopen " + llama_path);
    quantize_fn quantize = nullptr;
    void* sym = ::dlsym(h, "llama_model_quantize");
    if (sym == nullptr) die("llama_model_quantize not found in " + llama_path);
    std::memcpy(&quantize, &sym, sizeof quantize);

    lr::llama_model_quantize_params params = lib->api().llama_model_quantize_default_params();
    params.nthread = threads;
    params.ftype = static_cast<std::int32_t>(type->ftype);

    // The tool's prepare_imatrix + the overrides it adds (tools/quantize/quantize.cpp), in its order.
    q::importance_matrix im;
    std::vector<imatrix_data> i_data;
    std::vector<kv_override> kvs;
    if (!imatrix_path.empty()) {
        auto r = q::read_importance(imatrix_path);
        if (!r) die(r.error().message());
        im = std::move(*r);
    }
    if (!im.entries.empty()) {
        for (const auto& e : im.entries) i_data.push_back({e.name.c_str(), e.values.data(), e.values.size()});
        i_data.push_back({nullptr, nullptr, 0});
        params.imatrix = i_data.data();
        kvs.push_back(kv_of_str("quantize.imatrix.file", imatrix_path));
        if (im.has_dataset) kvs.push_back(kv_of_str("quantize.imatrix.dataset", im.dataset));
        kvs.push_back(kv_of_int("quantize.imatrix.entries_count", static_cast<std::int64_t>(im.entries.size())));
        if (im.chunks_count > 0) kvs.push_back(kv_of_int("quantize.imatrix.chunks_count", im.chunks_count));
        kvs.push_back(kv_override{});  // key "": the end
        params.kv_overrides = kvs.data();
    }

    const auto t0 = std::chrono::steady_clock::now();
    const std::uint32_t rc = quantize(pos[0].c_str(), pos[1].c_str(), &params);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string log = lib->take_log();
    const char* verbose = std::getenv("MINFER_REFERENCE_VERBOSE");
    if (rc != 0 || (verbose != nullptr && std::strcmp(verbose, "1") == 0)) std::fputs(log.c_str(), stderr);
    if (rc != 0) die("llama_model_quantize failed (" + std::to_string(rc) + ")");
    std::fprintf(stderr, "llama_model_quantize %s: %.3f s\n", std::string(type->name).c_str(), s);
    ::dlclose(h);
    return 0;
}
