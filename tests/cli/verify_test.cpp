// `minfer verify`, through the real binary: the exit codes (0 clean, 1 findings or invalid file,
// 2 usage, 3 I/O), text and JSON, a truncated file, a split set made with `minfer split`,
// --manifest (lines computed here by Python's hashlib from a GGUF reader of the test's own, never by
// minfer) and --file-sha256 (expected from sha256sum), and the real fixtures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "cli_support.hpp"

namespace minfer_cli_test {
namespace {

// stdout of a shell command (Python, sha256sum); "" when it fails.
std::string capture(const std::string& cmd) {
    std::string out;
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (::pclose(p) != 0) return {};
    return out;
}

std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// A manifest as llama-gguf-hash writes it ("%-8s  %s  %s": sha256 of each tensor's bytes, then of
// all of them in file order), computed by Python from the file: a GGUF reader written here, for the
// types these tests use, and hashlib. For a split set, the parts' tensors in part order. It also
// prints "# nonfinite N" (NaN/Inf f32/f16/bf16 elements, by struct and math).
const char* manifest_py = R"PY(
import hashlib, math, os, struct, sys
SIZES = {0:(1,4), 1:(1,2), 2:(32,18), 8:(32,34), 24:(1,1), 25:(1,2), 26:(1,4), 28:(1,8), 30:(1,2), 39:(32,17)}
SCAL = {0:1, 1:1, 2:2, 3:2, 4:4, 5:4, 6:4, 7:1, 10:8, 11:8, 12:8}
def tensors(path):
    b = open(path, 'rb').read()
    assert b[:4] == b'GGUF'
    pos = 8
    nt, nkv = struct.unpack_from('<qq', b, pos); pos += 16
    def rstr(p):
        n, = struct.unpack_from('<Q', b, p); return b[p+8:p+8+n], p + 8 + n
    def skip(t, p):
        if t == 8: return rstr(p)[1]
        if t == 9:
            et, n = struct.unpack_from('<IQ', b, p); p += 12
            for _ in range(n): p = skip(et, p)
            return p
        return p + SCAL[t]
    align = 32
    for _ in range(nkv):
        k, pos = rstr(pos)
        t, = struct.unpack_from('<I', b, pos); pos += 4
        if k == b'general.alignment': align, = struct.unpack_from('<I', b, pos)
        pos = skip(t, pos)
    infos = []
    for _ in range(nt):
        name, pos = rstr(pos)
        nd, = struct.unpack_from('<I', b, pos); pos += 4
        ne = struct.unpack_from('<%dQ' % nd, b, pos); pos += 8 * nd
        ty, off = struct.unpack_from('<IQ', b, pos); pos += 12
        n = math.prod(ne); be, bb = SIZES[ty]
        infos.append((name.decode(), ty, off, n // be * bb))
    data = (pos + align - 1) // align * align
    return [(name, ty, b[data + off:data + off + nb]) for name, ty, off, nb in infos]
first = sys.argv[1]
label = os.path.basename(first)
model = hashlib.sha256()
bad = 0
for part in sys.argv[1:]:
    for name, ty, data in tensors(part):
        print('%-8s  %s  %s:%s' % ('sha256', hashlib.sha256(data).hexdigest(), label, name))
        model.update(data)
        if ty == 0: vals = struct.unpack('<%df' % (len(data) // 4), data)
        elif ty == 1: vals = struct.unpack('<%de' % (len(data) // 2), data)
        elif ty == 30: vals = [struct.unpack('<f', struct.pack('<I', h << 16))[0] for h in struct.unpack('<%dH' % (len(data) // 2), data)]
        else: vals = []
        bad += sum(1 for v in vals if not math.isfinite(v))
print('%-8s  %s  %s' % ('sha256', model.hexdigest(), label))
print('# nonfinite %d' % bad)
)PY";

// Debian's interpreter when it is there (a pyenv shim costs a second per start).
std::string python() { return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

std::string python_manifest(const std::vector<fs::path>& parts) {
    std::string cmd = python() + " -c " + sh_quote(manifest_py);
    for (const auto& p : parts) {
        cmd += ' ';
        cmd += sh_quote(p.string());  // not " " + …: GCC 12 -O3 warns falsely (-Wrestrict) on it
    }
    return capture(cmd);
}

std::string sha256sum(const fs::path& p) {
    const std::string out = capture("sha256sum " + sh_quote(p.string()));
    return out.substr(0, out.find(' '));
}

bool have_python() {
    static const bool ok = !capture(python() + " -c 'import hashlib, math; print(1)'").empty();
    return ok;
}

std::vector<std::byte> f32_bytes(const std::vector<std::uint32_t>& bits) {
    std::vector<std::byte> b(bits.size() * 4);
    std::memcpy(b.data(), bits.data(), b.size());
    return b;
}

std::vector<std::uint32_t> finite_f32(std::size_t n, std::uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<std::uint32_t> v(n);
    for (auto& x : v) {
        const float f = u(g);
        std::memcpy(&x, &f, 4);
    }
    return v;
}

// q4_0 blocks (18 bytes: f16 d, 16 bytes of nibbles) with d = 1.0, or the given d per block.
std::vector<std::byte> q4_0_blocks(const std::vector<std::uint16_t>& d) {
    std::vector<std::byte> b(d.size() * 18);
    for (std::size_t i = 0; i < d.size(); ++i) {
        std::memcpy(b.data() + i * 18, &d[i], 2);
        for (std::size_t j = 2; j < 18; ++j) b[i * 18 + j] = static_cast<std::byte>((i * 31 + j * 7) & 0xff);
    }
    return b;
}

struct verify_files {
    fs::path dir, clean, findings, zero, mx, truncated, split1;
    std::vector<fs::path> split_parts;

    verify_files() {
        dir = temp_root() / "verify";
        fs::create_directories(dir);
        const std::array<std::int64_t, 2> ne84{8, 4};
        const std::array<std::int64_t, 1> ne128{128};
        const std::array<std::int64_t, 1> ne8{8};
        {
            gguf::writer w;
            w.set_string("general.architecture", "llama");
            w.add_tensor("c.f32", gguf::tensor_type::f32, ne84, f32_bytes(finite_f32(32, 1)));
            w.add_tensor("c.q4_0", gguf::tensor_type::q4_0, ne128, q4_0_blocks({0x3c00, 0x3c00, 0x3c00, 0x3c00}));
            w.add_tensor("c.i32", gguf::tensor_type::i32, ne8, std::vector<std::byte>(32, std::byte{0xff}));
            clean = dir / "clean.gguf";
            must_write(w, clean);
        }
        {
            gguf::writer w;
            w.set_string("general.architecture", "llama");
            auto f = finite_f32(32, 2);
            f[5] = 0x7fc00000u;  // NaN at [5, 0]
            f[13] = 0x7f800000u;  // +Inf at [5, 1]
            w.add_tensor("n.f32", gguf::tensor_type::f32, ne84, f32_bytes(f));
            w.add_tensor("n.q4_0", gguf::tensor_type::q4_0, ne128, q4_0_blocks({0x3c00, 0x3c00, 0x7e00, 0x3c00}));
            std::vector<std::byte> bf(16);
            for (std::size_t i = 0; i < 8; ++i) bf[2 * i + 1] = std::byte{0x3f};  // 0x3f00: 0.5
            bf[6] = std::byte{0x80};
            bf[7] = std::byte{0xff};  // element 3: 0xff80, -Inf
            w.add_tensor("n.bf16", gguf::tensor_type::bf16, ne8, bf);
            findings = dir / "findings.gguf";
            must_write(w, findings);
        }
        {
            gguf::writer w;
            w.set_string("general.architecture", "llama");
            w.add_tensor("z.f32", gguf::tensor_type::f32, ne84, std::vector<std::byte>(128));
            w.add_tensor("c.f32", gguf::tensor_type::f32, ne84, f32_bytes(finite_f32(32, 3)));
            zero = dir / "zero.gguf";
            must_write(w, zero);
        }
        {
            // mxfp4 (17-byte blocks: E8M0 e, 16 bytes of nibbles): block 1 has e = 254 (finite) and
            // code 7 (12) at value 4: 12 * 2^126 overflows f32 (+Inf), seen only with --values.
            std::vector<std::byte> b(3 * 17, std::byte{0x11});
            for (std::size_t i = 0; i < 3; ++i) b[i * 17] = std::byte{127};
            b[17] = std::byte{254};
            b[17 + 1 + 4] = std::byte{0x17};
            gguf::writer w;
            w.set_string("general.architecture", "llama");
            const std::array<std::int64_t, 1> ne96{96};
            w.add_tensor("mx", gguf::tensor_type::mxfp4, ne96, b);
            mx = dir / "mx.gguf";
            must_write(w, mx);
        }
        {
            const std::string bytes = slurp(clean);
            truncated = dir / "truncated.gguf";
            write_file(truncated, bytes.substr(0, bytes.size() - 20));
        }
        const auto r = run({"split", findings.string(), (dir / "set").string(), "--split-max-tensors", "1"});
        if (r.rc != 0) throw std::runtime_error("minfer split failed: " + r.err);
        split1 = dir / "set-00001-of-00003.gguf";
        for (int i = 1; i <= 3; ++i) split_parts.push_back(dir / ("set-0000" + std::to_string(i) + "-of-00003.gguf"));
    }
};

const verify_files& vf() {
    static const verify_files f;
    return f;
}

std::string last_line(const std::string& s) {
    const auto lines = lines_of(s);
    return lines.empty() ? std::string() : lines.back();
}

TEST(CliVerify, CleanModelExits0) {
    const auto r = run({"verify", vf().clean.string()});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");  // no progress line: stderr is not a terminal
    EXPECT_EQ(r.out, "verified: 3 tensors, 232 bytes: clean\n");  // 128 + 4 * 18 + 32 bytes
}

TEST(CliVerify, FindingsText) {
    const auto r = run({"verify", vf().findings.string()});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out,
              "n.f32  element 5 [5, 0] = nan (0x7fc00000)  [f32]\n"
              "n.f32  element 13 [5, 1] = inf (0x7f800000)  [f32]\n"
              "n.q4_0  block 2  d = nan (0x7e00)  [q4_0 scale: the whole block is NaN]\n"
              "n.bf16  element 3 = -inf (0xff80)  [bf16]\n"
              "n.f32  f32: 1 NaN, 1 Inf of 32 elements\n"
              "n.q4_0  q4_0: 1 block with a NaN/Inf scale (1 NaN, 0 Inf field)\n"
              "n.bf16  bf16: 0 NaN, 1 Inf of 8 elements\n"
              "verified: 3 tensors, 216 bytes: 4 findings in 3 tensors\n");
}

TEST(CliVerify, MaxExamples) {
    const auto r = run({"verify", vf().findings.string(), "--max-examples", "1"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_FALSE(has_line(r.out, "n.f32  element 13 [5, 1] = inf (0x7f800000)  [f32]"));
    EXPECT_TRUE(has_line(r.out, "n.f32  f32: 1 NaN, 1 Inf of 32 elements  (1 more not shown; --max-examples)"));
}

TEST(CliVerify, FindingsJson) {
    const auto r = run({"verify", vf().findings.string(), "--json"});
    EXPECT_EQ(r.rc, 1) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["tensors"], 3);
    EXPECT_EQ(j["bytes"], 216);
    EXPECT_EQ(j["findings"], 4);
    EXPECT_EQ(j["tensors_with_findings"], 3);
    EXPECT_EQ(j["warnings"], 0);
    EXPECT_EQ(j["verdict"], "failed");
    EXPECT_EQ(j["exit_code"], 1);
    EXPECT_EQ(j["checked"]["elements"], 2);
    EXPECT_EQ(j["checked"]["scales"], 1);
    EXPECT_TRUE(j["manifest"].is_null());
    EXPECT_TRUE(j["file_sha256"].is_null());
    const json& t = j["tensor_reports"];
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0]["name"], "n.f32");
    EXPECT_EQ(t[0]["nan"], 1);
    EXPECT_EQ(t[0]["inf"], 1);
    EXPECT_EQ(t[0]["examples"][0]["index"], 5);
    EXPECT_EQ(t[0]["examples"][0]["value"], "nan");
    EXPECT_EQ(t[0]["examples"][0]["bits"], "0x7fc00000");
    EXPECT_EQ(t[1]["name"], "n.q4_0");
    EXPECT_EQ(t[1]["checked"], "scales");
    EXPECT_EQ(t[1]["blocks_poisoned"], 1);
    EXPECT_EQ(t[1]["examples"][0]["place"], "scale");
    EXPECT_EQ(t[1]["examples"][0]["field"], "d");
    EXPECT_EQ(t[1]["examples"][0]["index"], 2);
    EXPECT_EQ(t[2]["examples"][0]["value"], "-inf");
}

TEST(CliVerify, AllZeroIsAWarning) {
    const auto r = run({"verify", vf().zero.string()});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out,
              "z.f32  f32: warning: all 32 values are zero\n"
              "verified: 2 tensors, 256 bytes: clean (1 warning)\n");
    const auto j = json::parse(run({"verify", vf().zero.string(), "--json"}).out);
    EXPECT_EQ(j["warnings"], 1);
    EXPECT_EQ(j["tensor_reports"][0]["all_zero"], true);
    EXPECT_EQ(j["verdict"], "clean");
}

TEST(CliVerify, ValuesFindsOverflow) {
    const auto plain = run({"verify", vf().mx.string()});
    EXPECT_EQ(plain.rc, 0) << plain.out << plain.err;
    const auto r = run({"verify", vf().mx.string(), "--values"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(has_line(r.out, "mx  value 36 = inf (0x7f800000)  [mxfp4 converted to f32, its scales finite]")) << r.out;
    EXPECT_EQ(last_line(r.out), "verified: 1 tensor, 51 bytes: 1 finding in 1 tensor");
}

TEST(CliVerify, UsageErrors) {
    EXPECT_EQ(run({"verify"}).rc, 2);
    EXPECT_EQ(run({"verify", vf().clean.string(), "--bogus"}).rc, 2);
    EXPECT_EQ(run({"verify", vf().clean.string(), "--max-examples", "-1"}).rc, 2);
    EXPECT_EQ(run({"verify", vf().clean.string(), "--threads", "x"}).rc, 2);
    const auto bad = run({"verify", vf().clean.string(), "--file-sha256", "abc"});
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("--file-sha256 \"abc\": not a SHA-256"), std::string::npos) << bad.err;
    const std::string zeros(64, '0');
    const auto two = run({"verify", vf().clean.string(), "--file-sha256", zeros, "--file-sha256", zeros});
    EXPECT_EQ(two.rc, 2);
    EXPECT_NE(two.err.find("given 2 times but the model has 1 part"), std::string::npos) << two.err;
    // One value per option: a second word is the model, not a second hash.
    const auto before = run({"verify", "--file-sha256", sha256sum(vf().clean), vf().clean.string()});
    EXPECT_EQ(before.rc, 0) << before.err;
}

TEST(CliVerify, IoErrors) {
    const auto missing = run({"verify", (vf().dir / "nope.gguf").string()});
    EXPECT_EQ(missing.rc, 3);
    EXPECT_NE(missing.err.find("No such file or directory"), std::string::npos) << missing.err;
    const auto man = run({"verify", vf().clean.string(), "--manifest", (vf().dir / "nope.sha256").string()});
    EXPECT_EQ(man.rc, 3);
    EXPECT_EQ(run({"verify", vf().dir.string()}).rc, 3);
}

TEST(CliVerify, InvalidFilesExit1WithTheLoadersMessage) {
    const auto r = run({"verify", vf().truncated.string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("Error: failed to parse GGUF: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[data_truncated]"), std::string::npos) << r.err;
    EXPECT_EQ(run({"verify", fx().bad_magic.string()}).rc, 1);
}

TEST(CliVerify, SplitSetGivesTheSameFindings) {
    const auto whole = run({"verify", vf().findings.string()});
    const auto set = run({"verify", vf().split1.string(), "--threads", "2"});
    EXPECT_EQ(set.rc, 1) << set.err;
    auto a = lines_of(whole.out), b = lines_of(set.out);
    ASSERT_EQ(a.size(), b.size());
    a.pop_back();
    b.pop_back();
    EXPECT_EQ(a, b);
    EXPECT_EQ(last_line(set.out), "verified: 3 tensors, 216 bytes in 3 parts: 4 findings in 3 tensors");
    const auto clean_set = run({"verify", fx().split1.string()});
    EXPECT_EQ(clean_set.rc, 0);
    EXPECT_TRUE(has_line(clean_set.out, "verified: 3 tensors, 96 bytes in 3 parts: clean (3 warnings)")) << clean_set.out;
}

TEST(CliVerify, FileSha256) {
    const std::string hex = sha256sum(vf().clean);
    ASSERT_EQ(hex.size(), 64u) << "sha256sum failed";
    const auto ok = run({"verify", vf().clean.string(), "--file-sha256", hex});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_TRUE(has_line(ok.out, "file sha256: " + hex + "  " + vf().clean.string() + "  ok")) << ok.out;
    std::string upper = hex;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(run({"verify", vf().clean.string(), "--file-sha256", upper}).rc, 0);
    std::string wrong = hex;
    wrong[10] = wrong[10] == '0' ? '1' : '0';
    const auto bad = run({"verify", vf().clean.string(), "--file-sha256", wrong});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_TRUE(has_line(bad.out, "file sha256: " + hex + "  " + vf().clean.string() + "  MISMATCH, expected " + wrong));
    EXPECT_EQ(last_line(bad.out), "verified: 3 tensors, 232 bytes, with file SHA-256: file SHA-256 mismatch");
    const json j = json::parse(run({"verify", vf().clean.string(), "--file-sha256", wrong, "--json"}).out);
    EXPECT_EQ(j["file_sha256"][0]["sha256"], hex);
    EXPECT_EQ(j["file_sha256"][0]["match"], false);
    EXPECT_EQ(j["exit_code"], 1);

    // A split set: one hash per part, in part order.
    std::vector<std::string> args{"verify", vf().split1.string()};
    for (const auto& p : vf().split_parts) {
        args.push_back("--file-sha256");
        args.push_back(sha256sum(p));
    }
    const auto set = run(args);
    EXPECT_EQ(set.rc, 1);  // the values' findings; the hashes match
    for (const auto& p : vf().split_parts)
        EXPECT_TRUE(has_line(set.out, "file sha256: " + sha256sum(p) + "  " + p.string() + "  ok")) << set.out;
    std::swap(args[3], args[5]);  // parts 1 and 2 swapped
    const auto swapped = run(args);
    EXPECT_NE(swapped.out.find("MISMATCH"), std::string::npos);
    EXPECT_EQ(run({"verify", vf().split1.string(), "--file-sha256", sha256sum(vf().split1)}).rc, 2);
}

TEST(CliVerify, Manifest) {
    if (!have_python()) GTEST_SKIP() << "SKIPPED: python3 with hashlib is needed to compute the manifests";
    const std::string text = python_manifest({vf().clean});
    ASSERT_NE(text.find("# nonfinite 0"), std::string::npos) << text;
    const fs::path man = vf().dir / "clean.sha256";
    write_file(man, text);
    const auto ok = run({"verify", vf().clean.string(), "--manifest", man.string()});
    EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
    EXPECT_TRUE(has_line(ok.out, "manifest \"" + man.string() + "\": sha256 hashes, 4 of 4 lines match: Success")) << ok.out;
    EXPECT_EQ(last_line(ok.out), "verified: 3 tensors, 232 bytes, with manifest: clean");

    // A hash changed: mismatch, exit 1.
    std::string bad = text;
    const auto at = bad.find("  ", 8) + 2;  // the first line's hash
    bad[at] = bad[at] == '0' ? '1' : '0';
    write_file(vf().dir / "bad.sha256", bad);
    const auto mm = run({"verify", vf().clean.string(), "--manifest", (vf().dir / "bad.sha256").string()});
    EXPECT_EQ(mm.rc, 1);
    EXPECT_NE(mm.out.find("Mismatch (manifest line 1: "), std::string::npos) << mm.out;
    EXPECT_EQ(last_line(mm.out), "verified: 3 tensors, 232 bytes, with manifest: manifest Failure") << mm.out;
    const json j = json::parse(run({"verify", vf().clean.string(), "--manifest", (vf().dir / "bad.sha256").string(), "--json"}).out);
    EXPECT_EQ(j["manifest"]["outcome"], "Failure");
    EXPECT_EQ(j["manifest"]["mismatch"], 1);
    EXPECT_EQ(j["manifest"]["problems"][0]["tensor"], "c.f32");
    EXPECT_EQ(j["exit_code"], 1);

    // A tensor's line removed: the manifest is incomplete, exit 1.
    const auto lines = lines_of(text);
    std::string partial;
    for (std::size_t i = 1; i < lines.size(); ++i) partial += lines[i] + "\n";
    write_file(vf().dir / "partial.sha256", partial);
    const auto inc = run({"verify", vf().clean.string(), "--manifest", (vf().dir / "partial.sha256").string()});
    EXPECT_EQ(inc.rc, 1);
    EXPECT_TRUE(has_line(inc.out, "manifest: tensor c.f32 has no entry in \"" + (vf().dir / "partial.sha256").string() + "\"")) << inc.out;

    // No known hash type: exit 1; a malformed line: exit 1.
    write_file(vf().dir / "none.sha256", "md5  0123  clean.gguf\n");
    EXPECT_EQ(run({"verify", vf().clean.string(), "--manifest", (vf().dir / "none.sha256").string()}).rc, 1);
    write_file(vf().dir / "malformed.sha256", "sha256  xyz  clean.gguf\n");
    EXPECT_EQ(run({"verify", vf().clean.string(), "--manifest", (vf().dir / "malformed.sha256").string()}).rc, 1);
}

// A manifest is read up to 64 MiB (docs/CLI.md), whatever the file: /dev/zero is refused after at
// most the cap (it took 535 MB before), naming the cap with "more than".
TEST(CliVerify, ManifestIsCapped) {
    const peak hash = measure({"hash", "--check", "/dev/zero", vf().clean.string()}, "/dev/null");
    EXPECT_EQ(hash.rc, 5) << hash.err;
    EXPECT_NE(hash.err.find("/dev/zero: the manifest has more than 67108864 bytes, the most that is read "
                            "[manifest_too_large]"),
              std::string::npos)
        << hash.err;
    const peak verify = measure({"verify", vf().clean.string(), "--manifest", "/dev/zero"}, "/dev/null");
    EXPECT_EQ(verify.rc, 3) << verify.err;
    EXPECT_NE(verify.err.find("more than 67108864 bytes"), std::string::npos) << verify.err;
#ifndef MINFER_ASAN
    EXPECT_LT(hash.rss_kib, 128L * 1024) << "peak RSS of hash --check /dev/zero";
    EXPECT_LT(verify.rss_kib, 128L * 1024) << "peak RSS of verify --manifest /dev/zero";
#endif
}

TEST(CliVerify, ManifestOfTheMergedModelChecksTheSplitSet) {
    if (!have_python()) GTEST_SKIP() << "SKIPPED: python3 with hashlib is needed to compute the manifests";
    const std::string text = python_manifest({vf().findings});
    ASSERT_NE(text.find("# nonfinite 3"), std::string::npos) << text;  // Python sees the planted NaN/Infs too
    const fs::path man = vf().dir / "findings.sha256";
    write_file(man, text);
    const auto r = run({"verify", vf().split1.string(), "--manifest", man.string()});
    EXPECT_EQ(r.rc, 1);  // the planted values; the manifest matches
    EXPECT_NE(r.out.find("4 of 4 lines match"), std::string::npos) << r.out;
    EXPECT_EQ(last_line(r.out), "verified: 3 tensors, 216 bytes in 3 parts, with manifest: 4 findings in 3 tensors");
}

// On a terminal (a pseudo-terminal made by util-linux's `script`) the progress line is drawn and
// erased; --quiet draws nothing. Without a terminal (every other test) stderr stays empty.
TEST(CliVerify, ProgressOnATerminalOnly) {
    if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "SKIPPED: util-linux `script` not found";
    auto under_tty = [&](const std::string& extra) {
        const std::string inner = std::string("'") + MINFER_EXE + "' verify '" + vf().clean.string() + "' " + extra;
        return capture("script -qec \"" + inner + "\" /dev/null 2>&1");
    };
    const std::string drawn = under_tty("");
    EXPECT_NE(drawn.find("\rverify clean.gguf"), std::string::npos) << drawn;
    EXPECT_NE(drawn.find("\r\33[K"), std::string::npos) << "the line is erased at the end";
    EXPECT_NE(drawn.find("verified: 3 tensors, 232 bytes: clean"), std::string::npos) << drawn;
    const std::string quiet = under_tty("--quiet");
    EXPECT_EQ(quiet.find("\rverify"), std::string::npos) << quiet;  // (the terminal ends lines with \r\n)
    EXPECT_EQ(quiet.find("\33[K"), std::string::npos) << quiet;
    EXPECT_NE(quiet.find("verified: 3 tensors, 232 bytes: clean"), std::string::npos) << quiet;
}

fs::path real_dir() { return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real"; }

TEST(CliVerify, RealFixtures) {
    const fs::path dir = real_dir();
    if (!fs::exists(dir / "REFERENCE.txt"))
        GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << dir.string()
                     << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    // Files llama.cpp accepts, with f32/f16 tensors: Python finds no NaN/Inf in them, and neither do we;
    // their manifests (Python's) and their SHA-256 (sha256sum's) match.
    for (const char* name : {"cozy-genworker__stories260K__a945bfc.gguf", "ggml-pr753__superpoint__1297967.gguf",
                             "gridcore__test__183e8eb.gguf", "hf-ratchet__dummy__80eac97.gguf",
                             "hf-ratchet__test__c4e4b71.gguf"}) {
        SCOPED_TRACE(name);
        const fs::path p = dir / name;
        std::vector<std::string> args{"verify", p.string(), "--values", "--file-sha256", sha256sum(p)};
        if (have_python()) {
            const std::string text = python_manifest({p});
            ASSERT_NE(text.find("# nonfinite 0"), std::string::npos) << text;
            const fs::path man = vf().dir / (std::string(name) + ".sha256");
            write_file(man, text);
            args.push_back("--manifest");
            args.push_back(man.string());
        }
        const auto r = run(args);
        EXPECT_EQ(r.rc, 0) << r.out << r.err;
        EXPECT_NE(last_line(r.out).find(": clean"), std::string::npos) << r.out;
    }
    // Files the loader refuses: its message, exit 1.
    for (const char* name : {"ollama__test__f68a3c4.gguf", "las7-weightinspect__tiny__a94d3a6.gguf",
                             "gridcore__hdr-wrap-first-offset__89f652c.gguf"}) {
        const auto r = run({"verify", (dir / name).string()});
        EXPECT_EQ(r.rc, 1) << name;
        EXPECT_NE(r.err.find("Error: failed to parse GGUF: "), std::string::npos) << r.err;
    }
}

// A number out of range names the range as a person writes it, never DBL_MAX in 309 digits.
TEST(CliVerify, RangeErrorsNameTheRange) {
    const std::string m = vf().clean.string();
    const struct {
        std::vector<std::string> args;
        std::string want;
    } cases[] = {
        {{"verify", m, "--threads", "-3"}, "--threads: '-3' is not a whole number from 0 to 4294967295"},
        {{"verify", m, "--max-examples", "-1"}, "--max-examples: '-1' is not a whole number from 0 to 1000000"},
        {{"verify", m, "--max-examples", "2000000"}, "'2000000' is not a whole number from 0 to 1000000"},
        {{"hash", m, "--threads", "-3"}, "--threads: '-3' is not a whole number from 0 to 4294967295"},
        {{"tensor", m, "n.f32", "--head", "-1"}, "--head: '-1' is not a whole number from 0 to 4294967295"},
        {{"info", m, "--timeout", "0"}, "--timeout: '0' is not a number of seconds above 0"},
        {{"info", m, "--timeout", "-1"}, "--timeout: '-1' is not a number of seconds above 0"},
    };
    for (const auto& c : cases) {
        const auto r = run(c.args);
        EXPECT_EQ(r.rc, 2) << c.args[2] << " " << c.args[3];
        EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("179769313486"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find(".000000"), std::string::npos) << r.err;
    }
    EXPECT_EQ(run({"verify", m, "--threads", "2", "--max-examples", "0"}).rc, 0);
}

// ---- the vocabulary, as llama.cpp loads it (llama_vocab::impl::load) ----

// A model with a small BPE vocabulary: tokens a, b, c, ab, abc; scores and token types for each; bos
// 0, eos 1; merges "a b", "ab c". `change` alters it before it is written.
fs::path vocab_model(const std::string& name, const std::function<void(gguf::writer&)>& change = {}) {
    const fs::path p = temp_root() / "verify_vocab" / (name + ".gguf");
    fs::create_directories(p.parent_path());
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("tokenizer.ggml.model", "gpt2");
    const std::vector<std::string> tokens{"a", "b", "c", "ab", "abc"};
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
    const std::vector<float> scores{0, -1, -2, -3, -4};
    w.set_array("tokenizer.ggml.scores", gguf::value_type::f32, std::span<const float>(scores));
    const std::vector<std::int32_t> types{1, 1, 1, 1, 1};
    w.set_array("tokenizer.ggml.token_type", gguf::value_type::i32, std::span<const std::int32_t>(types));
    w.set_u32("tokenizer.ggml.bos_token_id", 0);
    w.set_u32("tokenizer.ggml.eos_token_id", 1);
    const std::vector<std::string> merges{"a b", "ab c"};
    w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(merges));
    const std::array<std::int64_t, 1> ne{4};
    const std::vector<float> v{1, 2, 3, 4};
    w.add_tensor("w", gguf::tensor_type::f32, ne, std::as_bytes(std::span<const float>(v)));
    if (change) change(w);
    must_write(w, p);
    return p;
}

TEST(CliVerify, VocabularyAsLlamaCppLoadsItIsClean) {
    const auto r = run({"verify", vocab_model("good").string()});
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "verified: 1 tensor, 16 bytes: clean\n");
}

TEST(CliVerify, DuplicateTokenIsAFinding) {
    // llama.cpp aborts on this file (GGML_ASSERT(id_to_token.size() == token_to_id.size())).
    const fs::path p = vocab_model("dup", [](gguf::writer& w) {
        const std::vector<std::string> tokens{"a", "b", "c", "b", "abc"};
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
    });
    const auto r = run({"verify", p.string()});
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_TRUE(has_line(r.out, "vocabulary: tokenizer.ggml.tokens: token 3 repeats token 1 ('b'): llama.cpp aborts "
                                "loading the vocabulary (GGML_ASSERT id_to_token.size() == token_to_id.size())"))
        << r.out;
    EXPECT_EQ(last_line(r.out), "verified: 1 tensor, 16 bytes: 1 vocabulary finding (1 warning)") << r.out;
    const json j = json::parse(run({"verify", p.string(), "--json"}).out);
    EXPECT_EQ(j["verdict"], "failed");
    EXPECT_EQ(j["exit_code"], 1);
    ASSERT_TRUE(j.contains("vocabulary_findings") && j.contains("vocabulary")) << j.dump();
    EXPECT_EQ(j["vocabulary_findings"], 1);
    ASSERT_GE(j["vocabulary"].size(), 1u);
    EXPECT_EQ(j["vocabulary"][0]["problem"], "duplicate_token");
    EXPECT_EQ(j["vocabulary"][0]["severity"], "finding");
    EXPECT_EQ(j["vocabulary"][0]["key"], "tokenizer.ggml.tokens");
    EXPECT_EQ(j["vocabulary"][0]["index"], 3);

    // An empty token is "[EMPTY_<i>]" to llama.cpp: a literal token of that text collides with it.
    const fs::path e = vocab_model("empty", [](gguf::writer& w) {
        const std::vector<std::string> tokens{"a", "", "c", "[EMPTY_1]", "abc"};
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
    });
    const auto re = run({"verify", e.string()});
    EXPECT_EQ(re.rc, 1) << re.out;
    EXPECT_NE(re.out.find("token 3 repeats token 1 ('[EMPTY_1]')"), std::string::npos) << re.out;
    EXPECT_TRUE(has_line(re.out, "warning: vocabulary: tokenizer.ggml.tokens: token 1 is empty: llama.cpp loads it "
                                 "as \"[EMPTY_1]\""))
        << re.out;
}

TEST(CliVerify, ScoresAndTokenTypesOfTheWrongLength) {
    // Shorter: llama.cpp throws "Index out of array bounds" (a finding); longer: it reads what it
    // needs (a warning).
    const fs::path s = vocab_model("scores_short", [](gguf::writer& w) {
        const std::vector<float> scores{0, -1, -2};
        w.set_array("tokenizer.ggml.scores", gguf::value_type::f32, std::span<const float>(scores));
    });
    const auto rs = run({"verify", s.string()});
    EXPECT_EQ(rs.rc, 1) << rs.out;
    EXPECT_TRUE(has_line(rs.out, "vocabulary: tokenizer.ggml.scores: has 3 scores for 5 tokens: token 3 has none, and "
                                 "llama.cpp refuses the model (Index out of array bounds)"))
        << rs.out;
    const fs::path t = vocab_model("types_short", [](gguf::writer& w) {
        const std::vector<std::int32_t> types{1, 1, 1, 1};
        w.set_array("tokenizer.ggml.token_type", gguf::value_type::i32, std::span<const std::int32_t>(types));
    });
    const auto rt = run({"verify", t.string(), "--json"});
    EXPECT_EQ(rt.rc, 1) << rt.out;
    const json j = json::parse(rt.out);
    ASSERT_TRUE(j.contains("vocabulary")) << rt.out;
    ASSERT_GE(j["vocabulary"].size(), 1u) << rt.out;
    EXPECT_EQ(j["vocabulary"][0]["problem"], "array_short");
    EXPECT_EQ(j["vocabulary"][0]["key"], "tokenizer.ggml.token_type");
    EXPECT_EQ(j["vocabulary"][0]["index"], 4);
    const fs::path n = vocab_model("types_u8", [](gguf::writer& w) {
        const std::vector<std::uint8_t> types{1, 1, 1, 1, 1};
        w.set_array("tokenizer.ggml.token_type", gguf::value_type::u8, std::span<const std::uint8_t>(types));
    });
    EXPECT_EQ(run({"verify", n.string()}).rc, 1);  // read as 4-byte ints: past the array
    const fs::path l = vocab_model("scores_long", [](gguf::writer& w) {
        const std::vector<float> scores{0, -1, -2, -3, -4, -5};
        w.set_array("tokenizer.ggml.scores", gguf::value_type::f32, std::span<const float>(scores));
    });
    const auto rl = run({"verify", l.string()});
    EXPECT_EQ(rl.rc, 0) << rl.out;
    EXPECT_TRUE(has_line(rl.out, "warning: vocabulary: tokenizer.ggml.scores: has 6 scores for 5 tokens: llama.cpp "
                                 "ignores those from index 5 on"))
        << rl.out;
    EXPECT_EQ(last_line(rl.out), "verified: 1 tensor, 16 bytes: clean (1 warning)");
}

TEST(CliVerify, SpecialTokenIds) {
    // Out of range: llama.cpp logs "bad special token" and keeps its default id (a warning).
    const fs::path o = vocab_model("eos_out", [](gguf::writer& w) { w.set_u32("tokenizer.ggml.eos_token_id", 5); });
    const auto ro = run({"verify", o.string()});
    EXPECT_EQ(ro.rc, 0) << ro.out;
    EXPECT_TRUE(has_line(ro.out, "warning: vocabulary: tokenizer.ggml.eos_token_id: is 5, not below the vocabulary's "
                                 "5 tokens: llama.cpp ignores it (bad special token) and uses its default id"))
        << ro.out;
    // Not a u32: its loader throws "key has wrong type" (a finding).
    const fs::path t = vocab_model("bos_i32", [](gguf::writer& w) { w.set_i32("tokenizer.ggml.bos_token_id", 0); });
    const auto rt = run({"verify", t.string()});
    EXPECT_EQ(rt.rc, 1) << rt.out;
    EXPECT_TRUE(has_line(rt.out, "vocabulary: tokenizer.ggml.bos_token_id: is of type i32: llama.cpp reads it as "
                                 "u32 and refuses the model (key has wrong type)"))
        << rt.out;
}

TEST(CliVerify, MergesNamingAbsentTokens) {
    const fs::path p = vocab_model("merges", [](gguf::writer& w) {
        const std::vector<std::string> merges{"a b", "ab c", "b zz", "q r", "abc"};
        w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(merges));
    });
    const auto r = run({"verify", p.string(), "--json"});
    EXPECT_EQ(r.rc, 0) << r.out;  // llama.cpp loads it; such merges never apply
    const json j = json::parse(r.out);
    ASSERT_TRUE(j.contains("vocabulary")) << r.out;
    ASSERT_EQ(j["vocabulary"].size(), 2u) << r.out;
    EXPECT_EQ(j["vocabulary"][0]["problem"], "merge_without_space");
    EXPECT_EQ(j["vocabulary"][0]["index"], 4);
    EXPECT_EQ(j["vocabulary"][1]["problem"], "merge_part_absent");
    EXPECT_EQ(j["vocabulary"][1]["severity"], "warning");
    EXPECT_EQ(j["vocabulary"][1]["index"], 2);
    EXPECT_EQ(j["vocabulary"][1]["count"], 2);
    EXPECT_EQ(j["vocabulary"][1]["what"], "merge 2 names 'zz', which is not a token (2 merges name absent tokens): it "
                                          "can never produce a token");
}

}  // namespace
}  // namespace minfer_cli_test
