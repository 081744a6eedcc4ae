#pragma once
// The C API's errors, shared by its source files (internal: not installed). A failing C function
// records a gguf::error in the calling thread's slot; minfer_last_error_* and minfer_last_error read
// it back, and the functions with a `struct minfer_error*` out-parameter copy it there as well. The
// API's own codes are domain 7 ("capi"), registered with the loader when libminfer.so is loaded, so
// that to_string and message() name them like any library's.
#include <cstdint>
#include <string_view>

#include "minfer.h"
#include "minfer/gguf/error.hpp"

namespace minfer::capi {

// ---- the C API's own codes (the numbers of minfer.h's MINFER_ERROR_*) ----

inline constexpr std::uint8_t capi_domain = 7;
inline constexpr gguf::errc invalid_handle = gguf::make_code(capi_domain, 1);
inline constexpr gguf::errc null_argument = gguf::make_code(capi_domain, 2);
inline constexpr gguf::errc unsupported_param = gguf::make_code(capi_domain, 3);
inline constexpr gguf::errc internal_error = gguf::make_code(capi_domain, 4);
inline constexpr gguf::errc id_out_of_range = gguf::make_code(capi_domain, 5);
inline constexpr gguf::errc callback_failed = gguf::make_code(capi_domain, 6);
static_assert(static_cast<int>(invalid_handle) == MINFER_ERROR_INVALID_HANDLE);
static_assert(static_cast<int>(null_argument) == MINFER_ERROR_NULL_ARGUMENT);
static_assert(static_cast<int>(unsupported_param) == MINFER_ERROR_UNSUPPORTED_PARAM);
static_assert(static_cast<int>(internal_error) == MINFER_ERROR_INTERNAL);
static_assert(static_cast<int>(id_out_of_range) == MINFER_ERROR_ID_OUT_OF_RANGE);
static_assert(static_cast<int>(callback_failed) == MINFER_ERROR_CALLBACK_FAILED);

// ---- recording (every function is noexcept: it runs in catch handlers and on the way out) ----

/// Make `e` the thread's last error.
void record(const gguf::error& e) noexcept;
/// Record an error of `code` about the call `fn` (the subject), with `detail` (the argument, the
/// handle's kind, …) and expected/found.
void record_code(gguf::errc code, const char* fn, std::string_view detail = {}, std::uint64_t expected = 0,
                 std::uint64_t found = 0) noexcept;
/// Record the exception being handled (call inside a catch): out_of_memory for std::bad_alloc,
/// internal_error for anything else.
void record_exception(const char* fn) noexcept;
/// Record an opener's error, naming `fname` when the error names no file.
void record_open_error(gguf::error e, const char* fname) noexcept;

// ---- reading ----

/// The thread's last error into `out`: the message cut to fit (at a UTF-8 character boundary).
void copy_last_error(minfer_error& out) noexcept;
/// The out-parameter of a call that just ended: the thread's last error when it failed, "ok"
/// (code 0, empty texts) when it succeeded. `err` may be NULL.
void report(minfer_error* err, bool failed) noexcept;

}  // namespace minfer::capi
