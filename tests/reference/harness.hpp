#pragma once
// Small helpers of the differential tests: run sizes from the environment, a scratch directory,
// whole-file I/O.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace minfer::reference {

/// $name as an unsigned number, or `fallback` when unset or not a number.
inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 0);
    return end != nullptr && *end == '\0' ? n : fallback;
}

/// Files per run (MINFER_DIFF_N, default 300), base seed (MINFER_DIFF_SEED), mutants per file
/// (MINFER_DIFF_MUTANTS, default 10).
inline std::uint64_t run_files() { return env_u64("MINFER_DIFF_N", 300); }
inline std::uint64_t run_seed() { return env_u64("MINFER_DIFF_SEED", 0x6d696e666572ull); }
inline std::uint64_t run_mutants() { return env_u64("MINFER_DIFF_MUTANTS", 10); }
/// The seed of file i of a run: each file can be regenerated alone from (base seed, i).
inline std::uint64_t file_seed(std::uint64_t base, std::uint64_t i) {
    std::uint64_t z = base + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

class scratch_dir {
public:
    scratch_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "minfer-ref-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    /// Unlink `name` if present (before rewriting it; see write_bytes).
    void forget(const std::string& name) const {
        std::error_code ec;
        std::filesystem::remove(path_ / name, ec);
    }

private:
    std::filesystem::path path_;
};

/// Write a whole file. An existing file is unlinked first rather than truncated: ext4 flushes a
/// file truncated and rewritten (auto_da_alloc) at close, which made each mutant cost a disk write.
inline void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& b) {
    std::error_code ec;
    std::filesystem::remove(p, ec);
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    if (!f) throw std::runtime_error("cannot write " + p.string());
}

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) return {};
    std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) out[i] = static_cast<std::byte>(c[i]);
    return out;
}

}  // namespace minfer::reference
