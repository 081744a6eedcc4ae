// minfer._toolbox: edit, edit_recover, split, merge — the minfer tool's commands of the same names
// (cli/cmd/edit.cpp, split.cpp, merge.cpp) over minfer::gguf_write, with the same checks in the same
// order and the same refusals. Every write is the library's atomic write (an output holds nothing or
// the complete file); a split that fails removes the parts it wrote. Long work runs without the GIL.
#include <pybind11/stl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/merge.hpp"
#include "minfer/gguf_write/metadata_edit.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/toolbox/edit_steps.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

namespace fs = std::filesystem;

std::string quoted_path(const std::string& p) { return std::string("'").append(gguf::escape(p)).append("'"); }

// One side of a diff entry: {"type", "value"} for a scalar or string; {"type": "array",
// "element_type", "count"} for an array.
py::dict side(const gguf::kv& e) {
    py::dict d;
    d["type"] = std::string(gguf::to_string(e.type));
    if (e.is_array()) {
        d["element_type"] = std::string(gguf::to_string(e.element_type));
        d["count"] = e.count;
    } else {
        d["value"] = scalar_value(e);
    }
    return d;
}

py::list diff_list(const gguf::metadata_edit_plan& plan) {
    py::list out;
    for (const gguf::metadata_diff_entry& d : plan.diff) {
        py::dict entry;
        entry["key"] = text(d.key);
        if (d.before == nullptr) {
            entry["change"] = "added";
        } else if (!d.after) {
            entry["change"] = "removed";
        } else {
            entry["change"] = "changed";
        }
        entry["before"] = d.before == nullptr ? py::object(py::none()) : py::object(side(*d.before));
        entry["after"] = d.after ? py::object(side(d.after->view(d.key))) : py::object(py::none());
        entry["forced_over"] = d.forced_over.empty() ? py::object(py::none()) : py::object(text(d.forced_over));
        out.append(std::move(entry));
    }
    return out;
}

using ::minfer::toolbox::plan_in_place_edit;  // part 1's head with the plan's changes, as the CLI plans it

// Whether an in-place edit would fit, into `r` (a dry run's verdict).
void in_place_verdict(const gguf::model& m, const gguf::metadata_edit_plan& plan, py::dict& r) {
    const gguf::result<gguf::in_place_edit> e = without_gil([&] { return plan_in_place_edit(m, plan); });
    r["in_place_fits"] = e.has_value();
    if (e) {
        r["in_place_padding"] = e->padding_bytes;
        r["in_place_missing"] = 0;
        r["in_place_error"] = py::none();
        return;
    }
    const gguf::error& err = e.error();
    r["in_place_padding"] = 0;
    r["in_place_missing"] = err.code == gguf::write_codes::no_room_in_place ? err.found - err.expected : 0;
    r["in_place_error"] = std::string(gguf::to_string(err.code));
}

// journal_present when an interrupted in-place edit left a journal beside `p` (as the CLI refuses it).
void refuse_journal(const fs::path& p) { unwrap(::minfer::toolbox::refuse_journal(p)); }

// A change as the wrapper passes it: (op, key, type name, text).
gguf::metadata_edit to_edit(const std::string& op, const std::string& key, const std::string& type,
                            const std::string& value) {
    if (op == "text") return unwrap(gguf::parse_set_text(value));
    if (op == "set") return gguf::metadata_edit::set(key, value);
    if (op == "set_typed") {
        const auto t = gguf::value_type_from_name(type);
        if (!t) {
            gguf::error e;
            e.code = gguf::errc::bad_value_text;
            e.where = gguf::section::access;
            e.subject = key;
            e.detail = std::string("unknown type '").append(gguf::escape(type)).append("'; the types are ").append(
                gguf::value_type_names());
            raise_error(e);
        }
        return gguf::metadata_edit::set_typed(key, *t, value);
    }
    if (op == "delete") return gguf::metadata_edit::erase(key);
    if (op == "chat_template") return gguf::metadata_edit::chat_template(value);
    if (op == "special_token") return gguf::metadata_edit::special_token(key, value);
    if (op == "name") return gguf::metadata_edit::name(value);
    if (op == "description") return gguf::metadata_edit::description(value);
    throw py::value_error(std::string("unknown change '") + op + "'");
}

py::dict edit(const std::string& path, const std::string& output,
              const std::vector<std::tuple<std::string, std::string, std::string, std::string>>& changes,
              std::uint64_t reserve, bool in_place, bool dry_run, bool overwrite, bool allow_type_change) {
    std::vector<gguf::metadata_edit> edits;
    for (const auto& [op, key, type, value] : changes) edits.push_back(to_edit(op, key, type, value));
    if (edits.empty() && reserve == 0)  // reserve alone rewrites a file only to make room: a change of its own
        raise_usage("no change given: use set, delete, chat_template, special_tokens, name, description or reserve");
    if (!in_place && output.empty() && !dry_run)
        raise_usage("no output given: write a new file (output=...), or edit the model itself with in_place=True");

    refuse_journal(fs::path(path));
    gguf::model m = open_local(path, true);
    const std::size_t n_parts = m.parts().size();
    for (const gguf::model_part& p : m.parts()) refuse_journal(p.path);

    if (!output.empty()) {
        const std::optional<std::size_t> out_part = part_of(m, output);
        if (in_place) {
            if (out_part != std::size_t{0})
                raise_usage(std::string("in_place edits ") + quoted_path(path) + " itself; output must be None or name that file",
                            output);
        } else {
            if (out_part)
                raise_usage(std::string("the output ") + quoted_path(output) + " is the input model" +
                                (n_parts > 1 ? " (one of its split parts)" : "") +
                                ": a rewrite never replaces its input; write another file, or edit this one in place",
                            output);
            if (n_parts > 1)
                raise_usage(quoted_path(path) + " is part 1 of a split set of " + std::to_string(n_parts) +
                                " parts; an output file would be a lone part 1 that loads only beside the other parts. "
                                "Edit the set in place (part 1 holds the metadata), or merge it first",
                            path);
            // The same check as the CLI's and atomic_file's (docs/CLI.md "Output files"): a FIFO,
            // device or directory is never replaced, not even with overwrite=True.
            auto checked = gguf::check_output_path(fs::path(output), overwrite);
            if (!checked && gguf::is_output_exists(checked.error()))
                raise_usage(std::string("the output ") + quoted_path(output) + " exists; pass overwrite=True to replace it", output);
            if (!checked) raise_error(checked.error());
        }
    }
    if (reserve > 0 && in_place)
        raise_usage("reserve leaves room in a new file (output); an in-place edit keeps the room the file has");
    if (reserve > ::minfer::toolbox::max_reserve) raise_usage("reserve: at most 1 GiB of room");

    gguf::metadata_edit_options options;
    options.drop_padding = !in_place;
    options.allow_type_change = allow_type_change;
    gguf::metadata_edit_plan plan = unwrap(gguf::plan_metadata_edit(m, edits, options));
    ::minfer::toolbox::add_reserve(plan, reserve);

    py::dict r;
    r["path"] = text(path);
    r["output"] = output.empty() ? py::object(py::none()) : py::object(text(output));
    r["diff"] = diff_list(plan);  // rendered now: the old values view the mapping an in-place edit rewrites
    py::list warnings;
    for (const std::string& w : plan.warnings) warnings.append(text(w));
    r["warnings"] = warnings;
    r["reserve"] = reserve;
    r["dry_run"] = dry_run;
    r["in_place"] = in_place;
    r["written"] = false;
    r["file_size"] = py::none();
    r["n_tensors"] = m.tensors().size();
    r["head_bytes"] = py::none();
    r["in_place_padding"] = py::none();

    if (dry_run) {
        if (in_place) {
            in_place_verdict(m, plan, r);
        } else {
            gguf::metadata_edit_options in_place_options = options;
            in_place_options.drop_padding = false;
            const gguf::metadata_edit_plan in_place_plan = unwrap(gguf::plan_metadata_edit(m, edits, in_place_options));
            in_place_verdict(m, in_place_plan, r);
        }
        return r;
    }

    if (in_place) {
        gguf::result<void> done;
        bool unchanged = false;
        const gguf::result<gguf::in_place_edit> e = without_gil([&] {
            auto planned = plan_in_place_edit(m, plan);
            // Nothing to change (as the CLI): no journal, no write, written stays False.
            unchanged = planned && (plan.diff.empty() || planned->new_head == planned->old_head);
            if (planned && !unchanged) done = gguf::apply_in_place(*planned, std::move(m));
            return planned;
        });
        if (!e) raise_error(e.error());
        if (!done) raise_error(done.error());
        r["output"] = text(e->file.string());
        if (unchanged) return r;
        r["written"] = true;
        r["file_size"] = e->file_size;
        r["head_bytes"] = e->new_head.size();
        r["in_place_padding"] = e->padding_bytes;
        return r;
    }

    gguf::result<void> written;
    {
        py::gil_scoped_release unlocked;
        auto src = gguf::model_source::open(m);
        if (!src) {
            written = gguf::unexpected(std::move(src).error());
        } else {
            auto w = gguf::rewrite(m, *src, plan.changes, m.tensors());
            if (!w) {
                written = gguf::unexpected(std::move(w).error());
            } else {
                gguf::write_options wo;
                wo.file.replace_existing = overwrite;  // without it the kernel refuses an output that appeared
                written = w->write(fs::path(output), wo);
            }
        }
    }
    if (!written) {
        const gguf::error& e = written.error();
        if (gguf::is_output_exists(e) && !overwrite)
            raise_usage(std::string("the output ") + quoted_path(output) + " exists; pass overwrite=True to replace it", output);
        raise_error(e);
    }
    std::error_code ec;
    const auto size = fs::file_size(fs::path(output), ec);
    r["written"] = true;
    r["file_size"] = ec ? py::object(py::none()) : py::object(py::int_(size));
    return r;
}

bool edit_discard_journal(const std::string& path) {
    return unwrap(without_gil([&] { return gguf::discard_journal(fs::path(path)); }));
}

std::string edit_recover(const std::string& path) {
    switch (unwrap(without_gil([&] { return gguf::recover_in_place(fs::path(path)); }))) {
        case gguf::recovery::nothing_to_do: return "nothing_to_do";
        case gguf::recovery::rolled_back: return "rolled_back";
        case gguf::recovery::completed: return "completed";
    }
    return "nothing_to_do";
}

py::dict split(const std::string& path, const std::string& prefix, std::optional<std::uint64_t> max_tensors,
               std::optional<std::uint64_t> max_bytes, bool no_tensor_first_split, bool dry_run, bool overwrite) {
    gguf::split_options so;
    so.no_tensor_first_split = no_tensor_first_split;
    if (max_tensors && max_bytes) raise_usage("max_tensors and max_size cannot both be given");
    if (max_tensors && *max_tensors == 0) raise_usage("max_tensors must be at least 1");
    if (max_bytes && *max_bytes == 0) raise_usage("max_size must be at least 1 byte");
    so.max_tensors = max_tensors;
    so.max_bytes = max_bytes;
    if (prefix.empty()) raise_usage("the output prefix is empty");

    gguf::model m = open_local(path, true);
    const gguf::result<gguf::split_plan> made = without_gil([&] { return gguf::split_plan::make(m, so); });
    if (!made) {
        if (made.error().code == gguf::write_codes::too_many_parts) raise_error_exit(made.error(), 2);
        raise_error(made.error());
    }
    const gguf::split_plan& plan = *made;

    std::vector<std::string> names;
    for (std::uint32_t i = 0; i < plan.part_count(); ++i) names.push_back(plan.part_name(prefix, i));
    std::vector<std::string> targets;  // where each part is written: a link's target (the link stays)
    for (const std::string& n : names) {
        if (part_of(m, n))
            raise_usage(gguf::escape(n) + " is a file of the input model; split never writes over its input", n);
        auto checked = gguf::check_output_path(n, overwrite);
        if (!checked && gguf::is_output_exists(checked.error()))
            raise_usage(gguf::escape(n) + " already exists (pass overwrite=True to replace it)", n);
        if (!checked) raise_error(checked.error());
        targets.push_back(checked->path.string());
    }

    py::dict r;
    py::list parts, warnings;
    for (std::uint32_t i = 0; i < plan.part_count(); ++i) {
        const gguf::split_part& p = plan.parts()[i];
        const auto ts = plan.tensors_of(m, i);
        py::dict d;
        d["part"] = i + 1;
        d["path"] = text(names[i]);
        d["n_tensors"] = p.count;
        d["file_size"] = p.file_size;
        d["tensor_bytes"] = p.tensor_bytes;
        d["first_tensor"] = ts.empty() ? py::object(py::none()) : py::object(text(ts.front().info->name));
        d["last_tensor"] = ts.empty() ? py::object(py::none()) : py::object(text(ts.back().info->name));
        d["oversized"] = p.oversized;
        parts.append(std::move(d));
        if (p.oversized) {
            std::string why;
            if (p.count == 0) {
                why = "the metadata alone does not fit";
            } else {
                why = std::string("tensor '").append(gguf::escape(ts.front().info->name)).append("' does not fit");
                if (i == 0) why += " with the metadata";
            }
            warnings.append(std::string("part ")
                                .append(std::to_string(i + 1))
                                .append(" (")
                                .append(gguf::escape(names[i]))
                                .append(") is ")
                                .append(std::to_string(p.file_size))
                                .append(" bytes, over the max_size limit of ")
                                .append(std::to_string(plan.max_bytes().value_or(0)))
                                .append(" bytes: ")
                                .append(why));
        }
    }
    r["path"] = text(path);
    r["prefix"] = text(prefix);
    r["parts"] = parts;
    r["n_tensors"] = plan.tensor_count();
    r["total_bytes"] = plan.total_bytes();
    r["max_size"] = max_bytes ? py::object(py::int_(*max_bytes)) : py::object(py::none());
    r["max_tensors"] = max_bytes && !max_tensors ? py::object(py::none())
                                                 : py::object(py::int_(max_tensors.value_or(gguf::default_split_max_tensors)));
    r["no_tensor_first_split"] = no_tensor_first_split;
    r["warnings"] = warnings;
    r["dry_run"] = dry_run;
    r["written"] = false;
    if (dry_run) return r;

    // minfer::toolbox's protocol (as `minfer split`'s): part 1 last (a set is opened through part 1:
    // none is visible before all of it exists); a failure removes the parts this call wrote.
    ::minfer::toolbox::split_write_options wo;
    wo.overwrite = overwrite;
    const auto failure = without_gil([&] { return ::minfer::toolbox::write_split(m, plan, targets, wo); });
    if (failure) {
        if (failure->part && gguf::is_output_exists(failure->error) && !overwrite)
            raise_usage(gguf::escape(names[*failure->part]) + " already exists (pass overwrite=True to replace it)",
                        names[*failure->part]);
        raise_error(failure->error);
    }
    r["written"] = true;
    return r;
}

py::dict merge(const std::string& path, const std::string& output, bool dry_run, bool overwrite) {
    gguf::model m = open_local(path, true);
    auto warned = gguf::check_merge(m);
    if (!warned) raise_error(warned.error());
    if (const auto part = part_of(m, output))
        raise_usage(gguf::escape(output) + " is part " + std::to_string(*part + 1) +
                        " of the input set; merge never writes over its input",
                    output);
    if (auto checked = gguf::check_output_path(output, overwrite); !checked) {
        if (gguf::is_output_exists(checked.error()))
            raise_usage(gguf::escape(output) + " already exists (pass overwrite=True to replace it)", output);
        raise_error(checked.error());
    }

    py::dict r;
    py::list warnings;
    for (const gguf::merge_warning& w : *warned) {
        py::dict d;
        d["part"] = w.part;
        d["key"] = text(w.key);
        d["message"] = std::string("part ")
                           .append(std::to_string(w.part))
                           .append(" has key '")
                           .append(gguf::escape(w.key))
                           .append("', which the merged file drops (it keeps part 1's metadata)");
        warnings.append(std::move(d));
    }
    gguf::result<void> written;
    const gguf::result<gguf::plan> planned = without_gil([&]() -> gguf::result<gguf::plan> {
        auto src = gguf::model_source::open(m);
        if (!src) return gguf::unexpected(std::move(src).error());
        auto w = gguf::merge_writer(m, *src);
        if (!w) return gguf::unexpected(std::move(w).error());
        auto made = w->make_plan();
        if (made && !dry_run) {
            gguf::write_options wo;
            wo.file.replace_existing = overwrite;
            written = w->write(output, wo);
        }
        return made;
    });
    if (!planned) raise_error(planned.error());
    if (!written) {
        const gguf::error& e = written.error();
        if (gguf::is_output_exists(e) && !overwrite)
            raise_usage(gguf::escape(output) + " already exists (pass overwrite=True to replace it)", output);
        raise_error(e);
    }
    r["path"] = text(path);
    r["output"] = text(output);
    r["n_tensors"] = planned->tensor_count();
    r["n_parts"] = m.parts().size();
    r["file_size"] = planned->file_size();
    r["warnings"] = warnings;
    r["dry_run"] = dry_run;
    r["written"] = !dry_run;
    return r;
}

}  // namespace

void register_write(py::module_& m) {
    m.def("edit", &edit, py::arg("path"), py::arg("output"), py::arg("changes"), py::arg("reserve"),
          py::arg("in_place"), py::arg("dry_run"), py::arg("overwrite"), py::arg("allow_type_change"),
          "Edit a model's metadata (minfer edit). changes: (op, key, type, text) tuples in order.");
    m.def("edit_recover", &edit_recover, py::arg("path"),
          "Resolve an interrupted in-place edit (minfer edit --recover): 'nothing_to_do', 'rolled_back' or 'completed'.");
    m.def("edit_discard_journal", &edit_discard_journal, py::arg("path"),
          "Remove a model's undo journal without using it (minfer edit --discard-journal): whether there was one.");
    m.def("split", &split, py::arg("path"), py::arg("prefix"), py::arg("max_tensors"), py::arg("max_bytes"),
          py::arg("no_tensor_first_split"), py::arg("dry_run"), py::arg("overwrite"), "Split a model (minfer split).");
    m.def("merge", &merge, py::arg("path"), py::arg("output"), py::arg("dry_run"), py::arg("overwrite"),
          "Merge a split set (minfer merge).");
}

}  // namespace minfer::python::toolbox
