// minfer._toolbox.diff: `minfer diff --json` (cli/cmd/diff.cpp) over minfer::compare: metadata and
// tensor differences of two models, with values the numbers compared (without the GIL).
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "minfer/compare/metadata_diff.hpp"
#include "minfer/compare/tensor_diff.hpp"
#include "minfer/gguf/text.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

using compare::diff_metadata;
using compare::diff_tensors;
using compare::metadata_difference;
using compare::tensor_counts;
using compare::tensor_difference;
using compare::value_compare;

py::dict kv_side(const gguf::kv& e) {
    py::dict d;
    d["type"] = type_text(e);
    if (e.is_array()) {
        d["count"] = e.count;
    } else {
        d["value"] = scalar_value(e);
    }
    return d;
}

py::dict tensor_side(const gguf::tensor_info& i) {
    py::dict d;
    d["type"] = std::string(gguf::to_string(i.type));
    py::list shape;
    const std::uint32_t dims = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, i.n_dims));
    for (std::uint32_t k = 0; k < dims; ++k) shape.append(i.ne[k]);
    d["shape"] = shape;
    return d;
}

py::object optional_float(const std::optional<double>& v) { return v ? py::object(py::float_(*v)) : py::object(py::none()); }

py::dict diff(const std::string& a, const std::string& b, bool values, bool mmap) {
    gguf::model ma = open_local(a, mmap);
    gguf::model mb = open_local(b, mmap);
    std::vector<metadata_difference> md;
    std::vector<tensor_difference> td;
    tensor_counts tc;
    bool oom = false;
    std::optional<gguf::error> failed;
    {
        py::gil_scoped_release unlocked;
        try {
            md = diff_metadata(ma.metadata(), mb.metadata());
            auto r = diff_tensors(ma, mb, values, tc);
            if (r) td = std::move(*r);
            else failed = std::move(r).error();
        } catch (const std::bad_alloc&) {
            oom = true;
        }
    }
    if (oom) throw std::bad_alloc();  // pybind11: MemoryError
    if (failed) raise_error(*failed);

    std::uint64_t added = 0, removed = 0, changed = 0;
    py::list meta;
    for (const metadata_difference& d : md) {
        using k = metadata_difference::kind;
        added += d.what == k::added ? 1u : 0u;
        removed += d.what == k::removed ? 1u : 0u;
        changed += d.what != k::added && d.what != k::removed ? 1u : 0u;
        py::dict e;
        e["key"] = text(d.a != nullptr ? d.a->key : d.b->key);
        e["change"] = to_string(d.what);
        if (d.a != nullptr) e["a"] = kv_side(*d.a);
        if (d.b != nullptr) e["b"] = kv_side(*d.b);
        if (d.what == k::array_changed) {
            e["first_difference"] = d.first_index;
            e["item_a"] = array_item(*d.a, d.first_index);
            e["item_b"] = array_item(*d.b, d.first_index);
        }
        meta.append(std::move(e));
    }
    py::list tens;
    for (const tensor_difference& d : td) {
        using k = tensor_difference::kind;
        py::dict e;
        e["name"] = text(d.a != nullptr ? d.a->info->name : d.b->info->name);
        switch (d.what) {
            case k::only_in_a: e["change"] = "only_in_a"; break;
            case k::only_in_b: e["change"] = "only_in_b"; break;
            case k::data_differs: e["change"] = "data_differs"; break;
            case k::changed:
                e["change"] = d.type_changed && d.shape_changed ? "type_and_shape_changed"
                              : d.type_changed                  ? "type_changed"
                                                                : "shape_changed";
                break;
        }
        if (d.a != nullptr) e["a"] = tensor_side(*d.a->info);
        if (d.b != nullptr) e["b"] = tensor_side(*d.b->info);
        if (d.values) {
            const value_compare& c = *d.values;
            py::dict v;
            v["non_finite_mismatches"] = c.non_finite_mismatches();  // first, as minfer diff --json
            if (const auto m = c.first_non_finite_mismatch()) {
                py::dict f;
                f["index"] = m->index;
                f["a"] = static_cast<double>(m->a);
                f["b"] = static_cast<double>(m->b);
                v["first_non_finite_mismatch"] = f;
            } else {
                v["first_non_finite_mismatch"] = py::none();
            }
            v["count"] = c.count();
            v["compared"] = c.compared();
            v["max_abs_diff"] = c.max_abs_diff();
            v["rmse"] = c.rmse();
            v["cosine"] = optional_float(c.cosine());
            v["relative_error"] = optional_float(c.relative_error());
            e["values"] = v;
        } else if (d.values_error) {
            py::dict v;
            v["code"] = std::string(gguf::to_string(d.values_error->code));
            v["message"] = text(d.values_error->message());
            e["values_error"] = v;
        }
        tens.append(std::move(e));
    }
    py::dict summary;
    summary["metadata_added"] = added;
    summary["metadata_removed"] = removed;
    summary["metadata_changed"] = changed;
    summary["tensors_only_in_a"] = tc.only_a;
    summary["tensors_only_in_b"] = tc.only_b;
    summary["tensors_changed"] = tc.changed;
    summary["tensors_data_differs"] = tc.data_differs;
    summary["tensors_identical"] = tc.identical;
    py::dict r;
    r["a"] = text(a);
    r["b"] = text(b);
    r["identical"] = md.empty() && td.empty();
    r["summary"] = summary;
    r["metadata"] = meta;
    r["tensors"] = tens;
    return r;
}

}  // namespace

void register_diff(py::module_& m) {
    m.def("diff", &diff, py::arg("a"), py::arg("b"), py::arg("values"), py::arg("mmap"),
          "Compare two models (minfer diff --json).");
}

}  // namespace minfer::python::toolbox
