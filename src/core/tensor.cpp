// tensor: borrowed weights or owned scratch.
#include <cstddef>
#include <exception>
#include <new>

#include "minfer/core/tensor.hpp"
#include "minfer/gguf/rules.hpp"

namespace minfer::core {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

tensor tensor::borrowed(std::string_view name, const tensor_info& info, std::span<const std::byte> bytes) {
    tensor t;
    t.name_ = std::string(name);
    t.type_ = info.type;
    t.ne_ = info.ne;
    t.nb_ = info.nb;
    t.n_elements_ = info.n_elements;
    t.n_bytes_ = info.n_bytes;
    t.storage_ = bytes;
    return t;
}

result<tensor> tensor::owned(std::string_view name, tensor_type type, std::span<const std::int64_t> ne) noexcept {
    auto facts = gguf::check_shape(static_cast<std::uint32_t>(type), ne);
    if (!facts) return unexpected(std::move(facts).error());
    if (!gguf::rules::fits_in_memory(facts->n_bytes)) {  // a vector cannot hold it: refuse, never terminate
        error e;
        e.code = errc::size_overflow;
        e.where = gguf::section::access;
        e.found = facts->n_bytes;
        e.expected = static_cast<std::uint64_t>(PTRDIFF_MAX);
        e.shape = facts->ne;
        return unexpected(std::move(e));
    }
    try {
        tensor t;
        t.name_ = std::string(name);
        t.type_ = type;
        t.ne_ = facts->ne;
        t.nb_ = facts->nb;
        t.n_elements_ = facts->n_elements;
        t.n_bytes_ = facts->n_bytes;
        t.storage_ = std::vector<std::byte>(static_cast<std::size_t>(facts->n_bytes));
        return t;
    } catch (const std::exception&) {  // bad_alloc, or length_error past the allocator's max_size
        error e = gguf::out_of_memory_error("allocating a tensor");
        e.subject = name;  // bounded inline copy: no allocation
        return unexpected(std::move(e));
    }
}

std::span<const std::byte> tensor::data() const& noexcept {
    if (const auto* s = std::get_if<0>(&storage_)) return *s;
    return *std::get_if<1>(&storage_);
}

std::span<std::byte> tensor::mutable_data() & noexcept {
    if (auto* v = std::get_if<1>(&storage_)) return *v;
    return {};
}

result<tensor> borrow(const gguf::model& m, std::string_view name) noexcept {
    // A head-only model's tensor_data() is empty: the tensor would claim bytes it does not have.
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    const gguf::tensor_ref* t = m.find_tensor(name);
    if (t == nullptr) {
        error e;
        e.code = errc::tensor_not_found;
        e.where = gguf::section::access;
        e.subject = name;  // bounded inline copy: no allocation
        return unexpected(std::move(e));
    }
    try {
        return tensor::borrowed(t->info->name, *t->info, m.tensor_data(*t));
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("naming a tensor"));
    }
}

}  // namespace minfer::core
