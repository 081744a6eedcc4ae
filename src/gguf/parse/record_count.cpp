// The counting pre-pass (see record_count.hpp).
#include "record_count.hpp"

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf::detail {
namespace {
bool skip_string(byte_cursor& c, bool allow_empty) noexcept {
    std::uint64_t n = 0;
    if (!c.read(n) || n > max_string_bytes || !c.has(n) || (n == 0 && !allow_empty)) return false;
    c.skip(n);
    return true;
}

bool skip_value(byte_cursor& c) noexcept {
    std::uint32_t type = 0;
    if (!c.read(type) || type >= value_type_count) return false;
    const auto t = static_cast<value_type>(type);
    if (t == value_type::string) return skip_string(c, true);
    std::uint64_t n = 1;
    value_type elem = t;
    if (t == value_type::array) {
        std::uint32_t e = 0;
        if (!c.read(e) || e >= value_type_count || !c.read(n) || n > max_array_elems) return false;
        elem = static_cast<value_type>(e);
        if (elem == value_type::array) return false;
        if (elem == value_type::string) {
            for (std::uint64_t k = 0; k < n; ++k)
                if (!skip_string(c, true)) return false;
            return true;
        }
    }
    const std::uint64_t size = value_size(elem);
    if (n > c.remaining() / size) return false;
    c.skip(n * size);
    return true;
}
}  // namespace

std::uint64_t count_kv_records(byte_cursor c, std::uint64_t declared) noexcept {
    std::uint64_t i = 0;
    while (i < declared && skip_string(c, false) && skip_value(c)) ++i;
    return i;
}

std::uint64_t count_tensor_records(byte_cursor c, std::uint64_t declared) noexcept {
    std::uint64_t i = 0;
    for (; i < declared; ++i) {
        std::uint64_t name = 0;
        std::uint32_t n_dims = 0, type = 0;
        std::uint64_t offset = 0;
        if (!c.read(name) || name == 0 || name > max_name_bytes || !c.has(name)) break;
        c.skip(name);
        if (!c.read(n_dims) || n_dims > max_dims || !c.has(8ull * n_dims)) break;
        c.skip(8ull * n_dims);
        if (!c.read(type) || !c.read(offset)) break;
    }
    return i;
}

}  // namespace minfer::gguf::detail
