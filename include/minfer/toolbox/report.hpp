#pragma once
// toolbox::report: `minfer report MODEL [B] -o FILE.html` and minfer.report() in one function. It
// builds the report document of docs/REPORT_JSON.md: the models' summaries, the primary model's
// metadata, tensors, layer × role cells, bytes by type and by role, vocabulary and chat template;
// with `values`, every tensor's statistics and histogram (each tensor dequantized once, streamed in
// chunks of quant::chunk_values); with two models, every tensor present in both with the same shape
// compared value by value (B against the reference A: RMSE, NMSE, cosine, max |a-b| and where,
// relative error, and with an importance matrix the weighted RMSE), each model read once, tensor by
// tensor in B's order. render_report_page (report_page.hpp) turns the document into the page.
//
// Memory is bounded whatever the models' sizes: one chunk of values per model (4 MiB each), the
// histogram bins, the per-tensor results; the vocabulary's strings are views into the head.
// Models given as URLs are read by their heads (remote_models.hpp); values of a remote model need
// an explicit fetch budget (remote.max_fetch), which the tensors to read must fit.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::toolbox {

struct report_request {
    /// One model (a file, part 1 of a split set, or a URL), or two: the reference A, then B.
    std::vector<std::string> models;
    bool values = false;  ///< per-tensor statistics and histograms (of the primary model)
    /// With two models: importance weights for the weighted RMSE (GGUF or legacy .dat, as quantize
    /// reads them), looked up by tensor name.
    std::optional<std::filesystem::path> imatrix;
    remote_settings remote;
    unsigned threads = 0;  ///< dequantization threads (0: one per hardware thread)
};

struct report_events {
    /// Values read so far and in all (when values or comparing): for a progress line.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

struct report_result {
    std::string json;           ///< the document (docs/REPORT_JSON.md), ends with a newline
    std::string title;          ///< for the page: the primary model's name or file name
    std::uint64_t tensors = 0;  ///< the primary model's
    std::uint64_t compared = 0; ///< tensors compared (two models)
    fetch_totals fetched;       ///< what was fetched from URLs
};

/// Build the document. Errors: bad_value_text (no model, more than two, values of a URL without a
/// fetch budget: subject "values"), the loader's and remote's errors for a model (file = it),
/// model_incomplete, imatrix errors (quant's), dequantization errors (subject = the tensor),
/// fetch_budget_exceeded, out_of_memory.
gguf::result<report_result> report(const report_request& request, const report_events& events = {}) noexcept;

/// The model of the request (as given) that `output` would write over: a local model or any part of
/// its split set that is the same file as `output` (device and inode: another spelling or a link is
/// the same file). nullopt when none is, or `output` does not exist. The frontends refuse it as a
/// usage error before any work: a report never writes over its input.
std::optional<std::string> report_output_is_input(const report_request& request, const std::filesystem::path& output) noexcept;

/// Draw the page of a report (render_report_page) and write it to `output` atomically (a temporary,
/// fsync, rename). @returns io_error EEXIST (exists, without overwrite), output_not_regular, the
/// atomic write's io_error, out_of_memory.
gguf::result<void> write_report_page(const report_result& report, const std::filesystem::path& output, bool overwrite) noexcept;

}  // namespace minfer::toolbox
