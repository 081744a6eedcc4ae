// minfer._core's model objects: open(), Model, Part, TensorMap, Tensor, and the free functions of
// the type table and dequantization.
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core_state.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"
#include "minfer/remote/fetch_options.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/url.hpp"

namespace minfer::python {

namespace {

struct model_object {
    state_ptr state;  // null once closed
};

py::object tensor_type_enum(gguf::tensor_type t) {
    static py::object* cls = new py::object(py::module_::import("minfer.types").attr("TensorType"));
    return (*cls)(static_cast<std::uint32_t>(t));
}

// os.fspath(path) as the bytes of the path (str encoded as the file system does).
std::string path_text(py::handle path) {
    py::object p = py::module_::import("os").attr("fspath")(path);
    if (PyBytes_Check(p.ptr())) return std::string(PyBytes_AS_STRING(p.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(p.ptr())));
    PyObject* b = PyUnicode_EncodeFSDefault(p.ptr());
    if (b == nullptr) throw py::error_already_set();
    std::string out(PyBytes_AS_STRING(b), static_cast<std::size_t>(PyBytes_GET_SIZE(b)));
    Py_DECREF(b);
    return out;
}

model_object open_model(py::handle path, bool mmap, std::optional<std::uint64_t> max_fetch, std::optional<double> timeout) {
    auto state = std::make_shared<model_state>();
    state->path = path_text(path);
    if (remote::is_remote(state->path)) {
        std::string url = unwrap(remote::resolve(state->path));
        remote::fetch_options fo;
        if (max_fetch) fo.max_fetch = *max_fetch;
        if (timeout) {
            if (!(*timeout > 0)) throw py::value_error("timeout must be a positive number of seconds");
            fo.timeout_s = *timeout;  // the whole open's deadline, every request and retry included
        }
        if (remote::is_hub(url)) {
            if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) fo.bearer_token = token;
        }
        gguf::result<gguf::model> r = gguf::unexpected(gguf::error{});
        std::uint64_t fetched = 0, requests = 0;
        {
            py::gil_scoped_release unlocked;
            remote::http_opener opener(fo);
            r = gguf::model::open(opener, url);
            fetched = opener.bytes_received();
            requests = opener.requests();
        }
        state->model = unwrap(std::move(r));
        state->remote = true;
        state->fetched_bytes = fetched;
        state->requests = requests;
    } else {
        gguf::open_options options;
        options.mode = mmap ? gguf::load_mode::map : gguf::load_mode::read;
        gguf::result<gguf::model> r = gguf::unexpected(gguf::error{});
        {
            py::gil_scoped_release unlocked;
            r = gguf::model::open(state->path, options);
        }
        state->model = unwrap(std::move(r));
    }
    return model_object{std::move(state)};
}

const model_state& model_live(const model_object& m) { return live(m.state); }

const gguf::tensor_ref* find_tensor(const model_state& s, py::handle name) {
    const std::optional<std::string> k = key_bytes(name);
    if (!k) return nullptr;
    return s.model.find_tensor(*k);
}

py::tuple ggml_shape(const gguf::tensor_info& t) {
    py::tuple out(t.n_dims);
    for (std::uint32_t i = 0; i < t.n_dims; ++i) out[i] = py::int_(t.ne[i]);
    return out;
}

py::tuple numpy_shape(const gguf::tensor_info& t) {
    py::tuple out(t.n_dims);
    for (std::uint32_t i = 0; i < t.n_dims; ++i) out[t.n_dims - 1 - i] = py::int_(t.ne[i]);
    return out;
}

const gguf::tensor_info& info(const tensor_object& t) {
    live(t.state);
    return *t.ref->info;
}

std::span<const std::byte> tensor_bytes(const tensor_object& t) {
    const model_state& s = live(t.state);
    std::span<const std::byte> bytes = s.model.tensor_data(*t.ref);
    if (bytes.size() != t.ref->info->n_bytes)
        throw py::value_error("the tensor's data is not available: a remote model's tensor data is not fetched "
                              "(download the file to read it)");
    return bytes;
}

// f32 values of `bytes` (of `type`) into a new array of `shape`, without the GIL.
py::array dequantize_into(const state_ptr& keep, gguf::tensor_type type, std::span<const std::byte> bytes,
                          std::uint64_t n_values, const std::vector<py::ssize_t>& shape, unsigned threads,
                          std::string_view subject) {
    if (n_values > static_cast<std::uint64_t>(PTRDIFF_MAX) / sizeof(float)) throw std::bad_alloc();
    py::array_t<float> out(shape);
    gguf::result<void> r;
    {
        state_ptr hold = keep;  // the bytes stay mapped even if the model is closed meanwhile
        py::gil_scoped_release unlocked;
        r = quant::dequantize_parallel(type, bytes, std::span<float>(out.mutable_data(), static_cast<std::size_t>(n_values)), threads);
    }
    if (!r) {
        gguf::error e = r.error();
        if (e.subject.empty() && !subject.empty()) e.subject = subject;
        raise_error(e);
    }
    return out;
}

// f32 values into the caller's array `out` (float32, C-contiguous, writable, n_values items), the
// GIL released: what a caller that converts many tensors uses to reuse one buffer.
py::object dequantize_into_out(const state_ptr& keep, gguf::tensor_type type, std::span<const std::byte> bytes,
                               std::uint64_t n_values, py::handle out_obj, unsigned threads, std::string_view subject) {
    if (!py::isinstance<py::array>(out_obj)) throw py::type_error("out must be a numpy array of float32");
    py::array out = py::reinterpret_borrow<py::array>(out_obj);
    if (!out.dtype().equal(py::dtype::of<float>())) throw py::type_error("out must be a numpy array of float32");
    if (!(out.flags() & py::array::c_style)) throw py::value_error("out must be C-contiguous");
    if (!out.writeable()) throw py::value_error("out must be writable");
    if (static_cast<std::uint64_t>(out.size()) != n_values)
        throw py::value_error(py::str("out holds {} values; {} are needed").format(out.size(), n_values));
    float* dst = static_cast<float*>(out.mutable_data());
    gguf::result<void> r;
    {
        state_ptr hold = keep;
        py::gil_scoped_release unlocked;
        r = quant::dequantize_parallel(type, bytes, std::span<float>(dst, static_cast<std::size_t>(n_values)), threads);
    }
    if (!r) {
        gguf::error e = r.error();
        if (e.subject.empty() && !subject.empty()) e.subject = subject;
        raise_error(e);
    }
    return out;
}

py::object to_dtype(py::array a, py::handle dtype) {
    py::dtype want = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
    if (want.equal(py::dtype::of<float>())) return a;
    const char kind = want.kind();
    if (kind != 'f') throw py::type_error("to_numpy: dtype must be a floating type (float32, float64, float16)");
    return a.attr("astype")(want);
}

std::string tensor_repr(const tensor_object& t) {
    if (!t.state || t.state->closed) return "<minfer Tensor of a closed model>";
    const gguf::tensor_info& i = *t.ref->info;
    std::string shape = "[";
    for (std::uint32_t d = 0; d < i.n_dims; ++d) {
        if (d > 0) shape += ", ";
        shape += std::to_string(i.ne[d]);
    }
    shape += "]";
    return std::string("<minfer Tensor ").append(gguf::escape(i.name)).append(" ").append(gguf::to_string(i.type))
        .append(" ").append(shape).append(" part ").append(std::to_string(t.ref->part)).append(">");
}

}  // namespace

void bind_model(py::module_& m) {
    py::class_<model_object>(m, "Model", "A verified GGUF model (a context manager).")
        .def("__enter__", [](py::object self) { model_live(self.cast<const model_object&>()); return self; })
        .def("__exit__", [](model_object& self, py::args) {
            if (self.state) self.state->closed = true;
            self.state.reset();
        })
        .def("close", [](model_object& self) {
            if (self.state) self.state->closed = true;
            self.state.reset();
        })
        .def_property_readonly("closed", [](const model_object& self) { return !self.state || self.state->closed; })
        .def_property_readonly("path", [](const model_object& self) { return file_text(model_live(self).path); })
        .def_property_readonly("parts", [](const model_object& self) {
            const model_state& s = model_live(self);
            py::list out;
            for (std::uint32_t i = 0; i < s.model.parts().size(); ++i) out.append(part_object{self.state, i});
            return out;
        })
        .def_property_readonly("metadata", [](const model_object& self) { model_live(self); return metadata_object{self.state}; })
        .def_property_readonly("tensors", [](const model_object& self) { model_live(self); return tensor_map_object{self.state}; })
        .def_property_readonly("file_bytes", [](const model_object& self) { return model_live(self).model.file_bytes(); })
        .def_property_readonly("is_remote", [](const model_object& self) { return model_live(self).remote; })
        .def_property_readonly("fetched_bytes", [](const model_object& self) { return model_live(self).fetched_bytes; })
        .def_property_readonly("requests", [](const model_object& self) { return model_live(self).requests; })
        .def("__repr__", [](const model_object& self) {
            if (!self.state || self.state->closed) return py::str("<minfer Model (closed)>");
            return py::str("<minfer Model {!r}: {} parts, {} tensors>")
                .format(file_text(self.state->path), self.state->model.parts().size(), self.state->model.tensors().size());
        });

    py::class_<part_object>(m, "Part", "One file of a model.")
        .def_property_readonly("path", [](const part_object& p) { return file_text(live(p.state).model.parts()[p.index].path.string()); })
        .def_property_readonly("version", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.version(); })
        .def_property_readonly("alignment", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.alignment(); })
        .def_property_readonly("file_size", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.file_size(); })
        .def_property_readonly("data_offset", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.data_offset(); })
        .def_property_readonly("data_size", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.data_size(); })
        .def_property_readonly("n_kv", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.metadata().size(); })
        .def_property_readonly("n_tensors", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.tensors().size(); })
        .def_property_readonly("trailing_bytes", [](const part_object& p) { return live(p.state).model.parts()[p.index].trailing_bytes(); })
        .def_property_readonly("complete", [](const part_object& p) { return live(p.state).model.parts()[p.index].view.complete(); })
        .def_property_readonly("data", [](const part_object& p) {
            const std::span<const std::byte> bytes = live(p.state).model.parts()[p.index].view.bytes();
            return view_of(p.state, bytes.data(), bytes.size(), py::dtype("u1"));
        })
        .def("__repr__", [](const part_object& p) {
            if (!p.state || p.state->closed) return py::str("<minfer Part of a closed model>");
            return py::str("<minfer Part {} of {!r}>").format(p.index, file_text(p.state->model.parts()[p.index].path.string()));
        });

    py::class_<tensor_map_object>(m, "TensorMap", "Tensors by name, in file order.")
        .def("__len__", [](const tensor_map_object& t) { return live(t.state).model.tensors().size(); })
        .def("__getitem__", [](const tensor_map_object& t, const py::int_& i) {
            // By position in file order, as gguf-py's reader.tensors[i] (a list): out of range is an
            // IndexError, negative counts from the end. Registered before the by-name overload.
            const auto tensors = live(t.state).model.tensors();
            const auto n = static_cast<long long>(tensors.size());
            int overflow = 0;
            long long k = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
            if (k == -1 && PyErr_Occurred()) throw py::error_already_set();
            if (overflow == 0 && k < 0) k += n;
            if (overflow != 0 || k < 0 || k >= n) throw py::index_error("tensor index out of range");
            return tensor_object{t.state, &tensors[static_cast<std::size_t>(k)]};
        })
        .def("__getitem__", [](const tensor_map_object& t, py::handle name) {
            const gguf::tensor_ref* r = find_tensor(live(t.state), name);
            if (r == nullptr) {
                PyErr_SetObject(PyExc_KeyError, name.ptr());
                throw py::error_already_set();
            }
            return tensor_object{t.state, r};
        })
        .def("get", [](const tensor_map_object& t, py::handle name, py::object fallback) -> py::object {
            const gguf::tensor_ref* r = find_tensor(live(t.state), name);
            if (r == nullptr) return fallback;
            return py::cast(tensor_object{t.state, r});
        }, py::arg("name"), py::arg("default") = py::none())
        .def("__contains__", [](const tensor_map_object& t, py::handle name) { return find_tensor(live(t.state), name) != nullptr; })
        .def("keys", [](const tensor_map_object& t) {
            py::list out;
            for (const gguf::tensor_ref& r : live(t.state).model.tensors()) out.append(file_text(r.info->name));
            return out;
        })
        .def("__iter__", [](const tensor_map_object& t) {
            py::list out;
            for (const gguf::tensor_ref& r : live(t.state).model.tensors()) out.append(file_text(r.info->name));
            return py::iter(out);
        })
        .def("values", [](const tensor_map_object& t) {
            py::list out;
            for (const gguf::tensor_ref& r : live(t.state).model.tensors()) out.append(tensor_object{t.state, &r});
            return out;
        })
        .def("items", [](const tensor_map_object& t) {
            py::list out;
            for (const gguf::tensor_ref& r : live(t.state).model.tensors())
                out.append(py::make_tuple(file_text(r.info->name), tensor_object{t.state, &r}));
            return out;
        })
        .def("__repr__", [](const tensor_map_object& t) {
            if (!t.state || t.state->closed) return py::str("<minfer TensorMap of a closed model>");
            return py::str("<minfer TensorMap: {} tensors>").format(t.state->model.tensors().size());
        });

    py::class_<tensor_object>(m, "Tensor", "A tensor: type, shape, offsets, its bytes and its values.")
        .def_property_readonly("name", [](const tensor_object& t) { return file_text(info(t).name); })
        .def_property_readonly("type", [](const tensor_object& t) { return tensor_type_enum(info(t).type); })
        .def_property_readonly("shape", [](const tensor_object& t) { return ggml_shape(info(t)); })
        .def_property_readonly("numpy_shape", [](const tensor_object& t) { return numpy_shape(info(t)); })
        .def_property_readonly("n_dims", [](const tensor_object& t) { return info(t).n_dims; })
        .def_property_readonly("n_elements", [](const tensor_object& t) { return info(t).n_elements; })
        .def_property_readonly("n_bytes", [](const tensor_object& t) { return info(t).n_bytes; })
        .def_property_readonly("strides", [](const tensor_object& t) {
            const auto& nb = info(t).nb;
            return py::make_tuple(nb[0], nb[1], nb[2], nb[3]);
        })
        .def_property_readonly("data_offset", [](const tensor_object& t) { return info(t).offset; })
        .def_property_readonly("offset", [](const tensor_object& t) {
            const gguf::tensor_info& i = info(t);
            return t.state->model.parts()[t.ref->part].view.data_offset() + i.offset;
        })
        .def_property_readonly("part", [](const tensor_object& t) { live(t.state); return t.ref->part; })
        .def_property_readonly("info_offset", [](const tensor_object& t) { return info(t).info_offset; })
        .def_property_readonly("data", [](const tensor_object& t) {
            const std::span<const std::byte> bytes = tensor_bytes(t);
            return view_of(t.state, bytes.data(), bytes.size(), py::dtype("u1"));
        })
        .def("to_numpy", [](const tensor_object& t, py::handle dtype, unsigned threads, py::handle out) -> py::object {
            const gguf::tensor_info& i = info(t);
            const std::span<const std::byte> bytes = tensor_bytes(t);
            if (!out.is_none()) {
                if (!py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype)).equal(py::dtype::of<float>()))
                    throw py::type_error("to_numpy: out= takes float32 values only");
                return dequantize_into_out(t.state, i.type, bytes, i.n_elements, out, threads, i.name);
            }
            std::vector<py::ssize_t> shape;
            for (std::uint32_t d = i.n_dims; d-- > 0;) shape.push_back(static_cast<py::ssize_t>(i.ne[d]));
            py::array values = dequantize_into(t.state, i.type, bytes, i.n_elements, shape, threads, i.name);
            return to_dtype(std::move(values), dtype);
        }, py::arg("dtype") = py::dtype::of<float>(), py::kw_only(), py::arg("threads") = 0u, py::arg("out") = py::none())
        .def("__repr__", &tensor_repr);

    m.def("open", &open_model, py::arg("path"), py::kw_only(), py::arg("mmap") = true,
          py::arg("max_fetch") = py::none(), py::arg("timeout") = py::none(),
          "Open and verify a GGUF model (a file, part 1 of a split set, or a URL).");

    m.def("dequantize", [](py::buffer data, std::uint32_t type, unsigned threads, py::handle out) -> py::object {
        py::buffer_info b = data.request();
        if (b.ndim > 1) {
            bool contiguous = true;
            py::ssize_t expect = b.itemsize;
            for (py::ssize_t d = b.ndim; d-- > 0;) {
                if (b.strides[static_cast<std::size_t>(d)] != expect) contiguous = false;
                expect *= b.shape[static_cast<std::size_t>(d)];
            }
            if (!contiguous) throw py::value_error("dequantize: the buffer must be C-contiguous");
        } else if (b.ndim == 1 && b.strides[0] != b.itemsize) {
            throw py::value_error("dequantize: the buffer must be C-contiguous");
        }
        const auto n_bytes = static_cast<std::uint64_t>(b.size) * static_cast<std::uint64_t>(b.itemsize);
        const std::span<const std::byte> bytes(static_cast<const std::byte*>(b.ptr), static_cast<std::size_t>(n_bytes));
        const auto tt = static_cast<gguf::tensor_type>(type);
        if (!quant::can_dequantize(tt)) {
            unwrap(quant::dequantize(tt, bytes, std::span<float>()));  // type_not_convertible, with the id
            throw py::value_error("dequantize: type not convertible");  // not reached
        }
        const gguf::type_traits* tr = gguf::traits(type);
        if (n_bytes % tr->block_bytes != 0) {
            gguf::error e;
            e.code = gguf::errc::buffer_size_mismatch;
            e.where = gguf::section::data;
            e.expected = (n_bytes / tr->block_bytes + 1) * tr->block_bytes;
            e.found = n_bytes;
            e.detail = "input bytes: not a whole number of blocks";
            raise_error(e);
        }
        const std::uint64_t n_values = n_bytes / tr->block_bytes * tr->block_elems;
        if (!out.is_none()) return dequantize_into_out(nullptr, tt, bytes, n_values, out, threads, {});
        std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n_values)};
        return dequantize_into(nullptr, tt, bytes, n_values, shape, threads, {});
    }, py::arg("data"), py::arg("type"), py::kw_only(), py::arg("threads") = 0u, py::arg("out") = py::none(),
       "Convert raw bytes of a ggml type to f32 (1-D), as ggml does.");

    m.def("tensor_type_name", [](std::uint32_t type) { return std::string(gguf::to_string(static_cast<gguf::tensor_type>(type))); },
          py::arg("type"));
    m.def("type_block", [](std::uint32_t type) {
        const gguf::type_traits* tr = gguf::traits(type);
        if (tr == nullptr || tr->removed()) return py::make_tuple(0, 0);
        return py::make_tuple(tr->block_elems, tr->block_bytes);
    }, py::arg("type"));
    m.def("can_dequantize", [](std::uint32_t type) { return quant::can_dequantize(static_cast<gguf::tensor_type>(type)); },
          py::arg("type"));
    m.def("active_isa", [] { return std::string(quant::to_string(quant::active_isa())); });
}

}  // namespace minfer::python
