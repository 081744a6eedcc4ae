#pragma once
// Internal: the error a failed shape verdict becomes (shared by check_shape and the parser, which
// builds it only on failure, off the hot path).
#include <cstdint>

#include "minfer/gguf/rules.hpp"

namespace minfer::gguf::detail {

/// The error check_shape() reports for a failed verdict of rules::shape.
error shape_error(const verdict& v, std::uint32_t type_id, const shape_facts& f);

}  // namespace minfer::gguf::detail
