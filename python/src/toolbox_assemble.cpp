// minfer._toolbox.assemble: `minfer assemble` over toolbox::assemble, the same function the command
// calls. minfer/toolbox.py passes the config as a path or, for a dict, as JSON text (YAML reads it).
// The work runs without the GIL; progress as prune's (toolbox_prune.cpp).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/assemble.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

py::dict report_dict(const ::minfer::toolbox::assemble_report& rep) {
    py::object tensor_type = py::module_::import("minfer.types").attr("TensorType");
    py::list tensors, models, metadata, outputs, warnings;
    for (const auto& t : rep.tensors) {
        py::dict d;
        d["name"] = text(t.name);
        d["model"] = text(t.model);
        d["source"] = text(t.source_name);
        d["type"] = tensor_type(static_cast<std::uint32_t>(t.type));
        d["shape"] = py::tuple(py::cast(t.ne));
        d["n_bytes"] = t.n_bytes;
        d["by_rule"] = t.by_rule;
        tensors.append(std::move(d));
    }
    for (const std::string& m : rep.models) models.append(text(m));
    for (const auto& [k, v] : rep.metadata) {
        py::dict d;
        d["key"] = text(k);
        d["value"] = text(v);
        metadata.append(std::move(d));
    }
    std::uint64_t total = 0;
    for (const auto& o : rep.outputs) {
        py::dict d;
        d["path"] = text(o.path.string());
        d["file_size"] = o.file_size;
        d["tensor_count"] = o.tensor_count;
        total += o.file_size;
        outputs.append(std::move(d));
    }
    for (const std::string& w : rep.warnings) warnings.append(text(w));
    py::dict r;
    r["method"] = rep.method;
    r["models"] = models;
    r["tensors"] = tensors;
    r["blocks"] = rep.blocks;
    r["metadata"] = metadata;
    r["outputs"] = outputs;
    r["output_tensor_bytes"] = rep.output_tensor_bytes;
    r["file_size"] = total;
    r["warnings"] = warnings;
    r["written"] = rep.written;
    py::dict fetched;
    fetched["head_bytes"] = rep.fetched.head_bytes;
    fetched["tensor_bytes_planned"] = rep.fetched.planned_bytes;
    fetched["bytes"] = rep.fetched.bytes;
    fetched["requests"] = rep.fetched.requests;
    r["fetched"] = fetched;
    return r;
}

py::dict assemble(const std::optional<std::string>& config_path, const std::optional<std::string>& config_text,
                  const std::string& output, bool provenance, const std::optional<std::string>& imatrix,
                  std::optional<std::uint64_t> split_max_bytes,
                  std::optional<std::uint64_t> split_max_tensors, bool dry_run, bool overwrite, const py::object& progress,
                  std::optional<std::uint64_t> max_fetch, std::optional<double> timeout) {
    ::minfer::toolbox::assemble_request rq;
    if (config_path) rq.config = fs::path(*config_path);
    rq.config_text = config_text;
    rq.output = fs::path(output);
    rq.provenance = provenance;
    if (imatrix) rq.imatrix = fs::path(*imatrix);
    rq.split_max_bytes = split_max_bytes;
    rq.split_max_tensors = split_max_tensors;
    rq.dry_run = dry_run;
    rq.overwrite = overwrite;
    rq.remote.max_fetch = max_fetch;
    rq.remote.timeout_s = timeout;
    if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) rq.remote.hf_token = token;  // sent to the Hub only

    progress_relay relay(progress);
    ::minfer::toolbox::assemble_events events;
    events.progress = relay.callback();
    auto rep = without_gil([&] { return ::minfer::toolbox::assemble(rq, events); });
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

void register_assemble(py::module_& m) {
    m.def("assemble", &assemble, py::arg("config_path"), py::arg("config_text"), py::arg("output"), py::arg("provenance"), py::arg("imatrix"),
          py::arg("split_max_bytes"), py::arg("split_max_tensors"), py::arg("dry_run"), py::arg("overwrite"),
          py::arg("progress"), py::arg("max_fetch"), py::arg("timeout"), "Build a model from a mergekit config (minfer assemble). Returns the report as a dict.");
}

}  // namespace minfer::python::toolbox
