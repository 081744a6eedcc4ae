#pragma once
// The objects of minfer._core and how they share one opened model.
//
// Lifetime: a model_state owns the gguf::model (its mappings). Every Python object that reads it
// (Model, Metadata, TensorMap, Tensor, StringArray, RawValue, Part) holds a shared_ptr to it, and
// every numpy array that views its bytes has as base a `FileMapping` object holding one more. So the
// bytes outlive every view, whatever the user does. Model.close() marks the state closed: the
// accessors then raise ValueError, while arrays already handed out stay valid until they are
// collected (the mapping goes with the last of them).
//
// Threads: everything runs with the GIL held, except the parse in open() and dequantization, which
// hold a shared_ptr (never a Python object) while the GIL is released. `closed` and the lazily built
// string indexes are only touched with the GIL held.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/value.hpp"
#include "py_error.hpp"

namespace minfer::python {

namespace py = pybind11;

struct model_state {
    gguf::model model;
    std::string path;  // as given (a URL stays a URL)
    bool remote = false;
    std::uint64_t fetched_bytes = 0;
    std::uint64_t requests = 0;
    bool closed = false;
};
using state_ptr = std::shared_ptr<model_state>;

/// The base object of every numpy view: it keeps the mapping alive.
struct mapping_owner {
    state_ptr state;
};

/// Raise ValueError if the model was closed; returns the state for chaining.
inline model_state& live(const state_ptr& s) {
    if (!s || s->closed) raise_closed();
    return *s;
}

/// A read-only numpy array of `count` items of `dtype` at `data`, viewing the model's bytes.
py::array view_of(const state_ptr& s, const std::byte* data, std::uint64_t count, const py::dtype& dtype);

struct metadata_object {
    state_ptr state;
};

struct raw_value_object {
    state_ptr state;
    const gguf::kv* entry;
};

struct string_array_object {
    state_ptr state;
    gguf::array_view items;
    std::optional<gguf::string_index> index;  // built on the first random access
};

struct tensor_map_object {
    state_ptr state;
};

struct tensor_object {
    state_ptr state;
    const gguf::tensor_ref* ref;
};

struct part_object {
    state_ptr state;
    std::uint32_t index;
};

/// A metadata value as a Python object (int, float, bool, str, numpy view, StringArray).
py::object value_to_python(const state_ptr& s, const gguf::kv& entry);
/// A key given by Python (str, or bytes) as the file's bytes; nullopt for any other type.
std::optional<std::string> key_bytes(py::handle key);

void bind_values(py::module_& m);  // Metadata, RawValue, StringArray (core_values.cpp)
void bind_model(py::module_& m);   // open, Model, Part, TensorMap, Tensor, dequantize (core_model.cpp)

}  // namespace minfer::python
