// `minfer merge PART1 OUT`: a split set back into one file (minfer/gguf_write/merge.hpp). The
// loader finds and verifies every part first; the output is written atomically and the parts are
// never touched.

#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "../common/plural.hpp"
#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "../common/run_printing.hpp"
#include "../common/progress.hpp"
#include "../common/sizes.hpp"
#include "../common/usage_error.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/merge.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"

namespace minfer::cli {
namespace {

struct merge_cli_options {
    std::string input;
    std::string output;
    bool dry_run = false;
    bool force = false;
    bool quiet = false;
};

merge_cli_options opt;  // filled by CLI11 during parsing, read by merge_run()


int run(out_buffer& out) {
    auto m = open_model(opt.input, false);
    if (!m) return report_error(m.error());
    auto warnings = gguf::check_merge(*m);
    if (!warnings) {
        fmt::print(stderr, "Error: {}\n", warnings.error().message());
        return exit_code_for(warnings.error());
    }

    // The output may never be one of the parts (not even with --force), and replaces an existing
    // file only with --force.
    if (const auto part = toolbox::part_of(*m, opt.output))
        return usage_error(gguf::escape(opt.output) + " is part " + std::to_string(*part + 1) +
                           " of the input set; merge never writes over its input");
    // A FIFO, device or directory is never replaced, not even with --force (docs/CLI.md "Output files").
    if (auto checked = gguf::check_output_path(opt.output, opt.force); !checked) {
        if (gguf::is_output_exists(checked.error()))
            return usage_error(gguf::escape(opt.output) + " already exists (use --force to replace it)");
        return report_error(checked.error());
    }

    for (const gguf::merge_warning& w : *warnings)
        fmt::print(stderr, "Warning: part {} has key '{}', which the merged file drops (it keeps part 1's metadata)\n",
                   w.part, gguf::escape(w.key));

    auto src = gguf::model_source::open(*m);
    if (!src) return report_error(src.error());
    auto w = gguf::merge_writer(*m, *src);
    if (!w) return report_error(w.error());
    auto plan = w->make_plan();
    if (!plan) {
        fmt::print(stderr, "Error: {}\n", plan.error().message());
        return exit_code_for(plan.error());
    }
    const std::size_t n_parts = m->parts().size();
    if (opt.dry_run) {
        out.print("Would write {}: {} from {}, {} bytes ({})\n", gguf::escape(opt.output),
                  plural(plan->tensor_count(), "tensor", "tensors"), plural(n_parts, "part", "parts"),
                  plan->file_size(), mib_text(plan->file_size()));
        return exit_ok;
    }

    gguf::result<void> r;
    {
        progress bar("merging into " + gguf::escape(opt.output), opt.quiet);
        gguf::write_options wo;
        wo.file.replace_existing = opt.force;
        wo.progress = bar.callback();
        r = w->write(opt.output, wo);
    }
    if (!r) {
        fmt::print(stderr, "Error: {}\n", r.error().message());
        return exit_code_for(r.error());
    }
    if (!opt.quiet)
        out.print("Wrote {}: {} from {}, {} bytes ({})\n", gguf::escape(opt.output),
                  plural(plan->tensor_count(), "tensor", "tensors"), plural(n_parts, "part", "parts"),
                  plan->file_size(), mib_text(plan->file_size()));
    return exit_ok;
}

}  // namespace

void merge_add_options(CLI::App& sub) {
    sub.add_option("input", opt.input, "Part 1 (<name>-00001-of-0000N.gguf) of the split set; the other parts are found beside it")
        ->required();
    sub.add_option("output", opt.output, "The merged .gguf file to write")->required();
    sub.add_flag("--dry-run", opt.dry_run, "Check the set and print what would be written; write nothing");
    sub.add_flag("-f,--force", opt.force, "Replace the output if it exists (a regular file, or a link's target; never one of the parts, a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
}

int merge_run() {
    return run_printing(run);
}

}  // namespace minfer::cli
