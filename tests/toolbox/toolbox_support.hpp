#pragma once
// What the toolbox tests (edit, split, merge end to end) share: running the real `minfer` binary
// (MINFER_EXE) and waiting for it or killing it, per-test temporary directories, file checksums and
// directory listings, and the check that a file is a complete GGUF our loader accepts.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf.hpp"
#include "scratch_dir.hpp"  // tests/support

extern char** environ;

namespace minfer_toolbox_test {

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;

struct run_result {
    int rc = -1;  ///< exit status, or -signal when killed
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

using minfer::test_support::temp_dir;  // tests/support/scratch_dir.hpp

/// Where a child's stderr goes: one file per process (in a directory removed at exit), rewritten by
/// every run.
inline fs::path stderr_file() {
    static const temp_dir dir("stderr");
    return dir / "stderr";
}

/// The binary under test: the build's (MINFER_EXE), or $MINFER_TOOLBOX_EXE to try another build.
inline std::string minfer_exe() {
    const char* e = std::getenv("MINFER_TOOLBOX_EXE");
    return e != nullptr && *e != '\0' ? std::string(e) : std::string(MINFER_EXE);
}

/// Start `minfer <args…>` with stdout to /dev/null and stderr to stderr_file(); the pid, or -1.
inline pid_t spawn_minfer(const std::vector<std::string>& args) {
    std::vector<std::string> argv_s{minfer_exe()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_file().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    return sp == 0 ? pid : -1;
}

/// Wait for a child: its exit status, or -signal.
inline int wait_child(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1000;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1000;
}

/// Run `minfer <args…>` to its end.
inline run_result run(const std::vector<std::string>& args) {
    run_result r;
    const pid_t pid = spawn_minfer(args);
    if (pid < 0) {
        r.err = "posix_spawn failed";
        return r;
    }
    r.rc = wait_child(pid);
    r.err = slurp(stderr_file());
    return r;
}

/// Run a shell command (setup only: mount, umount); its exit status.
inline int sh(const std::string& cmd) {
    const int st = std::system(cmd.c_str());
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/// A 64-bit checksum of a file's bytes (FNV-1a over 8-byte words): enough to notice any change a
/// writer could make to an input; -1 as an impossible value when the file cannot be read.
inline std::uint64_t checksum(const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ~std::uint64_t{0};
    std::vector<std::uint64_t> buf(1u << 17);  // 1 MiB
    std::uint64_t h = 0xcbf29ce484222325ull;
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size() * 8);
        if (n <= 0) break;
        const std::size_t words = static_cast<std::size_t>(n) / 8;
        for (std::size_t i = 0; i < words; ++i) h = (h ^ buf[i]) * 0x100000001b3ull;
        for (std::size_t i = words * 8; i < static_cast<std::size_t>(n); ++i)
            h = (h ^ reinterpret_cast<const unsigned char*>(buf.data())[i]) * 0x100000001b3ull;
        total += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    return h ^ total;
}

/// The names in a directory, sorted.
inline std::vector<std::string> list_dir(const fs::path& dir) {
    std::vector<std::string> v;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

inline std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "(nothing)" : s;
}

/// "" when `p` alone is a GGUF file our loader accepts (header, metadata, tensor table, data
/// section present), otherwise why not. One file only: a split part is checked by itself.
inline std::string file_problem(const fs::path& p) {
    auto mf = gguf::mapped_file::open(p);
    if (!mf) return mf.error().message();
    auto v = gguf::file_view::parse(mf->bytes());
    if (!v) return v.error().message();
    return "";
}

/// The split part names OUT_PREFIX-0000k-of-0000N.gguf.
inline std::vector<fs::path> part_paths(const fs::path& prefix, std::uint32_t n) {
    std::vector<fs::path> v;
    for (std::uint32_t i = 0; i < n; ++i) v.push_back(gguf::split_file_name(prefix.string(), i, n));
    return v;
}

/// The parts a split wrote for `prefix` (OUT_PREFIX-0000k-of-0000N.gguf with N read from the name of
/// part 1 found in the directory); empty when there is no single part 1.
inline std::vector<fs::path> find_parts(const fs::path& prefix) {
    const std::string head = prefix.filename().string() + "-00001-of-";
    std::vector<fs::path> found;
    for (const std::string& name : list_dir(prefix.parent_path()))
        if (name.rfind(head, 0) == 0 && name.size() == head.size() + 10 && name.ends_with(".gguf"))
            found.push_back(prefix.parent_path() / name);
    if (found.size() != 1) return {};
    const unsigned long n = std::strtoul(found[0].filename().string().c_str() + head.size(), nullptr, 10);
    if (n < 1 || n > 99999) return {};
    return part_paths(prefix, static_cast<std::uint32_t>(n));
}

/// The real fixture stories260K (a llama model llama.cpp decodes), or empty when ../shared is absent.
inline fs::path stories_fixture() {
    const fs::path p = fs::path(MINFER_SHARED_DIR) / "fixtures/real/cozy-genworker__stories260K__a945bfc.gguf";
    return fs::exists(p) ? p : fs::path();
}

}  // namespace minfer_toolbox_test
