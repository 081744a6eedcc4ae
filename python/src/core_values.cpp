// minfer._core's metadata objects: Metadata (the mapping), RawValue (tag, count, offsets, bytes),
// StringArray (a lazy sequence over a string array), and the conversion of one value to Python.
#include <Python.h>

#include <cstring>

#include "core_state.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::python {

namespace {

const char* numpy_format(gguf::value_type t) noexcept {
    switch (t) {
        case gguf::value_type::u8: return "<u1";
        case gguf::value_type::i8: return "<i1";
        case gguf::value_type::u16: return "<u2";
        case gguf::value_type::i16: return "<i2";
        case gguf::value_type::u32: return "<u4";
        case gguf::value_type::i32: return "<i4";
        case gguf::value_type::f32: return "<f4";
        case gguf::value_type::boolean: return "?";
        case gguf::value_type::u64: return "<u8";
        case gguf::value_type::i64: return "<i8";
        case gguf::value_type::f64: return "<f8";
        default: return nullptr;
    }
}

py::object value_type_enum(gguf::value_type t) {
    static py::object* cls = new py::object(py::module_::import("minfer.types").attr("ValueType"));
    return (*cls)(static_cast<std::uint32_t>(t));
}

const model_state& meta_state(const metadata_object& m) { return live(m.state); }

const gguf::kv* find_key(const model_state& s, py::handle key) {
    const std::optional<std::string> k = key_bytes(key);
    if (!k) return nullptr;
    return s.model.find(*k);
}

[[noreturn]] void raise_key_error(py::handle key) {
    PyErr_SetObject(PyExc_KeyError, key.ptr());
    throw py::error_already_set();
}

// Item i of a string array, through its index (built on first use).
std::string_view string_item(string_array_object& a, std::int64_t i) {
    live(a.state);
    const auto n = static_cast<std::int64_t>(a.items.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("string array index out of range");
    if (!a.index) a.index = unwrap(gguf::string_index::build(a.items));
    return unwrap(a.index->at(static_cast<std::uint64_t>(i)));
}

// Any Python int as an index: one beyond int64 is out of range too (IndexError, as a list says, not
// the TypeError of a failed conversion).
std::int64_t index_of(const py::int_& i) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow != 0) throw py::index_error("string array index out of range");
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<std::int64_t>(v);
}

py::list string_list(string_array_object& a) {
    live(a.state);
    const auto n = static_cast<Py_ssize_t>(a.items.size());
    py::list out(n);
    Py_ssize_t i = 0;
    for (std::string_view s : a.items.strings()) {
        if (i == n) break;
        PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
        if (str == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), i++, str);
    }
    return out;
}

}  // namespace

std::optional<std::string> key_bytes(py::handle key) {
    if (PyUnicode_Check(key.ptr())) {
        PyObject* b = PyUnicode_AsEncodedString(key.ptr(), "utf-8", "surrogateescape");
        if (b == nullptr) {
            PyErr_Clear();
            return std::nullopt;
        }
        std::string out(PyBytes_AS_STRING(b), static_cast<std::size_t>(PyBytes_GET_SIZE(b)));
        Py_DECREF(b);
        return out;
    }
    if (PyBytes_Check(key.ptr())) return std::string(PyBytes_AS_STRING(key.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(key.ptr())));
    return std::nullopt;
}

py::array view_of(const state_ptr& s, const std::byte* data, std::uint64_t count, const py::dtype& dtype) {
    py::object base = py::cast(mapping_owner{s});
    const auto item = static_cast<py::ssize_t>(dtype.itemsize());
    py::array a(dtype, {static_cast<py::ssize_t>(count)}, {item}, data, base);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

py::object value_to_python(const state_ptr& s, const gguf::kv& e) {
    using gguf::value_type;
    switch (e.type) {
        case value_type::u8: return py::int_(unwrap(e.get<std::uint8_t>()));
        case value_type::i8: return py::int_(unwrap(e.get<std::int8_t>()));
        case value_type::u16: return py::int_(unwrap(e.get<std::uint16_t>()));
        case value_type::i16: return py::int_(unwrap(e.get<std::int16_t>()));
        case value_type::u32: return py::int_(unwrap(e.get<std::uint32_t>()));
        case value_type::i32: return py::int_(unwrap(e.get<std::int32_t>()));
        case value_type::u64: return py::int_(unwrap(e.get<std::uint64_t>()));
        case value_type::i64: return py::int_(unwrap(e.get<std::int64_t>()));
        case value_type::f32: return py::float_(static_cast<double>(unwrap(e.get<float>())));
        case value_type::f64: return py::float_(unwrap(e.get<double>()));
        case value_type::boolean: return py::bool_(unwrap(e.get<bool>()));
        case value_type::string: return file_text(unwrap(e.get<std::string_view>()));
        case value_type::array: {
            gguf::array_view a = unwrap(e.get<gguf::array_view>());
            if (a.element_type() == value_type::string) return py::cast(string_array_object{s, a, std::nullopt});
            const char* fmt = numpy_format(a.element_type());
            if (fmt == nullptr) throw py::type_error("unsupported array element type");  // the parser refuses these
            return view_of(s, a.raw().data(), a.size(), py::dtype(fmt));
        }
    }
    throw py::type_error("unknown value type");  // unreachable: the parser checked every tag
}

void bind_values(py::module_& m) {
    py::class_<mapping_owner>(m, "FileMapping", "The bytes of an opened model, kept alive by every array that views them.")
        .def_property_readonly("path", [](const mapping_owner& o) { return file_text(o.state->path); })
        .def("__repr__", [](const mapping_owner& o) {
            return py::str("<minfer mapping of {!r}>").format(file_text(o.state->path));
        });

    py::class_<metadata_object>(m, "Metadata", "Part 1's metadata: a read-only mapping key -> value, in file order.")
        .def("__len__", [](const metadata_object& md) { return meta_state(md).model.metadata().metadata().size(); })
        .def("__getitem__", [](const metadata_object& md, py::handle key) {
            const gguf::kv* e = find_key(meta_state(md), key);
            if (e == nullptr) raise_key_error(key);
            return value_to_python(md.state, *e);
        })
        .def("get", [](const metadata_object& md, py::handle key, py::object fallback) {
            const gguf::kv* e = find_key(meta_state(md), key);
            return e == nullptr ? fallback : value_to_python(md.state, *e);
        }, py::arg("key"), py::arg("default") = py::none())
        .def("__contains__", [](const metadata_object& md, py::handle key) { return find_key(meta_state(md), key) != nullptr; })
        .def("keys", [](const metadata_object& md) {
            py::list out;
            for (const gguf::kv& e : meta_state(md).model.metadata().metadata()) out.append(file_text(e.key));
            return out;
        })
        .def("__iter__", [](const metadata_object& md) {
            py::list out;
            for (const gguf::kv& e : meta_state(md).model.metadata().metadata()) out.append(file_text(e.key));
            return py::iter(out);
        })
        .def("values", [](const metadata_object& md) {
            py::list out;
            for (const gguf::kv& e : meta_state(md).model.metadata().metadata()) out.append(value_to_python(md.state, e));
            return out;
        })
        .def("items", [](const metadata_object& md) {
            py::list out;
            for (const gguf::kv& e : meta_state(md).model.metadata().metadata())
                out.append(py::make_tuple(file_text(e.key), value_to_python(md.state, e)));
            return out;
        })
        .def("raw", [](const metadata_object& md, py::handle key) {
            if (!key_bytes(key)) throw py::type_error("raw(): the key must be str or bytes");
            const gguf::kv* e = find_key(meta_state(md), key);
            if (e == nullptr) raise_key_error(key);
            return raw_value_object{md.state, e};
        }, py::arg("key"))
        .def("__repr__", [](const metadata_object& md) {
            if (!md.state || md.state->closed) return py::str("<minfer Metadata of a closed model>");
            return py::str("<minfer Metadata: {} keys>").format(md.state->model.metadata().metadata().size());
        });

    py::class_<raw_value_object>(m, "RawValue", "A metadata entry as stored: type tag, count, offsets, payload bytes.")
        .def_property_readonly("key", [](const raw_value_object& r) { live(r.state); return file_text(r.entry->key); })
        .def_property_readonly("type", [](const raw_value_object& r) { live(r.state); return value_type_enum(r.entry->type); })
        .def_property_readonly("element_type", [](const raw_value_object& r) -> py::object {
            live(r.state);
            if (!r.entry->is_array()) return py::none();
            return value_type_enum(r.entry->element_type);
        })
        .def_property_readonly("count", [](const raw_value_object& r) { live(r.state); return r.entry->count; })
        .def_property_readonly("offset", [](const raw_value_object& r) { live(r.state); return r.entry->offset; })
        .def_property_readonly("value_offset", [](const raw_value_object& r) {
            const model_state& s = live(r.state);
            const std::byte* base = s.model.metadata().bytes().data();
            return static_cast<std::uint64_t>(r.entry->payload.data() - base);
        })
        .def_property_readonly("data", [](const raw_value_object& r) {
            live(r.state);
            return view_of(r.state, r.entry->payload.data(), r.entry->payload.size(), py::dtype("u1"));
        })
        .def("__repr__", [](const raw_value_object& r) {
            if (!r.state || r.state->closed) return py::str("<minfer RawValue of a closed model>");
            return py::str("<minfer RawValue {!r} {} count={} offset={}>")
                .format(file_text(r.entry->key), std::string(gguf::to_string(r.entry->type)), r.entry->count, r.entry->offset);
        });

    py::class_<string_array_object>(m, "StringArray", "A string array of the metadata, read lazily.")
        .def("__len__", [](const string_array_object& a) { live(a.state); return a.items.size(); })
        .def("__getitem__", [](string_array_object& a, const py::int_& i) { return file_text(string_item(a, index_of(i))); })
        .def("__getitem__", [](string_array_object& a, const py::slice& sl) {
            live(a.state);
            py::ssize_t start = 0, stop = 0, step = 0, length = 0;
            if (!sl.compute(static_cast<py::ssize_t>(a.items.size()), &start, &stop, &step, &length))
                throw py::error_already_set();
            py::list out(length);
            for (py::ssize_t k = 0; k < length; ++k)
                out[static_cast<std::size_t>(k)] = file_text(string_item(a, start + k * step));
            return out;
        })
        .def("__iter__", [](string_array_object& a) { return py::iter(string_list(a)); })
        .def("to_list", [](string_array_object& a) { return string_list(a); })
        .def("bytes_at", [](string_array_object& a, const py::int_& i) {
            const std::string_view s = string_item(a, index_of(i));
            return py::bytes(s.data(), s.size());
        }, py::arg("i"))
        .def("__repr__", [](const string_array_object& a) {
            if (!a.state || a.state->closed) return py::str("<minfer StringArray of a closed model>");
            return py::str("<minfer StringArray: {} strings>").format(a.items.size());
        });
}

}  // namespace minfer::python
