// `minfer split IN PREFIX`: write a model as the parts of a split set (llama-gguf-split's layout,
// see minfer/gguf_write/split_plan.hpp). The plan comes from the metadata alone; every part is
// written atomically, part 1 last (a set is opened through part 1, so none is visible until all of
// it is), and a run that fails part-way removes the parts it wrote, so a failed split leaves nothing
// behind.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "../common/plural.hpp"
#include "../common/display_width.hpp"
#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "../common/run_printing.hpp"
#include "../common/progress.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "../common/sizes.hpp"
#include "../common/usage_error.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace minfer::cli {
namespace {

struct split_cli_options {
    std::string input;
    std::string prefix;
    std::string max_tensors;  // text: parsed here, so every bad value gets our message and exit 2
    std::string max_size;
    bool no_tensor_first_split = false;
    bool dry_run = false;
    bool force = false;
    bool quiet = false;
};

split_cli_options opt;  // filled by CLI11 during parsing, read by split_run()
// Whether each limit was given (an empty value given is an error, not "absent").
CLI::Option* max_tensors_opt = nullptr;
CLI::Option* max_size_opt = nullptr;


std::string part_line(const gguf::model& m, const gguf::split_plan& plan, std::uint32_t i, const std::string& name,
                      std::size_t name_w) {
    const gguf::split_part& p = plan.parts()[i];
    std::string tensors;
    if (p.count == 0) {
        tensors = "(metadata only)";
    } else {
        const auto ts = plan.tensors_of(m, i);
        tensors = gguf::escape(ts.front().info->name);
        if (p.count > 1) tensors += " .. " + gguf::escape(ts.back().info->name);
    }
    return fmt::format("  {}  {:>6} {}  {:>14} bytes  {:>10}  {}", pad_right(gguf::escape(name), name_w), p.count,
                       p.count == 1 ? "tensor " : "tensors", p.file_size, mib_text(p.file_size), tensors);
}

// "<what> 3 parts, 7 tensors, 1234 bytes (0.0 MiB), at most 2 tensors per part:" and a line per part.
void print_parts(out_buffer& out, std::string_view what, const gguf::model& m, const gguf::split_plan& plan,
                 const gguf::split_options& so, const std::vector<std::string>& names) {
    std::string limit;
    if (so.max_bytes) limit = fmt::format("at most {} bytes per part file", *so.max_bytes);
    if (so.max_tensors || !so.max_bytes)
        limit = fmt::format("at most {} per part",
                            plural(so.max_tensors.value_or(gguf::default_split_max_tensors), "tensor", "tensors"));
    out.print("{} {}, {}, {} bytes ({}); {}{}:\n", what, plural(plan.part_count(), "part", "parts"),
              plural(plan.tensor_count(), "tensor", "tensors"), plan.total_bytes(), mib_text(plan.total_bytes()),
              limit, so.no_tensor_first_split ? ", no tensor in part 1" : "");
    std::size_t name_w = 0;
    for (const std::string& n : names) name_w = std::max(name_w, display_width(gguf::escape(n)));
    for (std::uint32_t i = 0; i < plan.part_count(); ++i) out.print("{}\n", part_line(m, plan, i, names[i], name_w));
}

// What a failed split left (toolbox::write_parts names no part before all are written, so usually
// nothing; a failure while naming removes the parts it had named).
void print_rollback(const toolbox::split_write_failure& f) {
    if (f.removed.empty() && f.not_removed.empty()) {
        fmt::print(stderr, "No part was written: the parts are named only once all of them are complete.\n");
        return;
    }
    for (const auto& [p, ec] : f.not_removed)
        fmt::print(stderr, "Error: cannot remove {}: {}\n", gguf::escape(p), ec.message());
    if (!f.removed.empty() || !f.not_removed.empty())
        fmt::print(stderr, "Removed {} this run had written.\n",
                   f.removed.size() == 1 ? std::string("the part") : fmt::format("the {} parts", f.removed.size()));
}

int run(out_buffer& out) {
    gguf::split_options so;
    so.no_tensor_first_split = opt.no_tensor_first_split;
    if (max_tensors_opt != nullptr && max_tensors_opt->count() > 0) {
        const auto n = toolbox::parse_count(opt.max_tensors);
        if (!n) return usage_error("--split-max-tensors: '" + gguf::escape(opt.max_tensors) + "' is not a whole number");
        if (*n == 0) return usage_error("--split-max-tensors must be at least 1");
        so.max_tensors = *n;
    }
    if (max_size_opt != nullptr && max_size_opt->count() > 0) {
        std::string why;
        const auto n = toolbox::parse_size(opt.max_size, why);
        if (!n) return usage_error("--split-max-size: '" + gguf::escape(opt.max_size) + "': " + why);
        so.max_bytes = *n;
    }
    if (opt.prefix.empty()) return usage_error("the output prefix is empty");

    auto m = open_model(opt.input, false);
    if (!m) return report_error(m.error());
    auto plan = gguf::split_plan::make(*m, so);
    if (!plan) {
        fmt::print(stderr, "Error: {}\n", plan.error().message());
        return plan.error().code == gguf::write_codes::too_many_parts ? exit_usage : exit_code_for(plan.error());
    }

    std::vector<std::string> names;
    for (std::uint32_t i = 0; i < plan->part_count(); ++i) names.push_back(plan->part_name(opt.prefix, i));

    // A part may never be one of the input's files (not even with --force: a failure would then
    // remove the input), replaces an existing file only with --force, and never a FIFO, device or
    // directory (docs/CLI.md "Output files"). Every part is checked before anything is written; a
    // part whose name is a link is written at the link's target (the link stays).
    std::vector<std::string> targets;
    for (const std::string& n : names) {
        if (toolbox::part_of(*m, n))
            return usage_error(gguf::escape(n) + " is a file of the input model; split never writes over its input");
        auto checked = gguf::check_output_path(n, opt.force);
        if (!checked) {
            if (gguf::is_output_exists(checked.error()))
                return usage_error(gguf::escape(n) + " already exists (use --force to replace it)");
            return report_error(checked.error());
        }
        targets.push_back(checked->path.string());
    }

    // One warning per oversized part, the first ten in full (a tiny limit on a big model would
    // otherwise print a line per tensor).
    constexpr std::size_t warn_max = 10;
    std::size_t n_oversized = 0;
    for (std::uint32_t i = 0; i < plan->part_count(); ++i) {
        const gguf::split_part& p = plan->parts()[i];
        if (!p.oversized || ++n_oversized > warn_max) continue;
        std::string why;
        if (p.count == 0) {
            why = "the metadata alone does not fit";
        } else {
            why = "tensor '" + gguf::escape(plan->tensors_of(*m, i).front().info->name) + "' does not fit";
            if (i == 0) why += " with the metadata";
        }
        fmt::print(stderr, "Warning: part {} ({}) is {} bytes, over the --split-max-size limit of {} bytes: {}\n", i + 1,
                   gguf::escape(names[i]), p.file_size, *plan->max_bytes(), why);
    }
    if (n_oversized > warn_max)
        fmt::print(stderr, "Warning: {} more parts are over the limit ({} in all): each holds one tensor that does not fit\n",
                   n_oversized - warn_max, n_oversized);

    if (opt.dry_run) {
        print_parts(out, "Would write", *m, *plan, so, names);
        return exit_ok;
    }

    {
        // minfer::toolbox's protocol (as toolbox.split's): part 1 last, an old part 1 removed first
        // with --force, the parts written removed again on a failure.
        progress bar("splitting " + gguf::escape(opt.input), opt.quiet);
        toolbox::split_write_options wo;
        wo.overwrite = opt.force;
        wo.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
        const auto failed = toolbox::write_split(*m, *plan, targets, wo);
        if (failed) {
            bar.finish();
            if (!failed->part) return report_error(failed->error);
            fmt::print(stderr, "Error: writing part {} of {}: {}\n", *failed->part + 1, plan->part_count(),
                       failed->error.message());
            print_rollback(*failed);
            return exit_code_for(failed->error);
        }
    }
    if (!opt.quiet) {
        print_parts(out, "Wrote", *m, *plan, so, names);
    }
    return exit_ok;
}

}  // namespace

void split_add_options(CLI::App& sub) {
    sub.add_option("input", opt.input, "The model to split: a .gguf file, or part 1 of a split set (re-split)")
        ->required();
    sub.add_option("prefix", opt.prefix,
                   "Output prefix, used exactly as given: parts are <prefix>-00001-of-0000N.gguf, ...")
        ->required();
    auto* tensors = sub.add_option("--split-max-tensors", opt.max_tensors,
                                   "At most N tensors per part (N >= 1; the default, without --split-max-size, is 128)");
    auto* size = sub.add_option("--split-max-size", opt.max_size,
                                "At most SIZE bytes per part file, header included (a hard limit): a number with K, M, "
                                "G, T (10^3..10^12) or KiB, MiB, GiB, TiB (2^10..2^40), e.g. 2G, 1.5GiB, 500000");
    tensors->excludes(size);
    size->excludes(tensors);
    max_tensors_opt = tensors;
    max_size_opt = size;
    sub.add_flag("--no-tensor-first-split", opt.no_tensor_first_split,
                 "Part 1 holds only the metadata, no tensor");
    sub.add_flag("--dry-run", opt.dry_run, "Print the plan (each part's name, tensors, size) and write nothing");
    sub.add_flag("-f,--force", opt.force, "Replace part files that already exist (regular files, or links' targets; never a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
}

int split_run() {
    return run_printing(run);
}

}  // namespace minfer::cli
