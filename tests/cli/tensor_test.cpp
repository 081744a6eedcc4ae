// `minfer tensor`, through the real binary: layout lines, values by row (--rows, --head), --stats,
// --dump (file and stdout, byte-exact), JSON, suggestions for a misspelled name, types that cannot
// convert, split sets, and every exit code. Every expected value is computed here from the bytes
// the test wrote (f16 bits, q8_0 / q4_0 blocks with chosen scales and integers), never by minfer's
// own dequantizer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <sys/wait.h>

#include "cli_support.hpp"
#include "special_files.hpp"

namespace minfer_cli_test {
namespace {

constexpr std::uint64_t big_n = 1100000;  // more than one 1 Mi chunk: the stream crosses a boundary

std::vector<std::byte> le_bytes(const std::vector<float>& v) {
    std::vector<std::byte> b(v.size() * 4);
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::uint32_t u = 0;
        std::memcpy(&u, &v[i], 4);
        for (int k = 0; k < 4; ++k) b[i * 4 + static_cast<std::size_t>(k)] = static_cast<std::byte>((u >> (8 * k)) & 0xff);
    }
    return b;
}

void put_u16(std::vector<std::byte>& b, std::uint16_t v) {
    b.push_back(static_cast<std::byte>(v & 0xff));
    b.push_back(static_cast<std::byte>(v >> 8));
}

// Values of the f32 tensor t.f32 [4, 3, 2]: x = i/2 - 3.
float f32_value(std::size_t i) { return static_cast<float>(i) * 0.5f - 3.0f; }

// t.f16 [8, 2]: f16 bits and the values they stand for (IEEE half, worked out by hand).
const std::vector<std::uint16_t> f16_bits{0x3C00, 0xC000, 0x3800, 0x0000, 0x7BFF, 0x0001, 0xB400, 0x4200,
                                          0x8000, 0x3555, 0x7C00, 0x0400, 0xC500, 0x4900, 0x3E00, 0x5640};
const std::vector<float> f16_values{1.0f,   -2.0f, 0.5f,   0.0f,
                                    65504.0f, std::ldexp(1.0f, -24), -0.25f, 3.0f,
                                    -0.0f,  0.333251953125f, INFINITY, std::ldexp(1.0f, -14),
                                    -5.0f,  10.0f, 1.5f, 100.0f};

// t.q8 [32, 2]: block 0 d = 1.0 (0x3C00), q = i - 16; block 1 d = 0.5 (0x3800), q = 3i - 40.
std::vector<std::byte> q8_bytes() {
    std::vector<std::byte> b;
    put_u16(b, 0x3C00);
    for (int i = 0; i < 32; ++i) b.push_back(static_cast<std::byte>(static_cast<std::int8_t>(i - 16)));
    put_u16(b, 0x3800);
    for (int i = 0; i < 32; ++i) b.push_back(static_cast<std::byte>(static_cast<std::int8_t>(3 * i - 40)));
    return b;
}
std::vector<float> q8_values() {
    std::vector<float> v;
    for (int i = 0; i < 32; ++i) v.push_back(static_cast<float>(i - 16));
    for (int i = 0; i < 32; ++i) v.push_back(static_cast<float>(3 * i - 40) * 0.5f);
    return v;
}

// t.q4 [32]: d = 2.0 (0x4000); byte j holds element j in its low nibble (= j) and element j + 16 in
// its high nibble (= 15 - j); a value is (nibble - 8) * d.
std::vector<std::byte> q4_bytes() {
    std::vector<std::byte> b;
    put_u16(b, 0x4000);
    for (int j = 0; j < 16; ++j) b.push_back(static_cast<std::byte>(j | ((15 - j) << 4)));
    return b;
}
std::vector<float> q4_values() {
    std::vector<float> v(32);
    for (int j = 0; j < 16; ++j) {
        v[static_cast<std::size_t>(j)] = static_cast<float>(j - 8) * 2.0f;
        v[static_cast<std::size_t>(j + 16)] = static_cast<float>(15 - j - 8) * 2.0f;
    }
    return v;
}

const std::vector<float> special_values{1.0f, NAN, -2.0f, INFINITY, 0.0f, -0.0f, NAN, 3.0f};

float big_value(std::uint64_t i) { return static_cast<float>(i % 1000) * 0.001f - 0.25f; }

struct tensor_fixture {
    fs::path dir, model, split1, huge;
    std::vector<float> big;

    tensor_fixture() {
        dir = temp_root() / "tensor";
        fs::remove_all(dir);
        fs::create_directories(dir);
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        std::vector<float> f32(24);
        for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = f32_value(i);
        const std::array<std::int64_t, 3> ne3{4, 3, 2};
        w.add_tensor("t.f32", gguf::tensor_type::f32, ne3, le_bytes(f32));
        std::vector<std::byte> h;
        for (std::uint16_t u : f16_bits) put_u16(h, u);
        const std::array<std::int64_t, 2> ne_h{8, 2};
        w.add_tensor("t.f16", gguf::tensor_type::f16, ne_h, h);
        const std::array<std::int64_t, 2> ne_q8{32, 2};
        w.add_tensor("t.q8", gguf::tensor_type::q8_0, ne_q8, q8_bytes());
        const std::array<std::int64_t, 1> ne_q4{32};
        w.add_tensor("t.q4", gguf::tensor_type::q4_0, ne_q4, q4_bytes());
        const std::array<std::int64_t, 1> ne_s{8};
        w.add_tensor("t.special", gguf::tensor_type::f32, ne_s, le_bytes(special_values));
        w.add_zero_tensor("t.q81", gguf::tensor_type::q8_1, ne_q4);
        const std::array<std::int64_t, 1> ne_i{2};
        w.add_zero_tensor("t.i64", gguf::tensor_type::i64, ne_i);
        big.resize(big_n);
        for (std::uint64_t i = 0; i < big_n; ++i) big[i] = big_value(i);
        const std::array<std::int64_t, 2> ne_big{1000, static_cast<std::int64_t>(big_n / 1000)};
        w.add_tensor("t.big", gguf::tensor_type::f32, ne_big, le_bytes(big));
        std::vector<float> offset(big_n);
        for (std::uint64_t i = 0; i < big_n; ++i) offset[i] = 1e7f + static_cast<float>(i % 4);
        w.add_tensor("t.offset", gguf::tensor_type::f32, ne_big, le_bytes(offset));
        model = dir / "m.gguf";
        must_write(w, model);

        // The same model as a split set, two tensors per part (by the tool itself).
        const run_result r = run({"split", model.string(), (dir / "s").string(), "--split-max-tensors", "2"});
        if (r.rc != 0) throw std::runtime_error("split failed: " + r.err);
        split1 = dir / gguf::split_file_name("s", 0, 5);

        // 2^26 values in 36 MiB of q4_0 zeros (a hole on disk): 256 MiB as f32.
        gguf::writer hw;
        hw.set_string("general.architecture", "llama");
        const std::array<std::int64_t, 2> ne_huge{4096, 16384};
        hw.add_zero_tensor("t.huge", gguf::tensor_type::q4_0, ne_huge);
        huge = dir / "huge.gguf";
        must_write(hw, huge);
    }
};

const tensor_fixture& tf() {
    static const tensor_fixture f;
    return f;
}

json run_json(const std::vector<std::string>& args, int want_rc = 0) {
    std::vector<std::string> a{"tensor"};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--json");
    const run_result r = run(a);
    EXPECT_EQ(r.rc, want_rc) << r.err;
    return json::parse(r.out);
}

// The values of a JSON row, NaN/Inf written as strings.
std::vector<float> row_values(const json& row) {
    std::vector<float> v;
    for (const json& x : row.at("values")) {
        if (x.is_string()) {
            const std::string s = x.get<std::string>();
            v.push_back(s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY);
        } else {
            v.push_back(x.get<float>());
        }
    }
    return v;
}

void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << i;
        } else {
            std::uint32_t a = 0, b = 0;
            std::memcpy(&a, &got[i], 4);
            std::memcpy(&b, &want[i], 4);
            EXPECT_EQ(a, b) << "value " << i << ": " << got[i] << " vs " << want[i];
        }
    }
}

std::vector<float> slice(const std::vector<float>& v, std::size_t first, std::size_t n) {
    return {v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + n)};
}

TEST(TensorCmd, LayoutLinesAndDefaultRows) {
    const run_result r = run({"tensor", tf().model.string(), "t.f32"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "tensor t.f32")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "type f32 (id 0)")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "shape [4, 3, 2] (ne, ggml order: ne[0] varies fastest)")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "strides [4, 16, 48] (nb, bytes)")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "bytes 96 (0.0 MiB)")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "elements 24")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "rows 6 of 4 values")) << r.out;
    // The first tensor starts the data section: absolute offset = the data offset.
    auto m = gguf::model::open(tf().model);
    ASSERT_TRUE(m);
    const std::string off = "offset 0 in the data section; absolute " + std::to_string(m->metadata().data_offset()) +
                            " in " + tf().model.string();
    EXPECT_TRUE(has_squeezed_line(r.out, off)) << r.out;
    // Default: 4 rows, up to 8 values per row (a row here has 4), labelled by (i1, i2).
    EXPECT_TRUE(has_squeezed_line(r.out, "values rows 0:4 of 6, first 4 of 4 per row")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "[:, 0, 0] -3 -2.5 -2 -1.5")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "[:, 2, 0] 1 1.5 2 2.5")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "[:, 0, 1] 3 3.5 4 4.5")) << r.out;
    EXPECT_FALSE(has_squeezed_line(r.out, "[:, 1, 1] 5 5.5 6 6.5")) << r.out;
    EXPECT_EQ(r.out.find("stats"), std::string::npos);
}

TEST(TensorCmd, RowsAndHead) {
    const run_result r = run({"tensor", tf().model.string(), "t.f32", "--rows", "4:6", "--head", "2"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "values rows 4:6 of 6, first 2 of 4 per row")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "[:, 1, 1] 5 5.5 …")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "[:, 2, 1] 7 7.5 …")) << r.out;
    EXPECT_FALSE(has_squeezed_line(r.out, "[:, 0, 1] 3 3.5 …")) << r.out;

    // One row, A:, :B, an end past the last row (cut), and --head 0 (the whole row).
    EXPECT_TRUE(has_squeezed_line(run({"tensor", tf().model.string(), "t.f32", "--rows", "5"}).out, "[:, 2, 1] 7 7.5 8 8.5"));
    const json from = run_json({tf().model.string(), "t.f32", "--rows", "3:"});
    EXPECT_EQ(from["values"]["rows"], json::parse("[3, 6]"));
    EXPECT_EQ(from["values"]["data"].size(), 3u);
    EXPECT_EQ(from["values"]["data"][0]["index"], json::parse("[0, 1]"));
    const json to = run_json({tf().model.string(), "t.f32", "--rows", ":2"});
    EXPECT_EQ(to["values"]["rows"], json::parse("[0, 2]"));
    const json cut = run_json({tf().model.string(), "t.f32", "--rows", "4:100"});
    EXPECT_EQ(cut["values"]["rows"], json::parse("[4, 6]"));
    const json whole = run_json({tf().model.string(), "t.q8", "--head", "0"});
    EXPECT_EQ(whole["values"]["per_row"], 32);
    expect_same_floats(row_values(whole["values"]["data"][1]), slice(q8_values(), 32, 32));
}

TEST(TensorCmd, BadRowsAreUsageErrors) {
    for (const char* bad : {"6:7", "3:3", "4:2", "x", "1:y", "1:2:3"}) {
        const run_result r = run({"tensor", tf().model.string(), "t.f32", "--rows", bad});
        EXPECT_EQ(r.rc, 2) << bad << ": " << r.out;
        EXPECT_NE(r.err.find("--rows"), std::string::npos) << r.err;
    }
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.f32", "--head", "-1"}).rc, 2);
    EXPECT_EQ(run({"tensor", tf().model.string()}).rc, 2);
}

TEST(TensorCmd, F16ValuesAreTheBitsWritten) {
    const json j = run_json({tf().model.string(), "t.f16", "--head", "0"});
    expect_same_floats(row_values(j["values"]["data"][0]), slice(f16_values, 0, 8));
    expect_same_floats(row_values(j["values"]["data"][1]), slice(f16_values, 8, 8));
    EXPECT_EQ(j["type"], "f16");
    EXPECT_EQ(j["strides"], json::parse("[2, 16]"));
}

TEST(TensorCmd, Q8_0AndQ4_0Values) {
    const json q8 = run_json({tf().model.string(), "t.q8"});
    EXPECT_EQ(q8["values"]["per_row"], 8);
    expect_same_floats(row_values(q8["values"]["data"][0]), slice(q8_values(), 0, 8));
    expect_same_floats(row_values(q8["values"]["data"][1]), slice(q8_values(), 32, 8));
    EXPECT_EQ(q8["strides"], json::parse("[34, 34]"));
    EXPECT_EQ(q8["bytes"], 68);
    const json q4 = run_json({tf().model.string(), "t.q4", "--head", "32"});
    expect_same_floats(row_values(q4["values"]["data"][0]), q4_values());
    EXPECT_EQ(q4["values"]["data"][0]["index"], json::array());
}

// Statistics worked out here in double, two-pass.
struct expected_stats {
    double mean = 0, std = 0;
};
expected_stats stats_of(const std::vector<float>& v) {
    double sum = 0;
    std::size_t n = 0;
    for (float x : v)
        if (std::isfinite(x)) {
            sum += x;
            ++n;
        }
    const double mean = sum / static_cast<double>(n);
    double m2 = 0;
    for (float x : v)
        if (std::isfinite(x)) m2 += (x - mean) * (x - mean);
    return {mean, std::sqrt(m2 / static_cast<double>(n))};
}

TEST(TensorCmd, StatsCountNaNInfZeros) {
    const run_result r = run({"tensor", tf().model.string(), "t.special", "--stats"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "stats over 8 values")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "min -2")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "max 3")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "mean 0.4")) << r.out;  // (1 - 2 + 0 - 0 + 3) / 5
    EXPECT_TRUE(has_squeezed_line(r.out, "max |x| 3")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "zeros 2")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "nan 2 (first at index 1 = [1])")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "inf 1")) << r.out;

    const json j = run_json({tf().model.string(), "t.special", "--stats"});
    const json& s = j["stats"];
    EXPECT_EQ(s["count"], 8);
    EXPECT_EQ(s["finite"], 5);
    EXPECT_EQ(s["nan"], 2);
    EXPECT_EQ(s["first_nan_index"], 1);
    EXPECT_EQ(s["inf"], 1);
    EXPECT_EQ(s["zeros"], 2);
    const expected_stats e = stats_of(special_values);
    EXPECT_NEAR(s["mean"].get<double>(), e.mean, 1e-15);
    EXPECT_NEAR(s["std"].get<double>(), e.std, 1e-15);
    // No NaN: the index is null.
    EXPECT_TRUE(run_json({tf().model.string(), "t.f32", "--stats"})["stats"]["first_nan_index"].is_null());
}

TEST(TensorCmd, StatsStreamAcrossChunks) {
    const json j = run_json({tf().model.string(), "t.big", "--stats"});
    const json& s = j["stats"];
    EXPECT_EQ(s["count"], big_n);
    EXPECT_EQ(s["min"].get<float>(), big_value(0));
    EXPECT_EQ(s["max"].get<float>(), big_value(999));
    const expected_stats e = stats_of(tf().big);
    EXPECT_NEAR(s["mean"].get<double>(), e.mean, 1e-12 * std::fabs(e.mean) + 1e-15);
    EXPECT_NEAR(s["std"].get<double>(), e.std, 1e-12 * e.std);
    std::uint64_t zeros = 0;
    for (float x : tf().big) zeros += x == 0.0f ? 1 : 0;
    EXPECT_EQ(s["zeros"], zeros);
    EXPECT_EQ(s["max_abs"].get<float>(), std::max(std::fabs(big_value(0)), std::fabs(big_value(999))));
}

// Values far from 0 with a small spread: sum(x^2)/n - mean^2 would lose the variance (1.25) to
// cancellation at x^2 ~ 1e14; deviations from chunk means keep it.
TEST(TensorCmd, StatsAreNumericallyStable) {
    const json j = run_json({tf().model.string(), "t.offset", "--stats"});
    EXPECT_EQ(j["stats"]["mean"].get<double>(), 1e7 + 1.5);
    EXPECT_NEAR(j["stats"]["std"].get<double>(), std::sqrt(1.25), 1e-9);
    EXPECT_EQ(j["stats"]["min"], 1e7);
    EXPECT_EQ(j["stats"]["max"], 1e7 + 3);
}

// 2^26 values (256 MiB as f32) under a 192 MiB address-space limit: only a bounded pass fits, with
// the 36 MiB mapping. (--dump shares the pass; it is not run here to spare the disk.)
TEST(TensorCmd, StatsStayBoundedInMemory) {
#ifdef MINFER_ASAN
    GTEST_SKIP() << "ASan reserves terabytes of address space: no limit can be set";
#else
    const peak p = measure({"tensor", tf().huge.string(), "t.huge", "--stats", "--json"}, tf().dir / "huge.json", 192);
    ASSERT_EQ(p.rc, 0) << p.err;
    const json j = json::parse(slurp(tf().dir / "huge.json"));
    EXPECT_EQ(j["stats"]["count"], std::uint64_t{1} << 26);
    EXPECT_EQ(j["stats"]["zeros"], std::uint64_t{1} << 26);
#endif
}

// Issue 29: the whole-tensor readers keep the resident set at about a chunk, not the tensor: the
// 64 Mi-value q4_0 tensor (36 MiB of blocks, 256 MiB of f32) dumped to /dev/null and its stats read
// stay under 32 MiB of peak RSS (the mapping's pages are given back chunk by chunk).
TEST(TensorCmd, DumpAndStatsPeakRssIsBoundedByTheChunk) {
#ifdef MINFER_ASAN
    GTEST_SKIP() << "ASan's shadow memory and quarantine are not the program's";
#else
    const peak d = measure({"tensor", tf().huge.string(), "t.huge", "--dump", "-"}, "/dev/null");
    ASSERT_EQ(d.rc, 0) << d.err;
    EXPECT_LE(d.rss_kib, 32 * 1024) << "tensor --dump - peak RSS (KiB)";
    const peak s = measure({"tensor", tf().huge.string(), "t.huge", "--stats"}, "/dev/null");
    ASSERT_EQ(s.rc, 0) << s.err;
    EXPECT_LE(s.rss_kib, 32 * 1024) << "tensor --stats peak RSS (KiB)";
#endif
}

TEST(TensorCmd, DumpFileIsByteExact) {
    const fs::path out = tf().dir / "q8.f32";
    fs::remove(out);
    const run_result r = run({"tensor", tf().model.string(), "t.q8", "--dump", out.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "Wrote " + out.string() + ": 64 values as little-endian f32, 256 bytes")) << r.out;
    const std::vector<std::byte> want = le_bytes(q8_values());
    EXPECT_EQ(slurp(out), std::string(reinterpret_cast<const char*>(want.data()), want.size()));

    // An existing file needs --force; the model itself never.
    const run_result again = run({"tensor", tf().model.string(), "t.q4", "--dump", out.string()});
    EXPECT_EQ(again.rc, 2);
    EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
    ASSERT_EQ(run({"tensor", tf().model.string(), "t.q4", "--dump", out.string(), "--force"}).rc, 0);
    const std::vector<std::byte> want4 = le_bytes(q4_values());
    EXPECT_EQ(slurp(out), std::string(reinterpret_cast<const char*>(want4.data()), want4.size()));
    const std::string before = slurp(tf().model);
    const run_result self = run({"tensor", tf().model.string(), "t.q4", "--dump", tf().model.string(), "--force"});
    EXPECT_EQ(self.rc, 2);
    EXPECT_EQ(slurp(tf().model), before);
    // A device or a directory is never replaced, even with --force.
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.q4", "--dump", tf().dir.string(), "--force"}).rc, 2);
    EXPECT_TRUE(fs::is_directory(tf().dir));
}

// --dump names a FIFO, a device (one of our own: mknod 1,3 is what /dev/null is), a socket, a
// directory, a link to one of them or a dangling link: refused with or without --force, exit 2, the
// thing still there, and the way to a pipe said (--dump -).
TEST(TensorCmd, DumpNeverReplacesWhatIsNoRegularFile) {
    const fs::path dir = tf().dir / "dump-special";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::vector<special_file> specials = make_special_files(dir, "d");
    fs::create_symlink(specials.front().path, dir / "to-fifo");
    specials.push_back({"symbolic link to a FIFO", dir / "to-fifo", fs::file_type::symlink});
    fs::create_symlink(dir / "nowhere", dir / "dangling");
    specials.push_back({"symbolic link to a missing file", dir / "dangling", fs::file_type::symlink});
    for (const special_file& s : specials) {
        for (const bool force : {true, false}) {
            SCOPED_TRACE(s.kind + (force ? " --force" : ""));
            std::vector<std::string> args{"tensor", tf().model.string(), "t.q4", "--dump", s.path.string()};
            if (force) args.push_back("--force");
            const run_result r = run(args);
            EXPECT_EQ(r.rc, 2) << r.err;
            EXPECT_EQ(r.err, "Error: " + s.path.string() + ": cannot write the output: it is a " + s.kind +
                                 (s.kind.ends_with("FIFO") ? " (named pipe)" : "") +
                                 ", not a regular file: an output only ever creates a file or replaces a regular one "
                                 "[output_not_regular]\nTo write into a pipe, a FIFO or a device: --dump - and "
                                 "redirect standard output\n");
            EXPECT_EQ(fs::symlink_status(s.path).type(), s.type);
        }
    }
    EXPECT_FALSE(fs::exists(dir / "nowhere"));
    EXPECT_EQ(names_in(dir).size(), specials.size());
}

// --dump names a link to a regular file: with --force its target gets the values, the link stays.
TEST(TensorCmd, DumpThroughALinkReplacesItsTarget) {
    const fs::path dir = tf().dir / "dump-link";
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_file(dir / "values.f32", "old");
    fs::create_symlink("values.f32", dir / "link");
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.q8", "--dump", (dir / "link").string()}).rc, 2);
    EXPECT_EQ(slurp(dir / "values.f32"), "old");
    const run_result r = run({"tensor", tf().model.string(), "t.q8", "--dump", (dir / "link").string(), "--force"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
    const std::vector<std::byte> want = le_bytes(q8_values());
    EXPECT_EQ(slurp(dir / "values.f32"), std::string(reinterpret_cast<const char*>(want.data()), want.size()));
    EXPECT_EQ(names_in(dir), (std::set<std::string>{"link", "values.f32"}));
}

// A write that fails mid-dump says what failed once ("cannot write the values", not "cannot cannot
// ..."): the file-size limit (SIGXFSZ ignored, so write() returns EFBIG) stands in for a full disk.
TEST(TensorCmd, DumpWriteErrorIsWordedOnce) {
    const fs::path out = tf().dir / "limited.f32";
    fs::remove(out);
    const fs::path err = tf().dir / "limited.err";
    const std::string cmd = "trap '' XFSZ; ulimit -f 1; exec '" + std::string(MINFER_EXE) + "' tensor '" +
                            tf().model.string() + "' t.big --dump '" + out.string() + "' 2>'" + err.string() + "' >/dev/null";
    const int rc = std::system(("sh -c \"" + cmd + "\"").c_str());
    ASSERT_TRUE(WIFEXITED(rc)) << rc;
    EXPECT_EQ(WEXITSTATUS(rc), 3);
    const std::string text = slurp(err);
    EXPECT_NE(text.find("cannot write the values"), std::string::npos) << text;
    EXPECT_EQ(text.find("cannot cannot"), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(out));
}

TEST(TensorCmd, DumpAcrossChunksWithStats) {
    const fs::path out = tf().dir / "big.f32";
    fs::remove(out);
    const json j = run_json({tf().model.string(), "t.big", "--dump", out.string(), "--stats"});
    EXPECT_EQ(j["dump"]["values"], big_n);
    EXPECT_EQ(j["dump"]["bytes"], big_n * 4);
    EXPECT_EQ(j["stats"]["count"], big_n);
    const std::vector<std::byte> want = le_bytes(tf().big);
    const std::string got = slurp(out);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(std::memcmp(got.data(), want.data(), want.size()) == 0);
}

TEST(TensorCmd, DumpToStdout) {
    const run_result r = run({"tensor", tf().model.string(), "t.f16", "--dump", "-"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<std::byte> want = le_bytes(f16_values);
    EXPECT_EQ(r.out, std::string(reinterpret_cast<const char*>(want.data()), want.size()));
    for (const char* other : {"--stats", "--json"}) {
        const run_result bad = run({"tensor", tf().model.string(), "t.f16", "--dump", "-", other});
        EXPECT_EQ(bad.rc, 2) << other;
        EXPECT_TRUE(bad.out.empty());
    }
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.f16", "--dump", "-", "--rows", "1"}).rc, 2);
    // stdout that cannot be written is an I/O error.
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.big", "--dump", "-"}, "/dev/full").rc, 3);
}

TEST(TensorCmd, MisspelledNameGetsSuggestions) {
    const run_result r = run({"tensor", tf().model.string(), "t.q9"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find("tensor 't.q9' not found [tensor_not_found]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Did you mean: \"t.q4\", \"t.q8\", \"t.q81\"?"), std::string::npos) << r.err;
    // A fragment finds the names that contain it; a name far from all gets no suggestion line.
    EXPECT_NE(run({"tensor", tf().model.string(), "SPECIAL"}).err.find("Did you mean: \"t.special\"?"), std::string::npos);
    const run_result far = run({"tensor", tf().model.string(), "zzzzzzzzzzzz"});
    EXPECT_EQ(far.rc, 1);
    EXPECT_EQ(far.err.find("Did you mean"), std::string::npos) << far.err;
}

TEST(TensorCmd, TypesThatCannotConvert) {
    for (const char* name : {"t.q81", "t.i64"}) {
        const run_result r = run({"tensor", tf().model.string(), name, "--stats"});
        EXPECT_EQ(r.rc, 1) << name;
        EXPECT_TRUE(has_squeezed_line(r.out, std::string("tensor ") + name)) << r.out;
        EXPECT_EQ(r.out.find("stats"), std::string::npos) << r.out;
        EXPECT_NE(r.err.find("cannot be converted to f32 [type_not_convertible]"), std::string::npos) << r.err;
    }
    const json j = run_json({tf().model.string(), "t.q81"}, 1);
    EXPECT_EQ(j["type"], "q8_1");
    EXPECT_TRUE(j["values"].is_null());
    EXPECT_EQ(j["error"]["code"], "type_not_convertible");
    // --dump writes nothing for them.
    const fs::path out = tf().dir / "never.f32";
    EXPECT_EQ(run({"tensor", tf().model.string(), "t.q81", "--dump", out.string()}).rc, 1);
    EXPECT_FALSE(fs::exists(out));
}

TEST(TensorCmd, SplitSet) {
    const json single = run_json({tf().model.string(), "t.q4", "--head", "0", "--stats"});
    const json split = run_json({tf().split1.string(), "t.q4", "--head", "0", "--stats"});
    EXPECT_EQ(split["parts"], 5);
    EXPECT_EQ(split["part"], 2);  // two tensors per part: t.f32, t.f16 | t.q8, t.q4 | ...
    EXPECT_EQ(split["part_file"], (tf().dir / gguf::split_file_name("s", 1, 5)).string());
    expect_same_floats(row_values(split["values"]["data"][0]), q4_values());
    EXPECT_EQ(split["stats"], single["stats"]);
    const run_result r = run({"tensor", tf().split1.string(), "t.big"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("(part 4 of 5)"), std::string::npos) << r.out;
}

TEST(TensorCmd, ExitCodesOfTheFile) {
    EXPECT_EQ(run({"tensor", (tf().dir / "absent.gguf").string(), "x"}).rc, 3);
    const run_result bad = run({"tensor", fx().bad_magic.string(), "x"});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("failed to parse GGUF"), std::string::npos) << bad.err;
}

// MINFER_QUANT_ISA that cannot be followed as written: the values still come (from the best kernels
// available) and stderr says why the choice differs; a valid choice says nothing.
TEST(TensorCmd, QuantIsaChoiceThatCannotBeFollowedIsAWarning) {
    const char* before = std::getenv("MINFER_QUANT_ISA");
    const std::string saved = before != nullptr ? before : "";
    ::setenv("MINFER_QUANT_ISA", "avx9000", 1);
    const run_result bad = run({"tensor", tf().model.string(), "t.f32"});
    ::setenv("MINFER_QUANT_ISA", "scalar", 1);
    const run_result good = run({"tensor", tf().model.string(), "t.f32"});
    if (before != nullptr) ::setenv("MINFER_QUANT_ISA", saved.c_str(), 1);
    else ::unsetenv("MINFER_QUANT_ISA");
    ASSERT_EQ(bad.rc, 0) << bad.err;
    EXPECT_NE(bad.err.find("Warning: MINFER_QUANT_ISA=avx9000 is not one of auto, scalar, avx2, avx512, neon; using "),
              std::string::npos)
        << bad.err;
    EXPECT_TRUE(has_squeezed_line(bad.out, "[:, 0, 0] -3 -2.5 -2 -1.5")) << bad.out;
    ASSERT_EQ(good.rc, 0) << good.err;
    EXPECT_EQ(good.err, "");
    EXPECT_EQ(good.out, bad.out);
}

}  // namespace
}  // namespace minfer_cli_test
