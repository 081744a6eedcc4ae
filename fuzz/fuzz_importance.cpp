// Importance matrices are downloaded beside models: arbitrary bytes, written to a temporary file,
// through quant::read_importance, which tells its two formats apart by the GGUF magic (so the bytes
// go in as they are; the seeds hold both formats). A failure must carry a message; a success must
// keep the reader's promises: names unique and sorted bytewise, every entry with values and every
// value finite, the dataset name cut as llama-quantize cuts it. Then the filter: the same file read
// again with include/exclude patterns taken from the names it holds must give exactly the entries
// the filter's rule keeps (recounted here), with the same values bit for bit and the same keys. A
// broken promise traps.
//
// A name may be empty (a legacy name of length 0 or beginning with a NUL, a GGUF tensor named
// ".in_sum2"): llama-quantize keeps such an entry and counts it in quantize.imatrix.entries_count,
// so the reader keeps it too (it matches no tensor), and that is not checked here.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "minfer/quant/importance.hpp"

namespace {

namespace q = minfer::quant;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_importance: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

// One file per process (libFuzzer's -fork/-jobs run several), rewritten for every input and removed
// at exit.
struct scratch_file {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("minfer-fuzz-importance-" + std::to_string(::getpid()) + ".imatrix");
    ~scratch_file() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

const std::filesystem::path& scratch() {
    static const scratch_file f;
    return f.path;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The filter's rule, written again: kept when some include pattern is in the name (or there is
// none), and no exclude pattern is.
bool keeps(const q::importance_filter& f, std::string_view name) {
    auto any_in = [&](const std::vector<std::string>& patterns) {
        for (const std::string& p : patterns)
            if (name.find(p) != std::string_view::npos) return true;
        return false;
    };
    return (f.include.empty() || any_in(f.include)) && !any_in(f.exclude);
}

void check_failure(const minfer::gguf::error& e) {
    require(!e.message().empty(), "a failure without a message");
    require(e.code != minfer::gguf::errc::ok, "a failure without a code");
}

void check_matrix(const q::importance_matrix& m, bool legacy) {
    for (std::size_t i = 0; i < m.entries.size(); ++i) {
        const q::importance_entry& e = m.entries[i];
        if (i > 0) require(m.entries[i - 1].name < e.name, "names not unique and sorted");
        require(!e.values.empty(), "an entry without values");
        for (float v : e.values) require(std::isfinite(v), "a weight that is not finite");
        require(m.find(e.name) == &e, "find does not return the entry");
        // A legacy name is read up to its first NUL, as llama-quantize reads it.
        if (legacy) require(e.name.find('\0') == std::string::npos, "a legacy name with a NUL in it");
    }
    require(m.dataset.size() <= 127 && m.dataset.find('\0') == std::string::npos,
            "a dataset name not cut at 127 bytes or a NUL");
    require(m.has_dataset || m.dataset.empty(), "a dataset name without has_dataset");
    require(m.file == scratch().string(), "the file key is not the path");
}

// Patterns taken from the names: a piece of one entry's name to include and of another's to
// exclude, chosen by the input's last bytes, plus a pattern no name holds.
std::vector<q::importance_filter> filters(const q::importance_matrix& m, const std::uint8_t* data, std::size_t size) {
    std::vector<q::importance_filter> v;
    const std::uint8_t a = size > 0 ? data[size - 1] : 0, b = size > 1 ? data[size - 2] : 0;
    auto piece = [&](std::uint8_t sel) -> std::string {
        if (m.entries.empty()) return "x";
        const std::string& n = m.entries[sel % m.entries.size()].name;
        if (n.empty()) return n;
        const std::size_t from = (sel / 7u) % n.size();
        return n.substr(from, 1 + (sel / 3u) % (n.size() - from));
    };
    v.push_back({{piece(a)}, {}});
    v.push_back({{}, {piece(b)}});
    v.push_back({{piece(a), piece(b)}, {piece(static_cast<std::uint8_t>(a ^ b))}});
    v.push_back({{std::string("\xff\xfe no name holds this", 22)}, {}});
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        std::ofstream out(scratch(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
        require(out.good(), "cannot write the scratch file");
    }
    const bool legacy = size < 4 || std::memcmp(data, "GGUF", 4) != 0;
    auto all = q::read_importance(scratch());
    if (!all) {
        check_failure(all.error());
        return 0;
    }
    check_matrix(*all, legacy);

    for (const q::importance_filter& f : filters(*all, data, size)) {
        auto some = q::read_importance(scratch(), f);
        // Every weight was finite unfiltered: a filtered read computes a subset of them.
        require(some.has_value(), "a file that reads whole fails filtered");
        check_matrix(*some, legacy);
        require(some->dataset == all->dataset && some->has_dataset == all->has_dataset &&
                    some->chunks_count == all->chunks_count,
                "the filter changed the keys");
        std::size_t k = 0;
        for (const q::importance_entry& e : all->entries) {
            if (!keeps(f, e.name)) continue;
            require(k < some->entries.size() && some->entries[k].name == e.name,
                    "the filtered entries are not those its rule keeps");
            require(same_bits(some->entries[k].values, e.values), "the filter changed an entry's values");
            ++k;
        }
        require(k == some->entries.size(), "the filtered entries are not those its rule keeps (one more)");
    }
    return 0;
}
