// toolbox::quantize's memory bound: a 64 MiB f32 tensor is quantized through the writer's callback
// source batch by batch, so no single allocation comes near the tensor's size (the batch is about
// 4 MiB of f32 values plus its quantized bytes, the writer's chunk 4 MiB). The output's bytes are
// then checked against quant::quantize_rows of the whole tensor, computed here in one call.
// A separate executable: alloc_probe.hpp replaces operator new for the whole program.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/toolbox/quantize.hpp"

namespace {

using namespace minfer::test;
namespace q = minfer::quant;
namespace tb = minfer::toolbox;

// Value i of the tensor: a pattern with some spread (no allocation to produce it).
float value_at(std::uint64_t i) { return static_cast<float>(static_cast<std::int64_t>((i * 2654435761u) % 2001u) - 1000) / 997.0f; }

TEST(QuantizeMemory, A64MiBTensorNeverAllocatedWhole) {
    temp_dir d;
    constexpr std::int64_t n0 = 4096, n1 = 4096;
    constexpr std::uint64_t n_bytes = static_cast<std::uint64_t>(n0 * n1) * 4;
    {
        gg::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 1);
        const std::int64_t ne[] = {n0, n1};
        w.add_tensor("blk.0.attn_q.weight", gg::tensor_type::f32, ne,
                     gg::tensor_source::callback(n_bytes, [](std::uint64_t off, std::span<std::byte> out) -> gg::result<void> {
                         for (std::size_t k = 0; k < out.size(); k += 4) {
                             const float v = value_at((off + k) / 4);
                             std::memcpy(out.data() + k, &v, 4);
                         }
                         return {};
                     }));
        auto r = w.write(d / "in.gguf");
        ASSERT_TRUE(r.has_value()) << r.error().message();
    }
    tb::quantize_request rq;
    rq.input = d / "in.gguf";
    rq.output = d / "out.gguf";
    rq.type = *q::parse_file_type("Q8_0");
    rq.threads = 2;
    std::size_t largest = 0;
    {
        alloc_probe probe;
        auto rep = tb::quantize(rq);
        largest = probe.largest();
        ASSERT_TRUE(rep.has_value()) << rep.error().message();
    }
    RecordProperty("largest_allocation", std::to_string(largest));
    EXPECT_LT(largest, std::size_t{40} << 20) << "largest single allocation while quantizing " << n_bytes << " bytes";
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

}  // namespace
