#pragma once
// How a minfer library error becomes a Python exception (one place for both extension modules).
// The exception classes live in Python (minfer/errors.py) so that they are plain, picklable,
// documented classes; this file builds one with the error's fields and raises it.
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::python {

namespace py = pybind11;

/// Which Python class an error code gets: "invalid" (InvalidFileError), "request" (RequestError)
/// or "io" (GGUFIOError). The same split as the CLI's exit codes 1 and 3.
const char* error_kind(gguf::errc code) noexcept;

/// The CLI's exit code for an error (1 invalid file or findings, 2 usage, 3 I/O).
int cli_exit_code(gguf::errc code) noexcept;

/// Raise `e` as minfer.errors' exception: sets the Python error and throws
/// py::error_already_set, which pybind11 passes on to the caller.
[[noreturn]] void raise_error(const gguf::error& e);

/// The value of `r`, or its error raised.
template <class T>
T unwrap(gguf::result<T>&& r) {
    if (!r) raise_error(r.error());
    if constexpr (!std::is_void_v<T>) return std::move(*r);
}

/// A Python str from bytes of a file, which may not be UTF-8: undecodable bytes become lone
/// surrogates (the "surrogateescape" handler), so s.encode("utf-8", "surrogateescape") gives the
/// file's bytes back exactly.
py::str file_text(std::string_view bytes);

/// ValueError("... on a closed model"): what every accessor of a closed model raises.
[[noreturn]] void raise_closed();

}  // namespace minfer::python
