// The floor walker. See floor.hpp.
#include "floor.hpp"

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace minfer::bench {
namespace {

// Bytes of one fixed-size GGUF value, by type tag; 0 for string (8), array (9) and unknown tags.
constexpr std::uint8_t fixed_size[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// The cursor lives in registers: every step is a bounds check, a load or an add, and a failure
// returns at once (no error state is carried through the loop).
struct cursor {
    const std::byte* p;
    const std::byte* end;

    template <class T>
    bool take(T& v) noexcept {
        if (static_cast<std::size_t>(end - p) < sizeof v) return false;
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        return true;
    }
    bool skip(std::uint64_t n) noexcept {
        if (n > static_cast<std::uint64_t>(end - p)) return false;
        p += n;
        return true;
    }
    // A string: its length is added to `sum`, its bytes skipped.
    bool string(std::uint64_t& sum) noexcept {
        std::uint64_t n = 0;
        if (!take(n) || !skip(n)) return false;
        sum += n;
        return true;
    }
};

}  // namespace

walk_result walk_gguf(const std::byte* data, std::size_t size) noexcept {
    cursor c{data, data + size};
    std::uint32_t magic = 0, version = 0;
    std::uint64_t n_tensors = 0, n_kv = 0, sum = 0;
    if (!c.take(magic) || magic != 0x46554747u || !c.take(version) || !c.take(n_tensors) || !c.take(n_kv)) return {};
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        std::uint32_t type = 0;
        std::uint64_t count = 1;
        if (!c.string(sum) || !c.take(type)) return {};  // key, value type
        if (type == 9 && (!c.take(type) || !c.take(count))) return {};  // array: element type, count
        if (type == 8) {
            for (std::uint64_t k = 0; k < count; ++k)
                if (!c.string(sum)) return {};
        } else if (type < 13 && fixed_size[type] != 0) {
            if (count > size || !c.skip(count * fixed_size[type])) return {};  // count <= size: no overflow
        } else {
            return {};  // nested array or unknown tag
        }
        sum += count;
    }
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        std::uint32_t n_dims = 0, type = 0;
        std::uint64_t offset = 0;
        if (!c.string(sum) || !c.take(n_dims) || n_dims > 4) return {};
        for (std::uint32_t d = 0; d < n_dims; ++d) {
            std::uint64_t ne = 0;
            if (!c.take(ne)) return {};
            sum += ne;
        }
        if (!c.take(type) || !c.take(offset)) return {};
        sum += type + offset;
    }
    walk_result r;
    r.ok = true;
    r.n_kv = n_kv;
    r.n_tensors = n_tensors;
    r.table_end = static_cast<std::uint64_t>(c.p - data);
    r.checksum = sum + version;
    return r;
}

walk_result floor_open_hold(const char* path, void** map, std::size_t* size) noexcept {
    *map = nullptr;
    *size = 0;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        ::close(fd);
        return {};
    }
    const auto n = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return {};
    *map = p;
    *size = n;
    return walk_gguf(static_cast<const std::byte*>(p), n);
}

void release_mapping(void* map, std::size_t size) noexcept {
    if (map != nullptr) ::munmap(map, size);
}

walk_result floor_open(const char* path) noexcept {
    void* map = nullptr;
    std::size_t size = 0;
    const walk_result r = floor_open_hold(path, &map, &size);
    release_mapping(map, size);
    return r;
}

}  // namespace minfer::bench
