#pragma once
// value_check: NaN, Inf and all-zero tensors, found while walk_model_data passes over the bytes
// (minfer verify). What is checked depends on the type (docs/CLI.md, `minfer verify`):
//
// - f32, f16, bf16, f64: every element (a branch-free reduction over each run of elements first;
//   elements are located only in a run where something was found);
// - quantized types: the float scale fields of every block (the f16 `d`, `dmin`, `m`, `s`; q8_K's
//   f32 `d`; mxfp4's E8M0 exponent, whose 0xff is NaN in the OCP MX format; iq1_m's f16 scale
//   assembled from four nibbles). A NaN or Inf scale makes every value of its block NaN or Inf, so
//   it is one finding per block: its first bad field in byte order. nvfp4's UE4M3 scales have no
//   NaN or Inf as ggml reads them (they only take part in the all-zero test);
// - integer types (i8, i16, i32, i64): nothing.
//
// With value_check_options::values, every value of every type minfer::quant converts (except f32,
// f16 and bf16, whose conversion is exact, so the element scan already saw each value) is also
// converted to f32 and checked: this finds what no stored field shows, such as an f64 beyond f32's
// range or an mxfp4 block whose finite scale makes ±12·2^126 overflow. Values inside blocks that
// already have a bad scale are not reported again.
//
// All-zero (a warning, not a finding): float types, every element ±0; quantized types, every scale
// field ±0 (so every value is 0), or with `values` every converted value ±0. A tensor without
// elements is never all-zero; mxfp4 (no zero scale exists) and q6_K-like cases where only the
// integer sub-scales are 0 are seen only with `values`.
//
// Pieces arrive window by window and windows are cut at 64 KiB multiples of the file, not at block
// boundaries: a block (or element) that straddles two windows is carried across. Large pieces are
// split into jobs at block boundaries and each job's results are merged per tensor in file order,
// so the verdicts (counts and the first N examples) are the same for any thread count and window
// size.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/check/data_walk.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::check {

struct value_check_options {
    bool values = false;            ///< also convert every value to f32 and check it (minfer::quant)
    std::size_t max_examples = 10;  ///< findings kept per tensor and per list (the counts are complete)
};

enum class value_kind : std::uint8_t { nan, inf };
/// "nan", "inf".
std::string_view to_string(value_kind k) noexcept;

/// Where a finding is.
enum class finding_place : std::uint8_t {
    element,  ///< a stored element of a float tensor; index = the element
    scale,    ///< a scale field of a quantized block (the whole block is NaN/Inf); index = the block
    value,    ///< a converted value (values mode), outside blocks with a bad scale; index = the element
};
/// "element", "scale", "value".
std::string_view to_string(finding_place p) noexcept;

struct value_finding {
    std::uint32_t tensor = 0;  ///< index into model.tensors()
    value_kind kind = value_kind::nan;
    finding_place place = finding_place::element;
    std::string_view field;    ///< scale: the field's name ("d", "dmin", "m", "s", "e"); else empty (static text)
    std::uint64_t index = 0;   ///< block (scale) or element (element, value)
    double value = 0;          ///< the field's or element's value (NaN, ±Inf)
    std::uint64_t bits = 0;    ///< its stored bits: f16/bf16 16, f32 32, f64 64, E8M0 8; a value: the f32's bits
    std::uint32_t bit_width = 0;  ///< 8, 16, 32 or 64: how many of `bits` are the field (for printing)
};

/// What is checked in a tensor's stored bytes.
enum class check_scope : std::uint8_t {
    none,      ///< integer types (and types without any field to check)
    elements,  ///< f32, f16, bf16, f64: every element
    scales,    ///< quantized types: the scale fields of every block
};
/// "none", "elements", "scales".
std::string_view to_string(check_scope s) noexcept;

/// The scale fields a type's blocks hold, as checked (name, byte offset in the block, encoding).
enum class scale_encoding : std::uint8_t { f16, f32, e8m0, ue4m3, iq1m_f16 };
struct scale_field {
    std::string_view name;
    std::uint32_t offset = 0;  ///< byte offset in the block (iq1_m: of its sc[4])
    scale_encoding encoding = scale_encoding::f16;
};
/// The scale fields of a quantized type, in byte order (empty for plain and integer types, and for
/// ids outside the table or removed).
std::span<const scale_field> scale_fields(gguf::tensor_type type) noexcept;
/// What is checked in a tensor of `type` (values mode aside).
check_scope scope_of(gguf::tensor_type type) noexcept;

struct tensor_verdict {
    std::uint32_t tensor = 0;
    check_scope scope = check_scope::none;
    bool values_checked = false;      ///< values mode converted this tensor
    bool zero_checked = false;        ///< whether the all-zero test applies (see above)
    std::uint64_t bytes_checked = 0;  ///< tensor bytes seen (n_bytes when the walk covered it)
    std::uint64_t nan = 0;            ///< elements: NaN elements; scales: NaN scale fields
    std::uint64_t inf = 0;            ///< elements: ±Inf elements; scales: ±Inf scale fields
    std::uint64_t blocks_poisoned = 0;  ///< scales: blocks with at least one NaN/Inf scale field
    std::uint64_t value_nan = 0;      ///< values mode: NaN values outside poisoned blocks
    std::uint64_t value_inf = 0;      ///< values mode: ±Inf values outside poisoned blocks
    bool all_zero = false;            ///< the warning (zero_checked, at least one element, all ±0)
    /// Stored-bytes findings (elements, or one per poisoned block), the first max_examples in order.
    std::vector<value_finding> examples;
    /// Values-mode findings, the first max_examples in element order.
    std::vector<value_finding> value_examples;

    /// Findings: elements nan + inf; scales blocks_poisoned; plus value_nan + value_inf.
    std::uint64_t findings() const noexcept {
        return (scope == check_scope::scales ? blocks_poisoned : nan + inf) + value_nan + value_inf;
    }
};

/// A consumer for walk_model_data that checks every tensor's values as the walk passes.
class value_consumer final : public data_consumer {
public:
    /// @returns out_of_memory.
    static result<value_consumer> make(const gguf::model& m, const value_check_options& options) noexcept;
    /// The same for tensors of these types (tensor i: types[i]) without a model: for tests and the
    /// fuzzer, which cut windows themselves. The consumer reads nothing of a model but the types.
    static result<value_consumer> make_for_types(std::span<const gguf::tensor_type> types,
                                                 const value_check_options& options) noexcept;

    value_consumer(value_consumer&&) noexcept;
    value_consumer& operator=(value_consumer&&) noexcept;
    ~value_consumer() override;

    void schedule(const window& w, std::vector<job>& jobs) override;
    /// One verdict per tensor, in model.tensors() order, after the walk (once).
    /// @returns out_of_memory when a job or schedule() could not allocate.
    result<std::vector<tensor_verdict>> take() noexcept;

private:
    value_consumer() noexcept;
    struct state;
    std::unique_ptr<state> s_;
};

/// Check a model's values in one walk (the walk's errors, then take()'s).
result<std::vector<tensor_verdict>> check_values(const gguf::model& m, const value_check_options& options,
                                                 const walk_options& walk = {}) noexcept;

}  // namespace minfer::check
