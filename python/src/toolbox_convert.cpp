// minfer._toolbox.convert: `minfer convert` over toolbox::convert, the same function the command
// calls (a Hugging Face safetensors checkpoint directory to the GGUF file convert_hf_to_gguf.py
// writes, or a llama-quantize type of it in the same pass). minfer/toolbox.py turns the Python
// arguments into plain values (paths as bytes, sizes as ints); the checkpoint is planned and written
// without the GIL and the report comes back as a dict with the keys of `minfer convert --json`.
//
// Progress: called from the library's writing thread with the GIL taken; an exception it raises is
// kept, ends the run (nothing has been named yet) and is raised here.
//
// A checkpoint given by URL (http(s)://…/, hf://OWNER/REPO[@REVISION]): max_fetch and timeout as
// toolbox_assemble.cpp sets them, $HF_TOKEN sent to the Hub only; the dict's "fetched" says what was.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/convert.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

// The library's bad_value_text names the option it refused as its subject ("outtype", "imatrix",
// "split_max_bytes"); said as "the value for key …", that reads as a metadata key. Here the
// argument is named instead, as quantize's are: "outtype: 'q3': neither …".
gguf::error as_option_error(const gguf::error& e) {
    if (e.code != gguf::errc::bad_value_text || e.subject.empty()) return e;
    gguf::error out = e;
    out.where = gguf::section::access;
    out.detail = std::string(e.subject.view()) + ": " + e.detail;
    out.subject.clear();
    return out;
}

py::dict report_dict(const ::minfer::toolbox::convert_report& rep) {
    py::object tensor_type = py::module_::import("minfer.types").attr("TensorType");
    py::list tensors;
    for (const ::minfer::toolbox::converted_tensor& t : rep.tensors) {
        py::dict d;
        d["name"] = text(t.name);
        d["source"] = t.source_name.empty() ? py::object(py::none()) : py::object(text(t.source_name));
        d["source_dtype"] = t.source_dtype.empty() ? py::object(py::none()) : py::object(text(t.source_dtype));
        d["type"] = tensor_type(static_cast<std::uint32_t>(t.type));
        d["ne"] = py::tuple(py::cast(t.ne));
        d["bytes"] = t.n_bytes;
        tensors.append(std::move(d));
    }
    py::list warnings, outputs;
    for (const std::string& w : rep.warnings) warnings.append(text(w));
    std::uint64_t total = 0;
    for (const ::minfer::toolbox::output_file& o : rep.outputs) {
        py::dict d;
        d["path"] = text(o.path.string());
        d["file_size"] = o.file_size;
        d["tensor_count"] = o.tensor_count;
        total += o.file_size;
        outputs.append(std::move(d));
    }
    py::dict r;
    r["written"] = rep.written;
    r["architecture"] = text(rep.architecture);
    r["gguf_architecture"] = text(rep.gguf_architecture);
    r["file_type"] = text(rep.file_type);
    r["input_tensor_bytes"] = rep.input_bytes;
    r["output_tensor_bytes"] = rep.output_tensor_bytes;
    r["outputs"] = outputs;
    r["tensors"] = tensors;
    r["warnings"] = warnings;
    r["file_size"] = total;
    py::dict fetched;
    fetched["head_bytes"] = rep.fetched.head_bytes;
    fetched["tensor_bytes_planned"] = rep.fetched.planned_bytes;
    fetched["bytes"] = rep.fetched.bytes;
    fetched["requests"] = rep.fetched.requests;
    r["fetched"] = fetched;
    return r;
}

py::dict convert(const std::string& model, const std::string& outfile, const std::string& outtype,
                 const std::optional<std::string>& model_name, const std::optional<std::string>& pre, bool vocab_only,
                 const std::optional<std::string>& imatrix, std::optional<std::uint64_t> split_max_bytes,
                 std::optional<std::uint64_t> split_max_tensors, unsigned threads, bool dry_run, bool overwrite,
                 const py::object& progress, std::optional<std::uint64_t> max_fetch, std::optional<double> timeout) {
    ::minfer::toolbox::convert_request rq;
    rq.input = fs::path(model);
    rq.output = fs::path(outfile);
    rq.outtype = outtype;
    rq.model_name = model_name;
    if (pre) rq.pre = *pre;
    rq.vocab_only = vocab_only;
    if (imatrix) rq.imatrix = fs::path(*imatrix);
    rq.split_max_bytes = split_max_bytes;
    rq.split_max_tensors = split_max_tensors;
    rq.threads = threads;
    rq.dry_run = dry_run;
    rq.overwrite = overwrite;
    rq.remote.max_fetch = max_fetch;
    rq.remote.timeout_s = timeout;
    if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) rq.remote.hf_token = token;  // sent to the Hub only

    progress_relay relay(progress);
    ::minfer::toolbox::convert_events events;
    events.progress = relay.callback();
    auto rep = without_gil([&] { return ::minfer::toolbox::convert(rq, events); });
    relay.raise_if_failed();  // the callback's exception first: it may be why the write failed
    if (!rep) {
        const gguf::error& e = rep.error();
        // The command's two usage errors of the output (cli/common/model_output.cpp output_refusal).
        if (gguf::is_output_exists(e) && !overwrite)
            raise_usage(std::string("the output '") + gguf::escape(e.file) + "' exists; pass overwrite=True to replace it", e.file);
        if (e.code == gguf::errc::io_error && e.sys_errno == EINVAL && e.detail == "the output is one of the input files")
            raise_usage(std::string("the output '") + gguf::escape(e.file) +
                            "' is one of the checkpoint's files: convert never writes over its input",
                        e.file);
        raise_error(as_option_error(e));
    }
    return report_dict(*rep);
}

}  // namespace

void register_convert(py::module_& m) {
    m.def("convert", &convert, py::arg("model"), py::arg("outfile"), py::arg("outtype"), py::arg("model_name"), py::arg("pre"),
          py::arg("vocab_only"), py::arg("imatrix"), py::arg("split_max_bytes"), py::arg("split_max_tensors"), py::arg("threads"),
          py::arg("dry_run"), py::arg("overwrite"), py::arg("progress"), py::arg("max_fetch"), py::arg("timeout"),
          "A Hugging Face checkpoint (a directory or a URL) to GGUF as convert_hf_to_gguf.py writes it (minfer convert). "
          "Returns the report as a dict.");
}

}  // namespace minfer::python::toolbox
