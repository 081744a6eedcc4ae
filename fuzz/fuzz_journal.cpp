// Recovery of an in-place edit from a hostile undo journal. The input's first byte is flags (bit 0:
// recompute the journal's checksum so the fuzzer gets past it; bit 1: put the journal's new head
// into the model first, as a completed write leaves it); the rest is the journal, written beside a
// fixed model. Whatever recover_in_place answers, the model keeps its size, a refused journal leaves
// the model untouched and the journal in place, and an accepted one leaves the model holding exactly
// the old head (rolled back) or what it held (completed), with the journal gone.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "fuzz_common.hpp"
#include "journal_model.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace {
namespace fs = std::filesystem;

std::vector<std::byte> read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> b(c.size());
    if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
    return b;
}
void write_all(const fs::path& p, const std::byte* d, std::size_t n) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(d), static_cast<std::streamsize>(n));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    static const fs::path dir = [] {
        fs::path base = fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
        auto d = base / ("minfer-fuzz-journal-" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    static const std::vector<std::byte> model_bytes = [] {
        auto b = fuzz::journal_model("fuzz").to_bytes();
        fuzz::require(b.has_value());
        return *b;
    }();
    if (size == 0) return 0;
    const fs::path file = dir / "m.gguf";
    const fs::path journal = gguf::undo_journal_path(file);
    std::vector<std::byte> j(size - 1);
    if (!j.empty()) std::memcpy(j.data(), data + 1, size - 1);
    std::vector<std::byte> model = model_bytes;
    if ((data[0] & 1) != 0 && j.size() >= 40) {
        const std::uint64_t sum = fuzz::journal_checksum(j.data() + 40, j.size() - 40);
        std::memcpy(j.data() + 32, &sum, 8);
    }
    if ((data[0] & 2) != 0 && j.size() >= 40) {
        std::uint64_t head = 0;
        std::memcpy(&head, j.data() + 24, 8);
        if (head <= model.size() && j.size() >= 40 + 2 * head)
            std::memcpy(model.data(), j.data() + 40 + head, static_cast<std::size_t>(head));
    }
    write_all(file, model.data(), model.size());
    write_all(journal, j.data(), j.size());

    auto r = gguf::recover_in_place(file);
    const std::vector<std::byte> after = read_all(file);
    fuzz::require(after.size() == model.size());
    if (!r) {
        fuzz::require(!r.error().message().empty());
        if (r.error().code == minfer::gguf::write_codes::journal_invalid) {
            fuzz::require(after == model);
            fuzz::require(fs::exists(journal));
        }
    } else {
        fuzz::require(*r != gguf::recovery::nothing_to_do);
        fuzz::require(!fs::exists(journal));
        std::uint64_t head = 0;
        std::memcpy(&head, j.data() + 24, 8);
        if (*r == gguf::recovery::completed) fuzz::require(after == model);
        if (*r == gguf::recovery::rolled_back)
            fuzz::require(std::memcmp(after.data(), j.data() + 40, static_cast<std::size_t>(head)) == 0);
    }
    std::error_code ec;
    fs::remove(journal, ec);
    return 0;
}
