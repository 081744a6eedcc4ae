// split_plan and merge: the grouping (by count, by size as a hard limit on the whole file, the
// oversized tensor, no tensor in part 1), every planned size against the writer's own plan, the
// written parts as a set the loader opens (keys, types, order, alignment, tensor bytes), re-split,
// and merge (refusals, warnings, byte-identical round trip).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf_bytes.hpp"
#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf_write/merge.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/errors.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

struct tensor_spec {
    std::string name;
    tensor_type type;
    std::vector<std::int64_t> ne;
};

// Tensors of several types, shapes and name lengths (table records of different sizes), sizes
// not multiples of 32 (padding in play).
std::vector<tensor_spec> mixed_tensors(std::size_t n) {
    std::vector<tensor_spec> v;
    for (std::size_t i = 0; i < n; ++i) {
        switch (i % 4) {
            case 0: v.push_back({std::string("blk.").append(std::to_string(i)) + ".attn_q.weight", tensor_type::q8_0, {32, 3}}); break;
            case 1: v.push_back({std::string("t").append(std::to_string(i)), tensor_type::f32, {5}}); break;
            case 2: v.push_back({std::string("blk.").append(std::to_string(i)) + ".ffn", tensor_type::f16, {40, 2, 3}}); break;
            default: v.push_back({std::string("x").append(std::to_string(i)) + ".w", tensor_type::q4_0, {64, 1, 1, 2}}); break;
        }
    }
    return v;
}

// A model file with random tensor bytes (so copies can be compared), written with our writer.
fs::path write_model(const fs::path& p, const std::vector<tensor_spec>& ts, std::optional<std::uint32_t> alignment = {},
                     bool extra_split_keys = false) {
    writer w;
    w.set_string("general.architecture", "llama");
    if (alignment) w.set_u32("general.alignment", *alignment);
    if (extra_split_keys) {  // a one-part set, its split keys in the middle of the metadata
        w.set_u16("split.no", 0).set_u16("split.count", 1).set_i32("split.tensors.count", static_cast<std::int32_t>(ts.size()));
    }
    w.set_u32("llama.block_count", 7);
    const std::string toks[] = {"a", "bb", "ccc"};
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
    std::uint32_t seed = 1;
    for (const tensor_spec& t : ts) {
        auto f = check_shape(static_cast<std::uint32_t>(t.type), t.ne);
        EXPECT_TRUE(f);
        w.add_tensor(t.name, t.type, t.ne, random_bytes(static_cast<std::size_t>(f->n_bytes), seed++));
    }
    auto r = w.write(p);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return p;
}

model open_ok(const fs::path& p) {
    auto m = model::open(p);
    EXPECT_TRUE(m) << (m ? "" : m.error().message());
    return m ? std::move(*m) : model{};
}

split_plan plan_ok(const model& m, const split_options& o) {
    auto p = split_plan::make(m, o);
    EXPECT_TRUE(p) << (p ? "" : p.error().message());
    return p ? std::move(*p) : split_plan{};
}

// The changes for a part, restated independently of split_plan.cpp.
std::vector<metadata_change> changes_for(const model& m, std::uint32_t part, std::uint32_t count) {
    std::vector<metadata_change> c;
    if (part == 0) {
        for (const char* k : {"split.no", "split.count", "split.tensors.count"}) c.push_back(metadata_change::erase(k));
    } else {
        c.push_back(metadata_change::erase_prefix(""));
        if (const kv* a = m.find("general.alignment"))
            c.push_back(metadata_change::set_u32("general.alignment", *a->get<std::uint32_t>()));
    }
    c.push_back(metadata_change::set_u16("split.no", static_cast<std::uint16_t>(part)));
    c.push_back(metadata_change::set_i32("split.tensors.count", static_cast<std::int32_t>(m.tensors().size())));
    c.push_back(metadata_change::set_u16("split.count", static_cast<std::uint16_t>(count)));
    return c;
}

// The file size of part `part` holding tensors [first, first + n) of `m`, from the writer's plan.
std::uint64_t planned_size(const model& m, std::uint32_t part, std::uint32_t count, std::size_t first, std::size_t n) {
    auto src = model_source::open(m);
    EXPECT_TRUE(src);
    const auto changes = changes_for(m, part, count);
    auto w = rewrite(m, *src, changes, m.tensors().subspan(first, n));
    EXPECT_TRUE(w);
    auto p = w->make_plan();
    EXPECT_TRUE(p) << (p ? "" : p.error().message());
    return p ? p->file_size() : 0;
}

// Every part: consecutive tensors covering all of them, sizes equal to the writer's plan (both the
// plan's own part_writer and an independent restatement of the changes), totals consistent.
void check_plan(const model& m, const split_plan& sp) {
    auto src = model_source::open(m);
    ASSERT_TRUE(src);
    std::size_t next = 0;
    std::uint64_t total = 0;
    ASSERT_GE(sp.part_count(), 1u);
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        const split_part& p = sp.parts()[i];
        EXPECT_EQ(p.first, next) << "part " << i;
        next = p.first + p.count;
        auto w = sp.part_writer(m, *src, i);
        ASSERT_TRUE(w);
        auto pl = w->make_plan();
        ASSERT_TRUE(pl) << pl.error().message();
        EXPECT_EQ(pl->file_size(), p.file_size) << "part " << i;
        EXPECT_EQ(pl->tensor_count(), p.count) << "part " << i;
        EXPECT_EQ(planned_size(m, i, sp.part_count(), p.first, p.count), p.file_size) << "part " << i;
        std::uint64_t bytes = 0;
        for (const tensor_ref& t : sp.tensors_of(m, i)) bytes += t.info->n_bytes;
        EXPECT_EQ(bytes, p.tensor_bytes) << "part " << i;
        total += p.file_size;
    }
    EXPECT_EQ(next, m.tensors().size());
    EXPECT_EQ(total, sp.total_bytes());
    EXPECT_EQ(sp.tensor_count(), m.tensors().size());
}

// Write every part of the plan under dir/prefix; returns part 1's path.
fs::path write_parts(const model& m, const split_plan& sp, const fs::path& dir, const std::string& prefix) {
    auto src = model_source::open(m);
    EXPECT_TRUE(src);
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        auto w = sp.part_writer(m, *src, i);
        EXPECT_TRUE(w);
        const fs::path p = dir / sp.part_name(prefix, i);
        auto r = w->write(p);
        EXPECT_TRUE(r) << (r ? "" : r.error().message());
        EXPECT_EQ(fs::file_size(p), sp.parts()[i].file_size) << p;
    }
    return dir / sp.part_name(prefix, 0);
}

// The written set opens with the loader; keys, types and order in each part; every tensor's bytes
// equal the input's.
void check_set(const model& in, const split_plan& sp, const fs::path& part1) {
    auto set = model::open(part1);
    ASSERT_TRUE(set) << set.error().message();
    ASSERT_EQ(set->parts().size(), sp.part_count());
    ASSERT_EQ(set->tensors().size(), in.tensors().size());
    for (std::size_t i = 0; i < in.tensors().size(); ++i) {
        const tensor_ref& a = in.tensors()[i];
        const tensor_ref& b = set->tensors()[i];
        EXPECT_EQ(a.info->name, b.info->name);
        const auto da = in.tensor_data(a), db = set->tensor_data(b);
        ASSERT_EQ(da.size(), db.size());
        EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin())) << a.info->name;
    }
    const kv* in_align = in.find("general.alignment");
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        const file_view& v = set->parts()[i].view;
        EXPECT_EQ(v.tensors().size(), sp.parts()[i].count);
        const auto md = v.metadata();
        ASSERT_GE(md.size(), 3u);
        // The split keys last, in llama-gguf-split's order and types.
        const kv& no = md[md.size() - 3];
        const kv& total = md[md.size() - 2];
        const kv& count = md[md.size() - 1];
        EXPECT_EQ(no.key, "split.no");
        EXPECT_EQ(no.type, value_type::u16);
        EXPECT_EQ(*no.get<std::uint16_t>(), i);
        EXPECT_EQ(total.key, "split.tensors.count");
        EXPECT_EQ(total.type, value_type::i32);
        EXPECT_EQ(*total.get<std::int32_t>(), static_cast<std::int32_t>(in.tensors().size()));
        EXPECT_EQ(count.key, "split.count");
        EXPECT_EQ(count.type, value_type::u16);
        EXPECT_EQ(*count.get<std::uint16_t>(), sp.part_count());
        EXPECT_EQ(v.alignment(), in.metadata().alignment());
        EXPECT_EQ(v.data_offset() % v.alignment(), v.tensors().empty() ? v.data_offset() % v.alignment() : 0u);
        if (i == 0) {
            // Part 1: the input's metadata (without its split keys), in order, then the split keys.
            std::vector<const kv*> want;
            for (const kv& k : in.metadata().metadata())
                if (!k.key.starts_with("split.")) want.push_back(&k);
            ASSERT_EQ(md.size(), want.size() + 3);
            for (std::size_t k = 0; k < want.size(); ++k) {
                EXPECT_EQ(md[k].key, want[k]->key);
                EXPECT_EQ(md[k].type, want[k]->type);
                EXPECT_TRUE(std::equal(md[k].payload.begin(), md[k].payload.end(), want[k]->payload.begin(),
                                       want[k]->payload.end()))
                    << md[k].key;
            }
        } else {
            ASSERT_EQ(md.size(), in_align != nullptr ? 4u : 3u);
            if (in_align != nullptr) {
                EXPECT_EQ(md[0].key, "general.alignment");
                EXPECT_EQ(md[0].type, value_type::u32);
                EXPECT_EQ(*md[0].get<std::uint32_t>(), *in_align->get<std::uint32_t>());
            }
        }
    }
}

// ---- grouping ----------------------------------------------------------------------------------

TEST(SplitPlan, ByTensorCount) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(10)));
    for (std::uint64_t n : {1u, 2u, 3u, 4u, 9u, 10u, 11u, 1000u}) {
        split_options o;
        o.max_tensors = n;
        const split_plan sp = plan_ok(m, o);
        check_plan(m, sp);
        const std::uint64_t want_parts = (10 + n - 1) / n;
        EXPECT_EQ(sp.part_count(), want_parts) << n;
        for (std::uint32_t i = 0; i < sp.part_count(); ++i)
            EXPECT_EQ(sp.parts()[i].count, i + 1 < sp.part_count() ? n : 10 - n * (want_parts - 1)) << n;
    }
}

TEST(SplitPlan, DefaultIs128Tensors) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(129)));
    const split_plan sp = plan_ok(m, {});
    ASSERT_EQ(sp.part_count(), 2u);
    EXPECT_EQ(sp.parts()[0].count, 128u);
    EXPECT_EQ(sp.parts()[1].count, 1u);
    check_plan(m, sp);
}

TEST(SplitPlan, BySizeIsAHardLimitOnTheWholeFile) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(12)));
    // Every limit from "the metadata alone" up past the whole model: each part fits, and is
    // maximal (its next tensor would not have fitted).
    split_options one;
    one.max_tensors = 1;
    std::uint64_t biggest_single = 0;  // the largest part holding one tensor
    {
        const split_plan sp = plan_ok(m, one);
        for (const split_part& p : sp.parts()) biggest_single = std::max(biggest_single, p.file_size);
    }
    const std::uint64_t whole = planned_size(m, 0, 1, 0, 12);
    int checked = 0;
    for (std::uint64_t limit = biggest_single; limit <= whole + 64; limit += 7) {
        split_options o;
        o.max_bytes = limit;
        const split_plan sp = plan_ok(m, o);
        check_plan(m, sp);
        for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
            const split_part& p = sp.parts()[i];
            EXPECT_LE(p.file_size, limit) << "limit " << limit << " part " << i;
            EXPECT_FALSE(p.oversized);
            if (i + 1 < sp.part_count()) {
                EXPECT_GT(planned_size(m, i, sp.part_count(), p.first, p.count + 1), limit) << limit << " part " << i;
            }
        }
        ++checked;
    }
    EXPECT_GT(checked, 20);
    // The exact size of the whole model in one part is accepted; one byte less is not.
    split_options exact;
    exact.max_bytes = whole;
    EXPECT_EQ(plan_ok(m, exact).part_count(), 1u);
    exact.max_bytes = whole - 1;
    EXPECT_EQ(plan_ok(m, exact).part_count(), 2u);
}

TEST(SplitPlan, OversizedTensorGetsItsOwnPart) {
    temp_dir d;
    std::vector<tensor_spec> ts{{"small.a", tensor_type::f32, {4}},
                                {"small.b", tensor_type::f32, {4}},
                                {"big", tensor_type::f32, {1000}},
                                {"small.c", tensor_type::f32, {4}}};
    const model m = open_ok(write_model(d / "m.gguf", ts));
    // Room for part 1's metadata and both small tensors, but not for the 4000-byte tensor.
    split_options o;
    o.max_bytes = planned_size(m, 0, 3, 0, 2) + 100;
    const split_plan sp = plan_ok(m, o);
    check_plan(m, sp);
    ASSERT_EQ(sp.part_count(), 3u);
    EXPECT_EQ(sp.parts()[0].count, 2u);
    EXPECT_FALSE(sp.parts()[0].oversized);
    EXPECT_EQ(sp.parts()[1].count, 1u);
    EXPECT_EQ(sp.parts()[1].first, 2u);
    EXPECT_TRUE(sp.parts()[1].oversized);
    EXPECT_GT(sp.parts()[1].file_size, *o.max_bytes);
    EXPECT_EQ(sp.parts()[2].count, 1u);
    EXPECT_FALSE(sp.parts()[2].oversized);
}

TEST(SplitPlan, OversizedFirstTensorStaysInPartOne) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", {{"big", tensor_type::f32, {1000}}, {"s", tensor_type::f32, {4}}}));
    split_options o;
    o.max_bytes = 1000;
    const split_plan sp = plan_ok(m, o);
    check_plan(m, sp);
    ASSERT_EQ(sp.part_count(), 2u);
    EXPECT_EQ(sp.parts()[0].count, 1u);
    EXPECT_TRUE(sp.parts()[0].oversized);
    EXPECT_EQ(sp.parts()[1].count, 1u);
    EXPECT_FALSE(sp.parts()[1].oversized);
}

TEST(SplitPlan, NoTensorFirstSplit) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(5)));
    split_options o;
    o.no_tensor_first_split = true;
    o.max_tensors = 2;
    const split_plan sp = plan_ok(m, o);
    check_plan(m, sp);
    ASSERT_EQ(sp.part_count(), 4u);
    EXPECT_EQ(sp.parts()[0].count, 0u);
    EXPECT_EQ(sp.parts()[1].count, 2u);
    EXPECT_EQ(sp.parts()[3].count, 1u);
    // Metadata only: no padding after the table.
    EXPECT_EQ(sp.parts()[0].file_size, planned_size(m, 0, 4, 0, 0));
    // With a size limit smaller than the metadata, part 1 is the oversized one.
    split_options tiny;
    tiny.no_tensor_first_split = true;
    tiny.max_bytes = 100;
    const split_plan st = plan_ok(m, tiny);
    EXPECT_TRUE(st.parts()[0].oversized);
    EXPECT_EQ(st.parts()[0].count, 0u);
}

TEST(SplitPlan, ModelWithoutTensorsIsOnePart) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", {}));
    for (bool ntf : {false, true}) {
        split_options o;
        o.no_tensor_first_split = ntf;
        const split_plan sp = plan_ok(m, o);
        ASSERT_EQ(sp.part_count(), 1u);
        EXPECT_EQ(sp.parts()[0].count, 0u);
        check_plan(m, sp);
    }
}

TEST(SplitPlan, BothLimitsApply) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(8)));
    split_options o;
    o.max_tensors = 3;
    o.max_bytes = planned_size(m, 0, 1, 0, 8);  // the size alone would allow one part
    const split_plan sp = plan_ok(m, o);
    EXPECT_EQ(sp.part_count(), 3u);
    check_plan(m, sp);
}

TEST(SplitPlan, ZeroLimitsAreRefused) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(2)));
    split_options o;
    o.max_tensors = 0;
    auto a = split_plan::make(m, o);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, errc::bad_value_text);
    EXPECT_EQ(a.error().subject, "max_tensors");
    split_options b;
    b.max_bytes = 0;
    auto r = split_plan::make(m, b);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::bad_value_text);
    EXPECT_EQ(r.error().subject, "max_bytes");
    // One is fine.
    split_options ok;
    ok.max_tensors = 1;
    EXPECT_TRUE(split_plan::make(m, ok));
}

TEST(SplitPlan, TooManyParts) {
    temp_dir d;
    // 65535 one-element tensors: one per part fits split.count (u16) exactly; a metadata-only
    // part 1 in front needs one part too many.
    writer w;
    w.set_string("general.architecture", "llama");
    const std::array<std::int64_t, 1> ne{1};
    for (int i = 0; i < 65535; ++i) w.add_zero_tensor(std::string("t").append(std::to_string(i)), tensor_type::f32, ne);
    ASSERT_TRUE(w.write(d / "m.gguf"));
    const model m = open_ok(d / "m.gguf");
    split_options o;
    o.max_tensors = 1;
    auto ok = split_plan::make(m, o);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->part_count(), 65535u);
    o.no_tensor_first_split = true;
    auto r = split_plan::make(m, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(error_is(r.error(), {minfer::gguf::write_codes::too_many_parts, section::file, {}, 65535, 65536}));
}

// ---- writing the parts ------------------------------------------------------------------------

TEST(SplitWrite, PartsOpenAsASet) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(7)));
    split_options o;
    o.max_tensors = 3;
    const split_plan sp = plan_ok(m, o);
    const fs::path p1 = write_parts(m, sp, d.path(), "out");
    EXPECT_EQ(p1.filename(), "out-00001-of-00003.gguf");
    check_set(m, sp, p1);
}

TEST(SplitWrite, AlignmentHonouredInEveryPart) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(6), 64));
    ASSERT_EQ(m.metadata().alignment(), 64u);
    split_options o;
    o.max_tensors = 2;
    const split_plan sp = plan_ok(m, o);
    EXPECT_EQ(sp.alignment(), 64u);
    check_plan(m, sp);
    const fs::path p1 = write_parts(m, sp, d.path(), "al");
    check_set(m, sp, p1);
    auto set = model::open(p1);
    ASSERT_TRUE(set);
    for (const model_part& part : set->parts()) {
        EXPECT_EQ(part.view.alignment(), 64u);
        EXPECT_EQ(part.view.data_offset() % 64, 0u);
        for (const tensor_info& t : part.view.tensors()) EXPECT_EQ(t.offset % 64, 0u);
    }
}

TEST(SplitWrite, BySizeWrittenFilesFit) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(9), 128));
    split_options o;
    o.max_bytes = 1500;
    const split_plan sp = plan_ok(m, o);
    ASSERT_GT(sp.part_count(), 2u);
    const fs::path p1 = write_parts(m, sp, d.path(), "sz");
    check_set(m, sp, p1);
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        if (!sp.parts()[i].oversized) {
            EXPECT_LE(fs::file_size(d / sp.part_name("sz", i)), 1500u);
        }
    }
}

TEST(SplitWrite, ResplitAOnePartSetReplacesItsSplitKeys) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(5), {}, true));
    ASSERT_NE(m.find("split.count"), nullptr);
    split_options o;
    o.max_tensors = 2;
    const split_plan sp = plan_ok(m, o);
    check_plan(m, sp);
    const fs::path p1 = write_parts(m, sp, d.path(), "r");
    check_set(m, sp, p1);  // the old split keys are gone from their place; the new ones are last
    auto set = model::open(p1);
    ASSERT_TRUE(set);
    std::size_t n_count = 0;
    for (const kv& k : set->metadata().metadata()) n_count += k.key == "split.count" ? 1u : 0u;
    EXPECT_EQ(n_count, 1u);
}

TEST(SplitWrite, ResplitASplitSet) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(7)));
    split_options o;
    o.max_tensors = 2;
    const fs::path first = write_parts(m, plan_ok(m, o), d.path(), "a");
    const model set = open_ok(first);
    ASSERT_EQ(set.parts().size(), 4u);
    split_options again;
    again.max_tensors = 3;
    const split_plan sp = plan_ok(set, again);
    check_plan(set, sp);
    EXPECT_EQ(sp.part_count(), 3u);
    const fs::path p1 = write_parts(set, sp, d.path(), "b");
    check_set(m, sp, p1);  // against the original: part 1 = its metadata + the (new) split keys
}

// ---- merge -------------------------------------------------------------------------------------

TEST(Merge, RoundTripIsByteIdentical) {
    temp_dir d;
    for (std::optional<std::uint32_t> align : {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{64}}) {
        const fs::path in = write_model(d / "m.gguf", mixed_tensors(9), align);
        const model m = open_ok(in);
        int variant = 0;
        for (auto [n, bytes, ntf] : {std::tuple<std::optional<std::uint64_t>, std::optional<std::uint64_t>, bool>{2, {}, false},
                                     {1, {}, true},
                                     {{}, 900, false},
                                     {{}, 600, true},
                                     {100, {}, false}}) {
            split_options o;
            o.max_tensors = n;
            o.max_bytes = bytes;
            o.no_tensor_first_split = ntf;
            const std::string prefix = std::string("v").append(std::to_string(variant++));
            const model set = open_ok(write_parts(m, plan_ok(m, o), d.path(), prefix));
            auto warnings = check_merge(set);
            ASSERT_TRUE(warnings) << warnings.error().message();
            EXPECT_TRUE(warnings->empty());
            auto src = model_source::open(set);
            ASSERT_TRUE(src);
            auto w = merge_writer(set, *src);
            ASSERT_TRUE(w);
            const fs::path out = d / (prefix + ".merged.gguf");
            ASSERT_TRUE(w->write(out));
            EXPECT_EQ(read_file(out), read_file(in)) << prefix;
        }
    }
}

TEST(Merge, RefusesAFileThatIsNotASet) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(2)));
    auto r = check_merge(m);
    ASSERT_FALSE(r);
    EXPECT_TRUE(error_is(r.error(), {errc::split_bad_key, section::split, 0, {}, {}, "split.count"}));
    EXPECT_NE(r.error().detail.find("absent"), std::string::npos);

    writer w;
    w.set_string("general.architecture", "llama").set_u16("split.count", 0);
    ASSERT_TRUE(w.write(d / "zero.gguf"));
    auto z = check_merge(open_ok(d / "zero.gguf"));
    ASSERT_FALSE(z);
    EXPECT_EQ(z.error().code, errc::split_bad_key);
    EXPECT_NE(z.error().detail.find("is 0"), std::string::npos);
}

TEST(Merge, OnePartSetMerges) {
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(3)));
    const split_plan sp = plan_ok(m, {});
    ASSERT_EQ(sp.part_count(), 1u);
    const model set = open_ok(write_parts(m, sp, d.path(), "one"));
    ASSERT_TRUE(check_merge(set));
    auto src = model_source::open(set);
    ASSERT_TRUE(src);
    auto w = merge_writer(set, *src);
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->write(d / "back.gguf"));
    EXPECT_EQ(read_file(d / "back.gguf"), read_file(d / "m.gguf"));
}

TEST(Merge, WarnsAboutMetadataOfLaterParts) {
    temp_dir d;
    for (std::uint32_t i = 0; i < 2; ++i) {
        writer w;
        if (i == 0) w.set_string("general.architecture", "llama");
        if (i == 1) w.set_u32("general.alignment", 32).set_string("general.name", "extra");
        w.set_u16("split.no", static_cast<std::uint16_t>(i)).set_u16("split.count", 2).set_i32("split.tensors.count", 2);
        const std::array<std::int64_t, 1> ne{4};
        w.add_zero_tensor(std::string("t").append(std::to_string(i)), tensor_type::f32, ne);
        ASSERT_TRUE(w.write(d / split_file_name("w", i, 2)));
    }
    const model set = open_ok(d / split_file_name("w", 0, 2));
    auto r = check_merge(set);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);  // general.alignment and the split keys are expected there
    EXPECT_EQ((*r)[0].part, 2u);
    EXPECT_EQ((*r)[0].key, "general.name");
}

// ---- llama.cpp ----------------------------------------------------------------------------------

namespace llama_part = minfer::llama_ref::part;

// Each part, rebuilt with llama.cpp's own gguf writer the way llama-gguf-split builds it (part 1:
// the input's keys in order, then split.no, split.tensors.count, split.count; later parts: the
// split keys only; the tensors of the part with their data), is byte for byte our part.
TEST(SplitReference, PartsAreWhatLlamaWriterWrites) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, llama_part::gguf_read | llama_part::gguf_write | llama_part::ggml_tensors);
    const auto& a = lib->api();
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(7)));
    split_options o;
    o.max_tensors = 3;
    const split_plan sp = plan_ok(m, o);
    ASSERT_EQ(sp.part_count(), 3u);
    write_parts(m, sp, d.path(), "ours");
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        minfer::llama_ref::gguf_context* ctx = a.gguf_init_empty();
        ASSERT_NE(ctx, nullptr);
        if (i == 0) {
            a.gguf_set_val_str(ctx, "general.architecture", "llama");
            a.gguf_set_val_u32(ctx, "llama.block_count", 7);
            const char* toks[] = {"a", "bb", "ccc"};
            a.gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", toks, 3);
        }
        a.gguf_set_val_u16(ctx, "split.no", static_cast<std::uint16_t>(i));
        a.gguf_set_val_u16(ctx, "split.count", 0);  // llama-gguf-split's placeholder, set again below
        a.gguf_set_val_i32(ctx, "split.tensors.count", static_cast<std::int32_t>(m.tensors().size()));
        a.gguf_set_val_u16(ctx, "split.count", static_cast<std::uint16_t>(sp.part_count()));
        std::size_t mem = 1024 + 16 * a.ggml_tensor_overhead();
        minfer::llama_ref::ggml_context* g = a.ggml_init({mem, nullptr, true});
        ASSERT_NE(g, nullptr);
        for (const tensor_ref& t : sp.tensors_of(m, i)) {
            const std::string name(t.info->name);
            minfer::llama_ref::ggml_tensor* gt =
                a.ggml_new_tensor(g, static_cast<int>(t.info->type), static_cast<int>(t.info->n_dims), t.info->ne.data());
            ASSERT_NE(gt, nullptr);
            a.ggml_set_name(gt, name.c_str());
            a.gguf_add_tensor(ctx, gt);
            a.gguf_set_tensor_data(ctx, name.c_str(), m.tensor_data(t).data());
        }
        const fs::path theirs = d / (std::string("theirs").append(std::to_string(i)) + ".gguf");
        const bool ok = a.gguf_write_to_file(ctx, theirs.c_str(), false);
        a.ggml_free(g);
        a.gguf_free(ctx);
        ASSERT_TRUE(ok);
        EXPECT_EQ(read_file(d / sp.part_name("ours", i)), read_file(theirs)) << "part " << i + 1;
    }
}

// llama.cpp's parser reads every part of a 64-aligned split at alignment 64, with the data where
// we put it (llama-gguf-split itself would pad every part to 32).
TEST(SplitReference, LlamaReadsAlignedParts) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, llama_part::gguf_read);
    const auto& a = lib->api();
    temp_dir d;
    const model m = open_ok(write_model(d / "m.gguf", mixed_tensors(7), 64));
    split_options o;
    o.max_tensors = 3;
    const split_plan sp = plan_ok(m, o);
    const fs::path p1 = write_parts(m, sp, d.path(), "al");
    const model set = open_ok(p1);
    for (std::uint32_t i = 0; i < sp.part_count(); ++i) {
        minfer::llama_ref::gguf_context* ctx = a.gguf_init_from_file(sp.part_name((d / "al").string(), i).c_str(), {true, nullptr});
        ASSERT_NE(ctx, nullptr) << "part " << i + 1 << ": " << lib->take_log();
        EXPECT_EQ(a.gguf_get_alignment(ctx), 64u);
        EXPECT_EQ(a.gguf_get_data_offset(ctx), set.parts()[i].view.data_offset());
        ASSERT_EQ(a.gguf_get_n_tensors(ctx), static_cast<std::int64_t>(sp.parts()[i].count));
        for (std::int64_t t = 0; t < a.gguf_get_n_tensors(ctx); ++t)
            EXPECT_EQ(a.gguf_get_tensor_offset(ctx, t), set.parts()[i].view.tensors()[static_cast<std::size_t>(t)].offset);
        a.gguf_free(ctx);
    }
}

}  // namespace
