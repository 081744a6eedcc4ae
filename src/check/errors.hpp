#pragma once
// The check library's errors that carry a code alone.
#include "minfer/gguf/error.hpp"

namespace minfer::check::detail {

inline gguf::error code_error(gguf::errc code) noexcept {
    gguf::error e;
    e.code = code;
    return e;
}

}  // namespace minfer::check::detail
