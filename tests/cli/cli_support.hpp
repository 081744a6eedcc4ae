#pragma once
// What the end-to-end tests of the `minfer` executable share: each test spawns the real binary
// (MINFER_EXE) on files written with minfer::gguf::writer into a temporary directory and checks
// stdout, stderr and the exit code exactly as a user sees them. Fixtures are made once per process.
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
#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "minfer/gguf.hpp"
#include "minfer/gguf_write/writer.hpp"

extern char** environ;

namespace minfer_cli_test {

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;
using json = nlohmann::ordered_json;

struct run_result {
    int rc = -1;  ///< exit status, or -signal when killed
    std::string out;
    std::string err;
};

inline std::string slurp(const fs::path& p) {
    std::string s;
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (f == nullptr) return s;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
}

// Split on `sep`; a trailing separator ends the last piece (no empty piece after it).
inline std::vector<std::string> split_on(const std::string& s, char sep) {
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

inline const fs::path& temp_root();

// Run the program args[0] (a path) with args, stdout and stderr sent to files (no pipe to deadlock
// on), in `cwd` when given. @returns the exit status (negative: the signal that ended it), or
// nullopt with `why` set when it could not be started.
inline std::optional<int> spawn_to_files(const std::vector<std::string>& args, const fs::path& out_path,
                                         const fs::path& err_path, const fs::path& cwd, std::string& why) {
    std::vector<std::string> argv_s = args;
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    pid_t pid = 0;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (sp != 0) {
        why = "posix_spawn of " + args[0] + " failed: " + std::strerror(sp);
        return std::nullopt;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1;
}

// Run `minfer <args…>` with stdout and stderr sent to files; `stdout_to` replaces the stdout file
// (e.g. /dev/full).
inline run_result run(const std::vector<std::string>& args, const fs::path& stdout_to = {}) {
    static int counter = 0;
    const fs::path out_path =
        stdout_to.empty() ? temp_root() / ("stdout." + std::to_string(counter)) : stdout_to;
    const fs::path err_path = temp_root() / ("stderr." + std::to_string(counter));
    ++counter;

    std::vector<std::string> argv_s{MINFER_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    run_result r;
    std::string why;
    const auto rc = spawn_to_files(argv_s, out_path, err_path, {}, why);
    if (!rc) {
        r.err = why;
        return r;
    }
    r.rc = *rc;
    if (stdout_to.empty()) r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

inline std::vector<std::string> lines_of(const std::string& s) { return split_on(s, '\n'); }

inline bool has_line(const std::string& text, std::string_view line) {
    for (const std::string& l : lines_of(text))
        if (l == line) return true;
    return false;
}

// The whitespace-collapsed form of a line: columns are aligned with runs of spaces.
inline std::string squeeze(std::string_view s) {
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

inline bool has_squeezed_line(const std::string& text, std::string_view want) {
    for (const std::string& l : lines_of(text))
        if (squeeze(l) == want) return true;
    return false;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
    const auto s = std::as_bytes(std::span<const T>(v));
    return {s.begin(), s.end()};
}

inline void write_file(const fs::path& p, const std::string& content) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) throw std::runtime_error("cannot create " + p.string());
    const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + p.string());
}

inline void must_write(const gguf::writer& w, const fs::path& p) {
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

inline const fixtures& fx() {
    static const fixtures f;
    return f;
}
inline const fs::path& temp_root() { return fx().root; }

// A 150k-entry vocabulary (made only by the tests that use it).
inline const fs::path& vocab_path() {
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

// Sizes are shown in MiB (2^20 bytes), labelled so.
inline std::string mb_text(std::uint64_t n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / 1048576.0);
    return buf;
}

// A file whose keys collided in the old JSON (\xNN text) and whose text needs care.
inline const fs::path& text_model() {
    static const fs::path p = [] {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_string(std::string("general.architecture") + "\xe2\x80\x8b", "fake");  // + U+200B
        w.set_u32("general.file_type", 15);
        w.set_u32("k\xff", 1);            // invalid UTF-8 ...
        w.set_u32("k\\xFF", 2);           // ... and a valid key spelling its old escape
        w.set_u32("\xff\xfe", 3);         // two invalid keys that both read \xFF\xFE before
        w.set_u32("\\xFF\xfe", 4);
        w.set_u32("\xe4\xb8\xad\xe6\x96\x87.key", 5);  // 中文.key: 6 bytes, 4 columns
        w.set_u32("cafe\xcc\x81.key", 6);                  // café.key with a combining accent: 0 columns
        std::vector<std::string> toks{"<unk>", "<s>", "</s>", "hello"};
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
        w.set_u32("tokenizer.ggml.bos_token_id", 1);
        w.set_u32("tokenizer.ggml.eos_token_id", 2);
        w.set_i32("tokenizer.ggml.padding_token_id", -1);
        w.set_u32("tokenizer.ggml.seperator_token_id", 70000);
        w.set_string("tokenizer.chat_template", "{% for m in messages %}\n{{ m['content'] + '\\n' }}\x1b\n{% endfor %}");
        const std::vector<std::uint8_t> bytes{1, 2, 3};
        w.set_array("t.bytes", gguf::value_type::u8, std::span<const std::uint8_t>(bytes));
        w.set_string("t.raw", "line1\nline2\t\xff");
        // 3 MiB of f32 plus a little: MB (10^6) and MiB (2^20) differ in the first decimal.
        const std::array<std::int64_t, 1> ne{786432};
        w.add_zero_tensor("big.weight", gguf::tensor_type::f32, ne);
        const std::array<std::int64_t, 2> ne_q{32, 2};
        w.add_zero_tensor("q.weight", gguf::tensor_type::q8_0, ne_q);
        w.add_zero_tensor("q2.weight", gguf::tensor_type::q8_0, ne_q);
        const std::array<std::int64_t, 1> ne_n{64};
        w.add_zero_tensor("\xe4\xb8\xad.weight", gguf::tensor_type::q4_0, ne_n);
        const fs::path path = temp_root() / "text.gguf";
        must_write(w, path);
        return path;
    }();
    return p;
}

struct peak {
    int rc = -1;
    long rss_kib = 0;
    std::string err;
};
// Run minfer through rss_probe (see rss_probe.cpp) and return its exit status, its own peak RSS and
// its stderr; `as_mib` > 0 limits its address space.
inline peak measure(const std::vector<std::string>& args, const fs::path& stdout_to, long as_mib = 0) {
    std::vector<std::string> a{stdout_to.string(), MINFER_EXE};
    if (as_mib > 0) a.insert(a.begin(), {"--as-mib", std::to_string(as_mib)});
    a.insert(a.end(), args.begin(), args.end());
    // run() starts MINFER_EXE; the probe is started the same way with its own path first.
    std::vector<std::string> argv_s{MINFER_RSS_PROBE};
    argv_s.insert(argv_s.end(), a.begin(), a.end());
    std::vector<char*> argv;
    for (std::string& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    const fs::path report = temp_root() / "rss_probe.out";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const fs::path err = temp_root() / "rss_probe.err";
    posix_spawn_file_actions_addopen(&fa, 1, report.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    peak p;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (sp != 0) return p;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    std::FILE* f = std::fopen(report.c_str(), "r");
    if (f == nullptr) return p;
    if (std::fscanf(f, "%d %ld", &p.rc, &p.rss_kib) != 2) p.rc = -1;
    std::fclose(f);
    p.err = slurp(err);
    return p;
}

#if defined(__SANITIZE_ADDRESS__)
#define MINFER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINFER_ASAN 1
#endif
#endif

}  // namespace minfer_cli_test
