#pragma once
// What the `minfer hash` tests share: running any program (the tool, the independent Python
// reference tests/tools/gguf_hash_reference.py, sha256sum) in a chosen directory, so that paths can
// be typed as a user types them (`m.gguf`, `./m.gguf`, `split/s-00001-of-00004.gguf`), and the
// check that the reference's tools (python3, xxhsum) are there (a loud skip when they are not).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli_support.hpp"

namespace minfer_cli_test {

// Run argv[0] (a path) with argv, in `cwd` when given; stdout and stderr through files.
inline run_result spawn_in(const std::vector<std::string>& args, const fs::path& cwd = {}) {
    static int counter = 0;
    const fs::path out_path = fs::absolute(temp_root() / ("hash.out." + std::to_string(counter)));
    const fs::path err_path = fs::absolute(temp_root() / ("hash.err." + std::to_string(counter)));
    ++counter;
    run_result r;
    std::string why;
    const auto rc = spawn_to_files(args, out_path, err_path, cwd, why);
    if (!rc) {
        r.err = why;
        return r;
    }
    r.rc = *rc;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    fs::remove(out_path);
    fs::remove(err_path);
    return r;
}

// `minfer <args…>` in `cwd`.
inline run_result tool(std::vector<std::string> args, const fs::path& cwd = {}) {
    args.insert(args.begin(), MINFER_EXE);
    return spawn_in(args, cwd);
}

// The Python reference with the same arguments, in `cwd`.
inline run_result reference(std::vector<std::string> args, const fs::path& cwd = {}) {
    args.insert(args.begin(), {MINFER_PYTHON3, MINFER_HASH_REFERENCE});
    return spawn_in(args, cwd);
}

// Why the reference cannot run here ("" when it can).
inline std::string reference_missing() {
    std::string why;
    if (std::string(MINFER_PYTHON3).empty() || access(MINFER_PYTHON3, X_OK) != 0) why += "python3 not found; ";
    if (std::string(MINFER_XXHSUM).empty() || access(MINFER_XXHSUM, X_OK) != 0)
        why += "xxhsum not found (Debian package xxhash); ";
    return why;
}

#define MINFER_NEED_REFERENCE()                                                                  \
    do {                                                                                         \
        const std::string why_ = ::minfer_cli_test::reference_missing();                        \
        if (!why_.empty()) GTEST_SKIP() << "SKIPPED: the independent reference cannot run: " << why_; \
    } while (0)

// Deterministic bytes (splitmix64), distinct per seed.
inline std::vector<std::byte> noise(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> v(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (std::size_t i = 0; i < n; i += 8) {
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        std::memcpy(v.data() + i, &z, std::min<std::size_t>(8, n - i));  // little-endian host
    }
    return v;
}

}  // namespace minfer_cli_test
