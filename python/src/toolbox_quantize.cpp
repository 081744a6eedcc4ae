// minfer._toolbox.quantize: `minfer quantize` (llama-quantize's options) over toolbox::quantize, the
// same function the command calls. minfer/toolbox.py turns the Python arguments into plain values
// (paths as bytes, "PATTERN=TYPE" texts as pairs, sizes as ints); this file reads the type names and
// override texts as llama-quantize reads them, runs the quantization without the GIL and returns
// the report as a dict.
//
// Progress: the library calls it from its writing thread without the GIL; the Python callable is
// called with the GIL taken. An exception raised there (Ctrl-C in a progress bar) is kept, and a C++
// exception ends the library's run (quantize_events: an exception from the callback cancels it, and
// nothing has been named yet); the Python exception is then raised. Every existing output stays as
// it was (docs/PYTHON.md).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {


namespace fs = std::filesystem;

// bad_value_text for an option's value, as the library reports a text it cannot read.
[[noreturn]] void raise_bad_text(const std::string& option, const std::string& value, const std::string& why) {
    gguf::error e;
    e.code = gguf::errc::bad_value_text;
    e.where = gguf::section::access;
    e.detail = option + ": '" + gguf::escape(value) + "': " + why;
    raise_error(e);
}

// A ggml tensor type name in any case, as llama-quantize's parse_ggml_type reads
// --output-tensor-type, --token-embedding-type and the TYPE of --tensor-type.
gguf::tensor_type ggml_type(const std::string& option, const std::string& name) {
    if (auto t = gguf::tensor_type_from_name(name)) return *t;
    raise_bad_text(option, name, "not a ggml tensor type name (f16, q4_0, q4_K, iq4_xs, …)");
}

// --tensor-type PATTERN=TYPE, already split by the wrapper: the library's reading, as the CLI's
// (toolbox::make_tensor_type: an empty pattern or type refused, the pattern lowercased).
quant::type_override tensor_type_override(const std::string& pattern, const std::string& type) {
    auto o = ::minfer::toolbox::make_tensor_type(pattern, type);
    if (!o) raise_bad_text("tensor_types", pattern + "=" + type, o.error().detail);
    return std::move(*o);
}

// The library's bad_value_text names the value it refused as its subject (a pattern, an override's
// key, an option); said as "the value for key …", that reads as a metadata key. Here the argument it
// came from is named instead: "tensor_types: 'attn(': not a regular expression".
gguf::error as_option_error(const gguf::error& e, const ::minfer::toolbox::quantize_request& rq) {
    if (e.code != gguf::errc::bad_value_text || e.subject.empty()) return e;
    std::string option;
    for (const quant::type_override& o : rq.tensor_types)
        if (o.pattern == e.subject) option = "tensor_types";
    for (const ::minfer::toolbox::kv_override& o : rq.kv_overrides)
        if (o.key == e.subject) option = "override_kv";
    for (const char* own : {"keep_split", "split_max_bytes", "split_max_tensors", "include_weights", "exclude_weights"})
        if (e.subject == own) option = own;
    if (option.empty()) return e;
    gguf::error out = e;
    out.where = gguf::section::access;
    out.detail = option == e.subject ? option + ": " + e.detail
                                     : option + ": '" + gguf::escape(e.subject) + "': " + e.detail;
    out.subject.clear();
    return out;
}

py::dict report_dict(const ::minfer::toolbox::quantize_report& rep, const ::minfer::toolbox::quantize_request& rq) {
    py::object tensor_type = py::module_::import("minfer.types").attr("TensorType");
    py::dict r;
    py::list plan;
    for (const quant::tensor_choice& c : rep.plan.tensors) {
        py::dict d;
        d["name"] = text(c.name);
        d["from"] = tensor_type(static_cast<std::uint32_t>(c.from));
        d["to"] = tensor_type(static_cast<std::uint32_t>(c.to));
        d["why"] = text(c.why);
        d["fallback"] = c.fallback;
        d["converted"] = c.converted;
        d["quantizable"] = c.quantizable;
        d["needs_importance"] = c.needs_importance;
        plan.append(std::move(d));
    }
    py::list outputs;
    std::uint64_t total = 0;
    for (const ::minfer::toolbox::quantize_output& o : rep.outputs) {
        py::dict d;
        d["path"] = text(o.path.string());
        d["file_size"] = o.file_size;
        d["tensor_count"] = o.tensor_count;
        total += o.file_size;
        outputs.append(std::move(d));
    }
    py::list warnings;
    for (const std::string& w : rep.warnings) warnings.append(text(w));
    r["input"] = text(rq.input.string());
    r["output"] = text(rq.output.string());
    r["type"] = std::string(rq.type.name);
    r["plan"] = plan;
    r["outputs"] = outputs;
    r["warnings"] = warnings;
    r["written"] = rep.written;
    r["dry_run"] = rq.dry_run;
    r["file_size"] = total;
    r["input_tensor_bytes"] = rep.input_tensor_bytes;
    r["output_tensor_bytes"] = rep.output_tensor_bytes;
    r["n_elements"] = rep.n_elements;
    r["n_fallback"] = rep.plan.n_fallback;
    r["imatrix_entries"] = rep.imatrix_entries;
    return r;
}

using tensor_type_pair = std::tuple<std::string, std::string>;

py::dict quantize(const std::string& input, const std::string& output, const std::string& type, unsigned threads,
                  const std::optional<std::string>& imatrix, const std::vector<std::string>& include_weights,
                  const std::vector<std::string>& exclude_weights, const std::optional<std::string>& output_tensor_type,
                  const std::optional<std::string>& token_embedding_type,
                  const std::vector<tensor_type_pair>& tensor_types, bool leave_output_tensor, bool pure,
                  bool allow_requantize, const std::vector<std::string>& override_kv, bool keep_split, bool dry_run,
                  std::optional<std::uint64_t> split_max_bytes, std::optional<std::uint64_t> split_max_tensors,
                  bool overwrite, bool allow_type_change, const py::object& progress) {
    ::minfer::toolbox::quantize_request rq;
    rq.input = fs::path(input);
    rq.output = fs::path(output);
    auto parsed_type = quant::parse_file_type(type);
    if (!parsed_type) raise_bad_text("type", type, parsed_type.error().detail);
    rq.type = *parsed_type;
    rq.threads = threads;

    // llama-quantize's rules on these arguments (the filters, the override keys) are the library's,
    // shared with the CLI: toolbox::quantize refuses what `minfer quantize` refuses.
    if (imatrix) rq.imatrix = fs::path(*imatrix);
    rq.imatrix_filter.include = include_weights;
    rq.imatrix_filter.exclude = exclude_weights;
    if (output_tensor_type) rq.output_tensor_type = ggml_type("output_tensor_type", *output_tensor_type);
    if (token_embedding_type) rq.token_embedding_type = ggml_type("token_embedding_type", *token_embedding_type);
    for (const auto& [pattern, t] : tensor_types) rq.tensor_types.push_back(tensor_type_override(pattern, t));
    rq.leave_output_tensor = leave_output_tensor;
    rq.pure = pure;
    rq.allow_requantize = allow_requantize;
    for (const std::string& kv : override_kv) rq.kv_overrides.push_back(unwrap(::minfer::toolbox::parse_kv_override(kv)));
    rq.keep_split = keep_split;
    rq.dry_run = dry_run;
    rq.split_max_bytes = split_max_bytes;
    rq.split_max_tensors = split_max_tensors;
    rq.overwrite = overwrite;
    rq.allow_type_change = allow_type_change;

    // The callback's exception, kept until the GIL is ours again (the objects are released with it).
    progress_relay relay(progress);
    ::minfer::toolbox::quantize_events events;
    events.progress = relay.callback();
    gguf::result<::minfer::toolbox::quantize_report> rep = without_gil([&] { return ::minfer::toolbox::quantize(rq, events); });
    if (!rep) {
        relay.raise_if_failed();  // the callback's exception first: it may be why the write failed
        const gguf::error& e = rep.error();
        if (gguf::is_output_exists(e) && !overwrite)
            raise_usage(std::string("the output '") + gguf::escape(e.file) + "' exists; pass overwrite=True to replace it",
                        e.file);
        raise_error(as_option_error(e, rq));
    }
    relay.raise_if_failed();  // not reached: a callback that raised ended the run with an error
    return report_dict(*rep, rq);
}

}  // namespace

void register_quantize(py::module_& m) {
    m.def("quantize", &quantize, py::arg("input"), py::arg("output"), py::arg("type"), py::arg("threads"),
          py::arg("imatrix"), py::arg("include_weights"), py::arg("exclude_weights"), py::arg("output_tensor_type"),
          py::arg("token_embedding_type"), py::arg("tensor_types"), py::arg("leave_output_tensor"), py::arg("pure"),
          py::arg("allow_requantize"), py::arg("override_kv"), py::arg("keep_split"), py::arg("dry_run"),
          py::arg("split_max_bytes"), py::arg("split_max_tensors"), py::arg("overwrite"), py::arg("allow_type_change"),
          py::arg("progress"),
          "Quantize a model (minfer quantize, llama-quantize's options). Returns the report as a dict.");
}

}  // namespace minfer::python::toolbox
