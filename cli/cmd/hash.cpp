// minfer hash: llama-gguf-hash's output, byte for byte, from one bounded-memory walk of the model's
// bytes (minfer::check); --check against a manifest, strictly; --file-sha256 for the Hub's checksums.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "common/number_check.hpp"
#include "common/plural.hpp"
#include "common/exit_codes.hpp"
#include "common/open_model.hpp"
#include "common/out_buffer.hpp"
#include "common/progress.hpp"
#include "common/run_printing.hpp"
#include "minfer/toolbox/hash_line.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "common/usage_error.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/model_hash.hpp"

namespace minfer::cli {
namespace {

using check::hash_kind;

struct hash_cli_options {
    std::string model;
    bool xxh64 = false, xxh3 = false, sha1 = false, sha256 = false, uuid = false, all = false;
    bool no_layer = false;
    std::string manifest;
    bool file_sha256 = false;
    std::vector<std::string> expect;
    unsigned threads = 0;
    bool quiet = false;
};

hash_cli_options opt;

// Exit codes of check mode beyond llama-gguf-hash's (0, 1, 3, 4, 5; check_outcome gives 6 and 7).
constexpr int exit_unknown_hash = 4;
constexpr int exit_manifest_error = 5;
constexpr int exit_model_io_in_check = 8;

// The kinds the flags ask for, in print order.
std::vector<hash_kind> chosen_kinds() {
    std::vector<hash_kind> k;
    if (opt.xxh64 || opt.all) k.push_back(hash_kind::xxh64);
    if (opt.xxh3) k.push_back(hash_kind::xxh3);
    if (opt.sha1 || opt.all) k.push_back(hash_kind::sha1);
    if (opt.sha256 || opt.all) k.push_back(hash_kind::sha256);
    if (opt.uuid) k.push_back(hash_kind::uuid);
    return k;
}

// llama-gguf-hash's line (minfer::toolbox's, which the Python module's hash() gives too).
void print_line(out_buffer& out, hash_kind kind, const std::string& text, std::string_view name,
                std::string_view status = {}) {
    out.write(toolbox::hash_line(kind, text, name, status));
    out.put('\n');
}

std::string line_name(const gguf::model& m, const check::check_line& l) {
    if (l.tensor < 0) return opt.model;
    return opt.model + ":" + std::string(m.tensors()[static_cast<std::size_t>(l.tensor)].info->name);
}

int run(out_buffer& out) {
    if (opt.model.empty()) return usage_error("no model given");
    const bool checking = !opt.manifest.empty();
    if (!opt.expect.empty()) opt.file_sha256 = true;
    std::vector<check::digest> expected;
    for (const auto& hex : opt.expect) {
        std::string why;
        const auto d = toolbox::parse_sha256(hex, &why);
        if (!d) return usage_error(fmt::format("--expect {}: not a SHA-256: {} ({})", hex, why, toolbox::sha256_form));
        expected.push_back(*d);
    }
    std::vector<hash_kind> kinds = chosen_kinds();

    // The manifest first, as llama-gguf-hash does: an unusable manifest is known before any hashing.
    std::optional<check::manifest> man;
    if (checking) {
        auto r = check::read_manifest(opt.manifest);
        if (!r) {
            fmt::print(stderr, "Error: {}\n", r.error().message());
            return exit_manifest_error;
        }
        man.emplace(std::move(*r));
        const auto present = man->kinds();
        if (present.empty()) {
            fmt::print(stderr, "Error: manifest does not have any known hash format in {}\n", opt.manifest);
            return exit_unknown_hash;
        }
        out.print("manifest  {}", opt.manifest);
        for (hash_kind k : present) out.print("  {}", check::to_string(k));
        out.put('\n');
        if (kinds.empty()) kinds.push_back(*man->strongest());
    }
    if (kinds.empty() && !opt.file_sha256) kinds.push_back(hash_kind::xxh64);

    auto m = open_model(opt.model, false);
    if (!m) {
        const int code = report_error(m.error());
        return checking && code == exit_io ? exit_model_io_in_check : code;
    }
    if (!opt.expect.empty() && opt.expect.size() != m->parts().size())
        return usage_error(fmt::format("--expect was given {}; the model has {}: give one per part file, in part order",
                                       plural(opt.expect.size(), "time", "times"),
                                       plural(m->parts().size(), "part file", "part files")));

    check::hash_options ho;
    ho.kinds = kinds;
    ho.per_tensor = !opt.no_layer;
    ho.file_sha256 = opt.file_sha256;
    check::walk_options wo;
    wo.threads = opt.threads;
    progress bar("hashing " + opt.model, opt.quiet);
    if (bar.enabled()) wo.progress = bar.callback();
    auto d = check::hash_model(*m, ho, wo);
    bar.finish();
    if (!d) {
        const int code = report_error(d.error());
        return checking && code == exit_io ? exit_model_io_in_check : code;
    }

    int code = exit_ok;
    if (checking) {
        const auto rep = check::check_manifest(*man, *m, std::filesystem::path(opt.model).filename().string(), *d);
        if (rep.renamed)
            fmt::print(stderr, "note: {} names one file, '{}'; its entries are checked against {}\n", opt.manifest,
                       rep.file_name, opt.model);
        for (const auto& l : rep.lines)
            print_line(out, l.kind, l.ours.text(), line_name(*m, l), check::to_string(l.status));
        for (const auto* e : rep.unknown_tensors)
            print_line(out, e->kind, e->value.text(), e->name,
                             fmt::format("No Such Tensor (manifest line {})", e->line));
        for (const auto* e : rep.conflicting)
            print_line(out, e->kind, e->value.text(), e->name,
                             fmt::format("Conflicting Entry (manifest line {})", e->line));
        if (!rep.missing_tensors.empty())
            fmt::print(stderr, "{} of {} {} no entry in {} (their lines say Not Found)\n", rep.missing_tensors.size(),
                       plural(m->tensors().size(), "tensor", "tensors"), rep.missing_tensors.size() == 1 ? "has" : "have",
                       opt.manifest);
        out.print("\nVerification results for {} - {}\n", opt.manifest, check::to_string(rep.outcome));
        code = static_cast<int>(rep.outcome);
    } else {
        // llama-gguf-hash's order: each tensor with every kind, then the model lines, uuid last.
        if (!opt.no_layer)
            for (std::size_t t = 0; t < m->tensors().size(); ++t) {
                const std::string name = opt.model + ":" + std::string(m->tensors()[t].info->name);
                for (std::size_t i = 0; i < d->kinds.size(); ++i)
                    if (d->kinds[i] != hash_kind::uuid) print_line(out, d->kinds[i], d->tensors[t][i].text(), name);
            }
        for (std::size_t i = 0; i < d->kinds.size(); ++i) print_line(out, d->kinds[i], d->model[i].text(), opt.model);
    }

    if (opt.file_sha256) {
        // sha256sum's format, so the lines can be checked with `sha256sum -c`.
        std::vector<std::string> paths;
        for (std::size_t p = 0; p < m->parts().size(); ++p)
            paths.push_back(p == 0 ? opt.model : m->parts()[p].path.string());
        std::vector<std::string> hex;
        for (const check::digest& f : d->files) hex.push_back(f.text());
        for (std::size_t p = 0; p < paths.size(); ++p) out.print("{}  {}\n", hex[p], paths[p]);
        bool failed = false;
        for (std::size_t p = 0; p < expected.size(); ++p) {
            const bool same = d->files[p] == expected[p];
            out.print("{}: {}\n", paths[p], same ? "OK" : "FAILED");
            failed = failed || !same;
        }
        if (failed && code == exit_ok) code = exit_parse;
    }
    return code;
}

}  // namespace

void hash_add_options(CLI::App& sub) {
    sub.add_option("model", opt.model, "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set")
        ->required();
    sub.add_flag("--xxh64", opt.xxh64, "xxHash64 of each tensor and of the model (the default)");
    sub.add_flag("--xxh3", opt.xxh3,
                 "XXH3 (64-bit) of each tensor and of the model (not part of --all: upstream master has no xxh3; "
                 "--all --xxh3 is the xxh3 branch's --all)");
    sub.add_flag("--sha1", opt.sha1, "SHA-1 of each tensor and of the model");
    sub.add_flag("--sha256", opt.sha256, "SHA-256 of each tensor and of the model");
    sub.add_flag("--uuid", opt.uuid, "llama.cpp's UUIDv5 of the model's tensor data (printed last)");
    sub.add_flag("--all", opt.all, "xxh64, sha1 and sha256 (llama-gguf-hash's --all on upstream master)");
    sub.add_flag("--no-layer", opt.no_layer, "Only the whole-model lines, no line per tensor");
    sub.add_option("-c,--check", opt.manifest,
                   "Check against a manifest (llama-gguf-hash's output saved to a file); without a hash flag the "
                   "strongest type in the manifest is checked");
    sub.add_flag("--file-sha256", opt.file_sha256,
                 "The SHA-256 of every byte of each file (the Hugging Face Hub's LFS checksum), in sha256sum's "
                 "format; alone, only these lines are printed");
    sub.add_option("--expect", opt.expect,
                   "With --file-sha256: the expected SHA-256 of each part file, in part order (prints OK/FAILED per "
                   "file; exit 1 on a difference)");
    sub.add_option("--threads", opt.threads, "Hashing threads (default: one per hardware thread)")
        ->check(whole_number(0, std::numeric_limits<unsigned>::max()));
    sub.add_flag("-q,--quiet", opt.quiet, "No progress line on a terminal");
    sub.footer(
        "Exit codes:\n"
        "  0  success (with --check: every entry found matches and no tensor lacks an entry)\n"
        "  1  the file is not a valid GGUF model; with --check: a hash differs from the manifest (or the\n"
        "     manifest holds two different hashes for one thing); with --expect: a file's SHA-256 differs\n"
        "  2  usage error\n"
        "  3  I/O error reading the model (out of memory too); with --check: the manifest has no entry for\n"
        "     this file (llama-gguf-hash's code)\n"
        "  4  --check: the manifest has no line of a known hash type\n"
        "  5  --check: the manifest cannot be read, is larger than 256 MiB, or has a malformed line\n"
        "  6  --check: every entry found matches, but some entries name tensors the model does not have\n"
        "  7  --check: every entry found matches, but some tensors have no entry\n"
        "  8  --check: I/O error reading the model\n");
}

int hash_run() {
    return run_printing(run);
}

}  // namespace minfer::cli
