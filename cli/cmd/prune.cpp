// `minfer prune IN -o OUT`: blocks, experts, MTP layers or tensors removed from a quantized model
// without requantizing (toolbox::prune: the kept bytes copied unchanged, the metadata kept
// consistent, the output written by the toolbox's one protocol). --dry-run prints the plan: every
// output tensor with its source, the metadata changes and every file's exact size.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

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
#include "minfer/toolbox/errors.hpp"
#include "minfer/toolbox/prune.hpp"
#include "minfer/toolbox/size_text.hpp"

namespace minfer::cli {
namespace {

struct prune_cli_options {
    std::string input;
    std::string output;
    std::string layers, experts, tensors;
    bool mtp = false;
    bool only_mtp = false;
    bool no_provenance = false;
    std::string split_max_size, split_max_tensors;
    bool dry_run = false;
    bool json = false;
    bool force = false;
    bool quiet = false;
};

prune_cli_options opt;  // filled by CLI11 during parsing, read by prune_run()

void print_json(out_buffer& out, const toolbox::prune_report& r) {
    json_writer j(out);
    j.begin_object();
    j.key("written");
    j.boolean(r.written);
    j.key("blocks");
    j.begin_object(true);
    j.key("before");
    j.number(std::uint64_t{r.blocks_before});
    j.key("after");
    j.number(std::uint64_t{r.blocks_after});
    j.end_object();
    j.key("experts");
    j.begin_object(true);
    j.key("before");
    j.number(std::uint64_t{r.experts_before});
    j.key("after");
    j.number(std::uint64_t{r.experts_after});
    j.end_object();
    j.key("input_tensor_bytes");
    j.number(r.input_tensor_bytes);
    j.key("output_tensor_bytes");
    j.number(r.output_tensor_bytes);
    outputs_json(j, r.outputs);
    j.key("tensors");
    j.begin_array();
    for (const toolbox::pruned_tensor& t : r.tensors) {
        j.begin_object(true);
        j.key("name");
        j.string(t.name);
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
        j.key("sliced");
        j.boolean(t.sliced);
        j.end_object();
    }
    j.end_array();
    j.key("removed");
    j.begin_array();
    for (const std::string& n : r.removed) j.string(n);
    j.end_array();
    j.key("metadata");
    j.begin_array();
    for (const toolbox::pruned_key& k : r.metadata) {
        j.begin_object(true);
        j.key("key");
        j.string(k.key);
        j.key("before");
        if (k.before.empty()) j.null(); else j.string(k.before);
        j.key("after");
        if (k.after.empty()) j.null(); else j.string(k.after);
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

void print_text(out_buffer& out, const toolbox::prune_report& r) {
    if (!r.written) {
        out.print("Plan: {} -> {} layers, {} -> {} experts, {} kept ({} renamed or sliced), {} removed\n", r.blocks_before,
                  r.blocks_after, r.experts_before, r.experts_after, plural(r.tensors.size(), "tensor", "tensors"),
                  [&] {
                      std::size_t n = 0;
                      for (const auto& t : r.tensors) n += (t.sliced || t.name != t.source_name) ? 1u : 0u;
                      return n;
                  }(),
                  plural(r.removed.size(), "tensor", "tensors"));
        for (const toolbox::pruned_tensor& t : r.tensors) {
            const bool same = t.name == t.source_name && !t.sliced;
            out.print("  {:<32} {:<6} {:<22} {:>12}{}\n", gguf::escape(t.name), gguf::to_string(t.type), shape_text(t.ne),
                      t.n_bytes,
                      same ? "" : fmt::format("  <- {}{}", gguf::escape(t.source_name), t.sliced ? " (experts sliced)" : ""));
        }
        for (const std::string& n : r.removed) out.print("  removed {}\n", gguf::escape(n));
        out.print("Metadata:\n");
        for (const toolbox::pruned_key& k : r.metadata)
            out.print("  {} {}: {} -> {}\n", k.before.empty() ? "+" : (k.after.empty() ? "-" : "~"), gguf::escape(k.key),
                      k.before.empty() ? "(new)" : k.before, k.after.empty() ? "(removed)" : k.after);
    }
    outputs_text(out, r.outputs, r.written);
}

int run(out_buffer& out) {
    toolbox::prune_request rq;
    rq.input = opt.input;
    rq.output = opt.output;
    if (opt.output.empty()) return usage_error("the output file name is empty (-o OUT)");
    rq.mtp = opt.mtp;
    rq.only_mtp = opt.only_mtp;
    rq.provenance = !opt.no_provenance;
    rq.dry_run = opt.dry_run;
    rq.overwrite = opt.force;
    if (!opt.tensors.empty()) rq.tensors = opt.tensors;
    if (auto rc = read_split_limits(opt.split_max_size, opt.split_max_tensors, rq.split_max_bytes, rq.split_max_tensors)) return *rc;
    // The lists are read against the model's counts by the library (the same reading as Python's).
    if (!opt.layers.empty()) rq.layers_text = opt.layers;
    if (!opt.experts.empty()) rq.experts_text = opt.experts;

    auto r = [&] {
        progress bar("pruning into " + gguf::escape(opt.output), opt.quiet || opt.dry_run || opt.json);
        toolbox::prune_events ev;
        ev.progress = bar.callback();
        return toolbox::prune(rq, ev);
    }();
    if (!r) {
        const gguf::error& e = r.error();
        if (auto rc = output_refusal(e, "one of the input's files: prune never writes over its input")) return *rc;
        if (e.code == gguf::errc::bad_value_text && e.subject == "tensors")
            return usage_error("--tensors " + opt.tensors + ": " + e.detail);
        if (e.code == toolbox::codes::bad_selection && (e.subject == "layers" || e.subject == "experts")) {
            const std::string& given = e.subject == "layers" ? opt.layers : opt.experts;
            return usage_error("--" + e.subject.str() + (given.empty() ? std::string() : " " + given) + ": " + e.detail);
        }
        return report_error(e);
    }
    for (const std::string& w : r->warnings) fmt::print(stderr, "Warning: {}\n", w);
    if (opt.json) {
        print_json(out, *r);
    } else if (!opt.quiet || opt.dry_run) {
        print_text(out, *r);
    }
    return exit_ok;
}

}  // namespace

void prune_add_options(CLI::App& sub) {
    sub.add_option("input", opt.input, "The model: a .gguf file or part 1 of a split set")->required();
    sub.add_option("-o,--output", opt.output,
                   "The file to write (with a split limit: <OUT without .gguf>-0000N-of-0000M.gguf)")
        ->required();
    sub.add_option("--layers", opt.layers, "Blocks to remove, e.g. 3 or 5-7 or 0,2,30-31; the rest are renumbered in order");
    sub.add_option("--experts", opt.experts, "Experts to remove from every MoE block, e.g. 7 or 0,3,60-63");
    sub.add_flag("--mtp", opt.mtp, "Remove the MTP (next-token prediction) layers and their keys: a trunk-only file");
    sub.add_flag("--only-mtp", opt.only_mtp, "Keep only the MTP layers (renumbered from 0) and the tensors outside the blocks");
    sub.add_option("--tensors", opt.tensors, "Remove the tensors this regex (ECMAScript) finds in their names");
    sub.add_flag("--no-provenance", opt.no_provenance,
                 "Write no general.base_model.* / minfer.recipe keys (a layer prune is then llama-quantize --prune-layers' file)");
    sub.add_option("--split-max-size", opt.split_max_size, "Write a split set, each part file at most this size (e.g. 4G, 500M)");
    sub.add_option("--split-max-tensors", opt.split_max_tensors, "Write a split set, at most this many tensors per part");
    sub.add_flag("--dry-run", opt.dry_run, "Print the plan (tensors, sources, metadata changes, exact sizes); write nothing");
    sub.add_flag("--json", opt.json, "Print the plan or the result as JSON");
    sub.add_flag("-f,--force", opt.force, "Replace the output if it exists (never an input file, a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
}

int prune_run() { return run_printing(run); }

}  // namespace minfer::cli
