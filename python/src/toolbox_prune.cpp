// minfer._toolbox.prune: `minfer prune` over toolbox::prune, the same function the command calls.
// minfer/toolbox.py turns the Python arguments into plain values (paths as bytes, lists as the
// command's text "0,2,5-7", sizes as ints); the lists are read against the model's counts by the
// library, the work runs without the GIL, and the report comes back as a dict.
//
// Progress: called from the library's writing thread with the GIL taken; an exception it raises is
// kept, ends the run (nothing has been named yet) and is raised here.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/prune.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

py::dict report_dict(const ::minfer::toolbox::prune_report& rep) {
    py::object tensor_type = py::module_::import("minfer.types").attr("TensorType");
    py::list tensors;
    for (const ::minfer::toolbox::pruned_tensor& t : rep.tensors) {
        py::dict d;
        d["name"] = text(t.name);
        d["source"] = text(t.source_name);
        d["type"] = tensor_type(static_cast<std::uint32_t>(t.type));
        d["shape"] = py::tuple(py::cast(t.ne));
        d["n_bytes"] = t.n_bytes;
        d["sliced"] = t.sliced;
        tensors.append(std::move(d));
    }
    py::list removed, warnings, metadata, outputs;
    for (const std::string& n : rep.removed) removed.append(text(n));
    for (const std::string& w : rep.warnings) warnings.append(text(w));
    for (const ::minfer::toolbox::pruned_key& k : rep.metadata) {
        py::dict d;
        d["key"] = text(k.key);
        d["before"] = k.before.empty() ? py::object(py::none()) : py::object(text(k.before));
        d["after"] = k.after.empty() ? py::object(py::none()) : py::object(text(k.after));
        metadata.append(std::move(d));
    }
    std::uint64_t total = 0;
    for (const ::minfer::toolbox::prune_output& o : rep.outputs) {
        py::dict d;
        d["path"] = text(o.path.string());
        d["file_size"] = o.file_size;
        d["tensor_count"] = o.tensor_count;
        total += o.file_size;
        outputs.append(std::move(d));
    }
    py::dict r;
    r["tensors"] = tensors;
    r["removed"] = removed;
    r["metadata"] = metadata;
    r["outputs"] = outputs;
    r["warnings"] = warnings;
    r["blocks_before"] = rep.blocks_before;
    r["blocks_after"] = rep.blocks_after;
    r["experts_before"] = rep.experts_before;
    r["experts_after"] = rep.experts_after;
    r["input_tensor_bytes"] = rep.input_tensor_bytes;
    r["output_tensor_bytes"] = rep.output_tensor_bytes;
    r["file_size"] = total;
    r["written"] = rep.written;
    return r;
}

py::dict prune(const std::string& input, const std::string& output, const std::optional<std::string>& layers,
               const std::optional<std::string>& experts, bool mtp, bool only_mtp, const std::optional<std::string>& tensors,
               bool provenance, std::optional<std::uint64_t> split_max_bytes, std::optional<std::uint64_t> split_max_tensors,
               bool dry_run, bool overwrite, const py::object& progress) {
    ::minfer::toolbox::prune_request rq;
    rq.input = fs::path(input);
    rq.output = fs::path(output);
    rq.layers_text = layers;
    rq.experts_text = experts;
    rq.mtp = mtp;
    rq.only_mtp = only_mtp;
    rq.tensors = tensors;
    rq.provenance = provenance;
    rq.split_max_bytes = split_max_bytes;
    rq.split_max_tensors = split_max_tensors;
    rq.dry_run = dry_run;
    rq.overwrite = overwrite;

    progress_relay relay(progress);
    ::minfer::toolbox::prune_events events;
    events.progress = relay.callback();
    auto rep = without_gil([&] { return ::minfer::toolbox::prune(rq, events); });
    relay.raise_if_failed();
    if (!rep) {
        const gguf::error& e = rep.error();
        if (gguf::is_output_exists(e) && !overwrite)
            raise_usage(std::string("the output '") + gguf::escape(e.file) + "' exists; pass overwrite=True to replace it", e.file);
        raise_error(e);
    }
    return report_dict(*rep);
}

}  // namespace

void register_prune(py::module_& m) {
    m.def("prune", &prune, py::arg("input"), py::arg("output"), py::arg("layers"), py::arg("experts"), py::arg("mtp"), py::arg("only_mtp"),
          py::arg("tensors"), py::arg("provenance"), py::arg("split_max_bytes"), py::arg("split_max_tensors"),
          py::arg("dry_run"), py::arg("overwrite"), py::arg("progress"),
          "Remove layers, experts, MTP layers or tensors from a model (minfer prune). Returns the report as a dict.");
}

}  // namespace minfer::python::toolbox
