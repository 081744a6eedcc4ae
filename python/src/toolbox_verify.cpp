// minfer._toolbox.verify: `minfer verify --json` (cli/cmd/verify.cpp), both over minfer::toolbox's
// verify(): every tensor's bytes (and, with values, its numbers), the vocabulary as llama.cpp loads
// it, a manifest and the part files' SHA-256, in one walk without the GIL. Findings are results,
// never exceptions; this file converts the report to the dict of verify --json.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/check/vocab_check.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "minfer/toolbox/verify.hpp"
#include "minfer/check/errors.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

std::string bits_text(const check::value_finding& f) {
    char buf[32];
    const int width = static_cast<int>(std::max<std::uint32_t>(2, f.bit_width / 4));
    std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(f.bits));
    return buf;
}

py::dict finding(const check::value_finding& f) {
    py::dict d;
    d["place"] = std::string(check::to_string(f.place));
    d["kind"] = std::string(check::to_string(f.kind));
    d["index"] = f.index;
    if (f.place == check::finding_place::scale) d["field"] = std::string(f.field);
    d["value"] = f.value;
    d["bits"] = bits_text(f);
    return d;
}

std::optional<std::vector<check::digest>> parse_file_hashes(const std::vector<std::string>& texts, std::string& why) {
    std::vector<check::digest> out;
    for (const std::string& t : texts) {
        std::string reason;
        auto d = ::minfer::toolbox::parse_sha256(t, &reason);
        if (!d) {
            why = std::string("file_sha256 '") + gguf::escape(t) + "': not a SHA-256 (64 hex digits)" + (reason.empty() ? "" : std::string(": ") + reason);
            return std::nullopt;
        }
        out.push_back(*d);
    }
    return out;
}

py::dict verify(const std::string& path, bool values, std::uint64_t max_examples, unsigned threads,
                const std::optional<std::string>& manifest_path, const std::vector<std::string>& file_sha256, bool mmap) {
    if (max_examples > 1000000) raise_usage("max_examples: at most 1000000");
    std::string why;
    const auto expected_files = parse_file_hashes(file_sha256, why);
    if (!expected_files) raise_usage(why);
    gguf::model m = open_local(path, mmap);
    const std::size_t n_parts = m.parts().size();
    if (!expected_files->empty() && expected_files->size() != n_parts)
        raise_usage(std::string("file_sha256 was given ") + std::to_string(expected_files->size()) + " hash" +
                    (expected_files->size() == 1 ? "" : "es") + " but the model has " + std::to_string(n_parts) +
                    " part" + (n_parts == 1 ? "" : "s") + ": give one per part file, in part order");

    std::optional<check::manifest> man;
    if (manifest_path) {
        gguf::result<check::manifest> read = without_gil([&] { return check::read_manifest(*manifest_path); });
        if (!read) raise_error_exit(read.error(), read.error().code == check::codes::manifest_bad_line ? 1 : 3);
        man.emplace(std::move(*read));
        if (!man->strongest()) {
            raise_manifest_no_known_hash(*manifest_path,
                                         std::string("'") + gguf::escape(*manifest_path) +
                                             "': no line of a known hash type (xxh64, xxh3, sha1, sha256, uuid)",
                                         1);
        }
    }

    // The vocabulary, one walk for the values and the hashes, the download checks: minfer::toolbox's
    // (what minfer verify runs), without the GIL.
    ::minfer::toolbox::verify_request rq;
    rq.values = values;
    rq.max_examples = static_cast<std::size_t>(max_examples);
    rq.threads = threads;
    rq.manifest = man ? &*man : nullptr;
    rq.file_name = fs::path(path).filename().string();
    rq.file_sha256 = *expected_files;
    gguf::result<::minfer::toolbox::verify_report> verified = without_gil([&] { return ::minfer::toolbox::verify(m, rq); });
    if (!verified) raise_error(verified.error());
    const ::minfer::toolbox::verify_report& oc = *verified;

    py::list vocab_list;
    for (const check::vocab_finding& f : oc.vocabulary) {
        py::dict d;
        d["severity"] = f.warning ? "warning" : "finding";
        d["problem"] = std::string(check::to_string(f.problem));
        d["key"] = std::string(f.key);
        d["index"] = f.index;
        d["count"] = f.count;
        d["what"] = text(f.what);
        vocab_list.append(std::move(d));
    }

    const auto tensors = m.tensors();
    py::list reports;
    for (const check::tensor_verdict& v : oc.verdicts) {
        if (v.findings() == 0 && !v.all_zero) continue;
        const gguf::tensor_info& info = *tensors[v.tensor].info;
        py::dict t;
        t["name"] = text(info.name);
        t["index"] = v.tensor;
        t["type"] = std::string(gguf::to_string(info.type));
        t["part"] = tensors[v.tensor].part + 1;
        t["elements"] = info.n_elements;
        t["bytes"] = info.n_bytes;
        t["checked"] = std::string(check::to_string(v.scope));
        t["values_checked"] = v.values_checked;
        t["findings"] = v.findings();
        t["nan"] = v.nan;
        t["inf"] = v.inf;
        t["blocks_poisoned"] = v.blocks_poisoned;
        t["value_nan"] = v.value_nan;
        t["value_inf"] = v.value_inf;
        t["all_zero"] = v.all_zero;
        py::list ex, vex;
        for (const auto& f : v.examples) ex.append(finding(f));
        for (const auto& f : v.value_examples) vex.append(finding(f));
        t["examples"] = ex;
        t["value_examples"] = vex;
        reports.append(std::move(t));
    }

    py::object manifest_obj = py::none();
    if (oc.manifest) {
        const check::check_report& rep = *oc.manifest;
        py::dict d;
        d["path"] = text(man->path);
        d["hash"] = rep.lines.empty() ? py::object(py::none()) : py::object(py::str(std::string(check::to_string(rep.lines.front().kind))));
        d["file_name"] = text(rep.file_name);
        d["renamed"] = rep.renamed;
        d["outcome"] = std::string(check::to_string(rep.outcome));
        d["outcome_code"] = static_cast<int>(rep.outcome);
        std::uint64_t ok = 0, bad = 0, nf = 0;
        py::list problems;
        for (const auto& l : rep.lines) {
            ok += l.status == check::entry_status::ok ? 1u : 0u;
            bad += l.status == check::entry_status::mismatch ? 1u : 0u;
            nf += l.status == check::entry_status::not_found ? 1u : 0u;
            if (l.status == check::entry_status::ok) continue;
            py::dict p;
            p["status"] = std::string(check::to_string(l.status));
            p["hash"] = std::string(check::to_string(l.kind));
            p["tensor"] = l.tensor < 0 ? py::object(py::none())
                                       : py::object(text(tensors[static_cast<std::size_t>(l.tensor)].info->name));
            p["ours"] = l.ours.text();
            if (l.entry != nullptr) {
                p["manifest"] = l.entry->value.text();
                p["line"] = l.entry->line;
            }
            problems.append(std::move(p));
        }
        d["lines"] = rep.lines.size();
        d["ok"] = ok;
        d["mismatch"] = bad;
        d["not_found"] = nf;
        d["problems"] = problems;
        py::list missing, unknown, conflicting;
        for (std::uint32_t t : rep.missing_tensors) missing.append(text(tensors[t].info->name));
        for (const auto* e : rep.unknown_tensors) {
            py::dict u;
            u["name"] = text(e->name);
            u["line"] = e->line;
            unknown.append(std::move(u));
        }
        for (const auto* e : rep.conflicting) conflicting.append(e->line);
        d["missing_tensors"] = missing;
        d["unknown_tensors"] = unknown;
        d["conflicting_lines"] = conflicting;
        manifest_obj = d;
    }
    py::object files_obj = py::none();
    if (!oc.files.empty()) {
        py::list files;
        for (const ::minfer::toolbox::file_check& fc : oc.files) {
            py::dict f;
            f["part"] = fc.part + 1;
            f["path"] = text(fc.path);
            f["sha256"] = fc.ours.text();
            f["expected"] = fc.expected.text();
            f["match"] = fc.match;
            files.append(std::move(f));
        }
        files_obj = files;
    }
    const bool clean = oc.clean();

    py::dict r;
    r["file"] = text(path);
    r["parts"] = n_parts;
    r["tensors"] = tensors.size();
    r["bytes"] = oc.bytes;
    r["values_mode"] = values;
    py::dict checked;
    checked["elements"] = oc.by_scope[static_cast<int>(check::check_scope::elements)];
    checked["scales"] = oc.by_scope[static_cast<int>(check::check_scope::scales)];
    checked["none"] = oc.by_scope[static_cast<int>(check::check_scope::none)];
    checked["values"] = oc.values_checked;
    r["checked"] = checked;
    r["findings"] = oc.findings;
    r["tensors_with_findings"] = oc.tensors_with_findings;
    r["warnings"] = oc.warnings;
    r["max_examples"] = max_examples;
    r["vocabulary_findings"] = oc.vocab_findings;
    r["vocabulary_warnings"] = oc.vocab_warnings;
    r["vocabulary"] = vocab_list;
    r["tensor_reports"] = reports;
    r["manifest"] = manifest_obj;
    r["file_sha256"] = files_obj;
    r["verdict"] = clean ? "clean" : "failed";
    r["exit_code"] = clean ? 0 : 1;
    return r;
}

}  // namespace

void register_verify(py::module_& m) {
    m.def("verify", &verify, py::arg("path"), py::arg("values"), py::arg("max_examples"), py::arg("threads"),
          py::arg("manifest"), py::arg("file_sha256"), py::arg("mmap"), "Verify a model (minfer verify --json).");
}

}  // namespace minfer::python::toolbox
