#pragma once
// core::tensor: the unit later stages compute with (not part of the loader: the loader hands out
// tensor_info and byte views). Its bytes are either borrowed from a model's mapping (weights:
// zero-copy, copying the tensor copies no weight bytes) or owned (scratch and activations).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/tensor_info.hpp"

namespace minfer::core {

using gguf::result;
using gguf::tensor_info;
using gguf::tensor_type;

class tensor {
public:
    /// A view of bytes owned elsewhere (a model's mapping). The bytes must outlive the tensor and
    /// every copy of it. `bytes.size()` must equal the shape's byte size.
    static tensor borrowed(std::string_view name, const tensor_info& info, std::span<const std::byte> bytes);
    /// A zero-filled tensor that owns its bytes. @returns bad_tensor_type, removed_tensor_type,
    /// bad_dim, not_block_multiple, shape_overflow, size_overflow or out_of_memory.
    static result<tensor> owned(std::string_view name, tensor_type type, std::span<const std::int64_t> ne) noexcept;

    const std::string& name() const noexcept { return name_; }
    tensor_type type() const noexcept { return type_; }
    const std::array<std::int64_t, 4>& ne() const noexcept { return ne_; }
    const std::array<std::uint64_t, 4>& nb() const noexcept { return nb_; }
    std::uint64_t n_elements() const noexcept { return n_elements_; }
    std::uint64_t n_bytes() const noexcept { return n_bytes_; }
    bool is_borrowed() const noexcept { return storage_.index() == 0; }

    /// The tensor's bytes.
    std::span<const std::byte> data() const& noexcept MINFER_LIFETIMEBOUND;
    std::span<const std::byte> data() const&& = delete;  // an owned temporary's bytes would dangle
    /// Writable bytes of an owned tensor; empty for a borrowed one (weights are read-only).
    std::span<std::byte> mutable_data() & noexcept MINFER_LIFETIMEBOUND;

private:
    tensor() = default;
    std::string name_;
    tensor_type type_ = tensor_type::f32;
    std::array<std::int64_t, 4> ne_{1, 1, 1, 1};
    std::array<std::uint64_t, 4> nb_{};
    std::uint64_t n_elements_ = 0;
    std::uint64_t n_bytes_ = 0;
    std::variant<std::span<const std::byte>, std::vector<std::byte>> storage_;
};

/// A borrowed tensor for the model's tensor `name` (its bytes stay in the model's mapping: the model
/// must outlive the tensor). @returns tensor_not_found or out_of_memory.
result<tensor> borrow(const gguf::model& m, std::string_view name) noexcept;
result<tensor> borrow(const gguf::model&& m, std::string_view name) = delete;  // the bytes would dangle

}  // namespace minfer::core
