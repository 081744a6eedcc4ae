// toolbox::quantize's memory bound: a 64 MiB f32 tensor is quantized through the writer's callback
// source batch by batch, so no single allocation comes near the tensor's size (the batch is about
// 4 MiB of f32 values plus its quantized bytes, the writer's chunk 4 MiB). The output's bytes are
// then checked against quant::quantize_rows of the whole tensor, computed here in one call.
// A separate executable: alloc_probe.hpp replaces operator new for the whole program.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/toolbox/quantize.hpp"

namespace {

using namespace minfer::test;
namespace q = minfer::quant;
namespace tb = minfer::toolbox;

// Value i of the tensor: a pattern with some spread (no allocation to produce it).
float value_at(std::uint64_t i) { return static_cast<float>(static_cast<std::int64_t>((i * 2654435761u) % 2001u) - 1000) / 997.0f; }

// Writes a model of one f32 tensor [n0, n1] named blk.0.attn_q.weight through a callback (no
// allocation of its size here either).
void write_f32_model(const std::filesystem::path& p, std::int64_t n0, std::int64_t n1) {
    gg::writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 1);
    const std::int64_t ne[] = {n0, n1};
    const std::uint64_t n_bytes = static_cast<std::uint64_t>(n0 * n1) * 4;
    w.add_tensor("blk.0.attn_q.weight", gg::tensor_type::f32, ne,
                 gg::tensor_source::callback(n_bytes, [](std::uint64_t off, std::span<std::byte> out) -> gg::result<void> {
                     for (std::size_t k = 0; k < out.size(); k += 4) {
                         const float v = value_at((off + k) / 4);
                         std::memcpy(out.data() + k, &v, 4);
                     }
                     return {};
                 }));
    auto r = w.write(p);
    ASSERT_TRUE(r.has_value()) << r.error().message();
}

// Quantizes `in` to Q8_0 on 2 threads into `out`: the largest single allocation made meanwhile.
std::size_t largest_allocation_to_q8_0(const std::filesystem::path& in, const std::filesystem::path& out) {
    tb::quantize_request rq;
    rq.input = in;
    rq.output = out;
    rq.type = *q::parse_file_type("Q8_0");
    rq.threads = 2;
    alloc_probe probe;
    auto rep = tb::quantize(rq);
    const std::size_t largest = probe.largest();
    EXPECT_TRUE(rep.has_value()) << rep.error().message();
    return largest;
}

TEST(QuantizeMemory, A64MiBTensorNeverAllocatedWhole) {
    temp_dir d;
    constexpr std::int64_t n0 = 4096, n1 = 4096;
    constexpr std::uint64_t n_bytes = static_cast<std::uint64_t>(n0 * n1) * 4;
    ASSERT_NO_FATAL_FAILURE(write_f32_model(d / "in.gguf", n0, n1));
    const std::size_t largest = largest_allocation_to_q8_0(d / "in.gguf", d / "out.gguf");
    ASSERT_FALSE(HasFailure());
    RecordProperty("largest_allocation", std::to_string(largest));
    // docs/QUANT.md: a batch of 2^20 f32 values (4 MiB) and its quantized bytes, the writer's 4 MiB chunk.
    EXPECT_LE(largest, std::size_t{4} << 20) << "largest single allocation while quantizing " << n_bytes << " bytes";
    EXPECT_GT(largest, std::size_t{1} << 20);  // the batch is there: the probe saw the quantizer's buffers

    auto in = gg::model::open(d / "in.gguf");
    auto out = gg::model::open(d / "out.gguf");
    ASSERT_TRUE(in.has_value() && out.has_value());
    const auto src = in->tensor_data(in->tensors()[0]);
    std::vector<float> values(static_cast<std::size_t>(n0 * n1));
    std::memcpy(values.data(), src.data(), src.size());
    std::vector<std::byte> want(q::bytes_for(gg::tensor_type::q8_0, values.size()));
    ASSERT_TRUE(q::quantize_rows(gg::tensor_type::q8_0, values, n0, {}, want).has_value());
    const auto got = out->tensor_data(out->tensors()[0]);
    ASSERT_EQ(out->tensors()[0].info->type, gg::tensor_type::q8_0);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
}

// Rows longer than a batch are converted one at a time: the bound is then one row, and rows are
// capped at 2^22 values (16 MiB of f32: docs/QUANT.md). The longest row allowed stays within it; a
// longer one is refused before anything is allocated for it (a 2^24-value row once took 64 MiB
// for its values alone).
TEST(QuantizeMemory, TheLongestRowIsTheBound) {
    temp_dir d;
    constexpr std::int64_t longest = std::int64_t{1} << 22;
    ASSERT_NO_FATAL_FAILURE(write_f32_model(d / "long.gguf", longest, 2));
    std::size_t largest = largest_allocation_to_q8_0(d / "long.gguf", d / "long-q8.gguf");
    ASSERT_FALSE(HasFailure());
    EXPECT_LE(largest, std::size_t{16} << 20);
    EXPECT_GE(largest, std::size_t{16} << 20);  // one row of f32: the bound is reached, not passed

    ASSERT_NO_FATAL_FAILURE(write_f32_model(d / "longer.gguf", longest + 32, 2));  // 2-D: converted
    tb::quantize_request rq;
    rq.input = d / "longer.gguf";
    rq.output = d / "longer-q8.gguf";
    rq.type = *q::parse_file_type("Q8_0");
    {
        alloc_probe probe;
        auto rep = tb::quantize(rq);
        largest = probe.largest();
        ASSERT_FALSE(rep.has_value());
        EXPECT_EQ(rep.error().code, q::codes::row_too_long);
        EXPECT_EQ(rep.error().expected, static_cast<std::uint64_t>(longest));
        EXPECT_EQ(rep.error().found, static_cast<std::uint64_t>(longest + 32));
        EXPECT_EQ(rep.error().subject, "blk.0.attn_q.weight");
    }
    EXPECT_LT(largest, std::size_t{1} << 20);
    EXPECT_FALSE(std::filesystem::exists(d / "longer-q8.gguf"));
}

// The importance-matrix reader: at most about twice the file (the weights are as many floats as the
// file's sums) plus a bounded overhead, whatever the entries' sizes; and at most 65536 entries (a
// file of many tiny entries once took ten times its size in bookkeeping: 457 MiB for 42 MiB).
void write_legacy(const std::filesystem::path& p, std::int32_t n_entries, std::int32_t n_values) {
    std::vector<std::byte> b;
    auto i32 = [&b](std::int32_t v) {
        const auto* p4 = reinterpret_cast<const std::byte*>(&v);
        b.insert(b.end(), p4, p4 + 4);
    };
    i32(n_entries);
    for (std::int32_t e = 0; e < n_entries; ++e) {
        const std::string name = "blk." + std::to_string(e) + ".ffn_down.weight";
        i32(static_cast<std::int32_t>(name.size()));
        for (char c : name) b.push_back(static_cast<std::byte>(c));
        i32(1);
        i32(n_values);
        for (std::int32_t k = 0; k < n_values; ++k) {
            const float v = 1.0f + static_cast<float>(k % 5);
            const auto* p4 = reinterpret_cast<const std::byte*>(&v);
            b.insert(b.end(), p4, p4 + 4);
        }
    }
    write_file(p, b);
}

TEST(QuantizeMemory, ImportanceReaderStaysNearItsInput) {
    temp_dir d;
    struct shape {
        std::int32_t entries, values;
    };
    for (const shape sh : {shape{65536, 1}, shape{64, 65536}}) {
        SCOPED_TRACE(std::to_string(sh.entries) + " entries of " + std::to_string(sh.values) + " values");
        const auto file = d / "im.dat";
        write_legacy(file, sh.entries, sh.values);
        const std::uint64_t size = std::filesystem::file_size(file);
        std::size_t total = 0;
        {
            alloc_probe probe;
            auto im = q::read_importance(file);
            total = probe.total();
            ASSERT_TRUE(im.has_value()) << im.error().message();
            EXPECT_EQ(im->entries.size(), static_cast<std::size_t>(sh.entries));
        }
        // every byte ever requested, freed or not: a bound on the peak
        EXPECT_LE(total, 2 * size + (std::size_t{32} << 20)) << "file of " << size << " bytes";
    }
    write_legacy(d / "many.dat", 65537, 1);
    auto refused = q::read_importance(d / "many.dat");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, q::codes::bad_imatrix);
    EXPECT_NE(refused.error().detail.find("65537"), std::string::npos) << refused.error().detail;
}

}  // namespace
