// `minfer assemble CONFIG.yaml -o OUT`: a mergekit configuration run on GGUF models
// (toolbox::assemble: passthrough stacks of slices and `tensors:` recipes, every byte copied from
// its source). --dry-run prints the plan: each output tensor with its model and source name, the
// metadata set, every file's exact size.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/model_output.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/plural.hpp"
#include "../common/progress.hpp"
#include "../common/run_printing.hpp"
#include "../common/sizes.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/toolbox/assemble.hpp"
#include "minfer/toolbox/size_text.hpp"

namespace minfer::cli {
namespace {

struct assemble_cli_options {
    std::string config;
    std::string output;
    bool no_provenance = false;
    std::string imatrix;
    std::string split_max_size, split_max_tensors;
    bool dry_run = false;
    bool json = false;
    bool force = false;
    bool quiet = false;
};

assemble_cli_options opt;  // filled by CLI11 during parsing, read by assemble_run()
remote_args remote_opt;    // --max-fetch, --timeout, --stats (for models given as URLs)

bool any_remote(const toolbox::fetch_totals& f) { return f.files > 0; }

void fetched_json(json_writer& j, const toolbox::fetch_totals& f) {
    j.key("fetched");
    j.begin_object(true);
    j.key("head_bytes");
    j.number(f.head_bytes);
    j.key("tensor_bytes_planned");
    j.number(f.planned_bytes);
    j.key("bytes");
    j.number(f.bytes);
    j.key("requests");
    j.number(f.requests);
    j.end_object();
}

void print_json(out_buffer& out, const toolbox::assemble_report& r) {
    json_writer j(out);
    j.begin_object();
    j.key("written");
    j.boolean(r.written);
    j.key("method");
    j.string(r.method);
    j.key("blocks");
    j.number(std::uint64_t{r.blocks});
    j.key("models");
    j.begin_array(true);
    for (const std::string& m : r.models) j.string(m);
    j.end_array();
    j.key("output_tensor_bytes");
    j.number(r.output_tensor_bytes);
    fetched_json(j, r.fetched);
    outputs_json(j, r.outputs);
    j.key("tensors");
    j.begin_array();
    for (const toolbox::assembled_tensor& t : r.tensors) {
        j.begin_object(true);
        j.key("name");
        j.string(t.name);
        j.key("model");
        j.string(t.model);
        j.key("source");
        j.string(t.source_name);
        j.key("type");
        j.string(gguf::to_string(t.type));
        j.key("ne");
        j.begin_array(true);
        for (std::int64_t n : t.ne) j.number(n);
        j.end_array();
        j.key("bytes");
        j.number(t.n_bytes);
        j.key("by_rule");
        j.boolean(t.by_rule);
        j.end_object();
    }
    j.end_array();
    j.key("metadata");
    j.begin_array();
    for (const auto& [k, v] : r.metadata) {
        j.begin_object(true);
        j.key("key");
        j.string(k);
        j.key("value");
        j.string(v);
        j.end_object();
    }
    j.end_array();
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : r.warnings) j.string(w);
    j.end_array();
    j.end_object();
    j.finish();
}

void print_text(out_buffer& out, const toolbox::assemble_report& r) {
    if (!r.written) {
        out.print("Plan: {} of {} ({} layers), {}\n", r.method, plural(r.models.size(), "model", "models"), r.blocks,
                  plural(r.tensors.size(), "tensor", "tensors"));
        for (const toolbox::assembled_tensor& t : r.tensors)
            out.print("  {:<32} {:<6} {:<22} {:>12}  <- {}{}{}\n", gguf::escape(t.name), gguf::to_string(t.type), shape_text(t.ne),
                      t.n_bytes, gguf::escape(t.model), t.source_name == t.name ? std::string() : " " + gguf::escape(t.source_name),
                      t.by_rule ? " (tensors: rule)" : "");
        out.print("Metadata:\n");
        for (const auto& [k, v] : r.metadata) out.print("  {} = {}\n", gguf::escape(k), v);
        if (any_remote(r.fetched))
            out.print("Remote: {} bytes of heads fetched; {} bytes of tensors to fetch\n", r.fetched.head_bytes,
                      r.fetched.planned_bytes);
    }
    outputs_text(out, r.outputs, r.written);
}

int run(out_buffer& out) {
    if (opt.output.empty()) return usage_error("the output file name is empty (-o OUT)");
    toolbox::assemble_request rq;
    rq.config = opt.config;
    rq.output = opt.output;
    rq.provenance = !opt.no_provenance;
    if (!opt.imatrix.empty()) rq.imatrix = opt.imatrix;
    rq.dry_run = opt.dry_run;
    rq.overwrite = opt.force;
    if (auto rc = read_split_limits(opt.split_max_size, opt.split_max_tensors, rq.split_max_bytes, rq.split_max_tensors)) return *rc;
    if (auto rc = read_remote_settings(remote_opt, rq.remote)) return *rc;
    auto r = [&] {
        progress bar("assembling " + gguf::escape(opt.output), opt.quiet || opt.dry_run || opt.json);
        toolbox::assemble_events ev;
        ev.progress = bar.callback();
        return toolbox::assemble(rq, ev);
    }();
    if (!r) {
        const gguf::error& e = r.error();
        if (auto rc = output_refusal(e, "one of the inputs (a model or the config): assemble never writes over them")) return *rc;
        return report_error(e);
    }
    for (const std::string& w : r->warnings) fmt::print(stderr, "Warning: {}\n", w);
    print_fetch_totals(remote_opt, r->fetched, "heads");
    if (opt.json) {
        print_json(out, *r);
    } else if (!opt.quiet || opt.dry_run) {
        print_text(out, *r);
    }
    return exit_ok;
}

}  // namespace

void assemble_add_options(CLI::App& sub) {
    sub.add_option("config", opt.config, "The mergekit configuration (YAML or JSON)")->required();
    sub.add_option("-o,--output", opt.output, "The file to write (with a split limit: <OUT without .gguf>-0000N-of-0000M.gguf)")
        ->required();
    sub.add_flag("--no-provenance", opt.no_provenance, "Write no general.base_model.* / minfer.recipe keys");
    sub.add_option("--imatrix", opt.imatrix, "An importance matrix for re-quantizing the merged tensors (as quantize reads it)");
    sub.add_option("--split-max-size", opt.split_max_size, "Write a split set, each part file at most this size (e.g. 4G)");
    sub.add_option("--split-max-tensors", opt.split_max_tensors, "Write a split set, at most this many tensors per part");
    sub.add_flag("--dry-run", opt.dry_run, "Print the plan (tensors, sources, metadata, exact sizes); write nothing");
    sub.add_flag("--json", opt.json, "Print the plan or the result as JSON");
    sub.add_flag("-f,--force", opt.force, "Replace the output if it exists (never an input, a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
    add_remote_options(sub, remote_opt);
}

int assemble_run() { return run_printing(run); }

}  // namespace minfer::cli
