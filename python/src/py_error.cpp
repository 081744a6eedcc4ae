#include "py_error.hpp"

#include <Python.h>

namespace minfer::python {

namespace {
bool is_io(gguf::errc c) noexcept {
    switch (c) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory:
        case gguf::errc::fetch_budget_exceeded:
        case gguf::errc::http_status:
        case gguf::errc::range_ignored:
        case gguf::errc::bad_content_range:
        case gguf::errc::transfer_failed: return true;
        default: return false;
    }
}

// Codes that say the file is not a valid model (what model::open returns besides I/O), plus a
// hyperparameter llama.cpp cannot use; the rest are requests the file cannot honour.
bool is_invalid_file(gguf::errc c) noexcept {
    if (c == gguf::errc::bad_hyperparameter) return true;
    return static_cast<int>(c) <= static_cast<int>(gguf::errc::split_bad_name) && c != gguf::errc::key_not_found &&
           c != gguf::errc::type_mismatch && c != gguf::errc::tensor_not_found &&
           c != gguf::errc::index_out_of_range && c != gguf::errc::value_out_of_range;
}
}  // namespace

const char* error_kind(gguf::errc code) noexcept {
    if (is_io(code)) return "io";
    if (is_invalid_file(code)) return "invalid";
    return "request";
}

int cli_exit_code(gguf::errc code) noexcept {
    if (is_io(code)) return 3;
    // the command line's value, not the file: a value that does not parse, an output that is no file,
    // a remote model where the file is needed
    if (code == gguf::errc::bad_value_text || code == gguf::errc::model_incomplete ||
        code == gguf::errc::output_not_regular)
        return 2;
    return 1;
}

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
