// `minfer diff`, through the real binary: identical files (exit 0, nothing listed), an edited copy
// with one change of each kind (metadata: added, removed, value, type, array item, array length;
// tensors: only in A, only in B, shape, type, bytes), --values numbers against a computation here
// (a q8_0 tensor made by hand from f32 values against those values), split sets, and exit codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cli_support.hpp"

namespace minfer_cli_test {
namespace {

void put_u16(std::vector<std::byte>& b, std::uint16_t v) {
    b.push_back(static_cast<std::byte>(v & 0xff));
    b.push_back(static_cast<std::byte>(v >> 8));
}

std::vector<std::byte> f32_bytes(const std::vector<float>& v) { return bytes_of(v); }

// The f32 source of tensor "w" [32, 2]: x_i = (i - 31.5) * 0.3.
std::vector<float> w_source() {
    std::vector<float> v(64);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<float>(i) - 31.5f) * 0.3f;
    return v;
}
// Its q8_0 form, by hand: both blocks with d = 0.375 (f16 0x3600), q = round(x / d).
constexpr float w_scale = 0.375f;
std::vector<std::int8_t> w_ints() {
    std::vector<std::int8_t> q;
    for (float x : w_source()) q.push_back(static_cast<std::int8_t>(std::lround(x / w_scale)));
    return q;
}
std::vector<std::byte> w_q8_bytes() {
    const auto q = w_ints();
    std::vector<std::byte> b;
    for (std::size_t blk = 0; blk < 2; ++blk) {
        put_u16(b, 0x3600);
        for (std::size_t i = 0; i < 32; ++i) b.push_back(static_cast<std::byte>(q[blk * 32 + i]));
    }
    return b;
}

struct metrics {
    double max_abs = 0, rmse = 0, cosine = 0, relative = 0;
};
// The metrics as docs/CLI.md defines them, in double, B the reference.
metrics metrics_of(const std::vector<float>& a, const std::vector<float>& b) {
    double d2 = 0, dot = 0, a2 = 0, b2 = 0, mx = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        mx = std::max(mx, std::fabs(d));
        d2 += d * d;
        dot += static_cast<double>(a[i]) * b[i];
        a2 += static_cast<double>(a[i]) * a[i];
        b2 += static_cast<double>(b[i]) * b[i];
    }
    return {mx, std::sqrt(d2 / static_cast<double>(a.size())), dot / (std::sqrt(a2) * std::sqrt(b2)),
            std::sqrt(d2) / std::sqrt(b2)};
}

struct diff_fixture {
    fs::path dir, a, a_copy, b, a_split1, a_split1_copy, b_split1;

    static void base_metadata(gguf::writer& w) {
        w.set_string("general.architecture", "llama");
    }

    diff_fixture() {
        dir = temp_root() / "diff";
        fs::remove_all(dir);
        fs::create_directories(dir);
        const std::array<std::int64_t, 1> n4{4}, n2{2}, n32{32};
        const std::array<std::int64_t, 2> n2x2{2, 2}, w_ne{32, 2};
        {
            gguf::writer w;
            base_metadata(w);
            w.set_string("general.name", "base");
            w.set_u32("x.count", 5);
            const std::vector<std::uint32_t> list{1, 2, 3, 4};
            w.set_array("x.list", gguf::value_type::u32, std::span<const std::uint32_t>(list));
            const std::vector<std::string> words{"a", "b", "c"};
            w.set_strings("x.words", std::span<const std::string>(words));
            w.set_string("x.gone", "bye");
            w.add_tensor("same", gguf::tensor_type::f32, n4, f32_bytes({1, 2, 3, 4}));
            w.add_tensor("bytes", gguf::tensor_type::f32, n4, f32_bytes({1, 2, 3, 4}));
            w.add_tensor("shape", gguf::tensor_type::f32, n4, f32_bytes({1, 2, 3, 4}));
            std::vector<std::byte> h;
            for (int i = 0; i < 32; ++i) put_u16(h, 0x3C00);  // 32 x f16 1.0
            w.add_tensor("type", gguf::tensor_type::f16, n32, h);
            w.add_tensor("gone", gguf::tensor_type::f32, n2, f32_bytes({7, 8}));
            w.add_tensor("w", gguf::tensor_type::q8_0, w_ne, w_q8_bytes());
            w.add_zero_tensor("q81", gguf::tensor_type::q8_1, n32);
            a = dir / "a.gguf";
            must_write(w, a);
        }
        a_copy = dir / "a_copy.gguf";
        fs::copy_file(a, a_copy);
        {
            gguf::writer w;
            base_metadata(w);
            w.set_string("general.name", "edited");
            w.set_u64("x.count", 5);
            const std::vector<std::uint32_t> list{1, 2, 9, 4};
            w.set_array("x.list", gguf::value_type::u32, std::span<const std::uint32_t>(list));
            const std::vector<std::string> words{"a", "b", "c", "d"};
            w.set_strings("x.words", std::span<const std::string>(words));
            w.set_u32("x.new", 7);
            w.add_tensor("same", gguf::tensor_type::f32, n4, f32_bytes({1, 2, 3, 4}));
            w.add_tensor("bytes", gguf::tensor_type::f32, n4, f32_bytes({1, 2, 3, 5}));
            w.add_tensor("shape", gguf::tensor_type::f32, n2x2, f32_bytes({1, 2, 3, 4}));
            w.add_zero_tensor("type", gguf::tensor_type::q8_0, n32);
            w.add_tensor("w", gguf::tensor_type::f32, w_ne, f32_bytes(w_source()));
            w.add_tensor("q81", gguf::tensor_type::f32, n32, f32_bytes(std::vector<float>(32, 1.0f)));
            w.add_tensor("new", gguf::tensor_type::f32, n2, f32_bytes({7, 8}));
            b = dir / "b.gguf";
            must_write(w, b);
        }
        auto split = [&](const fs::path& in, const std::string& prefix) {
            const run_result r = run({"split", in.string(), (dir / prefix).string(), "--split-max-tensors", "3"});
            if (r.rc != 0) throw std::runtime_error("split failed: " + r.err);
        };
        split(a, "as");
        split(a, "as2");
        split(b, "bs");
        a_split1 = dir / gguf::split_file_name("as", 0, 3);
        a_split1_copy = dir / gguf::split_file_name("as2", 0, 3);
        b_split1 = dir / gguf::split_file_name("bs", 0, 3);
    }
};

const diff_fixture& df() {
    static const diff_fixture f;
    return f;
}

json diff_json(const std::vector<std::string>& args, int want_rc) {
    std::vector<std::string> a{"diff"};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--json");
    const run_result r = run(a);
    EXPECT_EQ(r.rc, want_rc) << r.err;
    return json::parse(r.out);
}

const json& entry(const json& list, const std::string& field, const std::string& name) {
    for (const json& e : list)
        if (e.at(field) == name) return e;
    static const json none;
    ADD_FAILURE() << "no entry " << name;
    return none;
}

TEST(DiffCmd, IdenticalFiles) {
    const run_result r = run({"diff", df().a.string(), df().a_copy.string()});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "metadata: 0 added, 0 removed, 0 changed (6 keys in A, 6 in B)")) << r.out;
    EXPECT_TRUE(has_line(r.out, "tensors: 0 only in A, 0 only in B, 0 changed type or shape, 0 with different bytes, 7 identical"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "identical")) << r.out;
    EXPECT_EQ(r.out.find("differences"), std::string::npos) << r.out;

    const json j = diff_json({df().a.string(), df().a_copy.string(), "--values"}, 0);
    EXPECT_EQ(j["identical"], true);
    EXPECT_TRUE(j["metadata"].empty());
    EXPECT_TRUE(j["tensors"].empty());
    EXPECT_EQ(j["summary"]["tensors_identical"], 7);
}

TEST(DiffCmd, EditedCopyText) {
    const run_result r = run({"diff", df().a.string(), df().b.string()});
    EXPECT_EQ(r.rc, 1) << r.err;
    const std::string& o = r.out;
    EXPECT_TRUE(has_line(o, "metadata: 1 added, 1 removed, 4 changed (6 keys in A, 6 in B)")) << o;
    EXPECT_TRUE(has_line(o, "tensors: 1 only in A, 1 only in B, 4 changed type or shape, 1 with different bytes, 1 identical"))
        << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ general.name string \"base\" -> \"edited\"")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ x.count u32 5 -> u64 5")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ x.list array[u32]: 4 -> 4 items; first difference at item 2: 3 -> 9")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ x.words array[string]: 3 -> 4 items; first difference at item 3: (none) -> \"d\""))
        << o;
    EXPECT_TRUE(has_squeezed_line(o, "- x.gone string \"bye\"")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "+ x.new u32 7")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "- gone f32 [2] (only in A)")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "+ new f32 [2] (only in B)")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ shape f32 [4] -> f32 [2, 2] (shape changed)")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ type f16 [32] -> q8_0 [32] (type changed)")) << o;
    EXPECT_TRUE(has_squeezed_line(o, "~ bytes f32 [4] (bytes differ)")) << o;
    EXPECT_EQ(o.find("same"), std::string::npos) << o;
    EXPECT_EQ(o.find("values:"), std::string::npos) << o;  // only with --values
    // The summary comes first.
    EXPECT_LT(o.find("tensors: "), o.find("metadata differences:"));
}

TEST(DiffCmd, EditedCopyJson) {
    const json j = diff_json({df().a.string(), df().b.string()}, 1);
    EXPECT_EQ(j["identical"], false);
    const json& md = j["metadata"];
    EXPECT_EQ(md.size(), 6u);
    const json& name = entry(md, "key", "general.name");
    EXPECT_EQ(name["change"], "value_changed");
    EXPECT_EQ(name["a"]["value"], "base");
    EXPECT_EQ(name["b"]["value"], "edited");
    const json& count = entry(md, "key", "x.count");
    EXPECT_EQ(count["change"], "type_changed");
    EXPECT_EQ(count["a"], json::parse(R"({"type": "u32", "value": 5})"));
    EXPECT_EQ(count["b"], json::parse(R"({"type": "u64", "value": 5})"));
    const json& list = entry(md, "key", "x.list");
    EXPECT_EQ(list["change"], "array_changed");
    EXPECT_EQ(list["first_difference"], 2);
    EXPECT_EQ(list["item_a"], 3);
    EXPECT_EQ(list["item_b"], 9);
    const json& words = entry(md, "key", "x.words");
    EXPECT_EQ(words["first_difference"], 3);
    EXPECT_EQ(words["a"]["count"], 3);
    EXPECT_EQ(words["b"]["count"], 4);
    EXPECT_TRUE(words["item_a"].is_null());
    EXPECT_EQ(words["item_b"], "d");
    EXPECT_EQ(entry(md, "key", "x.gone")["change"], "removed");
    EXPECT_EQ(entry(md, "key", "x.new")["change"], "added");

    const json& td = j["tensors"];
    EXPECT_EQ(entry(td, "name", "gone")["change"], "only_in_a");
    EXPECT_EQ(entry(td, "name", "new")["change"], "only_in_b");
    EXPECT_EQ(entry(td, "name", "shape")["change"], "shape_changed");
    EXPECT_EQ(entry(td, "name", "shape")["b"]["shape"], json::parse("[2, 2]"));
    EXPECT_EQ(entry(td, "name", "type")["change"], "type_changed");
    EXPECT_EQ(entry(td, "name", "bytes")["change"], "data_differs");
    EXPECT_EQ(j["summary"]["tensors_data_differs"], 1);
    EXPECT_FALSE(entry(td, "name", "bytes").contains("values"));
}

void expect_metrics(const json& v, const metrics& m) {
    EXPECT_NEAR(v["max_abs_diff"].get<double>(), m.max_abs, 1e-12 * m.max_abs + 1e-300);
    EXPECT_NEAR(v["rmse"].get<double>(), m.rmse, 1e-12 * m.rmse + 1e-300);
    EXPECT_NEAR(v["cosine"].get<double>(), m.cosine, 1e-12);
    EXPECT_NEAR(v["relative_error"].get<double>(), m.relative, 1e-12 * m.relative + 1e-300);
}

TEST(DiffCmd, ValuesOfQ8_0AgainstItsF32Source) {
    const json j = diff_json({df().a.string(), df().b.string(), "--values"}, 1);
    const json& td = j["tensors"];
    // A's q8_0 values are q * 0.375, exact in f32; B's are the source.
    std::vector<float> a_vals;
    for (std::int8_t q : w_ints()) a_vals.push_back(static_cast<float>(q) * w_scale);
    const metrics want = metrics_of(a_vals, w_source());
    ASSERT_GT(want.max_abs, 0.0);  // the quantization is lossy here: the test measures something
    const json& w = entry(td, "name", "w");
    EXPECT_EQ(w["change"], "type_changed");
    EXPECT_EQ(w["values"]["count"], 64);
    expect_metrics(w["values"], want);
    // Same type, other bytes: [1, 2, 3, 4] against [1, 2, 3, 5].
    expect_metrics(entry(td, "name", "bytes")["values"], metrics_of({1, 2, 3, 4}, {1, 2, 3, 5}));
    // Against all zeros cosine and relative error are undefined (null), max |a-b| is 1.
    const json& t = entry(td, "name", "type")["values"];
    EXPECT_EQ(t["max_abs_diff"], 1.0);
    EXPECT_TRUE(t["cosine"].is_null());
    EXPECT_TRUE(t["relative_error"].is_null());
    // Shapes that differ are not compared; a type without conversion says so.
    EXPECT_FALSE(entry(td, "name", "shape").contains("values"));
    EXPECT_EQ(entry(td, "name", "q81")["values_error"]["code"], "type_not_convertible");

    const run_result r = run({"diff", df().a.string(), df().b.string(), "--values"});
    EXPECT_EQ(r.rc, 1);
    const std::string line = "      values: max |a-b| 1, rmse 0.5, cosine ";
    const std::size_t at = r.out.find("~ bytes");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_EQ(r.out.compare(r.out.find('\n', at) + 1, line.size(), line), 0) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "values: max |a-b| 1, rmse 1, cosine undefined, relative error undefined (32 values)"))
        << r.out;
}

// A NaN or Inf where the other model has a number must lead the values line: the measures see only
// the finite pairs, and around one bad value they read "max |a-b| 0, rmse 0, cosine 1".
TEST(DiffCmd, NonFiniteMismatchesComeFirst) {
    const fs::path dir = temp_root() / "diff_nonfinite";
    fs::create_directories(dir);
    const std::array<std::int64_t, 1> n4{4};
    const auto model = [&](const fs::path& p, const std::vector<float>& v, const std::vector<float>& all_bad) {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.add_tensor("w", gguf::tensor_type::f32, n4, f32_bytes(v));
        w.add_tensor("x", gguf::tensor_type::f32, n4, f32_bytes(all_bad));
        must_write(w, p);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    model(dir / "a.gguf", {1, nan, 3, 4}, {nan, nan, inf, inf});
    model(dir / "b.gguf", {1, 2, 3, 4}, {1, 2, 3, 4});
    const run_result r = run({"diff", (dir / "a.gguf").string(), (dir / "b.gguf").string(), "--values"});
    EXPECT_EQ(r.rc, 1) << r.err;
    const std::string lead = "      values: 1 NaN/Inf mismatch of 4 values (first: value 1, a = nan, b = 2); over the 3 "
                             "finite pairs: max |a-b| 0, rmse 0, cosine ";
    EXPECT_NE(r.out.find("\n" + lead), std::string::npos) << r.out;
    EXPECT_TRUE(has_line(r.out, "      values: 4 NaN/Inf mismatches of 4 values (first: value 0, a = nan, b = 1); no "
                                "pair of finite values to measure"))
        << r.out;
    const json j = diff_json({(dir / "a.gguf").string(), (dir / "b.gguf").string(), "--values"}, 1);
    const json& v = entry(j["tensors"], "name", "w")["values"];
    ASSERT_TRUE(v.is_object()) << j.dump();
    EXPECT_EQ(v.begin().key(), "non_finite_mismatches");  // the first member
    EXPECT_EQ(v["non_finite_mismatches"], 1);
    ASSERT_TRUE(v.contains("first_non_finite_mismatch")) << v.dump();
    EXPECT_EQ(v["first_non_finite_mismatch"]["index"], 1);
    EXPECT_EQ(v["first_non_finite_mismatch"]["a"], "nan");
    EXPECT_EQ(v["first_non_finite_mismatch"]["b"], 2.0);
}

TEST(DiffCmd, SplitSets) {
    // A split set against its source: only the split keys differ; the tensors, spread over three
    // parts, are all identical.
    const json j = diff_json({df().a.string(), df().a_split1.string()}, 1);
    EXPECT_EQ(j["summary"]["metadata_added"], 3);
    EXPECT_EQ(j["summary"]["metadata_changed"], 0);
    EXPECT_EQ(j["summary"]["tensors_identical"], 7);
    for (const json& e : j["metadata"]) EXPECT_EQ(e["key"].get<std::string>().rfind("split.", 0), 0u) << e.dump();
    // Two split sets of the same model: identical.
    EXPECT_EQ(run({"diff", df().a_split1.string(), df().a_split1_copy.string()}).rc, 0);
    // Two split sets of different models: the same tensor differences as the single files.
    const json s = diff_json({df().a_split1.string(), df().b_split1.string()}, 1);
    const json f = diff_json({df().a.string(), df().b.string()}, 1);
    EXPECT_EQ(s["tensors"], f["tensors"]);
}

TEST(DiffCmd, ExitCodes) {
    EXPECT_EQ(run({"diff", df().a.string()}).rc, 2);
    EXPECT_EQ(run({"diff", df().a.string(), df().a.string(), "--bogus"}).rc, 2);
    const run_result missing = run({"diff", df().a.string(), (df().dir / "absent.gguf").string()});
    EXPECT_EQ(missing.rc, 3);
    EXPECT_TRUE(missing.out.empty());
    const run_result bad = run({"diff", fx().bad_magic.string(), df().a.string()});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_TRUE(bad.out.empty());
    EXPECT_NE(bad.err.find("failed to parse GGUF"), std::string::npos) << bad.err;
    EXPECT_EQ(run({"diff", df().a.string(), df().a_copy.string()}, "/dev/full").rc, 3);
}

}  // namespace
}  // namespace minfer_cli_test
