#pragma once
// tensor: the unit later stages compute with. Its bytes are either borrowed from a model's mapping
// (weights: zero-copy, copying the tensor copies no weight bytes) or owned (scratch and activations).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/tensor_info.hpp"

namespace minfer::gguf {

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

/// Validate a shape for a type and compute its element count, byte size and strides (the checks
/// of the tensor table, shared by the parser, the writer and tensor::owned). On failure the error
/// has code, expected, found and shape set; the caller adds location.
struct shape_facts {
    std::array<std::int64_t, 4> ne;
    std::array<std::uint64_t, 4> nb;
    std::uint64_t n_elements;
    std::uint64_t n_bytes;
};
result<shape_facts> check_shape(std::uint32_t type_id, std::span<const std::int64_t> ne) noexcept;

}  // namespace minfer::gguf
