// `minfer hash`, through the real binary, against an independent reference: every expected line
// comes from tests/tools/gguf_hash_reference.py (its own GGUF parser and ggml type table, Python's
// hashlib, Debian's xxhsum), from `sha256sum`, or is written here by hand; never from minfer's code.
// Output is compared byte for byte with what llama-gguf-hash prints for the same file and options.
//
// Files: every real fixture in ../shared/fixtures/real (skipped loudly when absent), a model written
// here with many tensor types and odd sizes (padding between tensors; a tensor of more than 16 MiB,
// so that it straddles the walker's windows), a model with alignment 64, a model with no
// tensors, a split set made by `minfer split` and the model `minfer merge` makes of it, paths typed
// as `./m.gguf`. Then --check (every outcome and exit code), --file-sha256 / --expect, a truncated
// model and the usage errors. The >= 4 GiB tensor is in hash_big_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <set>

#include "hash_support.hpp"

namespace minfer_cli_test {
namespace {

// The tensors of mixed.gguf: name, type, shape.
struct tensor_spec {
    std::string name;
    gguf::tensor_type type;
    std::vector<std::int64_t> ne;
};
const std::vector<tensor_spec>& mixed_tensors() {
    using tt = gguf::tensor_type;
    static const std::vector<tensor_spec> v{
        {"token_embd.weight", tt::f32, {7, 3}},        // 84 bytes: 12 of padding follow
        {"output_norm.weight", tt::f16, {5}},          // 10
        {"blk.0.attn_q.weight", tt::q8_0, {32, 3}},    // 102
        {"blk.0.attn_k.weight", tt::q4_0, {64}},       // 36
        {"blk.0.attn_v.weight", tt::q4_k, {256}},      // 144
        {"blk.0.ffn_up.weight", tt::q6_k, {256, 2}},   // 420
        {"blk.0.ffn_down.weight", tt::q8_k, {256}},    // 292
        {"blk.0.ffn_gate.weight", tt::iq2_xxs, {256}}, // 66
        {"blk.0.attn_norm.weight", tt::bf16, {9}},     // 18
        {"blk.0.i8", tt::i8, {3}},                     // 3
        {"blk.0.f64", tt::f64, {3}},                   // 24
        {"blk.0.mxfp4", tt::mxfp4, {32}},              // 17
        {"blk.1.big", tt::f32, {4194305}},             // 16 MiB + 4: straddles the walker's first 16 MiB window
        {"blk.1.big_i8", tt::i8, {1048619}},           // 1 MiB + 43
        {"tail.weight", tt::f32, {1}},                 // 4
    };
    return v;
}

std::size_t spec_bytes(const tensor_spec& t) {
    const gguf::type_traits* tr = gguf::traits(t.type);
    std::size_t rows = 1;
    for (std::size_t i = 1; i < t.ne.size(); ++i) rows *= static_cast<std::size_t>(t.ne[i]);
    return static_cast<std::size_t>(t.ne[0]) / tr->block_elems * tr->block_bytes * rows;
}

struct hash_fixtures {
    fs::path dir;  // everything below is relative to it (the tools run there)
    std::string mixed = "mixed.gguf", a64 = "a64.gguf", empty = "empty.gguf", merged = "merged.gguf";
    std::string split1 = "split/s-00001-of-00004.gguf";
    std::vector<std::string> split_parts{"split/s-00001-of-00004.gguf", "split/s-00002-of-00004.gguf",
                                         "split/s-00003-of-00004.gguf", "split/s-00004-of-00004.gguf"};
    std::string error;  // what went wrong making them

    hash_fixtures() {
        dir = fs::absolute(temp_root() / "hash");
        fs::create_directories(dir / "split");
        try {
            gguf::writer w;
            w.set_string("general.architecture", "llama");
            w.set_string("general.name", "hash test");
            std::uint64_t seed = 1;
            for (const tensor_spec& t : mixed_tensors())
                w.add_tensor(t.name, t.type, t.ne, noise(spec_bytes(t), seed++));
            must_write(w, dir / mixed);

            gguf::writer a;
            a.set_string("general.architecture", "llama");
            a.set_u32("general.alignment", 64);
            const std::array<std::int64_t, 1> n3{3}, n70{70}, n32{32};
            a.add_tensor("a.weight", gguf::tensor_type::f32, n3, noise(12, 101));
            a.add_tensor("b.weight", gguf::tensor_type::f16, n70, noise(140, 102));
            a.add_tensor("c.weight", gguf::tensor_type::q8_0, n32, noise(34, 103));
            must_write(a, dir / a64);

            gguf::writer e;
            e.set_string("general.architecture", "llama");
            e.set_string("general.name", "no tensors");
            must_write(e, dir / empty);
        } catch (const std::exception& ex) {
            error = ex.what();
        }
    }
};

const hash_fixtures& hx() {
    static const hash_fixtures f;
    return f;
}

// The split set (`minfer split` of mixed.gguf: 4 parts of at most 4 tensors) and the model `minfer
// merge` makes of it, made by the tests that use them. "" or what went wrong.
const std::string& split_error() {
    static const std::string error = []() -> std::string {
        if (!hx().error.empty()) return hx().error;
        const run_result s = tool({"split", hx().mixed, "split/s", "--split-max-tensors", "4"}, hx().dir);
        if (s.rc != 0) return "minfer split failed: " + s.err;
        for (const std::string& p : hx().split_parts)
            if (!fs::exists(hx().dir / p)) return "minfer split did not make " + p;
        const run_result m = tool({"merge", hx().split1, hx().merged}, hx().dir);
        if (m.rc != 0) return "minfer merge failed: " + m.err;
        return "";
    }();
    return error;
}

#define MINFER_NEED_FIXTURES()                                         \
    do {                                                               \
        MINFER_NEED_REFERENCE();                                       \
        ASSERT_EQ(hx().error, "") << "could not make the test models"; \
    } while (0)
#define MINFER_NEED_SPLIT()                                                   \
    do {                                                                      \
        MINFER_NEED_FIXTURES();                                               \
        ASSERT_EQ(split_error(), "") << "could not make the split set"; \
    } while (0)

// Compare `minfer hash ARGS MODEL` with the reference on the same arguments (in `cwd`).
void expect_same(const std::vector<std::string>& args, const std::string& model, const fs::path& cwd,
                 const std::vector<std::string>& ours_only = {}) {
    std::vector<std::string> ref_args = args;
    ref_args.push_back(model);
    const run_result ref = reference(ref_args, cwd);
    ASSERT_EQ(ref.rc, 0) << "reference failed: " << ref.err;
    ASSERT_FALSE(ref.out.empty());
    std::vector<std::string> our_args{"hash"};
    our_args.insert(our_args.end(), args.begin(), args.end());
    our_args.insert(our_args.end(), ours_only.begin(), ours_only.end());
    our_args.push_back(model);
    const run_result ours = tool(our_args, cwd);
    EXPECT_EQ(ours.rc, 0) << ours.err;
    EXPECT_EQ(ours.out, ref.out);
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& a : v) s += (s.empty() ? "" : " ") + a;
    return s;
}

// ---- every option on the written models ------------------------------------------------------

const std::vector<std::vector<std::string>> option_sets{
    {},
    {"--xxh64"},
    {"--xxh3"},
    {"--sha1"},
    {"--sha256"},
    {"--uuid"},
    {"--all"},
    {"--no-layer"},
    {"--all", "--xxh3"},
    {"--xxh3", "--all"},
    {"--all", "--uuid", "--no-layer"},
    {"--sha256", "--xxh3", "--xxh64", "--uuid"},  // printed in xxh64, xxh3, sha1, sha256 order whatever the flag order
    {"--all", "--xxh3", "--uuid"},
    {"--uuid", "--no-layer"},
    {"--sha1", "--sha1", "--xxh64"},  // a kind given twice prints once
};

std::string option_name(const ::testing::TestParamInfo<std::size_t>& info) {
    std::string n = "opt" + std::to_string(info.param);
    for (const std::string& a : option_sets[info.param])
        for (char c : a)
            if (std::isalnum(static_cast<unsigned char>(c))) n += c;
    return n;
}

class HashOptions : public ::testing::TestWithParam<std::size_t> {};

TEST_P(HashOptions, MixedTypesAsReference) {
    MINFER_NEED_FIXTURES();
    expect_same(option_sets[GetParam()], hx().mixed, hx().dir);
}
TEST_P(HashOptions, Alignment64AsReference) {
    MINFER_NEED_FIXTURES();
    expect_same(option_sets[GetParam()], hx().a64, hx().dir);
}
TEST_P(HashOptions, NoTensorsAsReference) {
    MINFER_NEED_FIXTURES();
    expect_same(option_sets[GetParam()], hx().empty, hx().dir);
}
TEST_P(HashOptions, SplitSetAsReference) {
    MINFER_NEED_SPLIT();
    expect_same(option_sets[GetParam()], hx().split1, hx().dir);
}
INSTANTIATE_TEST_SUITE_P(Hash, HashOptions, ::testing::Range<std::size_t>(0, option_sets.size()), option_name);

// Thread counts change nothing (ours only: the reference has no such option).
TEST(Hash, ThreadsDoNotChangeOutput) {
    MINFER_NEED_FIXTURES();
    const run_result ref = reference({"--all", "--xxh3", "--uuid", hx().mixed}, hx().dir);
    ASSERT_EQ(ref.rc, 0) << ref.err;
    for (const char* n : {"1", "2", "3", "8"}) {
        SCOPED_TRACE(n);
        const run_result r = tool({"hash", "--all", "--xxh3", "--uuid", "--threads", n, hx().mixed}, hx().dir);
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, ref.out);
    }
}

// `--quiet` (no progress line) changes nothing on stdout.
TEST(Hash, QuietChangesNothingOnStdout) {
    MINFER_NEED_FIXTURES();
    expect_same({"--sha1"}, hx().mixed, hx().dir, {"--quiet"});
}

// What the hand can check: the empty stream's digests, known from each algorithm's own test vectors
// (xxh64 / xxh3 of no bytes as xxhsum prints them, SHA-1 and SHA-256 of ""), and the uuid of the
// namespace alone, worked out once with hashlib: sha1(ef001206…e5)[:16] with version 5 and variant 10.
TEST(Hash, NoTensorsKnownVectors) {
    MINFER_NEED_FIXTURES();
    const run_result r = tool({"hash", "--all", "--xxh3", "--uuid", hx().empty}, hx().dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    const run_result u = spawn_in({MINFER_PYTHON3, "-c",
                                   "import hashlib;u=bytearray(hashlib.sha1(bytes.fromhex('ef001206dadc5f6da15f3359e577d4e5'))"
                                   ".digest()[:16]);u[6]=u[6]&15|80;u[8]=u[8]&63|128;h=u.hex();"
                                   "print(h[:8]+'-'+h[8:12]+'-'+h[12:16]+'-'+h[16:20]+'-'+h[20:])"});
    ASSERT_EQ(u.rc, 0) << u.err;
    EXPECT_EQ(r.out,
              "xxh64     ef46db3751d8e999  empty.gguf\n"
              "xxh3      2d06800538d394c2  empty.gguf\n"
              "sha1      da39a3ee5e6b4b0d3255bfef95601890afd80709  empty.gguf\n"
              "sha256    e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.gguf\n"
              "uuid      " + u.out.substr(0, 36) + "  empty.gguf\n");
}

// The per-tensor lines of a small tensor, by hand: `printf("%-8s  %s  %s\n")` and the xxh64 of its
// bytes from xxhsum directly (no reference script in between).
TEST(Hash, LineFormatByHand) {
    MINFER_NEED_FIXTURES();
    const fs::path bytes_file = hx().dir / "tail.bin";
    const auto data = noise(spec_bytes(mixed_tensors().back()), mixed_tensors().size());
    write_file(bytes_file, std::string(reinterpret_cast<const char*>(data.data()), data.size()));
    const run_result x = spawn_in({MINFER_XXHSUM, "-H1", bytes_file.string()});
    ASSERT_EQ(x.rc, 0) << x.err;
    const std::string hex = x.out.substr(0, 16);
    const run_result r = tool({"hash", hx().mixed}, hx().dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "xxh64     " + hex + "  mixed.gguf:tail.weight")) << r.out;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), mixed_tensors().size() + 1);
    EXPECT_EQ(lines.back().substr(0, 10), "xxh64     ");
    EXPECT_EQ(lines.back().substr(26), "  mixed.gguf");
}

// --all is upstream master's (xxh64, sha1, sha256: master has no xxh3, and uuid is never in it);
// the xxh3 branch's --all (xxh64, xxh3, sha1, sha256) is --all --xxh3. Both, line by line in order.
TEST(Hash, AllIsMastersAndAllXxh3IsTheBranchs) {
    MINFER_NEED_FIXTURES();
    const auto kinds_of = [](const std::string& out) {
        std::vector<std::string> k;
        for (const std::string& l : lines_of(out)) k.push_back(l.substr(0, l.find(' ')));
        return k;
    };
    const run_result master = tool({"hash", "--all", "--no-layer", hx().mixed}, hx().dir);
    ASSERT_EQ(master.rc, 0) << master.err;
    EXPECT_EQ(kinds_of(master.out), (std::vector<std::string>{"xxh64", "sha1", "sha256"})) << master.out;
    const run_result branch = tool({"hash", "--all", "--xxh3", "--no-layer", hx().mixed}, hx().dir);
    ASSERT_EQ(branch.rc, 0) << branch.err;
    EXPECT_EQ(kinds_of(branch.out), (std::vector<std::string>{"xxh64", "xxh3", "sha1", "sha256"})) << branch.out;
    // Per tensor too: each tensor's lines in the branch's order, then the model's.
    const run_result layers = tool({"hash", "--xxh3", "--all", hx().mixed}, hx().dir);
    const auto k = kinds_of(layers.out);
    ASSERT_GE(k.size(), 8u);
    EXPECT_EQ(std::vector<std::string>(k.begin(), k.begin() + 4),
              (std::vector<std::string>{"xxh64", "xxh3", "sha1", "sha256"}));
    EXPECT_EQ(layers.out.find("uuid"), std::string::npos);
}

// ---- paths as typed, split sets and the merged model ------------------------------------------

TEST(Hash, PathAsTypedDotSlash) {
    MINFER_NEED_FIXTURES();
    expect_same({"--all", "--uuid"}, "./mixed.gguf", hx().dir);
    const run_result r = tool({"hash", "./mixed.gguf"}, hx().dir);
    EXPECT_NE(r.out.find("  ./mixed.gguf:token_embd.weight\n"), std::string::npos) << r.out;
}

TEST(Hash, PathAsTypedAbsoluteAndDotDot) {
    MINFER_NEED_FIXTURES();
    expect_same({"--sha256"}, (hx().dir / hx().mixed).string(), {});
    expect_same({"--xxh3"}, "../mixed.gguf", hx().dir / "split");
}

// Replace every occurrence of `from` (a PATH text) in the lines by `to`.
std::string renamed(std::string text, const std::string& from, const std::string& to) {
    std::string out;
    for (const std::string& l : lines_of(text)) {
        std::string line = l;
        const std::size_t at = line.find("  " + from);
        if (at != std::string::npos) line = line.substr(0, at) + "  " + to + line.substr(at + 2 + from.size());
        out += line + "\n";
    }
    return out;
}

// A split set hashes like the same model merged: per-tensor and whole-model lines equal, except
// the PATH text; both equal the original model's.
TEST(Hash, SplitSetEqualsMergedModel) {
    MINFER_NEED_SPLIT();
    const std::vector<std::string> kinds{"hash", "--all", "--xxh3", "--uuid"};
    auto with = [&](const std::string& m) {
        auto a = kinds;
        a.push_back(m);
        return tool(a, hx().dir);
    };
    const run_result split = with(hx().split1), merged = with(hx().merged), orig = with(hx().mixed);
    ASSERT_EQ(split.rc, 0) << split.err;
    ASSERT_EQ(merged.rc, 0) << merged.err;
    ASSERT_EQ(orig.rc, 0) << orig.err;
    EXPECT_EQ(renamed(split.out, hx().split1, "M"), renamed(merged.out, hx().merged, "M"));
    EXPECT_EQ(renamed(orig.out, hx().mixed, "M"), renamed(merged.out, hx().merged, "M"));
    EXPECT_EQ(lines_of(split.out).size(), mixed_tensors().size() * 4 + 5);
}

// ---- the real fixtures --------------------------------------------------------------------------

fs::path real_dir() { return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real"; }

std::vector<std::string> real_files() {
    std::vector<std::string> v;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(real_dir(), ec))
        if (e.path().extension() == ".gguf") v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    if (v.empty()) v.push_back("");  // one instance, which skips loudly
    return v;
}

std::string real_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string n;
    for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return n.empty() ? "absent" : n;
}

class HashReal : public ::testing::TestWithParam<std::string> {};

// Accepted files: identical output for three option sets. Files the reference's parser refuses
// (bad magic, v1, truncated strings, wrong offsets): the loader refuses them too, exit 1.
TEST_P(HashReal, AsReference) {
    MINFER_NEED_REFERENCE();
    if (GetParam().empty()) GTEST_SKIP() << "SKIPPED: no real fixtures at " << real_dir();
    const std::string f = GetParam();
    const run_result probe = reference({f}, real_dir());
    if (probe.rc != 0) {
        ASSERT_EQ(probe.rc, 1) << probe.err;
        const run_result r = tool({"hash", f}, real_dir());
        EXPECT_EQ(r.rc, 1) << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.err.find("Error: failed to parse GGUF: "), std::string::npos) << r.err;
        return;
    }
    const run_result ours = tool({"hash", f}, real_dir());
    EXPECT_EQ(ours.rc, 0) << ours.err;
    EXPECT_EQ(ours.out, probe.out);
    for (const std::vector<std::string>& opts :
         {std::vector<std::string>{"--all", "--xxh3", "--uuid"}, {"--sha256", "--no-layer"}}) {
        SCOPED_TRACE(join(opts));
        expect_same(opts, f, real_dir());
    }
}
INSTANTIATE_TEST_SUITE_P(Real, HashReal, ::testing::ValuesIn(real_files()), real_name);

// ---- --file-sha256 and --expect ---------------------------------------------------------------

run_result sha256sum(std::vector<std::string> files) {
    files.insert(files.begin(), MINFER_SHA256SUM);
    return spawn_in(files, hx().dir);
}

TEST(HashFileSha256, AloneIsSha256sumOutput) {
    MINFER_NEED_FIXTURES();
    const run_result want = sha256sum({hx().mixed});
    ASSERT_EQ(want.rc, 0);
    const run_result r = tool({"hash", "--file-sha256", hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, want.out);
    // What users do with it: save it and let sha256sum check the file.
    write_file(hx().dir / "m.sha256", r.out);
    const run_result c = spawn_in({MINFER_SHA256SUM, "-c", "m.sha256"}, hx().dir);
    EXPECT_EQ(c.rc, 0) << c.out << c.err;
    EXPECT_EQ(c.out, "mixed.gguf: OK\n");
}

TEST(HashFileSha256, SplitSetOneLinePerPart) {
    MINFER_NEED_SPLIT();
    const run_result want = sha256sum(hx().split_parts);
    ASSERT_EQ(want.rc, 0);
    const run_result r = tool({"hash", "--file-sha256", hx().split1}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, want.out);
    EXPECT_EQ(lines_of(r.out).size(), 4u);
}

TEST(HashFileSha256, AfterTheHashLines) {
    MINFER_NEED_SPLIT();
    expect_same({"--all", "--uuid", "--file-sha256"}, hx().mixed, hx().dir);
    expect_same({"--xxh3", "--no-layer", "--file-sha256"}, hx().split1, hx().dir);
    expect_same({"--file-sha256"}, hx().empty, hx().dir);
    const run_result r = tool({"hash", "--sha1", "--file-sha256", hx().mixed}, hx().dir);
    const run_result s = sha256sum({hx().mixed});
    ASSERT_GE(r.out.size(), s.out.size());
    EXPECT_EQ(r.out.substr(r.out.size() - s.out.size()), s.out);
}

std::string sum_of(const std::string& file) {
    const run_result s = sha256sum({file});
    return s.out.substr(0, 64);
}

TEST(HashFileSha256, ExpectRight) {
    MINFER_NEED_FIXTURES();
    const run_result r = tool({"hash", "--expect", sum_of(hx().mixed), hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "mixed.gguf: OK")) << r.out;
    EXPECT_FALSE(has_line(r.out, "mixed.gguf: FAILED")) << r.out;
    const run_result ref = reference({"--expect", sum_of(hx().mixed), hx().mixed}, hx().dir);
    EXPECT_EQ(r.out, ref.out);
}

TEST(HashFileSha256, ExpectUppercaseHexIsAccepted) {
    MINFER_NEED_FIXTURES();
    std::string hex = sum_of(hx().mixed);
    for (char& c : hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const run_result r = tool({"hash", "--expect", hex, hx().mixed}, hx().dir);
    // sha256sum -c accepts either case, and so does `verify --file-sha256`: the same forms here.
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_TRUE(has_line(r.out, "mixed.gguf: OK")) << r.out;
    hex[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(hex[0])));  // mixed case
    const run_result mixed = tool({"hash", "--expect", hex, hx().mixed}, hx().dir);
    EXPECT_EQ(mixed.rc, 0) << mixed.out << mixed.err;
    const run_result v = tool({"verify", hx().mixed, "--file-sha256", hex}, hx().dir);
    EXPECT_NE(v.rc, 2) << v.err;  // (1: the model's own NaN findings)
    EXPECT_NE(v.out.find("  mixed.gguf  ok\n"), std::string::npos) << v.out;
    // Not hex: a usage error from both, in the same words.
    hex[5] = 'g';
    const run_result bad = tool({"hash", "--expect", hex, hx().mixed}, hx().dir);
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("character 6 is not a hexadecimal digit (a SHA-256 is 64 hexadecimal digits, either case)"),
              std::string::npos)
        << bad.err;
    const run_result vbad = tool({"verify", hx().mixed, "--file-sha256", hex}, hx().dir);
    EXPECT_EQ(vbad.rc, 2);
    EXPECT_NE(vbad.err.find("character 6 is not a hexadecimal digit (a SHA-256 is 64 hexadecimal digits, either case)"),
              std::string::npos)
        << vbad.err;
}

TEST(HashFileSha256, ExpectCountIsWorded) {
    MINFER_NEED_SPLIT();
    const std::string hex = sum_of(hx().mixed);
    const run_result one = tool({"hash", "--expect", hex, hx().split1}, hx().dir);
    EXPECT_EQ(one.rc, 2);
    EXPECT_NE(one.err.find("--expect was given 1 time; the model has 4 part files"), std::string::npos) << one.err;
    const run_result two = tool({"hash", "--expect", hex, "--expect", hex, hx().mixed}, hx().dir);
    EXPECT_EQ(two.rc, 2);
    EXPECT_NE(two.err.find("--expect was given 2 times; the model has 1 part file:"), std::string::npos) << two.err;
}

TEST(HashFileSha256, ExpectWrong) {
    MINFER_NEED_FIXTURES();
    std::string hex = sum_of(hx().mixed);
    hex[10] = hex[10] == '0' ? '1' : '0';
    const run_result r = tool({"hash", "--expect", hex, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(has_line(r.out, "mixed.gguf: FAILED")) << r.out;
    const run_result ref = reference({"--expect", hex, hx().mixed}, hx().dir);
    EXPECT_EQ(r.out, ref.out);
}

TEST(HashFileSha256, ExpectSplitSetOneWrongPart) {
    MINFER_NEED_SPLIT();
    std::vector<std::string> args{"hash"};
    for (std::size_t i = 0; i < hx().split_parts.size(); ++i) {
        std::string hex = sum_of(hx().split_parts[i]);
        if (i == 2) hex[0] = hex[0] == 'a' ? 'b' : 'a';
        args.insert(args.end(), {"--expect", hex});
    }
    args.push_back(hx().split1);
    const run_result r = tool(args, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(has_line(r.out, "split/s-00001-of-00004.gguf: OK")) << r.out;
    EXPECT_TRUE(has_line(r.out, "split/s-00002-of-00004.gguf: OK")) << r.out;
    EXPECT_TRUE(has_line(r.out, "split/s-00003-of-00004.gguf: FAILED")) << r.out;
    EXPECT_TRUE(has_line(r.out, "split/s-00004-of-00004.gguf: OK")) << r.out;
    std::vector<std::string> ref_args(args.begin() + 1, args.end());
    EXPECT_EQ(r.out, reference(ref_args, hx().dir).out);
}

TEST(HashFileSha256, ExpectCountDifferentFromPartsIsUsage) {
    MINFER_NEED_SPLIT();
    const std::string h = sum_of(hx().mixed);
    EXPECT_EQ(tool({"hash", "--expect", h, "--expect", h, hx().mixed}, hx().dir).rc, 2);
    EXPECT_EQ(tool({"hash", "--expect", h, hx().split1}, hx().dir).rc, 2);
}

TEST(HashFileSha256, ExpectNotHexIsUsage) {
    MINFER_NEED_FIXTURES();
    EXPECT_EQ(tool({"hash", "--expect", "xyz", hx().mixed}, hx().dir).rc, 2);
    EXPECT_EQ(tool({"hash", "--expect", std::string(63, 'a'), hx().mixed}, hx().dir).rc, 2);
}

// ---- --check ------------------------------------------------------------------------------------

// The reference's lines for ARGS on MODEL (with --name NAME when given).
std::string ref_lines(std::vector<std::string> args, const std::string& model, const std::string& name = "") {
    if (!name.empty()) args.insert(args.end(), {"--name", name});
    args.push_back(model);
    const run_result r = reference(args, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.out;
}

std::string write_manifest(const std::string& file, const std::string& text) {
    write_file(hx().dir / file, text);
    return file;
}

// Lines with llama-gguf-hash's check suffix: `  -  <status>`, the status chosen per line.
std::string with_status(const std::string& lines, const std::function<std::string(const std::string&)>& status) {
    std::string out;
    for (const std::string& l : lines_of(lines)) out += l + "  -  " + status(l) + "\n";
    return out;
}
std::string all_ok(const std::string& lines) {
    return with_status(lines, [](const std::string&) { return std::string("Ok"); });
}

std::string header(const std::string& manifest, const std::string& kinds) {
    return "manifest  " + manifest + "  " + kinds + "\n";
}
std::string verdict(const std::string& manifest, const std::string& word) {
    return "\nVerification results for " + manifest + " - " + word + "\n";
}

// Lines without the ones naming `tensor` (exactly: PATH:tensor).
std::string without_tensor(const std::string& text, const std::string& tensor) {
    std::string out;
    for (const std::string& l : lines_of(text))
        if (l.size() < tensor.size() + 1 || l.substr(l.size() - tensor.size() - 1) != ":" + tensor) out += l + "\n";
    return out;
}

const std::string full_kinds = "sha256  sha1  xxh64  xxh3  uuid";

TEST(HashCheck, FullManifestStrongestKindSuccess) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("full.manifest", ref_lines({"--all", "--xxh3", "--uuid"}, hx().mixed));
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, header(m, full_kinds) + all_ok(ref_lines({"--sha256"}, hx().mixed)) + verdict(m, "Success"));
}

TEST(HashCheck, UserKindsOverrideTheStrongest) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("full2.manifest", ref_lines({"--all", "--xxh3", "--uuid"}, hx().mixed));
    const run_result r = tool({"hash", "--check", m, "--xxh64", "--xxh3", "--uuid", hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, header(m, full_kinds) + all_ok(ref_lines({"--xxh64", "--xxh3", "--uuid"}, hx().mixed)) +
                         verdict(m, "Success"));
}

TEST(HashCheck, StrongestOfWhatIsPresent) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("x64sha1.manifest", ref_lines({"--xxh64", "--sha1"}, hx().a64));
    const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, header(m, "sha1  xxh64") + all_ok(ref_lines({"--sha1"}, hx().a64)) + verdict(m, "Success"));
    const std::string m3 = write_manifest("xxh3.manifest", ref_lines({"--xxh3"}, hx().a64));
    const run_result r3 = tool({"hash", "--check", m3, hx().a64}, hx().dir);
    EXPECT_EQ(r3.rc, 0) << r3.err;
    EXPECT_EQ(r3.out, header(m3, "xxh3") + all_ok(ref_lines({"--xxh3"}, hx().a64)) + verdict(m3, "Success"));
}

// Entries match by tensor name whatever the directory prefix (llama-gguf-hash needs the same string).
TEST(HashCheck, PathPrefixInManifestIgnored) {
    MINFER_NEED_FIXTURES();
    const std::string m =
        write_manifest("prefix.manifest", ref_lines({"--sha256"}, hx().mixed, "/srv/models/downloads/mixed.gguf"));
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha256") + all_ok(ref_lines({"--sha256"}, hx().mixed)) + verdict(m, "Success"));
}

TEST(HashCheck, PathPrefixOnCommandLineIgnored) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("plain.manifest", ref_lines({"--sha1"}, hx().mixed));
    const run_result r = tool({"hash", "--check", m, "./mixed.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha1") + all_ok(ref_lines({"--sha1"}, "./mixed.gguf")) + verdict(m, "Success"));
}

// A manifest made for another file name (a renamed download) is used for this file.
TEST(HashCheck, RenamedFile) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("renamed.manifest", ref_lines({"--sha256"}, hx().mixed, "Original-Q4.gguf"));
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha256") + all_ok(ref_lines({"--sha256"}, hx().mixed)) + verdict(m, "Success"));
    EXPECT_NE(r.err.find("'Original-Q4.gguf'"), std::string::npos) << "a note says which name was taken: " << r.err;
}

TEST(HashCheck, MismatchInOneTensor) {
    MINFER_NEED_FIXTURES();
    std::string lines = ref_lines({"--sha256"}, hx().mixed);
    const std::string target = "  mixed.gguf:blk.0.ffn_up.weight\n";
    const std::size_t at = lines.find(target);
    ASSERT_NE(at, std::string::npos);
    std::string bad = lines;
    bad[at - 1] = bad[at - 1] == '0' ? '1' : '0';  // the last hex digit of that tensor's hash
    const std::string m = write_manifest("mismatch.manifest", bad);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    const std::string want = with_status(lines, [](const std::string& l) {
        return std::string(l.ends_with(":blk.0.ffn_up.weight") ? "Mismatch" : "Ok");
    });
    EXPECT_EQ(r.out, header(m, "sha256") + want + verdict(m, "Failure"));
}

TEST(HashCheck, MismatchInModelLine) {
    MINFER_NEED_FIXTURES();
    std::string lines = ref_lines({"--xxh64"}, hx().mixed);
    std::string bad = lines;
    const std::size_t last = bad.rfind("xxh64     ");
    bad[last + 10] = bad[last + 10] == 'f' ? 'e' : 'f';
    const std::string m = write_manifest("mismatch_model.manifest", bad);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    const std::string want = with_status(lines, [](const std::string& l) {
        return std::string(l.ends_with("  mixed.gguf") ? "Mismatch" : "Ok");
    });
    EXPECT_EQ(r.out, header(m, "xxh64") + want + verdict(m, "Failure"));
}

// Tensors that have no entry: llama-gguf-hash calls that a success; we report it (exit 7): their
// lines say Not Found and stderr counts them.
TEST(HashCheck, MissingEntries) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha256"}, hx().mixed);
    const std::string m = write_manifest("missing.manifest", without_tensor(lines, "blk.0.attn_k.weight"));
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 7) << r.err;
    const std::string want = with_status(lines, [](const std::string& l) {
        return std::string(l.ends_with(":blk.0.attn_k.weight") ? "Not Found" : "Ok");
    });
    EXPECT_EQ(r.out, header(m, "sha256") + want + verdict(m, "Tensors Missing From Manifest"));
    EXPECT_NE(r.err.find("1 of " + std::to_string(mixed_tensors().size()) + " tensors has no entry in " + m), std::string::npos)
        << r.err;
}

// Several kinds checked: a tensor is missing only when it has no entry of any of them.
TEST(HashCheck, MissingEntriesOfOneKindOnly) {
    MINFER_NEED_FIXTURES();
    const std::string x = ref_lines({"--xxh64"}, hx().a64), s1 = ref_lines({"--sha1"}, hx().a64);
    const std::string m = write_manifest("two_kinds.manifest", without_tensor(x, "b.weight") + s1);
    const run_result r = tool({"hash", "--check", m, "--xxh64", "--sha1", hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    const std::string want = with_status(ref_lines({"--xxh64", "--sha1"}, hx().a64), [](const std::string& l) {
        return std::string(l.starts_with("xxh64") && l.ends_with(":b.weight") ? "Not Found" : "Ok");
    });
    EXPECT_EQ(r.out, header(m, "sha1  xxh64") + want + verdict(m, "Success"));
}

// Entries for tensors the model does not have (exit 6): one line each after the model's lines, with
// the name and hash as the manifest has them.
TEST(HashCheck, ExtraEntries) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha256"}, hx().mixed);
    const std::string ghost = "sha256    " + std::string(64, 'a') + "  mixed.gguf:blk.9.ghost.weight";
    const std::string m = write_manifest("extra.manifest", lines + ghost + "\n");
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 6) << r.err;
    const std::string extra_line =
        ghost + "  -  No Such Tensor (manifest line " + std::to_string(lines_of(lines).size() + 1) + ")\n";
    EXPECT_EQ(r.out, header(m, "sha256") + all_ok(lines) + extra_line + verdict(m, "Unknown Tensors In Manifest"));
}

// Both: a tensor without entry and an entry without tensor. Unknown tensors come first (6 before 7).
TEST(HashCheck, ExtraAndMissingEntries) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha1"}, hx().a64);
    const std::string m = write_manifest(
        "extra_missing.manifest", without_tensor(lines, "c.weight") + "sha1      " + std::string(40, '7') + "  a64.gguf:zz\n");
    const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 6) << r.out << r.err;
    EXPECT_TRUE(r.out.ends_with(verdict(m, "Unknown Tensors In Manifest"))) << r.out;
    EXPECT_TRUE(has_line(r.out, lines_of(lines)[2] + "  -  Not Found")) << r.out;
}

// A mismatch outranks the incomplete and unknown-tensor outcomes.
TEST(HashCheck, MismatchOutranksMissingAndExtra) {
    MINFER_NEED_FIXTURES();
    std::string lines = without_tensor(ref_lines({"--sha1"}, hx().mixed), "tail.weight");
    const std::size_t at = lines.find("  mixed.gguf:token_embd.weight\n");
    ASSERT_NE(at, std::string::npos);
    lines[at - 1] = lines[at - 1] == '0' ? '1' : '0';
    lines += "sha1      " + std::string(40, 'b') + "  mixed.gguf:nope\n";
    const std::string m = write_manifest("worst.manifest", lines);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_TRUE(r.out.ends_with(verdict(m, "Failure"))) << r.out;
}

// Only the whole-model line: the model hash decides.
TEST(HashCheck, OnlyModelLine) {
    MINFER_NEED_FIXTURES();
    const std::string line = ref_lines({"--sha256", "--no-layer"}, hx().mixed);
    ASSERT_EQ(lines_of(line).size(), 1u);
    const std::string m = write_manifest("model_only.manifest", line);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    // As llama-gguf-hash: the tensors' lines are printed, Not Found; a manifest without tensor
    // entries is not incomplete.
    const std::string want = with_status(ref_lines({"--sha256"}, hx().mixed), [](const std::string& l) {
        return std::string(l.ends_with("  mixed.gguf") ? "Ok" : "Not Found");
    });
    EXPECT_EQ(r.out, header(m, "sha256") + want + verdict(m, "Success"));
    // With --no-layer, only the model line.
    const run_result n = tool({"hash", "--check", m, "--no-layer", hx().mixed}, hx().dir);
    EXPECT_EQ(n.rc, 0) << n.out << n.err;
    EXPECT_EQ(n.out, header(m, "sha256") + all_ok(line) + verdict(m, "Success"));
}

TEST(HashCheck, OnlyModelLineWrong) {
    MINFER_NEED_FIXTURES();
    const std::string line = ref_lines({"--sha256", "--no-layer"}, hx().mixed);
    std::string bad = line;
    bad[10] = bad[10] == '0' ? '1' : '0';
    const std::string m = write_manifest("model_only_bad.manifest", bad);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_TRUE(has_line(r.out, lines_of(line)[0] + "  -  Mismatch")) << r.out;
    EXPECT_TRUE(r.out.ends_with(verdict(m, "Failure"))) << r.out;
}

// A uuid-only manifest is checked against the uuid (llama-gguf-hash looks it up as "sha256").
TEST(HashCheck, UuidOnly) {
    MINFER_NEED_FIXTURES();
    const std::string line = ref_lines({"--uuid"}, hx().mixed);
    ASSERT_EQ(lines_of(line).size(), 1u);
    ASSERT_EQ(line.substr(0, 10), "uuid      ");
    const std::string m = write_manifest("uuid.manifest", line);
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "uuid") + all_ok(line) + verdict(m, "Success"));

    std::string bad = line;
    bad[12] = bad[12] == '0' ? '1' : '0';
    const std::string mb = write_manifest("uuid_bad.manifest", bad);
    const run_result rb = tool({"hash", "--check", mb, hx().mixed}, hx().dir);
    EXPECT_EQ(rb.rc, 1) << rb.out;
    EXPECT_EQ(rb.out, header(mb, "uuid") + with_status(line, [](const std::string&) { return std::string("Mismatch"); }) +
                          verdict(mb, "Failure"));
}

TEST(HashCheck, UnknownTypesOnly) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("unknown.manifest",
                                         "md5       0123456789abcdef0123456789abcdef  mixed.gguf\n"
                                         "crc32     deadbeef  mixed.gguf:token_embd.weight\n\n"
                                         "just some words\n");
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 4) << r.err;
    // llama-gguf-hash's words (it prints "ERROR manifest …" on stdout, without a newline); ours is an
    // error message on stderr.
    EXPECT_NE(r.err.find("manifest does not have any known hash format in " + m), std::string::npos) << r.out << r.err;
}

TEST(HashCheck, EmptyManifestHasNoKnownType) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("empty.manifest", "");
    EXPECT_EQ(tool({"hash", "--check", m, hx().mixed}, hx().dir).rc, 4);
}

// Lines of unknown types are skipped among known ones (as llama-gguf-hash does).
TEST(HashCheck, UnknownTypesAmongKnownSkipped) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha1"}, hx().a64);
    const std::string m = write_manifest("mixed_types.manifest", "# made by hand\nmd5  0011  a64.gguf\n" + lines + "\n");
    const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha1") + all_ok(lines) + verdict(m, "Success"));
}

TEST(HashCheck, ManifestMissing) {
    MINFER_NEED_FIXTURES();
    const run_result r = tool({"hash", "--check", "no-such.manifest", hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 5) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("no-such.manifest"), std::string::npos) << r.out << r.err;
}

TEST(HashCheck, ManifestIsADirectory) {
    MINFER_NEED_FIXTURES();
    EXPECT_EQ(tool({"hash", "--check", "split", hx().mixed}, hx().dir).rc, 5);
}

TEST(HashCheck, MalformedLineOfKnownType) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha256"}, hx().a64);
    for (const std::string& bad : {std::string("sha256    nothex  a64.gguf:a.weight\n"),
                                   "sha256    " + std::string(63, 'a') + "  a64.gguf:a.weight\n",  // one digit short
                                   "xxh64     " + std::string(16, 'A') + "  a64.gguf:a.weight\n",  // uppercase
                                   std::string("uuid      0123456789abcdef0123456789abcdef0123  a64.gguf\n"),  // not 8-4-4-4-12
                                   std::string("sha1      ") + std::string(40, 'c') + "\n"}) {      // no name
        SCOPED_TRACE(bad);
        const std::string m = write_manifest("malformed.manifest", lines + bad);
        const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
        EXPECT_EQ(r.rc, 5) << r.out << r.err;
        EXPECT_NE((r.out + r.err).find("malformed.manifest"), std::string::npos) << r.out << r.err;
    }
}

// A file name with spaces: the manifest's name is the rest of its line (llama-gguf-hash would take
// the first word only and find nothing).
TEST(HashCheck, NameWithSpaces) {
    MINFER_NEED_FIXTURES();
    fs::copy_file(hx().dir / hx().a64, hx().dir / "my model.gguf", fs::copy_options::overwrite_existing);
    const std::string lines = ref_lines({"--sha1"}, "my model.gguf");
    ASSERT_NE(lines.find("  my model.gguf:a.weight\n"), std::string::npos) << lines;
    // Two files in it, so the match must be by name (not "the one file the manifest names").
    const std::string m = write_manifest("spaces.manifest", lines + ref_lines({"--sha1"}, hx().a64, "other.gguf"));
    const run_result r = tool({"hash", "--check", m, "my model.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha1") + all_ok(lines) + verdict(m, "Success"));
}

// Over 256 MiB: refused by its size (a sparse file: nothing is written or read).
TEST(HashCheck, ManifestTooLarge) {
    MINFER_NEED_FIXTURES();
    const fs::path big = hx().dir / "huge.manifest";
    write_file(big, ref_lines({"--sha1"}, hx().a64));
    fs::resize_file(big, (std::uintmax_t{256} << 20) + 1);
    const run_result r = tool({"hash", "--check", "huge.manifest", hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 5) << r.out << r.err;
    fs::remove(big);
}

// Two entries for the same tensor and kind with different hashes: a conflict, exit 1, whichever
// comes first; the later one is shown with its line number.
TEST(HashCheck, ConflictingDuplicates) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--sha256"}, hx().a64);
    const std::string other = "sha256    " + std::string(64, 'e') + "  a64.gguf:b.weight";
    {
        const std::string m = write_manifest("dup1.manifest", lines + other + "\n");
        const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
        EXPECT_EQ(r.rc, 1) << r.out << r.err;
        EXPECT_EQ(r.out, header(m, "sha256") + all_ok(lines) + other + "  -  Conflicting Entry (manifest line 5)\n" +
                             verdict(m, "Failure"));
    }
    {
        const std::string m = write_manifest("dup2.manifest", other + "\n" + lines);
        const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
        EXPECT_EQ(r.rc, 1) << r.out << r.err;
        EXPECT_TRUE(has_line(r.out, lines_of(lines)[1] + "  -  Mismatch")) << r.out;  // compared with the first entry
        EXPECT_TRUE(r.out.ends_with(verdict(m, "Failure"))) << r.out;
    }
    // The same entry twice is no conflict.
    const std::string m = write_manifest("dup_same.manifest", lines + lines);
    const run_result r = tool({"hash", "--check", m, hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha256") + all_ok(lines) + verdict(m, "Success"));
}

// Entries only for other files: nothing to check this file against (exit 3).
TEST(HashCheck, NoEntriesForThisFile) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("others.manifest", ref_lines({"--sha1"}, hx().a64, "first.gguf") +
                                                                ref_lines({"--sha1"}, hx().a64, "second.gguf"));
    const run_result r = tool({"hash", "--check", m, hx().mixed}, hx().dir);
    EXPECT_EQ(r.rc, 3) << r.out << r.err;
    EXPECT_TRUE(r.out.ends_with(verdict(m, "Manifest Missing Entry"))) << r.out;
}

// Entries of another kind than the one asked for: none to check (exit 3).
TEST(HashCheck, NoEntriesOfTheAskedKind) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("sha1only.manifest", ref_lines({"--sha1"}, hx().a64));
    const run_result r = tool({"hash", "--check", m, "--xxh64", hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 3) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "sha1") +
                         with_status(ref_lines({"--xxh64"}, hx().a64), [](const std::string&) { return std::string("Not Found"); }) +
                         verdict(m, "Manifest Missing Entry"));
}

// A split set checked against the merged model's manifest.
TEST(HashCheck, SplitSetAgainstMergedManifest) {
    MINFER_NEED_SPLIT();
    const std::string m = write_manifest("merged.manifest", ref_lines({"--all", "--uuid"}, hx().merged));
    const run_result r = tool({"hash", "--check", m, hx().split1}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_TRUE(r.out.find(all_ok(ref_lines({"--sha256"}, hx().split1))) != std::string::npos) << r.out;
    EXPECT_TRUE(r.out.ends_with(verdict(m, "Success"))) << r.out;
}

// The model and its manifest from a reference run in another directory, checked from here.
TEST(HashCheck, ManifestPathAsTypedInHeader) {
    MINFER_NEED_FIXTURES();
    write_manifest("split/sub.manifest", ref_lines({"--xxh64"}, hx().a64));
    const run_result r = tool({"hash", "--check", "split/sub.manifest", hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_TRUE(r.out.starts_with("manifest  split/sub.manifest  xxh64\n")) << r.out;
    EXPECT_TRUE(r.out.ends_with(verdict("split/sub.manifest", "Success"))) << r.out;
}

TEST(HashCheck, ModelMissingIsIoError8) {
    MINFER_NEED_FIXTURES();
    const std::string m = write_manifest("io.manifest", ref_lines({"--xxh64"}, hx().a64));
    const run_result r = tool({"hash", "--check", m, "no-such-model.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 8) << r.out << r.err;
}

// Both checks in one run: the manifest's lines and verdict, then the file lines and OK/FAILED; a
// failed --expect makes a successful check exit 1.
TEST(HashCheck, WithExpect) {
    MINFER_NEED_FIXTURES();
    const std::string lines = ref_lines({"--xxh64"}, hx().a64);
    const std::string m = write_manifest("with_expect.manifest", lines);
    const std::string sum = sum_of(hx().a64);
    const run_result r = tool({"hash", "--check", m, "--expect", sum, hx().a64}, hx().dir);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, header(m, "xxh64") + all_ok(lines) + verdict(m, "Success") + sum + "  a64.gguf\n" +
                         "a64.gguf: OK\n");
    std::string wrong = sum;
    wrong[63] = wrong[63] == '0' ? '1' : '0';
    const run_result w = tool({"hash", "--check", m, "--expect", wrong, hx().a64}, hx().dir);
    EXPECT_EQ(w.rc, 1) << w.out << w.err;
    EXPECT_TRUE(w.out.ends_with(verdict(m, "Success") + sum + "  a64.gguf\n" + "a64.gguf: FAILED\n")) << w.out;
}

// ---- invalid files and usage ----------------------------------------------------------------------

TEST(HashErrors, TruncatedModel) {
    MINFER_NEED_FIXTURES();
    const fs::path t = hx().dir / "truncated.gguf";
    fs::copy_file(hx().dir / hx().mixed, t, fs::copy_options::overwrite_existing);
    fs::resize_file(t, fs::file_size(t) - 1000);
    const run_result r = tool({"hash", "--sha256", "truncated.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("Error: failed to parse GGUF: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[data_truncated]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated.gguf"), std::string::npos) << r.err;
    EXPECT_EQ(reference({"--sha256", "truncated.gguf"}, hx().dir).rc, 1);  // the reference agrees it is broken
    // --check and --file-sha256 refuse it the same way.
    const std::string m = write_manifest("t.manifest", ref_lines({"--xxh64"}, hx().a64, "truncated.gguf"));
    EXPECT_EQ(tool({"hash", "--check", m, "truncated.gguf"}, hx().dir).rc, 1);
    EXPECT_EQ(tool({"hash", "--file-sha256", "truncated.gguf"}, hx().dir).rc, 1);
}

TEST(HashErrors, SplitSetMissingPartIsIo) {
    MINFER_NEED_SPLIT();
    const fs::path d = hx().dir / "split_missing";
    fs::create_directories(d);
    for (int i = 1; i <= 3; ++i)
        fs::copy_file(hx().dir / hx().split_parts[static_cast<std::size_t>(i - 1)],
                      d / fs::path(hx().split_parts[static_cast<std::size_t>(i - 1)]).filename(),
                      fs::copy_options::overwrite_existing);
    const run_result r = tool({"hash", "split_missing/s-00001-of-00004.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(HashErrors, NotAModel) {
    MINFER_NEED_FIXTURES();
    write_file(hx().dir / "notes.txt", "not a model\n");
    const run_result r = tool({"hash", "notes.txt"}, hx().dir);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_NE(r.err.find("[bad_magic]"), std::string::npos) << r.err;
}

TEST(HashErrors, MissingModelIsIo) {
    MINFER_NEED_FIXTURES();
    const run_result r = tool({"hash", "nothing-here.gguf"}, hx().dir);
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("nothing-here.gguf"), std::string::npos) << r.err;
}

TEST(HashErrors, Usage) {
    MINFER_NEED_FIXTURES();
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"hash"},
             {"hash", "--sha256"},
             {"hash", "--bogus", "mixed.gguf"},
             {"hash", "mixed.gguf", "a64.gguf"},
             {"hash", "mixed.gguf", "--check"},
             {"hash", "mixed.gguf", "--expect"},
             {"hash", "mixed.gguf", "--threads", "many"},
         }) {
        SCOPED_TRACE(join(args));
        const run_result r = tool(args, hx().dir);
        EXPECT_EQ(r.rc, 2) << r.out << r.err;
        EXPECT_EQ(r.out, "");
    }
}

TEST(HashErrors, Help) {
    const run_result r = tool({"hash", "--help"});
    EXPECT_EQ(r.rc, 0) << r.err;
    for (const char* opt : {"--xxh64", "--xxh3", "--sha1", "--sha256", "--uuid", "--all", "--no-layer", "--check",
                            "--file-sha256", "--expect", "--threads", "--quiet"})
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

}  // namespace
}  // namespace minfer_cli_test
