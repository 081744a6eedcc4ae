// The format's rules that need code (the rest are constexpr in rules.hpp): shapes and strides.
#include <cstddef>
#include <string>

#include "minfer/gguf/rules.hpp"
#include "shape_check.hpp"

namespace minfer::gguf {

std::array<std::uint64_t, 4> ggml_strides(const type_traits& t, const std::array<std::int64_t, 4>& ne) noexcept {
    std::array<std::uint64_t, 4> nb{};
    nb[0] = t.block_bytes;
    nb[1] = nb[0] * static_cast<std::uint64_t>(ne[0] / t.block_elems);
    for (std::size_t j = 2; j < 4; ++j) nb[j] = nb[j - 1] * static_cast<std::uint64_t>(ne[j - 1]);
    return nb;
}

namespace rules {
verdict shape(std::uint32_t type_id, std::span<const std::int64_t> dims, shape_facts& f) noexcept {
    f.ne = {1, 1, 1, 1};
    if (dims.size() > max_dims) return {errc::bad_n_dims, max_dims, dims.size()};
    for (std::size_t i = 0; i < dims.size(); ++i) f.ne[i] = dims[i];
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i] < 0) return {errc::bad_dim, i, static_cast<std::uint64_t>(dims[i])};
    std::int64_t n = 1;
    for (std::int64_t d : f.ne)
        if (__builtin_mul_overflow(n, d, &n)) return {errc::shape_overflow};
    const type_traits* t = traits(type_id);
    if (t == nullptr) return {errc::bad_tensor_type, 0, type_id};
    if (t->removed()) return {errc::removed_tensor_type, 0, type_id};
    if (f.ne[0] % t->block_elems != 0)
        return {errc::not_block_multiple, t->block_elems, static_cast<std::uint64_t>(f.ne[0])};
    // Strides as ggml computes them, with every product checked: nb[3] can overflow even when the
    // byte size does not (a zero in ne[3]).
    f.nb[0] = t->block_bytes;
    bool overflow = __builtin_mul_overflow(f.nb[0], static_cast<std::uint64_t>(f.ne[0] / t->block_elems), &f.nb[1]);
    for (std::size_t j = 2; j < 4 && !overflow; ++j)
        overflow = __builtin_mul_overflow(f.nb[j - 1], static_cast<std::uint64_t>(f.ne[j - 1]), &f.nb[j]);
    std::uint64_t bytes = 0;
    if (!overflow)
        overflow = __builtin_mul_overflow(static_cast<std::uint64_t>(n) / t->block_elems,
                                          static_cast<std::uint64_t>(t->block_bytes), &bytes);
    if (overflow) return {errc::size_overflow};
    f.n_elements = static_cast<std::uint64_t>(n);
    f.n_bytes = bytes;
    return {};
}
}  // namespace rules

namespace detail {
error shape_error(const verdict& v, std::uint32_t type_id, const shape_facts& f) {
    error e;
    e.code = v.code;
    e.where = section::tensor_info;
    e.expected = v.expected;
    e.found = v.found;
    if (v.code != errc::bad_n_dims) e.shape = f.ne;
    if (v.code == errc::not_block_multiple) {
        const type_traits* t = traits(type_id);
        e.detail = std::to_string(type_id) + " (" + std::string(t->name) + ")";
    }
    return e;
}
}  // namespace detail

result<shape_facts> check_shape(std::uint32_t type_id, std::span<const std::int64_t> dims) noexcept {
    shape_facts f{};  // check_shape_into sets ne first
    const verdict v = rules::shape(type_id, dims, f);
    if (!v) return unexpected(detail::shape_error(v, type_id, f));
    return f;
}

}  // namespace minfer::gguf
