// minfer._toolbox.hash: `minfer hash` (cli/cmd/hash.cpp) over minfer::check: the digests of a model
// and its tensors, a llama-gguf-hash manifest checked, the part files' SHA-256 compared. hash has no
// --json: the result dict holds the lines the command prints, and the digests. The walk runs
// without the GIL.
#include <pybind11/stl.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/check/data_walk.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/toolbox/hash_line.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;
using check::hash_kind;

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
            raise_manifest_no_known_hash(*manifest_path,
                                         std::string("manifest does not have any known hash format in ") + *manifest_path,
                                         exit_unknown_hash);
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

}  // namespace

void register_hash(py::module_& m) {
    m.def("hash", &hash, py::arg("path"), py::arg("kinds"), py::arg("per_tensor"), py::arg("manifest"),
          py::arg("file_sha256"), py::arg("expect"), py::arg("threads"), "Hash a model (minfer hash).");
}

}  // namespace minfer::python::toolbox
