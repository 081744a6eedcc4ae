#pragma once
// Shared glue of minfer._toolbox (toolbox_*.cpp): opening a model for a command the way the minfer
// tool does, usage errors as Python exceptions, values of metadata records as Python objects.
// Everything here runs with the GIL held unless a function says otherwise.
#include <pybind11/pybind11.h>

#include <functional>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/value.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "py_error.hpp"

namespace minfer::python::toolbox {

namespace py = pybind11;

/// A request the minfer tool refuses as a usage error (exit 2) that has no library code: an output
/// that exists, an output that is the input, an argument out of range. Raised as
/// minfer.errors.RequestError with code "usage" and exit_code 2.
[[noreturn]] void raise_usage(const std::string& message, const std::string& file = {});

/// A hash manifest without a line of any known hash type: minfer.errors.RequestError with code
/// "manifest_no_known_hash", section "file", file = the manifest, the command's exit_code (hash: 4,
/// verify: 1) and its wording.
[[noreturn]] void raise_manifest_no_known_hash(const std::string& manifest, const std::string& message, int exit_code);

/// raise_error(e), with the exception's exit_code set to `exit_code` (the command's own code for
/// this case: hash --check's 4, 5 and 8, estimate's 2 for options llama.cpp refuses).
[[noreturn]] void raise_error_exit(const gguf::error& e, int exit_code);

/// raise_error(e) as the exception class of `kind` ("invalid", "request", "io") whatever its code,
/// with that exit_code.
[[noreturn]] void raise_error_as(const gguf::error& e, const char* kind, int exit_code);

/// Open a local model (a file, or part 1 of a split set) without the GIL, as the commands that read
/// tensor data do: a URL is refused (bad_value_text: download it first). Raises the open error.
gguf::model open_local(const std::string& path, bool mmap);

/// The 0-based part of `m` that `path` is (same device and inode): minfer::toolbox's, as the CLI's.
using ::minfer::toolbox::part_of;

/// A scalar or string record as a Python value (int, float, bool, str); None for an array.
py::object scalar_value(const gguf::kv& e);

/// Item i of an array record as a Python value; None past the end.
py::object array_item(const gguf::kv& e, std::uint64_t i);

/// The type as `minfer diff` shows it: "u32", "string", "array[u32]".
std::string type_text(const gguf::kv& e);

/// f() run without the GIL (f must touch no Python object), its value returned.
template <class F>
auto without_gil(F&& f) {
    py::gil_scoped_release unlocked;
    return f();
}

/// A Python progress(done, total) callable given to a library's writing thread (quantize, prune,
/// assemble): called with the GIL taken; an exception it raises is kept and ends the library's run
/// (a C++ exception out of the callback cancels the write: nothing has been named yet), and
/// raise_if_failed() raises it again once the library has returned.
class progress_relay {
public:
    explicit progress_relay(py::object progress) : progress_(std::move(progress)) {}
    progress_relay(const progress_relay&) = delete;
    progress_relay& operator=(const progress_relay&) = delete;

    /// The callback for the library's events; empty when progress is None.
    std::function<void(std::uint64_t, std::uint64_t)> callback() {
        if (progress_.is_none()) return {};
        return [this](std::uint64_t done, std::uint64_t total) {
            py::gil_scoped_acquire locked;
            if (failed_) return;
            try {
                progress_(done, total);
            } catch (py::error_already_set& e) {
                failed_ = true;
                type_ = e.type();
                value_ = e.value();
                trace_ = e.trace();
            } catch (...) {  // a C++ exception of pybind11's own conversions
                failed_ = true;
                type_ = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
                value_ = py::str("progress: the callback failed");
            }
            if (failed_) throw cancelled{};
        };
    }

    /// Raise the callback's exception (before the library's error: it may be why the write failed).
    void raise_if_failed() {
        if (!failed_) return;
        PyErr_Restore(type_.release().ptr(), value_.release().ptr(), trace_.release().ptr());
        throw py::error_already_set();
    }

private:
    struct cancelled {};
    py::object progress_;
    bool failed_ = false;
    py::object type_, value_, trace_;
};

/// A byte string from a file (a key, a tensor name) as str (surrogateescape).
inline py::str text(std::string_view bytes) { return file_text(bytes); }

// One per file: toolbox_write.cpp (edit, split, merge), toolbox_hash.cpp, toolbox_verify.cpp,
// toolbox_diff.cpp, toolbox_estimate.cpp, toolbox_quant.cpp, toolbox_quantize.cpp, toolbox_prune.cpp, toolbox_assemble.cpp,
// toolbox_convert.cpp.
void register_write(py::module_& m);
void register_hash(py::module_& m);
void register_verify(py::module_& m);
void register_diff(py::module_& m);
void register_estimate(py::module_& m);
void register_quant(py::module_& m);
void register_quantize(py::module_& m);
void register_prune(py::module_& m);
void register_convert(py::module_& m);
void register_assemble(py::module_& m);
void register_report(py::module_& m);

}  // namespace minfer::python::toolbox
