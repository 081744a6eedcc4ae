// minfer._toolbox: hash, verify, diff, estimate — the minfer tool's commands of the same names
// (cli/cmd/hash.cpp, verify.cpp, diff.cpp, estimate.cpp) over minfer::check, minfer::quant and
// minfer::estimate. Results are dicts with the keys of the commands' --json output (hash, which has
// none, gives its lines and the digests). Findings are results, never exceptions. The walks, the
// byte comparisons and the value conversions run without the GIL.
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/check/data_walk.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/toolbox/hash_line.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/check/vocab_check.hpp"
#include "minfer/compare/metadata_diff.hpp"
#include "minfer/compare/tensor_diff.hpp"
#include "minfer/estimate/estimate.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/remote/fetch_options.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/url.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;
using check::hash_kind;

// ---------------------------------------------------------------- hash

using ::minfer::toolbox::hash_line;  // llama-gguf-hash's line, as `minfer hash` prints it

py::dict hash(const std::string& path, const std::vector<std::string>& kind_names, bool per_tensor,
              const std::optional<std::string>& manifest_path, bool file_sha256, const std::vector<std::string>& expect,
              unsigned threads) {
    constexpr int exit_unknown_hash = 4, exit_manifest_error = 5, exit_model_io_in_check = 8;
    std::vector<hash_kind> kinds;
    for (const std::string& n : kind_names) {
        const auto k = check::parse_hash_kind(n);
        if (!k) raise_usage(std::string("unknown hash kind '") + gguf::escape(n) + "': xxh64, xxh3, sha1, sha256 or uuid");
        if (std::find(kinds.begin(), kinds.end(), *k) == kinds.end()) kinds.push_back(*k);
    }
    std::sort(kinds.begin(), kinds.end());  // print order: xxh64, xxh3, sha1, sha256, uuid
    if (!expect.empty()) file_sha256 = true;
    std::vector<std::string> expected;  // lowercase, as the digests' text: either case is accepted, as by the CLI
    for (const std::string& hex : expect) {
        std::string why;
        const auto d = ::minfer::toolbox::parse_sha256(hex, &why);
        if (!d)
            raise_usage(std::string("expect ") + gguf::escape(hex) + ": " + why + " (" +
                        std::string(::minfer::toolbox::sha256_form) + ")");
        expected.push_back(d->text());
    }
    const bool checking = manifest_path.has_value();
    py::list lines;
    std::optional<check::manifest> man;
    if (checking) {
        gguf::result<check::manifest> read = without_gil([&] { return check::read_manifest(*manifest_path); });
        if (!read) raise_error_exit(read.error(), exit_manifest_error);
        man.emplace(std::move(*read));
        const auto present = man->kinds();
        if (present.empty()) {
            py::dict fields;
            fields["code"] = "manifest_no_known_hash";
            fields["section"] = "file";
            fields["exit_code"] = exit_unknown_hash;
            fields["file"] = text(*manifest_path);
            py::object make = py::module_::import("minfer.errors").attr("_make");
            py::object exc = make("request",
                                  text(std::string("manifest does not have any known hash format in ") + *manifest_path), fields);
            PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
            throw py::error_already_set();
        }
        std::string head = std::string("manifest  ") + *manifest_path;
        for (hash_kind k : present) head.append("  ").append(check::to_string(k));
        lines.append(text(head));
        if (kinds.empty()) kinds.push_back(*man->strongest());
    }
    if (kinds.empty() && !file_sha256) kinds.push_back(hash_kind::xxh64);

    gguf::model m = [&] {
        try {
            return open_local(path, true);
        } catch (py::error_already_set& e) {
            if (checking && e.value().attr("exit_code").cast<int>() == 3) e.value().attr("exit_code") = exit_model_io_in_check;
            throw;
        }
    }();
    if (!expect.empty() && expect.size() != m.parts().size())
        raise_usage(std::string("expect was given ") + std::to_string(expect.size()) + " hashes; the model has " +
                    std::to_string(m.parts().size()) + " part file" + (m.parts().size() == 1 ? "" : "s"));

    check::hash_options ho;
    ho.kinds = kinds;
    ho.per_tensor = per_tensor;
    ho.file_sha256 = file_sha256;
    check::walk_options wo;
    wo.threads = threads;
    const gguf::result<check::model_digests> digests = without_gil([&] { return check::hash_model(m, ho, wo); });
    if (!digests) {
        if (checking && digests.error().code == gguf::errc::io_error) raise_error_exit(digests.error(), exit_model_io_in_check);
        raise_error(digests.error());
    }
    const check::model_digests& d = *digests;
    const auto tensors = m.tensors();

    py::dict r;
    py::list kind_list;
    for (hash_kind k : d.kinds) kind_list.append(std::string(check::to_string(k)));
    r["path"] = text(path);
    r["kinds"] = kind_list;
    py::list tensor_list;
    for (std::size_t t = 0; t < d.tensors.size() && t < tensors.size(); ++t) {
        py::dict h;
        for (std::size_t i = 0; i < d.kinds.size(); ++i)
            if (d.kinds[i] != hash_kind::uuid && i < d.tensors[t].size())
                h[py::str(std::string(check::to_string(d.kinds[i])))] = d.tensors[t][i].text();
        py::dict entry;
        entry["name"] = text(tensors[t].info->name);
        entry["hashes"] = h;
        tensor_list.append(std::move(entry));
    }
    r["tensors"] = tensor_list;
    py::dict model_hashes;
    for (std::size_t i = 0; i < d.kinds.size() && i < d.model.size(); ++i)
        model_hashes[py::str(std::string(check::to_string(d.kinds[i])))] = d.model[i].text();
    r["model"] = model_hashes;

    int code = 0;
    if (checking) {
        const check::check_report rep =
            check::check_manifest(*man, m, fs::path(path).filename().string(), d);
        const auto line_name = [&](const check::check_line& l) {
            if (l.tensor < 0) return path;
            return path + ":" + std::string(tensors[static_cast<std::size_t>(l.tensor)].info->name);
        };
        py::list checked;
        for (const auto& l : rep.lines) {
            lines.append(text(hash_line(l.kind, l.ours.text(), line_name(l), check::to_string(l.status))));
            py::dict e;
            e["hash"] = std::string(check::to_string(l.kind));
            e["tensor"] = l.tensor < 0 ? py::object(py::none())
                                       : py::object(text(tensors[static_cast<std::size_t>(l.tensor)].info->name));
            e["ours"] = l.ours.text();
            e["status"] = std::string(check::to_string(l.status));
            e["manifest"] = l.entry ? py::object(py::str(l.entry->value.text())) : py::object(py::none());
            e["line"] = l.entry ? py::object(py::int_(l.entry->line)) : py::object(py::none());
            checked.append(std::move(e));
        }
        py::list unknown, conflicting, missing;
        for (const auto* e : rep.unknown_tensors) {
            lines.append(text(hash_line(e->kind, e->value.text(), e->name,
                                        std::string("No Such Tensor (manifest line ") + std::to_string(e->line) + ")")));
            py::dict u;
            u["name"] = text(e->name);
            u["line"] = e->line;
            u["hash"] = std::string(check::to_string(e->kind));
            u["value"] = e->value.text();
            unknown.append(std::move(u));
        }
        for (const auto* e : rep.conflicting) {
            lines.append(text(hash_line(e->kind, e->value.text(), e->name,
                                        std::string("Conflicting Entry (manifest line ") + std::to_string(e->line) + ")")));
            py::dict c;
            c["name"] = text(e->name);
            c["line"] = e->line;
            c["hash"] = std::string(check::to_string(e->kind));
            c["value"] = e->value.text();
            conflicting.append(std::move(c));
        }
        for (std::uint32_t t : rep.missing_tensors) missing.append(text(tensors[t].info->name));
        lines.append(py::str(""));
        lines.append(text(std::string("Verification results for ") + *manifest_path + " - " +
                          std::string(check::to_string(rep.outcome))));
        py::dict c;
        c["manifest"] = text(*manifest_path);
        py::list present;
        for (hash_kind k : man->kinds()) present.append(std::string(check::to_string(k)));
        c["manifest_kinds"] = present;
        c["file_name"] = text(rep.file_name);
        c["renamed"] = rep.renamed;
        c["outcome"] = std::string(check::to_string(rep.outcome));
        c["outcome_code"] = static_cast<int>(rep.outcome);
        c["lines"] = checked;
        c["unknown_tensors"] = unknown;
        c["conflicting"] = conflicting;
        c["missing_tensors"] = missing;
        r["check"] = c;
        code = static_cast<int>(rep.outcome);
    } else {
        r["check"] = py::none();
        if (per_tensor)
            for (std::size_t t = 0; t < tensors.size() && t < d.tensors.size(); ++t) {
                const std::string name = path + ":" + std::string(tensors[t].info->name);
                for (std::size_t i = 0; i < d.kinds.size(); ++i)
                    if (d.kinds[i] != hash_kind::uuid) lines.append(text(hash_line(d.kinds[i], d.tensors[t][i].text(), name)));
            }
        for (std::size_t i = 0; i < d.kinds.size(); ++i) lines.append(text(hash_line(d.kinds[i], d.model[i].text(), path)));
    }

    if (file_sha256) {
        py::list files;
        bool failed = false;
        std::vector<std::string> paths;
        for (std::size_t p = 0; p < m.parts().size(); ++p) paths.push_back(p == 0 ? path : m.parts()[p].path.string());
        for (std::size_t p = 0; p < paths.size(); ++p) {
            const std::string hex = p < d.files.size() ? d.files[p].text() : std::string();
            lines.append(text(hex + "  " + paths[p]));
            py::dict f;
            f["part"] = p + 1;
            f["path"] = text(paths[p]);
            f["sha256"] = hex;
            f["expected"] = p < expect.size() ? py::object(py::str(expected[p])) : py::object(py::none());
            f["match"] = p < expect.size() ? py::object(py::bool_(hex == expected[p])) : py::object(py::none());
            files.append(std::move(f));
        }
        for (std::size_t p = 0; p < expect.size() && p < paths.size(); ++p) {
            const bool same = p < d.files.size() && d.files[p].text() == expected[p];
            lines.append(text(paths[p] + ": " + (same ? "OK" : "FAILED")));
            failed = failed || !same;
        }
        if (failed && code == 0) code = 1;
        r["files"] = files;
    } else {
        r["files"] = py::none();
    }
    r["lines"] = lines;
    r["exit_code"] = code;
    return r;
}

// ---------------------------------------------------------------- verify

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
    std::optional<hash_kind> man_kind;
    if (manifest_path) {
        gguf::result<check::manifest> read = without_gil([&] { return check::read_manifest(*manifest_path); });
        if (!read) raise_error_exit(read.error(), read.error().code == gguf::errc::manifest_bad_line ? 1 : 3);
        man.emplace(std::move(*read));
        man_kind = man->strongest();
        if (!man_kind) {
            py::dict fields;
            fields["code"] = "manifest_no_known_hash";
            fields["section"] = "file";
            fields["exit_code"] = 1;
            fields["file"] = text(*manifest_path);
            py::object make = py::module_::import("minfer.errors").attr("_make");
            py::object exc = make("request",
                                  text(std::string("'") + gguf::escape(*manifest_path) +
                                       "': no line of a known hash type (xxh64, xxh3, sha1, sha256, uuid)"),
                                  fields);
            PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
            throw py::error_already_set();
        }
    }

    // The vocabulary as llama.cpp loads it (minfer verify's check, metadata only).
    auto vocab = check::check_vocab(m.metadata());
    if (!vocab) raise_error(vocab.error());
    std::uint64_t vocab_findings = 0, vocab_warnings = 0;
    py::list vocab_list;
    for (const check::vocab_finding& f : *vocab) {
        (f.warning ? vocab_warnings : vocab_findings) += 1;
        py::dict d;
        d["severity"] = f.warning ? "warning" : "finding";
        d["problem"] = std::string(check::to_string(f.problem));
        d["key"] = std::string(f.key);
        d["index"] = f.index;
        d["count"] = f.count;
        d["what"] = text(f.what);
        vocab_list.append(std::move(d));
    }

    std::optional<gguf::error> failure;
    std::vector<check::tensor_verdict> verdicts;
    std::optional<check::model_digests> digests;
    {
        py::gil_scoped_release unlocked;
        [&] {
            auto vc = check::value_consumer::make(m, check::value_check_options{values, static_cast<std::size_t>(max_examples)});
            if (!vc) return void(failure = vc.error());
            std::vector<check::data_consumer*> consumers{&*vc};
            std::optional<check::hash_consumer> hashes;
            if (man_kind || !expected_files->empty()) {
                check::hash_options ho;
                ho.kinds.clear();
                if (man_kind) ho.kinds.push_back(*man_kind);
                ho.per_tensor = man_kind.has_value() && *man_kind != hash_kind::uuid;
                ho.file_sha256 = !expected_files->empty();
                auto h = check::hash_consumer::make(m, ho);
                if (!h) return void(failure = h.error());
                hashes.emplace(std::move(*h));
                consumers.push_back(&*hashes);
            }
            check::walk_options wo;
            wo.threads = threads;
            wo.whole_files = !expected_files->empty();
            if (auto w = check::walk_model_data(m, consumers, wo); !w) return void(failure = w.error());
            auto v = vc->take();
            if (!v) return void(failure = v.error());
            verdicts = std::move(*v);
            if (hashes) {
                auto dg = hashes->take();
                if (!dg) return void(failure = dg.error());
                digests.emplace(std::move(*dg));
            }
        }();
    }
    if (failure) raise_error(*failure);

    const auto tensors = m.tensors();
    std::uint64_t findings = 0, with_findings = 0, warnings = 0, bytes = 0, values_checked = 0;
    std::uint64_t by_scope[3] = {0, 0, 0};
    py::list reports;
    for (const check::tensor_verdict& v : verdicts) {
        const gguf::tensor_info& info = *tensors[v.tensor].info;
        bytes += info.n_bytes;
        by_scope[static_cast<int>(v.scope)] += 1;
        values_checked += v.values_checked ? 1u : 0u;
        findings += v.findings();
        with_findings += v.findings() > 0 ? 1u : 0u;
        warnings += v.all_zero ? 1u : 0u;
        if (v.findings() == 0 && !v.all_zero) continue;
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

    bool manifest_ok = true, files_ok = true;
    py::object manifest_obj = py::none();
    if (man) {
        const check::check_report rep = check::check_manifest(*man, m, fs::path(path).filename().string(), *digests);
        manifest_ok = rep.outcome == check::check_outcome::success;
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
    if (!expected_files->empty()) {
        py::list files;
        for (std::size_t p = 0; p < n_parts; ++p) {
            const check::digest ours = p < digests->files.size() ? digests->files[p] : check::digest{};
            const bool match = ours == (*expected_files)[p];
            files_ok = files_ok && match;
            py::dict f;
            f["part"] = p + 1;
            f["path"] = text(m.parts()[p].path.string());
            f["sha256"] = ours.text();
            f["expected"] = (*expected_files)[p].text();
            f["match"] = match;
            files.append(std::move(f));
        }
        files_obj = files;
    }
    const bool clean = findings == 0 && vocab_findings == 0 && manifest_ok && files_ok;

    py::dict r;
    r["file"] = text(path);
    r["parts"] = n_parts;
    r["tensors"] = tensors.size();
    r["bytes"] = bytes;
    r["values_mode"] = values;
    py::dict checked;
    checked["elements"] = by_scope[static_cast<int>(check::check_scope::elements)];
    checked["scales"] = by_scope[static_cast<int>(check::check_scope::scales)];
    checked["none"] = by_scope[static_cast<int>(check::check_scope::none)];
    checked["values"] = values_checked;
    r["checked"] = checked;
    r["findings"] = findings;
    r["tensors_with_findings"] = with_findings;
    r["warnings"] = warnings;
    r["max_examples"] = max_examples;
    r["vocabulary_findings"] = vocab_findings;
    r["vocabulary_warnings"] = vocab_warnings;
    r["vocabulary"] = vocab_list;
    r["tensor_reports"] = reports;
    r["manifest"] = manifest_obj;
    r["file_sha256"] = files_obj;
    r["verdict"] = clean ? "clean" : "failed";
    r["exit_code"] = clean ? 0 : 1;
    return r;
}

// ---------------------------------------------------------------- diff

using compare::diff_metadata;
using compare::diff_tensors;
using compare::metadata_difference;
using compare::tensor_counts;
using compare::tensor_difference;
using compare::value_compare;

py::dict kv_side(const gguf::kv& e) {
    py::dict d;
    d["type"] = type_text(e);
    if (e.is_array()) {
        d["count"] = e.count;
    } else {
        d["value"] = scalar_value(e);
    }
    return d;
}

py::dict tensor_side(const gguf::tensor_info& i) {
    py::dict d;
    d["type"] = std::string(gguf::to_string(i.type));
    py::list shape;
    const std::uint32_t dims = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, i.n_dims));
    for (std::uint32_t k = 0; k < dims; ++k) shape.append(i.ne[k]);
    d["shape"] = shape;
    return d;
}

py::object optional_float(const std::optional<double>& v) { return v ? py::object(py::float_(*v)) : py::object(py::none()); }

py::dict diff(const std::string& a, const std::string& b, bool values, bool mmap) {
    gguf::model ma = open_local(a, mmap);
    gguf::model mb = open_local(b, mmap);
    std::vector<metadata_difference> md;
    std::vector<tensor_difference> td;
    tensor_counts tc;
    bool oom = false;
    std::optional<gguf::error> failed;
    {
        py::gil_scoped_release unlocked;
        try {
            md = diff_metadata(ma.metadata(), mb.metadata());
            auto r = diff_tensors(ma, mb, values, tc);
            if (r) td = std::move(*r);
            else failed = std::move(r).error();
        } catch (const std::bad_alloc&) {
            oom = true;
        }
    }
    if (oom) throw std::bad_alloc();  // pybind11: MemoryError
    if (failed) raise_error(*failed);

    std::uint64_t added = 0, removed = 0, changed = 0;
    py::list meta;
    for (const metadata_difference& d : md) {
        using k = metadata_difference::kind;
        added += d.what == k::added ? 1u : 0u;
        removed += d.what == k::removed ? 1u : 0u;
        changed += d.what != k::added && d.what != k::removed ? 1u : 0u;
        py::dict e;
        e["key"] = text(d.a != nullptr ? d.a->key : d.b->key);
        e["change"] = to_string(d.what);
        if (d.a != nullptr) e["a"] = kv_side(*d.a);
        if (d.b != nullptr) e["b"] = kv_side(*d.b);
        if (d.what == k::array_changed) {
            e["first_difference"] = d.first_index;
            e["item_a"] = array_item(*d.a, d.first_index);
            e["item_b"] = array_item(*d.b, d.first_index);
        }
        meta.append(std::move(e));
    }
    py::list tens;
    for (const tensor_difference& d : td) {
        using k = tensor_difference::kind;
        py::dict e;
        e["name"] = text(d.a != nullptr ? d.a->info->name : d.b->info->name);
        switch (d.what) {
            case k::only_in_a: e["change"] = "only_in_a"; break;
            case k::only_in_b: e["change"] = "only_in_b"; break;
            case k::data_differs: e["change"] = "data_differs"; break;
            case k::changed:
                e["change"] = d.type_changed && d.shape_changed ? "type_and_shape_changed"
                              : d.type_changed                  ? "type_changed"
                                                                : "shape_changed";
                break;
        }
        if (d.a != nullptr) e["a"] = tensor_side(*d.a->info);
        if (d.b != nullptr) e["b"] = tensor_side(*d.b->info);
        if (d.values) {
            const value_compare& c = *d.values;
            py::dict v;
            v["non_finite_mismatches"] = c.non_finite_mismatches();  // first, as minfer diff --json
            if (const auto m = c.first_non_finite_mismatch()) {
                py::dict f;
                f["index"] = m->index;
                f["a"] = static_cast<double>(m->a);
                f["b"] = static_cast<double>(m->b);
                v["first_non_finite_mismatch"] = f;
            } else {
                v["first_non_finite_mismatch"] = py::none();
            }
            v["count"] = c.count();
            v["compared"] = c.compared();
            v["max_abs_diff"] = c.max_abs_diff();
            v["rmse"] = c.rmse();
            v["cosine"] = optional_float(c.cosine());
            v["relative_error"] = optional_float(c.relative_error());
            e["values"] = v;
        } else if (d.values_error) {
            py::dict v;
            v["code"] = std::string(gguf::to_string(d.values_error->code));
            v["message"] = text(d.values_error->message());
            e["values_error"] = v;
        }
        tens.append(std::move(e));
    }
    py::dict summary;
    summary["metadata_added"] = added;
    summary["metadata_removed"] = removed;
    summary["metadata_changed"] = changed;
    summary["tensors_only_in_a"] = tc.only_a;
    summary["tensors_only_in_b"] = tc.only_b;
    summary["tensors_changed"] = tc.changed;
    summary["tensors_data_differs"] = tc.data_differs;
    summary["tensors_identical"] = tc.identical;
    py::dict r;
    r["a"] = text(a);
    r["b"] = text(b);
    r["identical"] = md.empty() && td.empty();
    r["summary"] = summary;
    r["metadata"] = meta;
    r["tensors"] = tens;
    return r;
}

// ---------------------------------------------------------------- estimate

gguf::model open_at(const std::string& location, std::optional<std::uint64_t> max_fetch, std::optional<double> timeout) {
    if (!remote::is_remote(location)) return open_local(location, true);
    remote::fetch_options fo;
    if (max_fetch) fo.max_fetch = *max_fetch;
    auto url = remote::resolve(location);
    if (!url) raise_error(url.error());
    if (timeout && *timeout > 0) {
        fo.timeout_s = *timeout;  // the whole open's deadline, every request and retry included
    }
    if (remote::is_hub(*url))
        if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) fo.bearer_token = token;
    return unwrap(without_gil([&] {
        remote::http_opener opener(fo);
        return gguf::model::open(opener, *url);
    }));
}

py::dict device_dict(const estimate::device& d, bool known) {
    py::dict r;
    r["weights_bytes"] = d.weights;
    r["kv_cache_bytes"] = d.kv ? py::object(py::int_(*d.kv)) : py::object(py::none());
    r["compute_buffer_bytes"] = d.compute ? py::object(py::int_(*d.compute)) : py::object(py::none());
    r["total_bytes"] = known ? py::object(py::int_(d.total())) : py::object(py::none());
    return r;
}

py::dict estimate_(const std::string& location, std::optional<std::uint64_t> ctx, std::uint32_t batch,
                   std::uint32_t ubatch, const std::string& cache_type_k, const std::string& cache_type_v,
                   std::uint32_t parallel, const std::string& flash_attn, std::optional<std::uint64_t> max_fetch,
                   std::optional<double> timeout) {
    estimate::params p;
    if (ctx) {
        if (*ctx < 1 || *ctx > estimate::max_context)
            raise_usage(std::string("ctx ") + std::to_string(*ctx) + ": expected a context size from 1 to " +
                        std::to_string(estimate::max_context));
        p.n_ctx = *ctx;
    }
    if (batch < 1) raise_usage("batch: expected a whole number from 1 to 4294967295");
    if (ubatch < 1) raise_usage("ubatch: expected a whole number from 1 to 4294967295");
    p.n_batch = batch;
    p.n_ubatch = ubatch;
    if (p.n_ubatch > p.n_batch)
        raise_usage(std::string("ubatch ") + std::to_string(ubatch) + " is larger than batch " + std::to_string(batch));
    if (parallel < 1 || parallel > estimate::max_sequences)
        raise_usage(std::string("parallel ") + std::to_string(parallel) + ": expected 1 to " + std::to_string(estimate::max_sequences) +
                    " sequences");
    p.n_seq_max = parallel;
    const auto cache_type = [](const std::string& s, const char* which) {
        auto t = gguf::tensor_type_from_name(s);
        if (!t || !estimate::is_cache_type(*t))
            raise_usage(std::string(which).append(" '").append(gguf::escape(s)).append(
                "': expected one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"));
        return *t;
    };
    p.type_k = cache_type(cache_type_k, "cache_type_k");
    p.type_v = cache_type(cache_type_v, "cache_type_v");
    if (flash_attn == "auto") {
        p.flash_attn = estimate::flash_attn_mode::automatic;
    } else if (flash_attn == "on") {
        p.flash_attn = estimate::flash_attn_mode::on;
    } else if (flash_attn == "off") {
        p.flash_attn = estimate::flash_attn_mode::off;
    } else {
        raise_usage(std::string("flash_attn '") + gguf::escape(flash_attn) + "': expected auto, on or off");
    }
    if (max_fetch && *max_fetch == 0) raise_usage("max_fetch must be at least 1 byte");

    gguf::model m = open_at(location, max_fetch, timeout);
    const gguf::result<estimate::figures> made = without_gil([&] { return estimate::estimate(m, p); });
    if (!made) {
        const gguf::error& e = made.error();
        // Options llama.cpp refuses for this model are usage errors (exit 2), as in the tool.
        if (e.where == gguf::section::access) raise_error_exit(e, 2);
        // Hyperparameters llama.cpp cannot use (a required key missing too): the model is invalid
        // for this purpose, as the tool's exit code 1 says.
        if (e.code == gguf::errc::out_of_memory) raise_error(e);
        raise_error_as(e, "invalid", 1);
    }
    const estimate::figures& f = *made;
    const auto& h = f.hp;
    const char* fa = p.flash_attn == estimate::flash_attn_mode::on    ? "on"
                     : p.flash_attn == estimate::flash_attn_mode::off ? "off"
                                                                      : "auto";
    py::dict r;
    r["model"] = text(location);
    r["architecture"] = text(h.architecture);
    r["architecture_known"] = h.known();
    py::dict params;
    params["ctx"] = f.n_ctx;
    params["ctx_train"] = h.n_ctx_train;
    params["ctx_per_sequence"] = f.n_ctx_seq;
    params["batch"] = f.n_batch;
    params["ubatch"] = f.n_ubatch;
    params["parallel"] = f.n_seq_max;
    params["cache_type_k"] = std::string(gguf::to_string(f.type_k));
    params["cache_type_v"] = std::string(gguf::to_string(f.type_v));
    params["flash_attn"] = f.flash_attn;
    params["flash_attn_requested"] = fa;
    params["kv_unified"] = f.kv_unified;
    r["parameters"] = params;
    r["weights_bytes"] = f.weights_bytes;
    if (f.kv) {
        const auto& kv = *f.kv;
        r["kv_cache_bytes"] = kv.total();
        py::dict c;
        c["cells"] = kv.cells;
        c["swa_cells"] = kv.swa_cells;
        c["k_bytes"] = kv.k_bytes;
        c["v_bytes"] = kv.v_bytes;
        c["recurrent_state_bytes"] = kv.recurrent_state_bytes;
        py::list layers;
        for (const auto& l : kv.layers) {
            py::dict d;
            d["layer"] = l.layer;
            d["swa"] = l.swa;
            d["cells"] = l.cells;
            d["k_bytes"] = l.k_bytes;
            d["v_bytes"] = l.v_bytes;
            d["recurrent_state_bytes"] = l.r_bytes + l.s_bytes;
            layers.append(std::move(d));
        }
        c["layers"] = layers;
        r["kv_cache"] = c;
    } else {
        r["kv_cache_bytes"] = py::none();
        r["kv_cache"] = py::none();
    }
    py::dict cpu_only, offload;
    cpu_only["cpu"] = device_dict(f.cpu_only, h.known());
    offload["gpu"] = device_dict(f.gpu, h.known());
    offload["host"] = device_dict(f.host, h.known());
    r["cpu_only"] = cpu_only;
    r["full_gpu_offload"] = offload;
    return r;
}

}  // namespace

// A size as text, read as the CLI reads it (minfer::toolbox::parse_size): the bytes, or the reason.
py::object size_text(const std::string& text) {
    std::string why;
    const auto n = ::minfer::toolbox::parse_size(text, why);
    if (!n) return py::make_tuple(py::none(), why);
    return py::make_tuple(py::int_(*n), py::none());
}

void register_check(py::module_& m) {
    m.def("parse_size", &size_text, py::arg("text"),
          "A SIZE as the CLI reads it: (bytes, None), or (None, why it is not one).");
    m.def("hash", &hash, py::arg("path"), py::arg("kinds"), py::arg("per_tensor"), py::arg("manifest"),
          py::arg("file_sha256"), py::arg("expect"), py::arg("threads"), "Hash a model (minfer hash).");
    m.def("verify", &verify, py::arg("path"), py::arg("values"), py::arg("max_examples"), py::arg("threads"),
          py::arg("manifest"), py::arg("file_sha256"), py::arg("mmap"), "Verify a model (minfer verify --json).");
    m.def("diff", &diff, py::arg("a"), py::arg("b"), py::arg("values"), py::arg("mmap"),
          "Compare two models (minfer diff --json).");
    m.def("estimate", &estimate_, py::arg("location"), py::arg("ctx"), py::arg("batch"), py::arg("ubatch"),
          py::arg("cache_type_k"), py::arg("cache_type_v"), py::arg("parallel"), py::arg("flash_attn"),
          py::arg("max_fetch"), py::arg("timeout"), "Estimate llama.cpp's memory for a model (minfer estimate --json).");
}

}  // namespace minfer::python::toolbox
