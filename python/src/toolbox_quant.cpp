// minfer._toolbox.quantize_rows: f32 rows of a numpy array into ggml's block bytes through
// minfer::quant::quantize_rows_parallel (byte for byte ggml_quantize_chunk), without the GIL.
// minfer/quant.py checks and converts the arguments; this function checks them again (it is callable
// directly) and raises the library's errors. It lives in _toolbox rather than _core because an
// error about the caller's array is a request error, never "the file is not valid": the loader's
// not_block_multiple (InvalidFileError elsewhere) is raised here as a RequestError.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/quantize.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

// The quantizable types' names, for the message of an unknown name: "f32, f16, q4_0, …".
std::string quantizable_names() {
    std::string out;
    for (std::uint32_t i = 0; i < gguf::tensor_type_count; ++i) {
        const auto t = static_cast<gguf::tensor_type>(i);
        if (!quant::can_quantize(t)) continue;
        if (!out.empty()) out += ", ";
        out += gguf::to_string(t);
    }
    return out;
}

// A type given as a ggml name in any case ("q4_K", "IQ4_XS") or as an id (TensorType is an int).
gguf::tensor_type type_arg(const py::handle& type) {
    if (py::isinstance<py::str>(type)) {
        const std::string name = type.cast<std::string>();
        if (auto t = gguf::tensor_type_from_name(name)) return *t;
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.where = gguf::section::access;
        e.detail = std::string("unknown tensor type '").append(gguf::escape(name)).append("'; the types that quantize are ")
                       .append(quantizable_names());
        raise_error(e);
    }
    if (py::isinstance<py::int_>(type) && !py::isinstance<py::bool_>(type)) {
        // Any id outside the table becomes one the library names as unknown (type_not_quantizable).
        const py::int_ i = py::reinterpret_borrow<py::int_>(type);
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
        if (overflow != 0 || v < 0 || v > 0xFFFFFFFFLL) return static_cast<gguf::tensor_type>(0xFFFFFFFFu);
        return static_cast<gguf::tensor_type>(static_cast<std::uint32_t>(v));
    }
    throw py::type_error("type must be a tensor type name (str) or a minfer.types.TensorType");
}

// A float32, C-contiguous, native-order array, or TypeError/ValueError naming `what`.
const float* f32_data(const py::array& a, const char* what) {
    if (!a.dtype().equal(py::dtype::of<float>()))
        throw py::type_error(std::string(what).append(" must be a float32 array, not ").append(py::str(a.dtype()).cast<std::string>()));
    if (!(a.flags() & py::array::c_style)) throw py::value_error(std::string(what).append(" must be C-contiguous"));
    return static_cast<const float*>(a.data());
}

py::array quantize_rows(const py::array& values, const py::handle& type_obj, const std::optional<py::array>& importance,
                        unsigned threads) {
    const gguf::tensor_type type = type_arg(type_obj);
    const float* src = f32_data(values, "values");
    if (values.ndim() != 1 && values.ndim() != 2)
        throw py::value_error(py::str("values must be 1-D (one row) or 2-D (rows x n_per_row), not {}-D").format(values.ndim()));
    const auto n_values = static_cast<std::size_t>(values.size());
    const std::int64_t n_per_row = values.ndim() == 1 ? static_cast<std::int64_t>(values.shape(0))
                                                      : static_cast<std::int64_t>(values.shape(1));
    const std::int64_t rows = values.ndim() == 1 ? 1 : static_cast<std::int64_t>(values.shape(0));

    std::span<const float> imp;
    if (importance) {
        const float* w = f32_data(*importance, "importance");
        if (importance->ndim() != 1) throw py::value_error("importance must be 1-D (one weight per column)");
        imp = std::span<const float>(w, static_cast<std::size_t>(importance->size()));
    }

    // The output's size from the block arithmetic when it is defined; otherwise an empty buffer, and
    // the library reports what is wrong (it checks the importance weights, the type and the row
    // length before the output's size).
    const gguf::type_traits* tr = gguf::traits(type);
    std::int64_t row_bytes = 0;
    if (tr != nullptr && !tr->removed() && n_per_row > 0 && n_per_row % tr->block_elems == 0)
        row_bytes = n_per_row / tr->block_elems * tr->block_bytes;
    const std::int64_t out_rows = row_bytes == 0 ? 0 : rows;
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(row_bytes)};
    if (values.ndim() == 2) shape.insert(shape.begin(), static_cast<py::ssize_t>(out_rows));
    py::array_t<std::uint8_t> out(shape);
    const std::span<std::byte> dst(reinterpret_cast<std::byte*>(out.mutable_data()),
                                   static_cast<std::size_t>(out_rows * row_bytes));

    gguf::result<void> r;
    {
        // `values`, `importance` and `out` are owned by the caller's frame: they outlive the release.
        py::gil_scoped_release unlocked;
        r = quant::quantize_rows_parallel(type, std::span<const float>(src, n_values), n_per_row, imp, dst, threads);
    }
    if (!r) {
        gguf::error e = r.error();
        if (e.code == gguf::errc::not_block_multiple) {
            if (e.subject.empty()) e.subject = "values";  // the message names a tensor: the caller's array
            raise_error_as(e, "request", cli_exit_code(e.code));
        }
        raise_error(e);
    }
    return out;
}

}  // namespace

void register_quant(py::module_& m) {
    m.def("quantize_rows", &quantize_rows, py::arg("values"), py::arg("type"), py::arg("importance"), py::arg("threads"),
          "Quantize f32 rows (a float32 C-contiguous 1-D or 2-D array) to `type` (a name or an id) as "
          "ggml_quantize_chunk does; importance: None or n_per_row float32 weights. Returns uint8 rows.");
    m.def("tensor_type_id", [](const std::string& name) { return static_cast<std::uint32_t>(type_arg(py::str(name))); },
          py::arg("name"), "A ggml type name in any case as its id; RequestError bad_value_text for an unknown name.");
    m.def("can_quantize", [](std::uint32_t type) { return quant::can_quantize(static_cast<gguf::tensor_type>(type)); },
          py::arg("type"));
    m.def("requires_importance",
          [](std::uint32_t type) { return quant::requires_importance(static_cast<gguf::tensor_type>(type)); },
          py::arg("type"));
}

}  // namespace minfer::python::toolbox
