// minfer._toolbox: the toolbox functions (being written).
#include <pybind11/pybind11.h>

PYBIND11_MODULE(_toolbox, m) { m.doc() = "minfer's toolbox: edit, split, merge, hash, verify, estimate, diff"; }
