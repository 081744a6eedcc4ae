// minfer._toolbox.report: `minfer report` over toolbox::report and toolbox::write_report_page, the
// same functions the command calls. Returns the document's text (minfer/toolbox.py parses it) and
// what was fetched; the work runs without the GIL, progress as prune's (toolbox_prune.cpp).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/report.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

py::tuple report(const std::vector<std::string>& models, bool values, const std::optional<std::string>& imatrix,
                 const std::optional<std::string>& output, bool overwrite, std::optional<std::uint64_t> max_fetch,
                 std::optional<double> timeout, const py::object& progress) {
    ::minfer::toolbox::report_request rq;
    rq.models = models;
    rq.values = values;
    if (imatrix) rq.imatrix = fs::path(*imatrix);
    rq.remote.max_fetch = max_fetch;
    rq.remote.timeout_s = timeout;
    if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) rq.remote.hf_token = token;  // sent to the Hub only
    if (output) {
        if (::minfer::toolbox::report_output_is_input(rq, fs::path(*output)))
            raise_usage(std::string("'") + gguf::escape(*output) + "' is one of the models: report never writes over its input", *output);
        auto checked = gguf::check_output_path(*output, overwrite);
        if (!checked) {
            if (gguf::is_output_exists(checked.error()))
                raise_usage(std::string("the output '") + gguf::escape(*output) + "' exists; pass overwrite=True to replace it", *output);
            raise_error(checked.error());
        }
    }
    progress_relay relay(progress);
    ::minfer::toolbox::report_events events;
    events.progress = relay.callback();
    auto rep = without_gil([&] { return ::minfer::toolbox::report(rq, events); });
    relay.raise_if_failed();
    if (!rep) {
        const gguf::error& e = rep.error();
        if (e.code == gguf::errc::bad_value_text && (e.subject == "values" || e.subject == "compare" || e.subject == "models"))
            raise_usage(e.detail);
        raise_error(e);
    }
    if (output) {
        auto w = without_gil([&] { return ::minfer::toolbox::write_report_page(*rep, *output, overwrite); });
        if (!w) raise_error(w.error());
    }
    py::dict fetched;
    fetched["head_bytes"] = rep->fetched.head_bytes;
    fetched["tensor_bytes_planned"] = rep->fetched.planned_bytes;
    fetched["bytes"] = rep->fetched.bytes;
    fetched["requests"] = rep->fetched.requests;
    return py::make_tuple(py::str(rep->json), fetched);
}

}  // namespace

void register_report(py::module_& m) {
    m.def("report", &report, py::arg("models"), py::arg("values"), py::arg("imatrix"), py::arg("output"), py::arg("overwrite"),
          py::arg("max_fetch"), py::arg("timeout"), py::arg("progress"),
          "Build a model's report (minfer report): the document's JSON text and what was fetched; writes the page "
          "when output is given.");
}

}  // namespace minfer::python::toolbox
