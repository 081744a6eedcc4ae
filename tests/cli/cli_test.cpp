// End-to-end tests of the `minfer` executable: each test spawns the real binary (MINFER_EXE) on files
// written with minfer::gguf::writer into a temporary directory and checks stdout, stderr and the exit
// code exactly as a user sees them.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "minfer/gguf.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;
using json = nlohmann::ordered_json;

struct run_result {
    int rc = -1;  ///< exit status, or -signal when killed
    std::string out;
    std::string err;
};

std::string slurp(const fs::path& p) {
    std::string s;
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (f == nullptr) return s;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
}

// Split on `sep`; a trailing separator ends the last piece (no empty piece after it).
std::vector<std::string> split_on(const std::string& s, char sep) {
    std::vector<std::string> v;
    std::size_t start = 0;
    while (start < s.size()) {
        std::size_t end = s.find(sep, start);
        if (end == std::string::npos) end = s.size();
        v.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return v;
}

const fs::path& temp_root();

// Run `minfer <args…>` with stdout and stderr sent to files (no pipe to deadlock on); `stdout_to`
// replaces the stdout file (e.g. /dev/full).
run_result run(const std::vector<std::string>& args, const fs::path& stdout_to = {}) {
    static int counter = 0;
    const fs::path out_path =
        stdout_to.empty() ? temp_root() / ("stdout." + std::to_string(counter)) : stdout_to;
    const fs::path err_path = temp_root() / ("stderr." + std::to_string(counter));
    ++counter;

    std::vector<std::string> argv_s{MINFER_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    run_result r;
    if (sp != 0) {
        r.err = "posix_spawn failed: " + std::string(std::strerror(sp));
        return r;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status)) {
        r.rc = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.rc = -WTERMSIG(status);
    }
    if (stdout_to.empty()) r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

std::vector<std::string> lines_of(const std::string& s) { return split_on(s, '\n'); }

bool has_line(const std::string& text, std::string_view line) {
    for (const std::string& l : lines_of(text))
        if (l == line) return true;
    return false;
}

// The whitespace-collapsed form of a line: columns are aligned with runs of spaces.
std::string squeeze(std::string_view s) {
    std::string o;
    bool space = false;
    for (char c : s) {
        if (c == ' ') {
            space = true;
            continue;
        }
        if (space && !o.empty()) o += ' ';
        space = false;
        o += c;
    }
    return o;
}

bool has_squeezed_line(const std::string& text, std::string_view want) {
    for (const std::string& l : lines_of(text))
        if (squeeze(l) == want) return true;
    return false;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
    const auto s = std::as_bytes(std::span<const T>(v));
    return {s.begin(), s.end()};
}

void write_file(const fs::path& p, const std::string& content) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) throw std::runtime_error("cannot create " + p.string());
    const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + p.string());
}

void must_write(const gguf::writer& w, const fs::path& p) {
    auto r = w.write(p);
    if (!r) throw std::runtime_error("writer failed: " + r.error().message());
}

const std::string long_string = [] {
    std::string s;
    for (int i = 0; i < 20; ++i) s += "0123456789";
    return s;
}();
const std::string bad_key = "bad\x1b" "key";
const std::string bad_value = "abc\xff\xfe";
constexpr std::size_t big_vocab = 150000;

// The files every test uses, made once per process in a fresh temporary directory.
struct fixtures {
    fs::path root, model, bad_magic, dir, split1, split_missing1;
    std::vector<std::string> tokens;

    fixtures() {
        root = fs::temp_directory_path() / ("minfer_cli_test." + std::to_string(::getpid()));
        fs::remove_all(root);
        fs::create_directories(root);

        tokens.clear();
        for (int i = 0; i < 20; ++i) tokens.push_back("tok" + std::to_string(i));
        tokens[3] = "q\"uote";

        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u8("t.u8", 200);
        w.set_i8("t.i8", -5);
        w.set_u16("t.u16", 60000);
        w.set_i16("t.i16", -30000);
        w.set_u32("t.u32", 4000000000u);
        w.set_i32("t.i32", -2000000000);
        w.set_f32("t.f32", 0.1f);
        w.set_bool("t.bool", true);
        w.set_u64("t.u64", std::numeric_limits<std::uint64_t>::max());
        w.set_i64("t.i64", std::numeric_limits<std::int64_t>::min());
        w.set_f64("t.f64", 3.141592653589793);
        w.set_string("t.str", "say \"hi\"");
        w.set_string("t.long", long_string);
        w.set_strings("t.tokens", std::span<const std::string>(tokens));
        const std::vector<std::uint32_t> nums{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        w.set_array("t.nums", gguf::value_type::u32, std::span<const std::uint32_t>(nums));
        w.set_u32(bad_key, 7);
        w.set_string("t.bad_utf8", bad_value);

        const std::array<std::int64_t, 2> ne_a{4, 3};
        std::vector<float> a_data(12);
        for (std::size_t i = 0; i < a_data.size(); ++i) a_data[i] = static_cast<float>(i);
        w.add_tensor("a.weight", gguf::tensor_type::f32, ne_a, bytes_of(a_data));
        const std::array<std::int64_t, 1> ne_b{8};
        w.add_tensor("b.weight", gguf::tensor_type::f16, ne_b, std::vector<std::byte>(16, std::byte{0x3c}));
        const std::array<std::int64_t, 2> ne_c{32, 2};
        w.add_zero_tensor("c.weight", gguf::tensor_type::q8_0, ne_c);  // 2 blocks of 34 bytes
        const std::array<std::int64_t, 1> ne_d{64};
        w.add_zero_tensor("d.weight", gguf::tensor_type::q4_0, ne_d);  // 2 blocks of 18 bytes
        model = root / "model.gguf";
        must_write(w, model);

        bad_magic = root / "bad_magic.gguf";
        write_file(bad_magic, std::string("PK\x03\x04") + std::string(60, '\0'));

        // A directory with two single files, a 3-part split set, a non-GGUF file and a subdirectory.
        dir = root / "models";
        fs::create_directories(dir / "sub.gguf");
        fs::copy_file(model, dir / "b-model.gguf");
        fs::copy_file(bad_magic, dir / "a-broken.gguf");
        write_file(dir / "notes.txt", "not a model\n");
        write_split(dir, "x");
        split1 = dir / "x-00001-of-00003.gguf";

        const fs::path missing_dir = root / "missing";
        fs::create_directories(missing_dir);
        write_split(missing_dir, "y");
        fs::remove(missing_dir / "y-00003-of-00003.gguf");
        split_missing1 = missing_dir / "y-00001-of-00003.gguf";

    }
    ~fixtures() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    static void write_split(const fs::path& where, const std::string& prefix) {
        for (std::uint32_t i = 0; i < 3; ++i) {
            gguf::writer w;
            if (i == 0) w.set_string("general.architecture", "llama");
            w.set_u16("split.no", static_cast<std::uint16_t>(i));
            w.set_u16("split.count", 3);
            w.set_i32("split.tensors.count", 3);
            const std::array<std::int64_t, 1> ne{8};
            w.add_zero_tensor("part" + std::to_string(i + 1) + ".weight", gguf::tensor_type::f32, ne);
            must_write(w, where / gguf::split_file_name(prefix, i, 3));
        }
    }
};

const fixtures& fx() {
    static const fixtures f;
    return f;
}
const fs::path& temp_root() { return fx().root; }

// A 150k-entry vocabulary (made only by the tests that use it).
const fs::path& vocab_path() {
    static const fs::path vocab = [] {
        gguf::writer v;
        std::vector<std::string> vocab_items;
        vocab_items.reserve(big_vocab);
        for (std::size_t i = 0; i < big_vocab; ++i) {
            vocab_items.push_back(std::string("w").append(std::to_string(i)));  // not "w" + …: GCC 12 -Wrestrict
        }
        vocab_items[100] = "\xc4\xa0the";  // "Ġthe", valid UTF-8
        vocab_items[101] = "\xff";         // invalid
        v.set_string("general.architecture", "qwen2");
        v.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(vocab_items));
        const fs::path p = temp_root() / "vocab.gguf";
        must_write(v, p);
        return p;
    }();
    return vocab;
}

std::string mb_text(std::uint64_t n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(n) / 1048576.0);
    return buf;
}

// ---------------------------------------------------------------------------------------------------
// Text output

TEST(CliText, StartupLinesExactly) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", f.model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u);
    const std::uint64_t size = fs::file_size(f.model);
    EXPECT_EQ(lines[0], "Loading model: " + f.model.string());
    EXPECT_EQ(lines[1], "File: " + std::to_string(size) + " bytes (" + mb_text(size) + " MB) in 1 part(s)");
    EXPECT_EQ(lines[2], "GGUF: 18 KV, 4 tensors");
    EXPECT_EQ(lines[3], "version 3, alignment 32, data offset " + std::to_string(m->metadata().data_offset()));
}

TEST(CliText, MetadataLines) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "general.architecture string \"llama\"")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u8 u8 200"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i8 i8 -5"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u16 u16 60000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i16 i16 -30000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u32 u32 4000000000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i32 i32 -2000000000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.f32 f32 0.1"));  // shortest round-trip text of 0.1f
    EXPECT_TRUE(has_squeezed_line(r.out, "t.bool bool true"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u64 u64 18446744073709551615"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i64 i64 -9223372036854775808"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.f64 f64 3.141592653589793"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.str string \"say \\\"hi\\\"\""));
    // Columns are aligned: the type column starts at the same place on every metadata line.
    const auto lines = lines_of(r.out);
    std::size_t col = std::string::npos;
    for (const std::string& l : lines) {
        if (l.rfind("  t.u8 ", 0) == 0) col = l.find("u8", 6);
    }
    ASSERT_NE(col, std::string::npos);
    for (const std::string& l : lines) {
        if (l.rfind("  general.architecture ", 0) == 0) {
            EXPECT_EQ(l.find("string"), col) << l;
        }
    }
}

TEST(CliText, EscapesControlCharactersAndInvalidUtf8) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "bad\\x1Bkey u32 7")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.bad_utf8 string \"abc\\xFF\\xFE\""));
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw ESC reached the terminal";
    EXPECT_EQ(r.out.find('\xff'), std::string::npos) << "raw invalid UTF-8 reached the terminal";
}

TEST(CliText, LongStringCutUnlessFull) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "t.long string \"" + long_string.substr(0, 60) + "\"… (200 bytes)"))
        << r.out;
    const auto full = run({"info", "--full", fx().model.string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_squeezed_line(full.out, "t.long string \"" + long_string + "\""));
}

TEST(CliText, ArrayPreviewAndFull) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(
        r.out, "t.tokens [string x 20] \"tok0\", \"tok1\", \"tok2\", \"q\\\"uote\", \"tok4\", \"tok5\", \"tok6\", "
               "\"tok7\", …"))
        << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.nums [u32 x 10] 1, 2, 3, 4, 5, 6, 7, 8, …"));
    EXPECT_EQ(r.out.find("tok8"), std::string::npos);

    const auto full = run({"info", "--full", fx().model.string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_squeezed_line(full.out, "t.tokens [string x 20]"));
    for (int i = 0; i < 20; ++i) {
        const std::string item = i == 3 ? "\"q\\\"uote\"" : "\"tok" + std::to_string(i) + "\"";
        EXPECT_TRUE(has_line(full.out, "      [" + std::to_string(i) + "] " + item)) << i;
    }
    EXPECT_TRUE(has_line(full.out, "      [9] 10"));
}

TEST(CliText, TensorTableAndTotals) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const std::uint64_t d = m->metadata().data_offset();
    const auto r = run({"info", f.model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "name type shape bytes offset")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "a.weight f32 [4, 3] 48 " + std::to_string(d + 0)));
    EXPECT_TRUE(has_squeezed_line(r.out, "b.weight f16 [8] 16 " + std::to_string(d + 64)));
    EXPECT_TRUE(has_squeezed_line(r.out, "c.weight q8_0 [32, 2] 68 " + std::to_string(d + 96)));
    EXPECT_TRUE(has_squeezed_line(r.out, "d.weight q4_0 [64] 36 " + std::to_string(d + 192)));
    // 12 + 8 + 64 + 64 = 148 parameters in 48 + 16 + 68 + 36 = 168 bytes: 168*8/148 = 9.08 bits.
    EXPECT_TRUE(has_line(r.out, "total: 4 tensors, 148 parameters, 168 bytes (0.0 MB), 9.08 bits per weight"));
}

TEST(CliText, NoMmapGivesIdenticalOutput) {
    const auto a = run({"info", fx().model.string()});
    const auto b = run({"info", "--no-mmap", fx().model.string()});
    ASSERT_EQ(a.rc, 0);
    ASSERT_EQ(b.rc, 0);
    EXPECT_EQ(a.out, b.out);
    const auto c = run({"info", "--json", fx().model.string()});
    const auto d = run({"info", "--json", "--no-mmap", fx().model.string()});
    ASSERT_EQ(c.rc, 0);
    EXPECT_EQ(c.out, d.out);
    const auto e = run({"info", "--full", "--no-mmap", fx().model.string()});
    const auto g = run({"info", "--full", fx().model.string()});
    EXPECT_EQ(e.out, g.out);
}

TEST(CliText, SplitSetIsOneModel) {
    const auto& f = fx();
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 3; ++i) total += fs::file_size(f.dir / gguf::split_file_name("x", i, 3));
    const auto r = run({"info", f.split1.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[1], "File: " + std::to_string(total) + " bytes (" + mb_text(total) + " MB) in 3 part(s)");
    EXPECT_EQ(lines[2], "GGUF: 4 KV, 3 tensors");
    EXPECT_TRUE(has_squeezed_line(r.out, "name type shape bytes offset part"));
    auto m = gguf::model::open(f.split1);
    ASSERT_TRUE(m.has_value());
    for (std::uint32_t p = 0; p < 3; ++p) {
        const std::uint64_t off = m->parts()[p].view.data_offset();
        EXPECT_TRUE(has_squeezed_line(r.out, "part" + std::to_string(p + 1) + ".weight f32 [8] 32 " +
                                                 std::to_string(off) + " " + std::to_string(p + 1)))
            << r.out;
    }
}

// ---------------------------------------------------------------------------------------------------
// JSON output

TEST(CliJson, ParsesAndHoldsEverything) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", "--json", f.model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["file"], f.model.string());
    EXPECT_EQ(j["file_bytes"], fs::file_size(f.model));
    ASSERT_EQ(j["parts"].size(), 1u);
    EXPECT_EQ(j["parts"][0]["version"], 3);
    EXPECT_EQ(j["parts"][0]["alignment"], 32);
    EXPECT_EQ(j["parts"][0]["data_offset"], m->metadata().data_offset());
    EXPECT_EQ(j["parts"][0]["n_kv"], 18);
    EXPECT_EQ(j["parts"][0]["n_tensors"], 4);

    const json& md = j["metadata"];
    ASSERT_EQ(md.size(), 18u);
    EXPECT_EQ(md.begin().key(), "general.architecture");  // file order kept
    EXPECT_EQ(md["t.u8"]["type"], "u8");
    EXPECT_EQ(md["t.u8"]["value"], 200);
    EXPECT_EQ(md["t.i16"]["value"], -30000);
    EXPECT_EQ(md["t.u64"]["value"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(md["t.i64"]["value"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(md["t.f32"]["value"].get<float>(), 0.1f);
    EXPECT_EQ(md["t.f64"]["value"].get<double>(), 3.141592653589793);
    EXPECT_EQ(md["t.bool"]["value"], true);
    EXPECT_EQ(md["t.str"]["value"], "say \"hi\"");
    EXPECT_EQ(md["t.long"]["value"], long_string);  // never cut in JSON

    const json& tok = md["t.tokens"];
    EXPECT_EQ(tok["type"], "array");
    EXPECT_EQ(tok["element_type"], "string");
    EXPECT_EQ(tok["count"], 20);
    ASSERT_EQ(tok["items"].size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(tok["items"][i], f.tokens[i]);
    ASSERT_EQ(md["t.nums"]["items"].size(), 10u);
    EXPECT_EQ(md["t.nums"]["items"][9], 10);

    // The control character is valid UTF-8: kept (as \u001b in the JSON text); invalid bytes become \xNN.
    ASSERT_TRUE(md.contains(bad_key));
    EXPECT_EQ(md[bad_key]["value"], 7);
    EXPECT_NE(r.out.find("bad\\u001bkey"), std::string::npos);
    EXPECT_EQ(md["t.bad_utf8"]["value"], "abc\\xFF\\xFE");
    EXPECT_EQ(md["t.bad_utf8"]["invalid_utf8"], true);

    const json& ts = j["tensors"];
    ASSERT_EQ(ts.size(), 4u);
    const std::array<std::uint64_t, 4> rel{0, 64, 96, 192};
    const std::array<const char*, 4> types{"f32", "f16", "q8_0", "q4_0"};
    const std::array<std::uint32_t, 4> ids{0, 1, 8, 2};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(ts[i]["offset"], rel[i]) << i;
        EXPECT_EQ(ts[i]["absolute_offset"], m->metadata().data_offset() + rel[i]) << i;
        EXPECT_EQ(ts[i]["type"], types[i]);
        EXPECT_EQ(ts[i]["type_id"], ids[i]);
        EXPECT_EQ(ts[i]["part"], 1);
    }
    EXPECT_EQ(ts[0]["name"], "a.weight");
    EXPECT_EQ(ts[0]["shape"], json::array({4, 3}));
    EXPECT_EQ(ts[0]["nb"], json::array({4, 16, 48, 48}));
    EXPECT_EQ(ts[0]["n_elements"], 12);
    EXPECT_EQ(ts[2]["n_bytes"], 68);
    EXPECT_EQ(j["totals"]["n_parameters"], 148);
    EXPECT_EQ(j["totals"]["n_bytes"], 168);
    EXPECT_NEAR(j["totals"]["bits_per_weight"].get<double>(), 168.0 * 8 / 148, 1e-9);
}

TEST(CliJson, BigVocabularyDumpsEveryItem) {
    const auto r = run({"info", "--json", vocab_path().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    const json& items = j["metadata"]["tokenizer.ggml.tokens"]["items"];
    ASSERT_EQ(items.size(), big_vocab);
    EXPECT_EQ(items[0], "w0");
    EXPECT_EQ(items[100], "\xc4\xa0the");
    EXPECT_EQ(items[101], "\\xFF");
    EXPECT_EQ(items[big_vocab - 1], "w" + std::to_string(big_vocab - 1));
    EXPECT_EQ(j["metadata"]["tokenizer.ggml.tokens"]["invalid_utf8_items"], json::array({101}));

    // The text view shows a preview; --full every item.
    const auto t = run({"info", vocab_path().string()});
    ASSERT_EQ(t.rc, 0);
    EXPECT_TRUE(has_squeezed_line(t.out, "tokenizer.ggml.tokens [string x 150000] \"w0\", \"w1\", \"w2\", \"w3\", "
                                         "\"w4\", \"w5\", \"w6\", \"w7\", …"));
    const auto full = run({"info", "--full", vocab_path().string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_line(full.out, "      [149999] \"w149999\""));
    EXPECT_TRUE(has_line(full.out, "      [101] \"\\xFF\""));
}

TEST(CliJson, SplitPartsAndOffsets) {
    const auto& f = fx();
    auto m = gguf::model::open(f.split1);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", "--json", f.split1.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["parts"].size(), 3u);
    ASSERT_EQ(j["tensors"].size(), 3u);
    for (std::uint32_t p = 0; p < 3; ++p) {
        EXPECT_EQ(j["parts"][p]["path"], m->parts()[p].path.string());
        EXPECT_EQ(j["tensors"][p]["part"], p + 1);
        EXPECT_EQ(j["tensors"][p]["absolute_offset"], m->parts()[p].view.data_offset());
    }
}

// ---------------------------------------------------------------------------------------------------
// Errors and exit codes

TEST(CliErrors, BadMagicIsParseError) {
    const auto r = run({"info", fx().bad_magic.string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "Loading model: " + fx().bad_magic.string() + "\n");
    EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("invalid magic characters: 'PK\\x03\\x04', expected 'GGUF'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[bad_magic]"), std::string::npos);
    const auto js = run({"info", "--json", fx().bad_magic.string()});
    EXPECT_EQ(js.rc, 1);
    EXPECT_EQ(js.out, "");
}

TEST(CliErrors, MissingFileIsIoError) {
    const std::string p = (fx().root / "no-such-file.gguf").string();
    const auto r = run({"info", p});
    EXPECT_EQ(r.rc, 3);
    EXPECT_EQ(r.err.rfind("Error: ", 0), 0u);
    EXPECT_EQ(r.err.find("failed to parse"), std::string::npos);
    EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[io_error]"), std::string::npos);
}

TEST(CliErrors, MissingSplitPartIsIoError) {
    const auto r = run({"info", fx().split_missing1.string()});
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("y-00003-of-00003.gguf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("[split_part_missing]"), std::string::npos);
}

TEST(CliErrors, LaterSplitPartIsRejected) {
    const auto r = run({"info", (fx().dir / "x-00002-of-00003.gguf").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("[split_not_first]"), std::string::npos) << r.err;
}

TEST(CliErrors, UsageErrors) {
    EXPECT_EQ(run({"info", "--bogus", fx().model.string()}).rc, 2);
    EXPECT_EQ(run({"info"}).rc, 2);
    EXPECT_EQ(run({}).rc, 2);
    EXPECT_EQ(run({"frobnicate"}).rc, 2);
    EXPECT_EQ(run({"info", fx().model.string(), "extra"}).rc, 2);
}

TEST(CliErrors, DirectoryListsCandidates) {
    const auto& f = fx();
    const auto r = run({"info", f.dir.string()});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 3; ++i) total += fs::file_size(f.dir / gguf::split_file_name("x", i, 3));
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;  // heading + 3 candidates, sorted
    EXPECT_EQ(squeeze(lines[1]), "a-broken.gguf " + std::to_string(fs::file_size(f.bad_magic)) + " bytes (0.0 MB)");
    EXPECT_EQ(squeeze(lines[2]), "b-model.gguf " + std::to_string(fs::file_size(f.model)) + " bytes (0.0 MB)");
    EXPECT_EQ(squeeze(lines[3]),
              "x-00001-of-00003.gguf " + std::to_string(total) + " bytes (" + mb_text(total) + " MB) 3 parts");
    EXPECT_EQ(r.out.find("x-00002"), std::string::npos);
    EXPECT_EQ(r.out.find("notes.txt"), std::string::npos);
    EXPECT_EQ(r.out.find("sub.gguf"), std::string::npos);

    const auto js = run({"info", "--json", f.dir.string()});
    EXPECT_EQ(js.rc, 2);
    const json j = json::parse(js.out);
    ASSERT_EQ(j["candidates"].size(), 3u);
    EXPECT_EQ(j["candidates"][2]["name"], "x-00001-of-00003.gguf");
    EXPECT_EQ(j["candidates"][2]["n_parts"], 3);
    EXPECT_EQ(j["candidates"][2]["bytes"], total);
}

TEST(CliErrors, UnwritableStdoutIsIoError) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    for (const char* mode : {"--full", "--json"}) {
        const auto r = run({"info", mode, fx().model.string()}, "/dev/full");
        EXPECT_EQ(r.rc, 3) << mode;
        EXPECT_EQ(r.err, "Error: cannot write to standard output\n") << mode;
    }
}

TEST(CliErrors, HelpAndVersion) {
    const auto h = run({"--help"});
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("info"), std::string::npos);
    EXPECT_NE(h.out.find("Exit codes"), std::string::npos);
    const auto ih = run({"info", "--help"});
    EXPECT_EQ(ih.rc, 0);
    EXPECT_NE(ih.out.find("--no-mmap"), std::string::npos);
    EXPECT_NE(ih.out.find("SIGBUS"), std::string::npos);
    EXPECT_NE(ih.out.find("  3  I/O error"), std::string::npos);
    const auto v = run({"--version"});
    EXPECT_EQ(v.rc, 0);
    EXPECT_EQ(v.out, std::string("minfer ") + MINFER_VERSION + "\n");
}

// ---------------------------------------------------------------------------------------------------
// Real files (shared/fixtures/real), with llama.cpp's verdicts in REFERENCE.txt

fs::path real_dir() { return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real"; }
// Said loudly: a skipped real-file test is a hole in the run, not a pass.
#define MINFER_SKIP_NO_FIXTURE(p)                                                                           \
    GTEST_SKIP() << "SKIPPED: real GGUF fixtures not found at " << (p).string()                            \
                 << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)"

TEST(CliReal, Stories260K) {
    const fs::path p = real_dir() / "cozy-genworker__stories260K__a945bfc.gguf";
    if (!fs::exists(p)) MINFER_SKIP_NO_FIXTURE(p);
    const auto r = run({"info", p.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u);
    EXPECT_EQ(lines[1], "File: 1185376 bytes (1.1 MB) in 1 part(s)");
    EXPECT_EQ(lines[2], "GGUF: 19 KV, 48 tensors");
    EXPECT_EQ(lines[3], "version 3, alignment 32, data offset 14176");
    EXPECT_TRUE(has_squeezed_line(r.out, "general.architecture string \"llama\""));
    EXPECT_TRUE(has_squeezed_line(r.out, "token_embd.weight f32 [64, 512] 131072 14176"));
}

TEST(CliReal, RejectedFile) {
    const fs::path p = real_dir() / "ollama__test__f68a3c4.gguf";
    if (!fs::exists(p)) MINFER_SKIP_NO_FIXTURE(p);
    const auto r = run({"info", p.string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << r.err;
}

TEST(CliReal, EveryVerdictMatchesReference) {
    const fs::path ref = real_dir() / "REFERENCE.txt";
    if (!fs::exists(ref)) MINFER_SKIP_NO_FIXTURE(ref);
    int checked = 0;
    for (const std::string& line : lines_of(slurp(ref))) {
        if (line.empty() || line[0] == '#' || line[0] == ' ') continue;
        const std::vector<std::string> fields = split_on(line, '\t');
        if (fields.size() < 2) continue;
        const fs::path p = real_dir() / fields[0];
        if (!fs::exists(p)) continue;
        const auto r = run({"info", p.string()});
        if (fields[1] == "ACCEPTED") {
            EXPECT_EQ(r.rc, 0) << fields[0] << ": " << r.err;
            std::string n_kv, n_tensors;
            for (const std::string& fl : fields) {
                if (fl.rfind("n_kv=", 0) == 0) n_kv = fl.substr(5);
                if (fl.rfind("n_tensors=", 0) == 0) n_tensors = fl.substr(10);
            }
            EXPECT_TRUE(has_line(r.out, "GGUF: " + n_kv + " KV, " + n_tensors + " tensors")) << fields[0];
            const auto js = run({"info", "--json", p.string()});
            EXPECT_EQ(js.rc, 0) << fields[0];
            EXPECT_TRUE(json::accept(js.out)) << fields[0];
        } else {
            EXPECT_EQ(r.rc, 1) << fields[0] << ": " << r.out;
            EXPECT_EQ(r.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << fields[0] << ": " << r.err;
        }
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

}  // namespace
