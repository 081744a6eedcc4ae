// minfer._toolbox: the minfer tool's commands as functions (edit, split, merge: toolbox_write.cpp;
// hash, verify, diff, estimate: toolbox_hash.cpp, toolbox_verify.cpp, toolbox_diff.cpp,
// toolbox_estimate.cpp; quantize: toolbox_quantize.cpp) over the same libraries. This file holds
// the module and the glue the commands share. The Python wrappers (minfer/toolbox.py) check and convert
// the arguments and shape the results; these functions take plain values and return dicts.
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>

#include "minfer/gguf/text.hpp"
#include "minfer/remote/url.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {

void raise_usage(const std::string& message, const std::string& file) {
    py::dict fields;
    fields["code"] = "usage";
    fields["section"] = "access";
    fields["exit_code"] = 2;
    fields["file"] = file.empty() ? py::object(py::none()) : py::object(file_text(file));
    py::object make = py::module_::import("minfer.errors").attr("_make");
    py::object exc = make("request", file_text(message), fields);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void raise_manifest_no_known_hash(const std::string& manifest, const std::string& message, int exit_code) {
    py::dict fields;
    fields["code"] = "manifest_no_known_hash";
    fields["section"] = "file";
    fields["exit_code"] = exit_code;
    fields["file"] = text(manifest);
    py::object make = py::module_::import("minfer.errors").attr("_make");
    py::object exc = make("request", text(message), fields);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void raise_error_exit(const gguf::error& e, int exit_code) {
    try {
        raise_error(e);
    } catch (py::error_already_set& exc) {
        exc.value().attr("exit_code") = exit_code;
        throw;
    }
}

void raise_error_as(const gguf::error& e, const char* kind, int exit_code) {
    try {
        raise_error(e);
    } catch (py::error_already_set& exc) {
        py::object value = exc.value();
        py::dict fields(value.attr("fields"));
        fields["exit_code"] = exit_code;
        py::object errno_value = py::getattr(value, "errno", py::none());
        if (!errno_value.is_none()) fields["errno"] = errno_value;
        py::object make = py::module_::import("minfer.errors").attr("_make");
        py::object replaced = make(kind, value.attr("message"), fields);
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(replaced.ptr())), replaced.ptr());
        throw py::error_already_set();
    }
}

gguf::model open_local(const std::string& path, bool mmap) {
    if (remote::is_remote(path)) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.where = gguf::section::access;
        e.file = path;
        e.detail = "this function reads tensor data, which is not fetched from a URL; download the file first "
                   "(minfer.open and minfer.estimate read URLs)";
        raise_error(e);
    }
    gguf::open_options oo;
    oo.mode = mmap ? gguf::load_mode::map : gguf::load_mode::read;
    return unwrap(without_gil([&] { return gguf::model::open(std::filesystem::path(path), oo); }));
}

namespace {
template <class T>
T load(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// A fixed-size value of type `t` at `p` (value_size(t) bytes available) as a Python object.
py::object fixed_value(gguf::value_type t, const std::byte* p) {
    using vt = gguf::value_type;
    switch (t) {
        case vt::u8: return py::int_(load<std::uint8_t>(p));
        case vt::i8: return py::int_(load<std::int8_t>(p));
        case vt::u16: return py::int_(load<std::uint16_t>(p));
        case vt::i16: return py::int_(load<std::int16_t>(p));
        case vt::u32: return py::int_(load<std::uint32_t>(p));
        case vt::i32: return py::int_(load<std::int32_t>(p));
        case vt::u64: return py::int_(load<std::uint64_t>(p));
        case vt::i64: return py::int_(load<std::int64_t>(p));
        case vt::f32: return py::float_(static_cast<double>(load<float>(p)));
        case vt::f64: return py::float_(load<double>(p));
        case vt::boolean: return py::bool_(std::to_integer<unsigned>(*p) != 0);
        case vt::string:
        case vt::array: break;
    }
    return py::none();
}
}  // namespace

py::object scalar_value(const gguf::kv& e) {
    if (e.is_array()) return py::none();
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        return s ? py::object(file_text(*s)) : py::object(py::none());
    }
    const std::uint32_t size = gguf::value_size(e.type);
    if (size == 0 || e.payload.size() < size) return py::none();
    return fixed_value(e.type, e.payload.data());
}

py::object array_item(const gguf::kv& e, std::uint64_t i) {
    auto av = e.get<gguf::array_view>();
    if (!av || i >= av->size()) return py::none();
    if (e.element_type == gguf::value_type::string) {
        auto s = av->string_at(i);
        return s ? py::object(file_text(*s)) : py::object(py::none());
    }
    const std::uint32_t size = gguf::value_size(e.element_type);
    if (size == 0) return py::none();
    return fixed_value(e.element_type, av->raw().data() + i * size);
}

std::string type_text(const gguf::kv& e) {
    if (!e.is_array()) return std::string(gguf::to_string(e.type));
    return std::string("array[").append(gguf::to_string(e.element_type)).append("]");
}

namespace {
// A size as text, read as the CLI reads it (minfer::toolbox::parse_size): the bytes, or the reason.
// Used by split (max_size, reserve) and estimate (max_fetch).
py::object size_text(const std::string& text) {
    std::string why;
    const auto n = ::minfer::toolbox::parse_size(text, why);
    if (!n) return py::make_tuple(py::none(), why);
    return py::make_tuple(py::int_(*n), py::none());
}
}  // namespace

}  // namespace minfer::python::toolbox

PYBIND11_MODULE(_toolbox, m) {
    m.doc() =
        "minfer's toolbox (edit, split, merge, hash, verify, estimate, diff, quantize, prune, assemble, convert) over the C++ libraries. "
        "Use the documented wrappers in minfer.toolbox; these functions take plain values.";
    m.def("parse_size", &minfer::python::toolbox::size_text, pybind11::arg("text"),
          "A SIZE as the CLI reads it: (bytes, None), or (None, why it is not one).");
    minfer::python::toolbox::register_write(m);
    minfer::python::toolbox::register_hash(m);
    minfer::python::toolbox::register_verify(m);
    minfer::python::toolbox::register_diff(m);
    minfer::python::toolbox::register_estimate(m);
    minfer::python::toolbox::register_quant(m);
    minfer::python::toolbox::register_quantize(m);
    minfer::python::toolbox::register_prune(m);
    minfer::python::toolbox::register_convert(m);
    minfer::python::toolbox::register_assemble(m);
    minfer::python::toolbox::register_report(m);
}
