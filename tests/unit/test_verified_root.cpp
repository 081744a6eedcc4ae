// The verified-root rule for every consumer of tensor bytes: a model opened from heads (as
// minfer::remote opens a URL) has the same type as a complete one but holds no tensor bytes past its
// head. Each library function that reads tensor bytes must refuse it with model_incomplete instead
// of building windows past the held buffer (check), comparing two empty spans and calling different
// tensors identical (compare), or handing out a tensor whose size is not its data's (core).
#include <array>
#include <span>
#include <string>

#include <gtest/gtest.h>

#include "gguf_bytes.hpp"
#include "head_source.hpp"
#include "minfer/check/data_walk.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/compare/tensor_diff.hpp"
#include "minfer/core/tensor.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace {
using namespace minfer::test;
namespace gg = minfer::gguf;

// One metadata key and a 1 MiB tensor: a head fetched for the parse stops long before its bytes.
bytes model_bytes(std::uint32_t seed) {
    gg::writer w;
    w.set_string("general.architecture", "llama");
    const std::int64_t ne[] = {256, 1024};
    w.add_tensor("w", gg::tensor_type::f32, ne, random_bytes(256 * 1024 * 4, seed));
    return to_bytes(w);
}

struct head_models {
    memory_opener mem;
    gg::model a, b;
    head_models() {
        mem.files["mem://h/a.gguf"] = model_bytes(1);
        mem.files["mem://h/b.gguf"] = model_bytes(2);  // other bytes, same table
        auto ma = gg::model::open(mem, "mem://h/a.gguf");
        auto mb = gg::model::open(mem, "mem://h/b.gguf");
        EXPECT_TRUE(ma && mb);
        if (ma) a = std::move(*ma);
        if (mb) b = std::move(*mb);
    }
};

::testing::AssertionResult incomplete(const gg::error& e) {
    if (e.code != gg::errc::model_incomplete) return ::testing::AssertionFailure() << describe(e);
    if (e.found >= e.expected) return ::testing::AssertionFailure() << "held " << e.found << " of " << e.expected;
    if (e.file != "mem://h/a.gguf") return ::testing::AssertionFailure() << "file " << e.file;
    return ::testing::AssertionSuccess();
}

TEST(VerifiedRoot, AHeadOnlyModelSaysSo) {
    head_models h;
    ASSERT_FALSE(h.a.parts().empty());
    EXPECT_FALSE(h.a.complete());
    auto r = h.a.require_complete();
    ASSERT_FALSE(r);
    EXPECT_TRUE(incomplete(r.error()));
    // The same bytes opened whole are complete.
    const auto path = std::filesystem::path(::testing::TempDir()) / "verified_root_whole.gguf";
    write_file(path, h.mem.files["mem://h/a.gguf"]);
    auto whole = gg::model::open(path);
    ASSERT_TRUE(whole) << describe(whole.error());
    EXPECT_TRUE(whole->complete());
    EXPECT_TRUE(whole->require_complete());
    std::filesystem::remove(path);
}

TEST(VerifiedRoot, CheckRefusesToWalkOrHashAHead) {
    head_models h;
    EXPECT_TRUE(incomplete(error_of(minfer::check::hash_model(h.a, {}, {}))));
    EXPECT_TRUE(incomplete(error_of(minfer::check::hash_consumer::make(h.a, {}))));
    EXPECT_TRUE(incomplete(error_of(minfer::check::check_values(h.a, {}, {}))));
    std::array<minfer::check::data_consumer*, 0> none{};
    EXPECT_TRUE(incomplete(error_of(minfer::check::walk_model_data(h.a, none, {}))));
}

TEST(VerifiedRoot, CompareRefusesToCallTwoHeadsIdentical) {
    head_models h;
    minfer::compare::tensor_counts counts;
    auto d = minfer::compare::diff_tensors(h.a, h.b, false, counts);
    ASSERT_FALSE(d);
    EXPECT_TRUE(incomplete(d.error()));
    EXPECT_EQ(counts.identical, 0u);
}

TEST(VerifiedRoot, CoreRefusesToBorrowBytesItDoesNotHave) {
    head_models h;
    EXPECT_TRUE(incomplete(error_of(minfer::core::borrow(h.a, "w"))));
}

TEST(VerifiedRoot, WritersRefuseToCopyOrEditAHead) {
    head_models h;
    EXPECT_TRUE(incomplete(error_of(gg::model_source::open(h.a))));
    gg::writer w;
    w.set_string("general.architecture", "llama");
    EXPECT_TRUE(incomplete(error_of(gg::plan_in_place(h.a, 0, w))));
}

}  // namespace
