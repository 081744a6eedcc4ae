// `minfer verify MODEL`: everything model::open checks, then the values: NaN and Inf in float tensors
// and in the scale fields of quantized blocks, optionally every converted value (--values), all-zero
// tensors as warnings; with --manifest and --file-sha256, the download checks in the same walk. One
// pass over the bytes (check::walk_model_data) feeds the value checks and the hashes together, with
// memory bounded by the walker's windows whatever the model's size.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "../common/number_check.hpp"
#include "../common/plural.hpp"
#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/progress.hpp"
#include "../common/quote.hpp"
#include "../common/run_printing.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "minfer/toolbox/verify.hpp"
#include "../common/isa_warning.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/check/vocab_check.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/check/errors.hpp"

namespace minfer::cli {
namespace {

struct verify_cli_options {
    std::string model;
    bool values = false;
    bool json = false;
    bool quiet = false;
    std::size_t max_examples = 10;
    unsigned threads = 0;
    std::string manifest;
    std::vector<std::string> file_sha256;
    bool no_mmap = false;
};

verify_cli_options opt;  // filled by CLI11 during parsing, read by verify_run()


// "4.1 GiB", "12.0 MiB", "3.5 KiB", "17 bytes".
std::string size_text(std::uint64_t b) {
    const auto d = static_cast<double>(b);
    if (b >= (std::uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", d / 1073741824.0);
    if (b >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", d / 1048576.0);
    if (b >= 1024) return fmt::format("{:.1f} KiB", d / 1024.0);
    return fmt::format("{} byte{}", b, b == 1 ? "" : "s");
}

std::string value_text(double v) { return float_text(v); }

std::string bits_text(const check::value_finding& f) {
    return fmt::format("0x{:0{}x}", f.bits, std::max<std::uint32_t>(2, f.bit_width / 4));
}

// A flat element index in ggml order as its multi-dimensional index: "[5, 1]" (only for 2+ dims).
std::string element_label(const gguf::tensor_info& i, std::uint64_t index) {
    if (i.n_dims < 2) return {};
    std::string s = " [";
    for (std::uint32_t d = 0; d < std::min<std::uint32_t>(4, i.n_dims); ++d) {
        const auto ne = static_cast<std::uint64_t>(i.ne[d]);
        s += fmt::format("{}{}", d == 0 ? "" : ", ", ne == 0 ? 0 : index % ne);
        index = ne == 0 ? 0 : index / ne;
    }
    return s + "]";
}

std::string finding_line(const gguf::tensor_info& info, const check::value_finding& f) {
    const std::string name = gguf::escape(info.name);
    const std::string_view type = gguf::to_string(info.type);
    const std::string kind = f.kind == check::value_kind::nan ? "NaN" : "Inf";
    switch (f.place) {
        case check::finding_place::scale:
            return fmt::format("{}  block {}  {} = {} ({})  [{} scale: the whole block is {}]", name, f.index, f.field,
                               value_text(f.value), bits_text(f), type, kind);
        case check::finding_place::element:
            return fmt::format("{}  element {}{} = {} ({})  [{}]", name, f.index, element_label(info, f.index),
                               value_text(f.value), bits_text(f), type);
        case check::finding_place::value:
            return fmt::format("{}  value {}{} = {} ({})  [{} converted to f32{}]", name, f.index,
                               element_label(info, f.index), value_text(f.value), bits_text(f), type,
                               check::scope_of(info.type) == check::check_scope::scales ? ", its scales finite" : "");
    }
    return name;
}

std::string tensor_summary(const gguf::tensor_info& info, const check::tensor_verdict& v) {
    std::vector<std::string> parts;
    if (v.scope == check::check_scope::scales && v.blocks_poisoned > 0)
        parts.push_back(fmt::format("{} with a NaN/Inf scale ({} NaN, {} Inf field{})",
                                    plural(v.blocks_poisoned, "block", "blocks"), v.nan, v.inf,
                                    v.nan + v.inf == 1 ? "" : "s"));
    if (v.scope == check::check_scope::elements && v.nan + v.inf > 0)
        parts.push_back(fmt::format("{} NaN, {} Inf of {}", v.nan, v.inf, plural(info.n_elements, "element", "elements")));
    if (v.value_nan + v.value_inf > 0)
        parts.push_back(fmt::format("{} NaN, {} Inf converted values", v.value_nan, v.value_inf));
    if (v.all_zero)
        parts.push_back(info.n_elements == 1 ? std::string("warning: its one value is zero")
                                             : fmt::format("warning: all {} values are zero", info.n_elements));
    const std::uint64_t raw = v.scope == check::check_scope::scales ? v.blocks_poisoned : v.nan + v.inf;
    const std::uint64_t not_shown = (raw - std::min<std::uint64_t>(raw, v.examples.size())) +
                                    (v.value_nan + v.value_inf -
                                     std::min<std::uint64_t>(v.value_nan + v.value_inf, v.value_examples.size()));
    std::string s = fmt::format("{}  {}:", gguf::escape(info.name), gguf::to_string(info.type));
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? " " : "; ") + parts[i];
    if (not_shown > 0) s += fmt::format("  ({} more not shown; --max-examples)", not_shown);
    return s;
}

// --file-sha256 texts: 64 hex digits each (either case).
std::optional<std::vector<check::digest>> parse_file_hashes(std::string& why) {
    std::vector<check::digest> out;
    for (const std::string& text : opt.file_sha256) {
        std::string reason;
        auto d = toolbox::parse_sha256(text, &reason);
        if (!d) {
            why = fmt::format("--file-sha256 {}: not a SHA-256: {} ({})", cli::quoted(text), reason, toolbox::sha256_form);
            return std::nullopt;
        }
        out.push_back(*d);
    }
    return out;
}

using toolbox::file_check;

std::string_view status_text(check::entry_status s) { return check::to_string(s); }

void print_manifest_text(const gguf::model& m, const check::manifest& man, const check::check_report& r,
                         out_buffer& out) {
    const auto tensors = m.tensors();
    for (const check::check_line& l : r.lines) {
        if (l.status == check::entry_status::ok) continue;
        const std::string name = l.tensor < 0 ? r.file_name
                                              : r.file_name + ":" + gguf::escape(tensors[static_cast<std::size_t>(l.tensor)].info->name);
        if (l.status == check::entry_status::mismatch && l.entry != nullptr) {
            out.print("manifest: {}  {}  {}  Mismatch (manifest line {}: {})\n", check::to_string(l.kind), l.ours.text(),
                      name, l.entry->line, l.entry->value.text());
        } else {
            out.print("manifest: {}  {}  {}  {}\n", check::to_string(l.kind), l.ours.text(), name, status_text(l.status));
        }
    }
    for (std::uint32_t t : r.missing_tensors)
        out.print("manifest: tensor {} has no entry in {}\n", gguf::escape(tensors[t].info->name), cli::quoted(man.path));
    for (const check::manifest_entry* e : r.unknown_tensors)
        out.print("manifest: line {} names a tensor the model does not have: {}\n", e->line, gguf::escape(e->name));
    for (const check::manifest_entry* e : r.conflicting)
        out.print("manifest: line {} repeats {} with another hash (the first entry was compared)\n", e->line,
                  gguf::escape(e->name));
    std::size_t ok = 0;
    for (const check::check_line& l : r.lines) ok += l.status == check::entry_status::ok ? 1u : 0u;
    out.print("manifest {}: {} hashes, {} of {} {} match{}: {}\n", cli::quoted(man.path),
              r.lines.empty() ? std::string_view("no") : check::to_string(r.lines.front().kind), ok, r.lines.size(),
              noun(r.lines.size(), "line", "lines"),
              r.renamed ? fmt::format(" (its entries name {}, taken for this file)", cli::quoted(r.file_name)) : "",
              check::to_string(r.outcome));
}

void json_finding(json_writer& w, const check::value_finding& f) {
    w.begin_object(true);
    w.key("place");
    w.string(check::to_string(f.place));
    w.key("kind");
    w.string(check::to_string(f.kind));
    w.key("index");
    w.number(f.index);
    if (f.place == check::finding_place::scale) {
        w.key("field");
        w.string(f.field);
    }
    w.key("value");
    w.number(f.value);
    w.key("bits");
    w.string(bits_text(f));
    w.end_object();
}

void json_verdict(json_writer& w, const gguf::model& m, const check::tensor_verdict& v) {
    const gguf::tensor_info& info = *m.tensors()[v.tensor].info;
    w.begin_object();
    string_member(w, "name", info.name);
    w.key("index");
    w.number(static_cast<std::uint64_t>(v.tensor));
    w.key("type");
    w.string(gguf::to_string(info.type));
    w.key("part");
    w.number(static_cast<std::uint64_t>(m.tensors()[v.tensor].part + 1));
    w.key("elements");
    w.number(info.n_elements);
    w.key("bytes");
    w.number(info.n_bytes);
    w.key("checked");
    w.string(check::to_string(v.scope));
    w.key("values_checked");
    w.boolean(v.values_checked);
    w.key("findings");
    w.number(v.findings());
    w.key("nan");
    w.number(v.nan);
    w.key("inf");
    w.number(v.inf);
    w.key("blocks_poisoned");
    w.number(v.blocks_poisoned);
    w.key("value_nan");
    w.number(v.value_nan);
    w.key("value_inf");
    w.number(v.value_inf);
    w.key("all_zero");
    w.boolean(v.all_zero);
    w.key("examples");
    w.begin_array();
    for (const auto& f : v.examples) json_finding(w, f);
    w.end_array();
    w.key("value_examples");
    w.begin_array();
    for (const auto& f : v.value_examples) json_finding(w, f);
    w.end_array();
    w.end_object();
}

void json_manifest(json_writer& w, const gguf::model& m, const check::manifest& man, const check::check_report& r) {
    const auto tensors = m.tensors();
    w.begin_object();
    string_member(w, "path", man.path);
    w.key("hash");
    if (r.lines.empty()) {
        w.null();
    } else {
        w.string(check::to_string(r.lines.front().kind));
    }
    string_member(w, "file_name", r.file_name);
    w.key("renamed");
    w.boolean(r.renamed);
    w.key("outcome");
    w.string(check::to_string(r.outcome));
    w.key("outcome_code");
    w.number(static_cast<std::int64_t>(r.outcome));
    std::uint64_t ok = 0, bad = 0, nf = 0;
    for (const auto& l : r.lines) {
        ok += l.status == check::entry_status::ok ? 1u : 0u;
        bad += l.status == check::entry_status::mismatch ? 1u : 0u;
        nf += l.status == check::entry_status::not_found ? 1u : 0u;
    }
    w.key("lines");
    w.number(static_cast<std::uint64_t>(r.lines.size()));
    w.key("ok");
    w.number(ok);
    w.key("mismatch");
    w.number(bad);
    w.key("not_found");
    w.number(nf);
    w.key("problems");
    w.begin_array();
    for (const auto& l : r.lines) {
        if (l.status == check::entry_status::ok) continue;
        w.begin_object(true);
        w.key("status");
        w.string(status_text(l.status));
        w.key("hash");
        w.string(check::to_string(l.kind));
        if (l.tensor >= 0) {
            string_member(w, "tensor", tensors[static_cast<std::size_t>(l.tensor)].info->name);
        } else {
            w.key("tensor");
            w.null();
        }
        w.key("ours");
        w.string(l.ours.text());
        if (l.entry != nullptr) {
            w.key("manifest");
            w.string(l.entry->value.text());
            w.key("line");
            w.number(static_cast<std::uint64_t>(l.entry->line));
        }
        w.end_object();
    }
    w.end_array();
    w.key("missing_tensors");
    w.begin_array();
    for (std::uint32_t t : r.missing_tensors) w.string(json_text(tensors[t].info->name));
    w.end_array();
    w.key("unknown_tensors");
    w.begin_array();
    for (const check::manifest_entry* e : r.unknown_tensors) {
        w.begin_object(true);
        string_member(w, "name", e->name);
        w.key("line");
        w.number(static_cast<std::uint64_t>(e->line));
        w.end_object();
    }
    w.end_array();
    w.key("conflicting_lines");
    w.begin_array(true);
    for (const check::manifest_entry* e : r.conflicting) w.number(static_cast<std::uint64_t>(e->line));
    w.end_array();
    w.end_object();
}

int run(out_buffer& out) {
    if (opt.max_examples > 1000000) return usage_error("--max-examples: at most 1000000");
    std::string why;
    const auto expected_files = parse_file_hashes(why);
    if (!expected_files) return usage_error(why);

    auto m = open_model(opt.model, opt.no_mmap);
    if (!m) return report_error(m.error());
    const std::size_t n_parts = m->parts().size();
    if (!expected_files->empty() && expected_files->size() != n_parts)
        return usage_error(fmt::format("--file-sha256 was given {} time{} but the model has {} part{}: give one per "
                                       "part file, in part order",
                                       expected_files->size(), expected_files->size() == 1 ? "" : "s", n_parts,
                                       n_parts == 1 ? "" : "s"));

    std::optional<check::manifest> man;
    if (!opt.manifest.empty()) {
        auto r = check::read_manifest(opt.manifest);
        if (!r) {
            const auto code = r.error().code;
            fmt::print(stderr, "Error: {}\n", r.error().message());
            return code == check::codes::manifest_bad_line ? exit_parse : exit_io;
        }
        man.emplace(std::move(*r));
        if (!man->strongest()) {
            fmt::print(stderr, "Error: {}: no line of a known hash type (xxh64, xxh3, sha1, sha256, uuid)\n",
                       cli::quoted(opt.manifest));
            return exit_parse;
        }
    }

    // The vocabulary, one walk for the values and the hashes, the download checks: minfer::toolbox's.
    toolbox::verify_request rq;
    rq.values = opt.values;
    rq.max_examples = opt.max_examples;
    rq.threads = opt.threads;
    rq.manifest = man ? &*man : nullptr;
    rq.file_name = std::filesystem::path(opt.model).filename().string();
    rq.file_sha256 = *expected_files;
    progress bar("verify " + gguf::escape(std::filesystem::path(opt.model).filename().string()), opt.quiet);
    rq.progress = bar.callback();
    auto verified = toolbox::verify(*m, rq);
    bar.finish();
    if (!verified) return report_error(verified.error());
    const toolbox::verify_report& oc = *verified;
    const std::vector<check::vocab_finding>& vocab = oc.vocabulary;
    const std::vector<check::tensor_verdict>& verdicts = oc.verdicts;
    const std::optional<check::check_report>& report = oc.manifest;
    const std::vector<file_check>& files = oc.files;
    const auto tensors = m->tensors();
    const bool clean = oc.clean();
    const int code = clean ? exit_ok : exit_parse;

    if (opt.json) {
        json_writer w(out);
        w.begin_object();
        string_member(w, "file", opt.model);
        w.key("parts");
        w.number(static_cast<std::uint64_t>(n_parts));
        w.key("tensors");
        w.number(static_cast<std::uint64_t>(tensors.size()));
        w.key("bytes");
        w.number(oc.bytes);
        w.key("values_mode");
        w.boolean(opt.values);
        w.key("checked");
        w.begin_object(true);
        w.key("elements");
        w.number(oc.by_scope[static_cast<int>(check::check_scope::elements)]);
        w.key("scales");
        w.number(oc.by_scope[static_cast<int>(check::check_scope::scales)]);
        w.key("none");
        w.number(oc.by_scope[static_cast<int>(check::check_scope::none)]);
        w.key("values");
        w.number(oc.values_checked);
        w.end_object();
        w.key("findings");
        w.number(oc.findings);
        w.key("tensors_with_findings");
        w.number(oc.tensors_with_findings);
        w.key("warnings");
        w.number(oc.warnings);
        w.key("max_examples");
        w.number(static_cast<std::uint64_t>(opt.max_examples));
        w.key("vocabulary_findings");
        w.number(oc.vocab_findings);
        w.key("vocabulary_warnings");
        w.number(oc.vocab_warnings);
        w.key("vocabulary");  // findings first, then warnings
        w.begin_array();
        for (const check::vocab_finding& f : vocab) {
            w.begin_object(true);
            w.key("severity");
            w.string(f.warning ? "warning" : "finding");
            w.key("problem");
            w.string(check::to_string(f.problem));
            w.key("key");
            w.string(f.key);
            w.key("index");
            w.number(f.index);
            w.key("count");
            w.number(f.count);
            w.key("what");
            w.string(json_text(f.what));
            w.end_object();
        }
        w.end_array();
        w.key("tensor_reports");  // tensors with findings or warnings, in model order
        w.begin_array();
        for (const check::tensor_verdict& v : verdicts)
            if (v.findings() > 0 || v.all_zero) json_verdict(w, *m, v);
        w.end_array();
        w.key("manifest");
        if (report) {
            json_manifest(w, *m, *man, *report);
        } else {
            w.null();
        }
        w.key("file_sha256");
        if (files.empty()) {
            w.null();
        } else {
            w.begin_array();
            for (const file_check& f : files) {
                w.begin_object(true);
                w.key("part");
                w.number(static_cast<std::uint64_t>(f.part + 1));
                string_member(w, "path", f.path);
                w.key("sha256");
                w.string(f.ours.text());
                w.key("expected");
                w.string(f.expected.text());
                w.key("match");
                w.boolean(f.match);
                w.end_object();
            }
            w.end_array();
        }
        w.key("verdict");
        w.string(clean ? "clean" : "failed");
        w.key("exit_code");
        w.number(static_cast<std::int64_t>(code));
        w.end_object();
        w.finish();
        return code;
    }

    // Text: the vocabulary's findings and warnings, each finding, then a summary per tensor with findings
    // or warnings, then the download checks.
    for (const check::vocab_finding& f : vocab)
        out.print("{}vocabulary: {}: {}\n", f.warning ? "warning: " : "", f.key, f.what);
    for (const check::tensor_verdict& v : verdicts) {
        const gguf::tensor_info& info = *tensors[v.tensor].info;
        for (const auto& f : v.examples) out.print("{}\n", finding_line(info, f));
        for (const auto& f : v.value_examples) out.print("{}\n", finding_line(info, f));
    }
    for (const check::tensor_verdict& v : verdicts)
        if (v.findings() > 0 || v.all_zero) out.print("{}\n", tensor_summary(*tensors[v.tensor].info, v));
    if (report) print_manifest_text(*m, *man, *report, out);
    for (const file_check& f : files)
        out.print("file sha256: {}  {}  {}\n", f.ours.text(), gguf::escape(f.path),
                  f.match ? std::string("ok") : "MISMATCH, expected " + f.expected.text());

    std::vector<std::string> problems;
    if (oc.vocab_findings > 0)
        problems.push_back(plural(oc.vocab_findings, "vocabulary finding", "vocabulary findings"));
    if (oc.findings > 0)
        problems.push_back(fmt::format("{} in {}", plural(oc.findings, "finding", "findings"),
                                       plural(oc.tensors_with_findings, "tensor", "tensors")));
    if (!oc.manifest_ok) problems.push_back(fmt::format("manifest {}", check::to_string(report->outcome)));
    if (!oc.files_ok) problems.push_back("file SHA-256 mismatch");
    std::string verdict = problems.empty() ? "clean" : "";
    for (std::size_t i = 0; i < problems.size(); ++i) verdict += (i == 0 ? "" : "; ") + problems[i];
    if (oc.warnings + oc.vocab_warnings > 0)
        verdict += fmt::format(" ({})", plural(oc.warnings + oc.vocab_warnings, "warning", "warnings"));
    std::string with;
    if (report) with = ", with manifest";
    if (!files.empty()) with += with.empty() ? ", with file SHA-256" : " and file SHA-256";
    out.print("verified: {}, {}{}{}: {}\n", plural(tensors.size(), "tensor", "tensors"), size_text(oc.bytes),
              n_parts > 1 ? fmt::format(" in {} parts", n_parts) : "", with, verdict);
    return code;
}

}  // namespace

void verify_add_options(CLI::App& sub) {
    sub.add_option("model", opt.model, "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set")
        ->required();
    sub.add_flag("--values", opt.values,
                 "Also convert every value of every quantized (and f64) tensor to f32 and check it: finds Inf or NaN "
                 "that no stored scale shows (slower)");
    sub.add_flag("--json", opt.json, "Print one JSON document with every figure");
    sub.add_flag("--quiet,-q", opt.quiet, "No progress line");
    sub.add_option("--max-examples", opt.max_examples, "Findings listed per tensor (default 10; the counts are complete)")
        ->check(whole_number(0, 1000000));
    sub.add_option("--threads", opt.threads, "Worker threads (default 0: one per hardware thread)")
        ->check(whole_number(0, std::numeric_limits<unsigned>::max()));
    sub.add_option("--manifest", opt.manifest,
                   "A llama-gguf-hash / minfer hash manifest: check the tensor and model hashes of its strongest "
                   "type in the same pass");
    sub.add_option("--file-sha256", opt.file_sha256,
                   "The expected SHA-256 of the file as stored (the Hub's LFS checksum); for a split set give it "
                   "once per part, in part order (--file-sha256 H1 --file-sha256 H2 ...)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub.add_flag("--no-mmap", opt.no_mmap, "Read the file into memory instead of mapping it");
    sub.footer(
        "Exit codes:\n"
        "  0  clean: no NaN or Inf, the manifest and file hashes match (all-zero tensors and what llama.cpp\n"
        "     only warns about in a vocabulary are warnings)\n"
        "  1  findings (NaN/Inf values or scales; a vocabulary llama.cpp aborts on or refuses), a manifest\n"
        "     outcome other than success, a file SHA-256 mismatch, a malformed manifest; or the file is\n"
        "     not a valid GGUF model (the loader's message)\n"
        "  2  usage error (bad option, a --file-sha256 that is not 64 hex digits or not one per part)\n"
        "  3  I/O error: the model or the manifest cannot be read (also truncated while read), out of memory\n");
}

int verify_run() {
    warn_about_isa_choice();
    return run_printing(run);
}

}  // namespace minfer::cli
