// `minfer quantize IN OUT TYPE [THREADS]`: llama-quantize's command over toolbox::quantize, which
// plans every tensor's type (quant::plan_types), sizes every output file exactly and writes the
// model as llama_model_quantize does. This file only turns the command line into a request (every
// value checked here, so that a typo is a usage error with the option's name, exit 2), guards the
// output (never the input; an existing file only with --force), draws the progress line, and prints
// the plan (--dry-run), the summary and the report's warnings.

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "../common/display_width.hpp"
#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/plural.hpp"
#include "../common/progress.hpp"
#include "../common/run_printing.hpp"
#include "../common/sigbus_guard.hpp"
#include "../common/sizes.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "minfer/quant/errors.hpp"

namespace minfer::cli {
namespace {

namespace fs = std::filesystem;

struct quantize_cli_options {
    std::vector<std::string> positionals;  // IN [OUT] TYPE [THREADS], read by read_positionals()
    std::string input, output, type;
    std::string threads_arg;     // THREADS, the positional (llama-quantize's nthreads)
    bool threads_arg_given = false;
    std::string threads_option;  // -t/--threads
    std::string imatrix;
    std::vector<std::string> include_weights, exclude_weights;
    std::string output_tensor_type, token_embedding_type;
    std::vector<std::string> tensor_types, override_kv;
    std::string split_max_size, split_max_tensors;  // text: parsed here, as `minfer split` does
    bool leave_output_tensor = false;
    bool pure = false;
    bool allow_requantize = false;
    bool keep_split = false;
    bool dry_run = false;
    bool force = false;
    bool allow_type_change = false;
    bool json = false;
    bool quiet = false;
};

quantize_cli_options opt;  // filled by CLI11 during parsing, read by quantize_run()
// Options whose presence matters even with an empty value (an empty value is an error, not "absent").
struct given_options {
    CLI::Option *threads_option = nullptr, *imatrix = nullptr, *output_type = nullptr,
                *token_embd_type = nullptr, *max_size = nullptr, *max_tensors = nullptr;
} given;

bool was_given(const CLI::Option* o) { return o != nullptr && o->count() > 0; }

std::string in_quotes(std::string_view s) { return "'" + gguf::escape(s) + "'"; }

// A ggml type name for --output-tensor-type and --token-embedding-type (any case, as llama-quantize's
// parse_ggml_type compares).
std::optional<gguf::tensor_type> ggml_type(std::string_view text) { return gguf::tensor_type_from_name(text); }

std::optional<int> parse_threads(const std::string& text, const char* what, unsigned& out) {
    const auto n = toolbox::parse_count(text);
    if (!n || *n > 0xFFFFFFFFu)
        return usage_error(fmt::format("{}: {} is not a whole number of threads (0: one per hardware thread)", what,
                                       in_quotes(text)));
    out = static_cast<unsigned>(*n);
    return std::nullopt;
}

// llama-quantize's positionals, read as its main() reads them: IN, then either TYPE (the second is
// a TYPE name or number: the output is "ggml-model-<TYPE>.gguf" beside the input) or OUT TYPE, then
// an optional THREADS. A second positional that names a type is never taken as a file name (a
// file named "Q4_K_M" is not what anyone means).
std::optional<int> read_positionals() {
    const std::vector<std::string>& p = opt.positionals;
    constexpr std::string_view usage = "expected IN [OUT] TYPE [THREADS] (llama-quantize's order)";
    if (p.size() < 2) return usage_error(fmt::format("{}: {} given", usage, p.size() == 0 ? "nothing" : "only IN"));
    opt.input = p[0];
    std::size_t next = 1;
    if (auto t = quant::parse_file_type(p[1])) {
        // llama-quantize names the output after the first listed TYPE of that file type (a number
        // names it too: 15 is "Q4_K", listed before Q4_K_S and Q4_K_M), beside the input.
        std::string name(t->name);
        const bool number = std::all_of(p[1].begin(), p[1].end(), [](char c) { return c >= '0' && c <= '9'; });
        if (number)
            for (const quant::file_type_name& n : quant::file_type_names())
                if (n.ftype == t->ftype && !n.copy) {
                    name = n.name;
                    break;
                }
        const std::size_t slash = opt.input.find_last_of('/');
        opt.output = (slash == std::string::npos ? std::string() : opt.input.substr(0, slash + 1)) + "ggml-model-" + name + ".gguf";
        opt.type = p[1];
        next = 2;
    } else {
        opt.output = p[1];
        if (p.size() < 3) return usage_error(fmt::format("{}: TYPE is missing after OUT {}", usage, in_quotes(p[1])));
        opt.type = p[2];
        next = 3;
    }
    if (next < p.size()) {
        opt.threads_arg = p[next];
        opt.threads_arg_given = true;
        ++next;
    }
    if (next < p.size())
        return usage_error(fmt::format("{}: unexpected {} after THREADS (every option takes one value per occurrence: "
                                       "repeat the option for another)",
                                       usage, in_quotes(p[next])));
    return std::nullopt;
}

// The request from the command line; a usage error's exit code when a value does not parse.
std::optional<int> make_request(toolbox::quantize_request& rq) {
    if (auto rc = read_positionals()) return rc;
    rq.input = opt.input;
    rq.output = opt.output;
    if (opt.output.empty()) return usage_error("the output file name is empty");

    auto type = quant::parse_file_type(opt.type);
    if (!type)
        return usage_error(fmt::format("TYPE {}: {}; minfer quantize --help lists them", in_quotes(opt.type),
                                       type.error().detail));
    rq.type = *type;

    if (opt.threads_arg_given && was_given(given.threads_option))
        return usage_error("the threads are given twice: as THREADS and with --threads; give one");
    if (opt.threads_arg_given) {
        if (auto rc = parse_threads(opt.threads_arg, "THREADS", rq.threads)) return rc;
    } else if (was_given(given.threads_option)) {
        if (auto rc = parse_threads(opt.threads_option, "--threads", rq.threads)) return rc;
    }

    // The filters' rules (not both, and only with an imatrix) are toolbox::quantize's; report() words them.
    if (was_given(given.imatrix)) {
        if (opt.imatrix.empty()) return usage_error("--imatrix: the file name is empty");
        rq.imatrix = fs::path(opt.imatrix);
    }
    rq.imatrix_filter.include = opt.include_weights;
    rq.imatrix_filter.exclude = opt.exclude_weights;

    if (was_given(given.output_type)) {
        const auto t = ggml_type(opt.output_tensor_type);
        if (!t)
            return usage_error(fmt::format("--output-tensor-type {}: not a ggml type name (q4_0, q4_K, q8_0, f16, …)",
                                           in_quotes(opt.output_tensor_type)));
        rq.output_tensor_type = *t;
    }
    if (was_given(given.token_embd_type)) {
        const auto t = ggml_type(opt.token_embedding_type);
        if (!t)
            return usage_error(fmt::format("--token-embedding-type {}: not a ggml type name (q4_0, q4_K, q8_0, f16, …)",
                                           in_quotes(opt.token_embedding_type)));
        rq.token_embedding_type = *t;
    }
    for (const std::string& text : opt.tensor_types) {
        auto o = toolbox::parse_tensor_type(text);  // the library's reading, as Python's
        if (!o) return usage_error(fmt::format("--tensor-type {}: {}", in_quotes(text), o.error().detail));
        rq.tensor_types.push_back(std::move(*o));
    }
    for (const std::string& text : opt.override_kv) {
        auto o = toolbox::parse_kv_override(text);
        if (!o) return usage_error(fmt::format("--override-kv {}: {}", in_quotes(text), o.error().detail));
        rq.kv_overrides.push_back(std::move(*o));
    }

    rq.leave_output_tensor = opt.leave_output_tensor;
    rq.pure = opt.pure;
    rq.allow_requantize = opt.allow_requantize;
    rq.keep_split = opt.keep_split;
    rq.dry_run = opt.dry_run;
    rq.overwrite = opt.force;
    rq.allow_type_change = opt.allow_type_change;

    if (was_given(given.max_tensors)) {
        const auto n = toolbox::parse_count(opt.split_max_tensors);
        if (!n)
            return usage_error(fmt::format("--split-max-tensors: {} is not a whole number", in_quotes(opt.split_max_tensors)));
        if (*n == 0) return usage_error("--split-max-tensors must be at least 1");
        rq.split_max_tensors = *n;
    }
    if (was_given(given.max_size)) {
        std::string why;
        const auto n = toolbox::parse_size(opt.split_max_size, why);
        if (!n) return usage_error(fmt::format("--split-max-size: {}: {}", in_quotes(opt.split_max_size), why));
        rq.split_max_bytes = *n;
    }
    if (opt.keep_split && (rq.split_max_bytes || rq.split_max_tensors))
        return usage_error(fmt::format("--keep-split writes the input's parts as they are grouped; it cannot be combined "
                                       "with {}",
                                       rq.split_max_bytes ? "--split-max-size" : "--split-max-tensors"));
    return std::nullopt;
}

bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec) && !ec;
}

// Whether an output may be written: never over one of the input's files or the imatrix (not even
// with --force: a failure would then remove the input), an existing file only with --force, never
// a FIFO, device or directory (docs/CLI.md "Output files"). nullopt: it may.
std::optional<int> refuse_output(const fs::path& out, const gguf::model& m, const toolbox::quantize_request& rq) {
    if (toolbox::part_of(m, out))
        return usage_error(fmt::format("the output {} is {}: quantize never writes over its input", in_quotes(out.string()),
                                       m.parts().size() > 1 ? "a file of the input set" : "the input"));
    if (rq.imatrix && same_file(out, *rq.imatrix))
        return usage_error(fmt::format("the output {} is the --imatrix file", in_quotes(out.string())));
    if (auto checked = gguf::check_output_path(out, opt.force); !checked) {
        if (gguf::is_output_exists(checked.error()))
            return usage_error(fmt::format("{} already exists (use --force to replace it)", gguf::escape(out.string())));
        return report_error(checked.error());
    }
    return std::nullopt;
}

// The library's error, in the CLI's words where the option that caused it is known.
int report(const gguf::error& e, const gguf::model& m, const toolbox::quantize_request& rq) {
    if (gguf::is_output_exists(e))
        return usage_error(fmt::format("{} already exists (use --force to replace it)", gguf::escape(e.file)));
    // toolbox::quantize's own refusal of an output that is an input file (io_error, file = the output).
    // (Only that refusal: an imatrix that cannot be read, a directory say, is an io_error naming it too.)
    if (e.code == gguf::errc::io_error && e.sys_errno == EINVAL && e.detail == "the output is one of the input files" &&
        !e.file.empty() && (toolbox::part_of(m, e.file) || (rq.imatrix && same_file(e.file, *rq.imatrix))))
        if (auto rc = refuse_output(e.file, m, rq)) return *rc;
    if (e.code == gguf::errc::bad_value_text) {
        // plan_types' refusal of a --tensor-type pattern (subject = the pattern as given to it).
        for (const quant::type_override& o : rq.tensor_types)
            if (o.pattern == e.subject)
                return usage_error(fmt::format("--tensor-type pattern {}: {}", in_quotes(e.subject), e.detail));
        // toolbox::quantize's refusal of the imatrix filters (subject: the filter it names).
        if (e.subject == "include_weights" || e.subject == "exclude_weights") {
            if (!rq.imatrix_filter.include.empty() && !rq.imatrix_filter.exclude.empty())
                return usage_error("--include-weights and --exclude-weights cannot be used together (as in llama-quantize)");
            return usage_error(fmt::format("--{} filters the importance matrix: it needs --imatrix FILE",
                                           e.subject == "include_weights" ? "include-weights" : "exclude-weights"));
        }
        // toolbox::quantize's refusal of an override (a split.* key, a key llama.cpp reads as another type).
        for (const toolbox::kv_override& o : rq.kv_overrides)
            if (o.key == e.subject) return usage_error(fmt::format("--override-kv {}: {}", in_quotes(e.subject), e.detail));
    }
    if (e.code == gguf::errc::not_block_multiple && e.file.empty()) {
        // Not the input (whose errors name it): an output tensor's layout, from a type the plan applies
        // without a fallback (--output-tensor-type, --token-embedding-type), as llama.cpp does.
        fmt::print(stderr, "Error: {}: the type given for it does not fit its rows [{}]\n", e.description(),
                   gguf::to_string(e.code));
        return exit_code_for(e);
    }
    if (e.file.empty() && toolbox::is_parse_failure(e.code)) {
        // A loader code about what is being written (a 4-D tensor, bad_n_dims), not a file that failed
        // to parse: the input was opened above, and an imatrix's errors name the imatrix.
        fmt::print(stderr, "Error: {}\n", e.message());
        return exit_code_for(e);
    }
    if (e.code == quant::codes::importance_required && !e.subject.empty()) {
        // The description names the tensor and the type; what to do depends on whether one was given.
        fmt::print(stderr, "Error: {}; {} [{}]\n", e.description(),
                   rq.imatrix ? "compute the imatrix for this model, or check --include-weights/--exclude-weights"
                              : "give one with --imatrix FILE",
                   gguf::to_string(e.code));
        return exit_code_for(e);
    }
    return report_error(e);
}

std::string shape_text(const gguf::tensor_info& t) {
    std::string s = "[";
    for (std::uint32_t d = 0; d < t.n_dims && d < gguf::max_dims; ++d) {
        if (d > 0) s += ", ";
        s += fmt::format("{}", t.ne[d]);
    }
    return s + "]";
}

std::uint64_t n_values(const gguf::tensor_info& t) {
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d < t.n_dims && d < gguf::max_dims; ++d) n *= static_cast<std::uint64_t>(t.ne[d]);
    return n;
}

std::string bpw_text(std::uint64_t bytes, std::uint64_t values) {
    if (values == 0) return "n/a";
    return fmt::format("{:.2f}", static_cast<double>(bytes) * 8.0 / static_cast<double>(values));
}

// One row of the plan: what a tensor becomes and why.
struct plan_row {
    std::string name, shape, types, bytes, why;
};

std::vector<plan_row> plan_rows(const gguf::model& m, const quant::type_plan& plan) {
    std::vector<plan_row> rows;
    rows.reserve(plan.tensors.size());
    for (const quant::tensor_choice& c : plan.tensors) {
        plan_row r;
        r.name = gguf::escape(c.name);
        r.why = gguf::escape(c.why);
        r.types = c.from == c.to ? std::string(gguf::to_string(c.from))
                                 : fmt::format("{} -> {}", gguf::to_string(c.from), gguf::to_string(c.to));
        const gguf::tensor_ref* t = m.find_tensor(c.name);
        if (t != nullptr) {
            r.shape = shape_text(*t->info);
            const std::uint64_t out_bytes = quant::bytes_for(c.to, n_values(*t->info));
            r.bytes = c.from == c.to ? fmt::format("{}", t->info->n_bytes)
                                     : fmt::format("{} -> {}", t->info->n_bytes, out_bytes);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

void print_plan(out_buffer& out, const gguf::model& m, const toolbox::quantize_request& rq,
                const toolbox::quantize_report& rep) {
    std::size_t converted = 0;
    for (const auto& c : rep.plan.tensors) converted += c.converted ? 1 : 0;
    out.print("Plan for {} as {} (file type {}): {}, {} converted", gguf::escape(opt.input), rq.type.name,
              static_cast<std::uint32_t>(rq.type.ftype), plural(rep.plan.tensors.size(), "tensor", "tensors"), converted);
    if (rep.imatrix_entries > 0) out.print(", {}", plural(rep.imatrix_entries, "importance entry", "importance entries"));
    out.write("\n");
    const std::vector<plan_row> rows = plan_rows(m, rep.plan);
    std::size_t name_w = 6, shape_w = 5, types_w = 4, bytes_w = 5;
    for (const plan_row& r : rows) {
        name_w = std::max(name_w, display_width(r.name));
        shape_w = std::max(shape_w, r.shape.size());
        types_w = std::max(types_w, r.types.size());
        bytes_w = std::max(bytes_w, r.bytes.size());
    }
    out.print("  {}  {:<{}}  {:<{}}  {:>{}}  {}\n", pad_right("tensor", name_w), "shape", shape_w, "type", types_w,
              "bytes", bytes_w, "rule");
    for (const plan_row& r : rows)
        out.print("  {}  {:<{}}  {:<{}}  {:>{}}  {}\n", pad_right(r.name, name_w), r.shape, shape_w, r.types, types_w,
                  r.bytes, bytes_w, r.why);
}

void print_outputs(out_buffer& out, std::string_view verb, const toolbox::quantize_report& rep) {
    std::uint64_t total = 0;
    std::size_t name_w = 0;
    std::vector<std::string> names;
    for (const auto& o : rep.outputs) {
        total += o.file_size;
        names.push_back(gguf::escape(o.path.string()));
        name_w = std::max(name_w, display_width(names.back()));
    }
    if (rep.outputs.size() == 1) {
        const auto& o = rep.outputs.front();
        out.print("{} {}: {}, {} bytes ({})\n", verb, names.front(), plural(o.tensor_count, "tensor", "tensors"),
                  o.file_size, mib_text(o.file_size));
    } else {
        out.print("{} {}, {} bytes ({}):\n", verb, plural(rep.outputs.size(), "file", "files"), total, mib_text(total));
        for (std::size_t i = 0; i < rep.outputs.size(); ++i) {
            const auto& o = rep.outputs[i];
            out.print("  {}  {:>6} {}  {:>14} bytes  {:>10}\n", pad_right(names[i], name_w), o.tensor_count,
                      noun(o.tensor_count, "tensor ", "tensors"), o.file_size, mib_text(o.file_size));
        }
    }
    out.print("tensor data: {} -> {} bytes ({} -> {}), {} -> {} bits per weight\n", rep.input_tensor_bytes,
              rep.output_tensor_bytes, mib_text(rep.input_tensor_bytes), mib_text(rep.output_tensor_bytes),
              bpw_text(rep.input_tensor_bytes, rep.n_elements), bpw_text(rep.output_tensor_bytes, rep.n_elements));
}

void print_json(out_buffer& out, const gguf::model& m, const toolbox::quantize_request& rq,
                const toolbox::quantize_report& rep) {
    json_writer j(out);
    j.begin_object();
    string_member(j, "input", opt.input);
    j.key("type");
    j.string(rq.type.name);
    j.key("file_type");
    j.number(std::uint64_t{static_cast<std::uint32_t>(rq.type.ftype)});
    j.key("dry_run");
    j.boolean(!rep.written);
    j.key("imatrix_entries");
    j.number(std::uint64_t{rep.imatrix_entries});
    j.key("tensors");
    j.begin_array();
    for (const quant::tensor_choice& c : rep.plan.tensors) {
        j.begin_object();
        string_member(j, "name", c.name);
        const gguf::tensor_ref* t = m.find_tensor(c.name);
        j.key("shape");
        j.begin_array(true);
        if (t != nullptr)
            for (std::uint32_t d = 0; d < t->info->n_dims && d < gguf::max_dims; ++d) j.number(t->info->ne[d]);
        j.end_array();
        j.key("from");
        j.string(gguf::to_string(c.from));
        j.key("to");
        j.string(gguf::to_string(c.to));
        j.key("input_bytes");
        if (t != nullptr) j.number(t->info->n_bytes); else j.null();
        j.key("output_bytes");
        if (t != nullptr) j.number(quant::bytes_for(c.to, n_values(*t->info))); else j.null();
        j.key("quantizable");
        j.boolean(c.quantizable);
        j.key("converted");
        j.boolean(c.converted);
        j.key("fallback");
        j.boolean(c.fallback);
        j.key("needs_imatrix");
        j.boolean(c.needs_importance);
        string_member(j, "rule", c.why);
        j.end_object();
    }
    j.end_array();
    j.key("outputs");
    j.begin_array();
    std::uint64_t total = 0;
    for (const auto& o : rep.outputs) {
        total += o.file_size;
        j.begin_object();
        string_member(j, "path", o.path.string());
        j.key("file_size");
        j.number(o.file_size);
        j.key("tensor_count");
        j.number(std::uint64_t{o.tensor_count});
        j.end_object();
    }
    j.end_array();
    j.key("total_bytes");
    j.number(total);
    j.key("input_tensor_bytes");
    j.number(rep.input_tensor_bytes);
    j.key("output_tensor_bytes");
    j.number(rep.output_tensor_bytes);
    j.key("n_elements");
    j.number(rep.n_elements);
    j.key("bits_per_weight");
    if (rep.n_elements > 0)
        j.number(static_cast<double>(rep.output_tensor_bytes) * 8.0 / static_cast<double>(rep.n_elements));
    else
        j.null();
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : rep.warnings) j.string(valid_utf8(w) ? w : json_text(w));
    j.end_array();
    j.end_object();
    j.finish();
}

int run(out_buffer& out) {
    toolbox::quantize_request rq;
    if (auto rc = make_request(rq)) return *rc;

    // The input is opened here too: its shapes for the plan's table, and its files for the check
    // that no output is one of them. One output file is checked before any work; a split output's
    // names come with the report (toolbox::quantize checks them again before it writes).
    auto m = open_model(opt.input, false);
    if (!m) return report_error(m.error());
    const bool one_file = !rq.keep_split && !rq.split_max_bytes && !rq.split_max_tensors;
    if (one_file)
        if (auto rc = refuse_output(rq.output, *m, rq)) return *rc;

    // quantize maps the model and the imatrix and has no --no-mmap: a SIGBUS names both, and no option.
    sigbus_guard_files(opt.input, rq.imatrix ? rq.imatrix->string() : std::string(), "the importance matrix");
    auto rep = [&rq] {
        progress bar("quantizing " + gguf::escape(opt.input), opt.quiet || opt.dry_run);
        toolbox::quantize_events ev;
        ev.progress = bar.callback();
        return toolbox::quantize(rq, ev);  // the line is erased before anything else is printed
    }();
    if (!rep) return report(rep.error(), *m, rq);  // a dry run's outputs are checked by the library too

    // A warning is a sentence (quotes stay as they are) that may hold a tensor name from the file.
    for (const std::string& w : rep->warnings) fmt::print(stderr, "Warning: {}\n", gguf::escape(w, '\0'));
    std::fflush(stderr);

    if (opt.json) {
        print_json(out, *m, rq, *rep);
        return exit_ok;
    }
    if (opt.dry_run) {
        print_plan(out, *m, rq, *rep);
        print_outputs(out, "Would write", *rep);
        out.write("dry run: nothing written\n");
        return exit_ok;
    }
    if (!opt.quiet) print_outputs(out, "Wrote", *rep);
    return exit_ok;
}

std::string type_list() {
    std::string s = "TYPE (any case, or the file type number):";
    std::size_t col = s.size();
    for (const quant::file_type_name& n : quant::file_type_names()) {
        const std::string item = n.copy ? std::string(n.name)
                                        : fmt::format("{} ({})", n.name, static_cast<std::uint32_t>(n.ftype));
        if (col + item.size() + 1 > 100) {
            s += "\n ";
            col = 1;
        }
        s += " " + item;
        col += item.size() + 1;
    }
    return s + "\n";
}

}  // namespace

void quantize_add_options(CLI::App& sub) {
    sub.footer(type_list() +
               "Q4_K = Q4_K_M, Q3_K = Q3_K_M, Q5_K = Q5_K_M; COPY copies every tensor unchanged.\n\n"
               "Exit codes:\n"
               "  0  written (or planned, with --dry-run)\n"
               "  1  the input is not a valid GGUF model, or cannot be quantized as asked: a malformed or mismatched\n"
               "     imatrix, a type that needs an imatrix, a row length no type fits, a NaN or infinity in a weight\n"
               "  2  usage error: bad option or value (TYPE, a type name, --tensor-type, --override-kv, a size),\n"
               "     --include-weights with --exclude-weights, --keep-split with a split limit, an already quantized\n"
               "     input without --allow-requantize, the output exists (without --force) or is the input\n"
               "  3  I/O error: the input, a split part or the imatrix cannot be read, an output cannot be written\n"
               "     (disk full, permission), out of memory\n");
    sub.add_option("IN [OUT] TYPE [THREADS]", opt.positionals,
                   "As llama-quantize: IN, the model (a .gguf file or part 1 of a split set); OUT, the quantized "
                   "model (without it: ggml-model-TYPE.gguf beside IN; with --keep-split or a split limit the parts "
                   "are <OUT without .gguf>-00001-of-0000N.gguf, ...); TYPE, the quantization (Q4_K_M, IQ4_XS, Q8_0, "
                   "... in any case, or the file type number); THREADS (0 or absent: one per hardware thread, at most "
                   "that many; the bytes do not depend on it)")
        ->required();
    given.threads_option = sub.add_option("-t,--threads", opt.threads_option, "Threads, as THREADS");
    given.imatrix = sub.add_option("--imatrix", opt.imatrix,
                                   "Importance matrix (llama-imatrix's GGUF or legacy .dat file) for the quantizers")
                        ->type_name("FILE");
    sub.add_option("--include-weights", opt.include_weights,
                   "Use the imatrix only for tensors whose name contains NAME. Repeatable")
        ->type_name("NAME")
        ->allow_extra_args(false)  // one value per occurrence: never the positionals after it
        ->take_all();
    sub.add_option("--exclude-weights", opt.exclude_weights,
                   "Do not use the imatrix for tensors whose name contains NAME. Repeatable; not with --include-weights")
        ->type_name("NAME")
        ->allow_extra_args(false)  // one value per occurrence: never the positionals after it
        ->take_all();
    given.output_type = sub.add_option("--output-tensor-type", opt.output_tensor_type,
                                       "The type of output.weight (a ggml type name: q8_0, q6_K, f16, …; any case)")
                            ->type_name("T");
    given.token_embd_type = sub.add_option("--token-embedding-type", opt.token_embedding_type,
                                           "The type of token_embd.weight (a ggml type name)")
                                ->type_name("T");
    sub.add_option("--tensor-type", opt.tensor_types,
                   "PATTERN=TYPE: tensors whose name matches PATTERN (a regex, searched in the name, lowercased as "
                   "llama-quantize does) get the ggml type TYPE; the first matching pattern wins. Repeatable")
        ->type_name("PATTERN=TYPE")
        ->allow_extra_args(false)  // one value per occurrence: never the positionals after it
        ->take_all();
    sub.add_flag("--leave-output-tensor", opt.leave_output_tensor, "Leave output.weight as it is (not quantized)");
    sub.add_flag("--pure", opt.pure, "No k-quant mixtures: every quantized tensor gets TYPE's default type");
    sub.add_flag("--allow-requantize", opt.allow_requantize,
                 "Allow an input whose tensors are already quantized (they are dequantized exactly first; quality "
                 "suffers from quantizing twice)");
    sub.add_option("--override-kv", opt.override_kv,
                   "KEY=TYPE:VALUE (TYPE int, float, bool or str): set a metadata key in the output. Repeatable")
        ->type_name("KEY=TYPE:VALUE")
        ->allow_extra_args(false)  // one value per occurrence: never the positionals after it
        ->take_all();
    sub.add_flag("--allow-type-change", opt.allow_type_change,
                 "Let --override-kv write a key llama.cpp reads (a hyperparameter) with another type than llama.cpp "
                 "reads it as (as minfer edit's option; llama.cpp will then refuse the model)");
    sub.add_flag("--keep-split", opt.keep_split,
                 "Write one output part per input part, as the input is split (not with --split-max-*)");
    given.max_size = sub.add_option("--split-max-size", opt.split_max_size,
                                    "Write a split set, each part file at most SIZE bytes (header included): a number "
                                    "with K, M, G, T (10^3..10^12) or KiB, MiB, GiB, TiB (2^10..2^40)");
    given.max_tensors = sub.add_option("--split-max-tensors", opt.split_max_tensors,
                                       "Write a split set of at most N tensors per part");
    sub.add_flag("--dry-run", opt.dry_run,
                 "Print the plan (each tensor's type and the rule that chose it) and every output file's exact size; "
                 "write nothing");
    sub.add_flag("-f,--force", opt.force,
                 "Replace outputs that exist (regular files, or links' targets; never the input, a FIFO, device or "
                 "directory)");
    sub.add_flag("--json", opt.json, "Print one JSON document with the plan, the files and every size in bytes");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
}

int quantize_run() {
    return run_printing(run);
}

}  // namespace minfer::cli
