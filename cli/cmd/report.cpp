// `minfer report MODEL [B] -o FILE.html`: a picture of a model, one offline HTML page
// (toolbox::report builds the document, toolbox::write_report_page draws and writes it atomically);
// --json prints the document itself. With two models, B is compared with the reference A tensor by
// tensor.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/plural.hpp"
#include "../common/progress.hpp"
#include "../common/run_printing.hpp"
#include "../common/usage_error.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/report.hpp"
#include "minfer/toolbox/size_text.hpp"

namespace minfer::cli {
namespace {

struct report_cli_options {
    std::vector<std::string> models;
    std::string output;
    bool values = false;
    std::string imatrix;
    bool json = false;
    bool force = false;
    bool quiet = false;
};

report_cli_options opt;   // filled by CLI11 during parsing, read by report_run()
remote_args remote_opt;   // --max-fetch, --timeout, --stats (for models given as URLs)

int run(out_buffer& out) {
    if (opt.output.empty() && !opt.json) return usage_error("give the page to write (-o FILE.html), or --json for the document");
    if (!opt.imatrix.empty() && opt.models.size() != 2)
        return usage_error("--imatrix weighs the error of a comparison: give two models (the reference first)");
    toolbox::report_request rq;
    rq.models = opt.models;
    rq.values = opt.values;
    if (!opt.imatrix.empty()) rq.imatrix = opt.imatrix;
    if (auto rc = read_remote_settings(remote_opt, rq.remote)) return *rc;
    // The output is checked before any work: an existing file without --force, a device, an input.
    if (!opt.output.empty()) {
        if (toolbox::report_output_is_input(rq, opt.output))
            return usage_error(gguf::escape(opt.output) + " is one of the models: report never writes over its input");
        if (auto checked = gguf::check_output_path(opt.output, opt.force); !checked) {
            if (gguf::is_output_exists(checked.error()))
                return usage_error(gguf::escape(opt.output) + " already exists (use --force to replace it)");
            return report_error(checked.error());
        }
    }
    auto r = [&] {
        progress bar("reading values", opt.quiet || opt.json || (!opt.values && opt.models.size() < 2));
        toolbox::report_events ev;
        ev.progress = bar.callback();
        return toolbox::report(rq, ev);
    }();
    if (!r) {
        const gguf::error& e = r.error();
        if (e.code == gguf::errc::bad_value_text && (e.subject == "values" || e.subject == "compare")) return usage_error(e.detail);
        return report_error(e);
    }
    if (!opt.output.empty()) {
        if (auto w = toolbox::write_report_page(*r, opt.output, opt.force); !w) return report_error(w.error());
    }
    if (opt.json) out.write(r->json);
    print_fetch_totals(remote_opt, r->fetched);
    if (!opt.output.empty() && !opt.quiet && !opt.json)
        out.print("Wrote {}: {} tensors{}\n", gguf::escape(opt.output), r->tensors,
                  opt.models.size() == 2 ? fmt::format(", {} compared", r->compared) : std::string());
    return exit_ok;
}

}  // namespace

void report_add_options(CLI::App& sub) {
    sub.add_option("models", opt.models, "The model (a file, part 1 of a split set, or a URL); two models: B compared with the reference A")
        ->required()
        ->expected(1, 2);
    sub.add_option("-o,--output", opt.output, "The page to write (one self-contained HTML file)");
    sub.add_flag("--values", opt.values, "Every tensor's statistics and histogram (each tensor dequantized once, streamed)");
    sub.add_option("--imatrix", opt.imatrix, "Importance weights for the comparison's weighted RMSE (as quantize reads them)");
    sub.add_flag("--json", opt.json, "Print the report document (docs/REPORT_JSON.md) on standard output");
    sub.add_flag("-f,--force", opt.force, "Replace the page if it exists (never a model, a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary");
    add_remote_options(sub, remote_opt);
}

int report_run() { return run_printing(run); }

}  // namespace minfer::cli
