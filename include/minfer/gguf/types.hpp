#pragma once
// The two type systems of GGUF: value types of metadata (13 tags) and ggml tensor types (ids 0..42),
// with the block arithmetic of every tensor type. Tables follow ggml's ggml.h / ggml-common.h.
#include <cstdint>
#include <optional>
#include <string_view>

namespace minfer::gguf {

/// GGUF metadata value type tags, as stored on disk (u32).
enum class value_type : std::uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
inline constexpr std::uint32_t value_type_count = 13;

/// "u8", "i32", "string", "array", … (gguf-py spelling without the "UINT" prefixes).
std::string_view to_string(value_type t) noexcept;
/// Bytes of one element of a fixed-size type, 0 for string and array.
std::uint32_t value_size(value_type t) noexcept;

/// ggml tensor type ids. Removed ids (4, 5, 31..33, 36..38) are named so they can be reported.
enum class tensor_type : std::uint32_t {
    f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q4_2 = 4, q4_3 = 5, q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9,
    q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15,
    iq2_xxs = 16, iq2_xs = 17, iq3_xxs = 18, iq1_s = 19, iq4_nl = 20, iq3_s = 21, iq2_s = 22, iq4_xs = 23,
    i8 = 24, i16 = 25, i32 = 26, i64 = 27, f64 = 28, iq1_m = 29, bf16 = 30,
    q4_0_4_4 = 31, q4_0_4_8 = 32, q4_0_8_8 = 33, tq1_0 = 34, tq2_0 = 35,
    iq4_nl_4_4 = 36, iq4_nl_4_8 = 37, iq4_nl_8_8 = 38, mxfp4 = 39, nvfp4 = 40, q1_0 = 41, q2_0 = 42,
};
inline constexpr std::uint32_t tensor_type_count = 43;

/// Block arithmetic of one tensor type: `block_elems` values are stored in `block_bytes` bytes.
struct type_traits {
    std::string_view name;        ///< ggml's name, spelled as ggml does: "f32", "q4_0", "q4_K", "iq2_xxs", …
    std::uint32_t block_elems;    ///< values per block (1 for plain types); 0 for removed types
    std::uint32_t block_bytes;    ///< bytes per block; 0 for removed types
    std::string_view replaced_by; ///< for removed types: what replaced them; empty otherwise
    [[nodiscard]] bool removed() const noexcept { return block_elems == 0; }
};

/// Traits of a type id, or nullptr when the id is outside 0..42. Removed ids return traits with
/// removed() == true.
const type_traits* traits(std::uint32_t type_id) noexcept;
inline const type_traits* traits(tensor_type t) noexcept { return traits(static_cast<std::uint32_t>(t)); }
/// ggml's name of a type id, "unknown" when outside the table.
std::string_view to_string(tensor_type t) noexcept;
/// Parse a ggml type name ("q4_0", "Q4_0" …) back to its id.
std::optional<tensor_type> tensor_type_from_name(std::string_view name) noexcept;

}  // namespace minfer::gguf
