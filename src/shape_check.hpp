#pragma once
// Internal: the shape rules of check_shape() without building an error, for the parser's hot path
// (one call per tensor of the table). The error, with its strings, is made only on failure.
#include <cstdint>
#include <span>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/tensor.hpp"

namespace minfer::gguf::detail {

struct shape_verdict {
    errc code = errc::ok;
    std::uint64_t expected = 0;
    std::uint64_t found = 0;
};

/// On success fills `f` and returns code ok; otherwise returns the first failed rule (f.ne is
/// filled as far as it was read, padded with 1s, for the error's shape).
shape_verdict check_shape_into(std::uint32_t type_id, std::span<const std::int64_t> dims, shape_facts& f) noexcept;

/// The error check_shape() reports for a failed verdict.
error shape_error(const shape_verdict& v, std::uint32_t type_id, const shape_facts& f);

}  // namespace minfer::gguf::detail
