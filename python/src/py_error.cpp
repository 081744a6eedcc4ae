#include "py_error.hpp"

#include <Python.h>

#include "minfer/toolbox/exit_code.hpp"

namespace minfer::python {

const char* error_kind(gguf::errc code) noexcept {
    return ::minfer::toolbox::to_string(::minfer::toolbox::kind_of(code)).data();  // a literal: NUL-terminated
}

int cli_exit_code(gguf::errc code) noexcept { return ::minfer::toolbox::exit_code_for(code); }

py::str file_text(std::string_view bytes) {
    PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
    if (s == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(s);
}

void raise_error(const gguf::error& e) {
    py::dict fields;
    fields["code"] = std::string(gguf::to_string(e.code));
    fields["section"] = std::string(gguf::to_string(e.where));
    fields["offset"] = e.offset;
    fields["expected"] = e.expected;
    fields["found"] = e.found;
    fields["file"] = e.file.empty() ? py::object(py::none()) : py::object(file_text(e.file));
    fields["subject"] = e.subject.empty() ? py::object(py::none()) : py::object(file_text(e.subject.view()));
    fields["detail"] = e.detail.empty() ? py::object(py::none()) : py::object(file_text(e.detail));
    fields["index"] = e.index < 0 ? py::object(py::none()) : py::object(py::int_(e.index));
    fields["item"] = e.item < 0 ? py::object(py::none()) : py::object(py::int_(e.item));
    fields["part"] = e.part == 0 ? py::object(py::none()) : py::object(py::int_(e.part));
    fields["n_parts"] = e.n_parts == 0 ? py::object(py::none()) : py::object(py::int_(e.n_parts));
    fields["errno"] = e.sys_errno == 0 ? py::object(py::none()) : py::object(py::int_(e.sys_errno));
    fields["exit_code"] = cli_exit_code(e.code);
    py::object make = py::module_::import("minfer.errors").attr("_make");
    py::object exc = make(error_kind(e.code), file_text(e.message()), fields);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void raise_closed() { throw py::value_error("I/O operation on a closed model"); }

}  // namespace minfer::python
