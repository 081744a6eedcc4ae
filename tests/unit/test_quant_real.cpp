// Every tensor of every real GGUF file we have (../shared/fixtures/real), converted to f32 by
// minfer::quant (the active kernels and the scalar ones) and by ggml's own to_float from llama.cpp's
// library, on the same bytes: the f32 bits must be equal (a NaN equal to any NaN). Files written by
// other people's tools, so these are values in the wild, not blocks of our own making.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"

namespace fs = std::filesystem;
using namespace minfer;
using minfer::llama_ref::llama_lib;
namespace part = minfer::llama_ref::part;

namespace {

fs::path real_dir() {
    if (const char* env = std::getenv("MINFER_SHARED_DIR")) return fs::path(env) / "fixtures" / "real";
    return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real";
}

// Index of the first value whose bits differ (NaN equal to NaN), or -1.
std::int64_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return static_cast<std::int64_t>(i);
    }
    return -1;
}

TEST(QuantRealFiles, EveryTensorEqualsGgmlToFloat) {
    const fs::path dir = real_dir();
    if (!fs::is_directory(dir))
        GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << dir.string()
                     << " (the ../shared checkout beside this repository, or $MINFER_SHARED_DIR)";
    MINFER_REQUIRE_LLAMA_PARTS(lib, part::type_traits);

    std::map<std::string, std::uint64_t> values_by_type;  // what was compared, for the log
    int files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".gguf") continue;
        auto m = gguf::model::open(entry.path());
        if (!m) continue;  // the loader's verdict on these is tested in test_fixtures
        ++files;
        for (const gguf::tensor_ref& t : m->tensors()) {
            const gguf::tensor_info& info = *t.info;
            const auto id = static_cast<std::uint32_t>(info.type);
            const auto* traits = lib->type_traits(id);
            if (!quant::can_dequantize(info.type)) {
                // Only the types ggml cannot convert either (or integer tensors, which ggml has no
                // to_float for) may be refused.
                EXPECT_TRUE(traits == nullptr || traits->to_float == nullptr || id == 27)
                    << entry.path().filename() << " " << info.name << ": ggml converts " << traits->type_name;
                continue;
            }
            if (traits == nullptr || traits->to_float == nullptr) continue;  // f32 and the integer types
            const auto bytes = m->tensor_data(t);
            std::vector<float> ours(info.n_elements), scalar(info.n_elements), ggml(info.n_elements);
            ASSERT_TRUE(quant::dequantize(info.type, bytes, ours));
            ASSERT_TRUE(quant::dequantize_with(quant::isa::scalar, info.type, bytes, scalar));
            traits->to_float(bytes.data(), ggml.data(), static_cast<std::int64_t>(info.n_elements));
            const std::string where = entry.path().filename().string() + " tensor " + std::string(info.name) + " (" +
                                      std::string(gguf::to_string(info.type)) + ")";
            const std::int64_t d1 = first_difference(ours, ggml);
            EXPECT_EQ(d1, -1) << where << ": value " << d1 << " is " << (d1 >= 0 ? ours[static_cast<std::size_t>(d1)] : 0.f)
                              << ", ggml gives " << (d1 >= 0 ? ggml[static_cast<std::size_t>(d1)] : 0.f) << " ("
                              << quant::to_string(quant::active_isa()) << " kernels)";
            const std::int64_t d2 = first_difference(scalar, ggml);
            EXPECT_EQ(d2, -1) << where << ": scalar kernel differs from ggml at value " << d2;
            values_by_type[std::string(gguf::to_string(info.type))] += info.n_elements;
        }
    }
    if (files == 0) GTEST_SKIP() << "SKIPPED: no real GGUF file in " << dir.string() << " opens";
    std::string summary;
    for (const auto& [type, n] : values_by_type) summary += " " + type + "=" + std::to_string(n);
    std::printf("compared with ggml in %d real files:%s\n", files, summary.c_str());
    EXPECT_FALSE(values_by_type.empty()) << "no tensor of a type ggml converts in the real files";
}

}  // namespace
