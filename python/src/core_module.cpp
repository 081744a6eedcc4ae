// minfer._core: open a GGUF model and read it from Python (see ../minfer/_core.pyi for the API and
// core_state.hpp for how the objects share one model).
#include "core_state.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "minfer._core: open a GGUF model, read its metadata and tensors (zero-copy), dequantize.";
    minfer::python::bind_values(m);
    minfer::python::bind_model(m);
}
