// `minfer diff A B`: what differs between two models: metadata key by key (arrays item by item),
// the tensor tables (only in one, type or shape changed), each common tensor's bytes, and with
// --values how far the values are apart after conversion to f32 (any two types of the same shape).
// Exit 0 when identical, 1 when different, like diff(1). Split sets are compared as the model they
// make: part 1's metadata and the merged tensor index.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../common/plural.hpp"
#include "../common/exit_codes.hpp"
#include "../common/metadata_diff.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/progress.hpp"
#include "../common/quote.hpp"
#include "../common/run_printing.hpp"
#include "../common/isa_warning.hpp"
#include "../common/value_visit.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/compare/metadata_diff.hpp"
#include "minfer/compare/tensor_diff.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/quant/dequantize.hpp"

namespace minfer::cli {
namespace {

using compare::diff_metadata;
using compare::diff_tensors;
using compare::tensor_counts;
using compare::tensor_difference;
using compare::value_compare;

struct diff_cli_options {
    std::string a;
    std::string b;
    bool values = false;
    bool json = false;
    bool no_mmap = false;
};

diff_cli_options opt;  // filled by CLI11 during parsing, read by diff_run()

constexpr std::size_t string_limit = 60;  // text output cuts strings as `info` does

std::string shape_text(const gguf::tensor_info& i) {
    std::string s = "[";
    const std::uint32_t dims = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, i.n_dims));
    for (std::uint32_t d = 0; d < dims; ++d) s += fmt::format("{}{}", d == 0 ? "" : ", ", i.ne[d]);
    return s + "]";
}

struct metadata_counts {
    std::size_t added = 0, removed = 0, changed = 0;
};

metadata_counts count(const std::vector<metadata_difference>& diffs) {
    metadata_counts c;
    for (const auto& d : diffs) {
        if (d.what == metadata_difference::kind::added) {
            ++c.added;
        } else if (d.what == metadata_difference::kind::removed) {
            ++c.removed;
        } else {
            ++c.changed;
        }
    }
    return c;
}

// ---- text ----

std::string value_text(const gguf::kv& e) {
    if (e.is_array()) return fmt::format("{} items", e.count);
    return scalar_value_text(e, string_limit);
}

std::string optional_text(const std::optional<double>& v) { return v ? float_text(*v) : std::string("undefined"); }

void print_text(const std::vector<metadata_difference>& md, const metadata_counts& mc,
                const std::vector<tensor_difference>& td, const tensor_counts& tc, const gguf::model& ma,
                const gguf::model& mb, out_buffer& out) {
    out.print("--- A {}\n+++ B {}\n", gguf::escape(opt.a), gguf::escape(opt.b));
    out.print("metadata: {} added, {} removed, {} changed ({} in A, {} in B)\n", mc.added, mc.removed, mc.changed,
              plural(ma.metadata().metadata().size(), "key", "keys"), mb.metadata().metadata().size());
    out.print("tensors: {} only in A, {} only in B, {} changed type or shape, {} with different bytes, {} identical\n",
              tc.only_a, tc.only_b, tc.changed, tc.data_differs, tc.identical);
    if (md.empty() && td.empty()) {
        out.print("identical\n");
        return;
    }
    if (!md.empty()) {
        out.print("\nmetadata differences:\n");
        for (const metadata_difference& d : md) {
            using k = metadata_difference::kind;
            switch (d.what) {
                case k::removed:
                    out.print("  - {}  {} {}\n", gguf::escape(d.a->key), type_text(*d.a), value_text(*d.a));
                    break;
                case k::added:
                    out.print("  + {}  {} {}\n", gguf::escape(d.b->key), type_text(*d.b), value_text(*d.b));
                    break;
                case k::type_changed:
                    out.print("  ~ {}  {} {} -> {} {}\n", gguf::escape(d.a->key), type_text(*d.a), value_text(*d.a),
                              type_text(*d.b), value_text(*d.b));
                    break;
                case k::value_changed:
                    out.print("  ~ {}  {} {} -> {}\n", gguf::escape(d.a->key), type_text(*d.a), value_text(*d.a),
                              value_text(*d.b));
                    break;
                case k::array_changed: {
                    std::string ia = array_item_text(*d.a, d.first_index, string_limit);
                    std::string ib = array_item_text(*d.b, d.first_index, string_limit);
                    out.print("  ~ {}  {}: {} -> {} items; first difference at item {}: {} -> {}\n", gguf::escape(d.a->key),
                              type_text(*d.a), d.a->count, d.b->count, d.first_index, ia.empty() ? "(none)" : ia,
                              ib.empty() ? "(none)" : ib);
                    break;
                }
            }
        }
    }
    if (!td.empty()) {
        out.print("\ntensor differences:\n");
        for (const tensor_difference& d : td) {
            using k = tensor_difference::kind;
            switch (d.what) {
                case k::only_in_a:
                    out.print("  - {}  {} {}  (only in A)\n", gguf::escape(d.a->info->name), gguf::to_string(d.a->info->type),
                              shape_text(*d.a->info));
                    break;
                case k::only_in_b:
                    out.print("  + {}  {} {}  (only in B)\n", gguf::escape(d.b->info->name), gguf::to_string(d.b->info->type),
                              shape_text(*d.b->info));
                    break;
                case k::changed:
                    out.print("  ~ {}  {} {} -> {} {}  ({})\n", gguf::escape(d.a->info->name), gguf::to_string(d.a->info->type),
                              shape_text(*d.a->info), gguf::to_string(d.b->info->type), shape_text(*d.b->info),
                              d.type_changed && d.shape_changed ? "type and shape changed"
                              : d.type_changed                  ? "type changed"
                                                                : "shape changed");
                    break;
                case k::data_differs:
                    out.print("  ~ {}  {} {}  (bytes differ)\n", gguf::escape(d.a->info->name),
                              gguf::to_string(d.a->info->type), shape_text(*d.a->info));
                    break;
            }
            if (d.values) {
                const value_compare& c = *d.values;
                const std::string measures =
                    fmt::format("max |a-b| {}, rmse {}, cosine {}, relative error {}", float_text(c.max_abs_diff()),
                                float_text(c.rmse()), optional_text(c.cosine()), optional_text(c.relative_error()));
                if (const auto m = c.first_non_finite_mismatch()) {
                    // The NaN/Inf first: the measures cover only the finite pairs and may read "identical".
                    out.print("      values: {} NaN/Inf {} of {} (first: value {}, a = {}, b = {}); ",
                              c.non_finite_mismatches(), c.non_finite_mismatches() == 1 ? "mismatch" : "mismatches",
                              c.count() == 1 ? std::string("1 value") : fmt::format("{} values", c.count()), m->index,
                              float_text(m->a), float_text(m->b));
                    if (c.compared() == 0) {
                        out.print("no pair of finite values to measure\n");
                    } else {
                        out.print("over the {} finite {}: {}\n", c.compared(), c.compared() == 1 ? "pair" : "pairs",
                                  measures);
                    }
                } else {
                    out.print("      values: {} ({} {})\n", measures, c.count(), c.count() == 1 ? "value" : "values");
                }
            } else if (d.values_error) {
                out.print("      values: {}\n", d.values_error->message());
            }
        }
    }
}

// ---- JSON ----

// A fixed-size value read as T (a result<T>) as one JSON scalar; null when it cannot be read.
template <class T, class Result>
void typed_scalar(json_writer& w, const Result& v) {
    if (!v) {
        w.null();
    } else if constexpr (std::is_same_v<T, bool>) {
        w.boolean(*v);
    } else if constexpr (std::is_floating_point_v<T>) {
        w.number(*v);
    } else if constexpr (std::is_signed_v<T>) {
        w.number(static_cast<std::int64_t>(*v));
    } else {
        w.number(static_cast<std::uint64_t>(*v));
    }
}

void json_scalar(json_writer& w, const gguf::kv& e) {
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        string_member(w, "value", s ? *s : std::string_view());
        return;
    }
    w.key("value");
    const bool known = visit_fixed(e.type, [&](auto zero) {
        using T = decltype(zero);
        typed_scalar<T>(w, e.get<T>());
    });
    if (!known) w.null();
}

void json_item(json_writer& w, const char* name, const gguf::kv& e, std::uint64_t i) {
    auto av = e.get<gguf::array_view>();
    if (!av || i >= av->size()) {
        w.key(name);
        w.null();
        return;
    }
    if (e.element_type == gguf::value_type::string) {
        auto s = av->string_at(i);
        string_member(w, name, s ? *s : std::string_view());
        return;
    }
    w.key(name);
    visit_fixed(e.element_type, [&](auto zero) {
        using T = decltype(zero);
        typed_scalar<T>(w, av->at<T>(i));
    });
}

void json_kv_side(json_writer& w, const char* side, const gguf::kv& e) {
    w.key(side);
    w.begin_object(true);
    w.key("type");
    w.string(type_text(e));
    if (e.is_array()) {
        w.key("count");
        w.number(e.count);
    } else {
        json_scalar(w, e);
    }
    w.end_object();
}

void json_tensor_side(json_writer& w, const char* side, const gguf::tensor_info& i) {
    w.key(side);
    w.begin_object(true);
    w.key("type");
    w.string(gguf::to_string(i.type));
    w.key("shape");
    w.begin_array(true);
    const std::uint32_t dims = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, i.n_dims));
    for (std::uint32_t d = 0; d < dims; ++d) w.number(static_cast<std::int64_t>(i.ne[d]));
    w.end_array();
    w.end_object();
}

void json_optional(json_writer& w, const char* key, const std::optional<double>& v) {
    w.key(key);
    if (v) {
        w.number(*v);
    } else {
        w.null();
    }
}

void print_json(const std::vector<metadata_difference>& md, const metadata_counts& mc,
                const std::vector<tensor_difference>& td, const tensor_counts& tc, out_buffer& out) {
    json_writer w(out);
    w.begin_object();
    string_member(w, "a", opt.a);
    string_member(w, "b", opt.b);
    w.key("identical");
    w.boolean(md.empty() && td.empty());
    w.key("summary");
    w.begin_object();
    w.key("metadata_added");
    w.number(static_cast<std::uint64_t>(mc.added));
    w.key("metadata_removed");
    w.number(static_cast<std::uint64_t>(mc.removed));
    w.key("metadata_changed");
    w.number(static_cast<std::uint64_t>(mc.changed));
    w.key("tensors_only_in_a");
    w.number(static_cast<std::uint64_t>(tc.only_a));
    w.key("tensors_only_in_b");
    w.number(static_cast<std::uint64_t>(tc.only_b));
    w.key("tensors_changed");
    w.number(static_cast<std::uint64_t>(tc.changed));
    w.key("tensors_data_differs");
    w.number(static_cast<std::uint64_t>(tc.data_differs));
    w.key("tensors_identical");
    w.number(static_cast<std::uint64_t>(tc.identical));
    w.end_object();

    w.key("metadata");
    w.begin_array();
    for (const metadata_difference& d : md) {
        w.begin_object();
        string_member(w, "key", d.a != nullptr ? d.a->key : d.b->key);
        w.key("change");
        w.string(to_string(d.what));
        if (d.a != nullptr) json_kv_side(w, "a", *d.a);
        if (d.b != nullptr) json_kv_side(w, "b", *d.b);
        if (d.what == metadata_difference::kind::array_changed) {
            w.key("first_difference");
            w.number(d.first_index);
            json_item(w, "item_a", *d.a, d.first_index);
            json_item(w, "item_b", *d.b, d.first_index);
        }
        w.end_object();
    }
    w.end_array();

    w.key("tensors");
    w.begin_array();
    for (const tensor_difference& d : td) {
        using k = tensor_difference::kind;
        w.begin_object();
        string_member(w, "name", d.a != nullptr ? d.a->info->name : d.b->info->name);
        w.key("change");
        switch (d.what) {
            case k::only_in_a: w.string("only_in_a"); break;
            case k::only_in_b: w.string("only_in_b"); break;
            case k::data_differs: w.string("data_differs"); break;
            case k::changed:
                w.string(d.type_changed && d.shape_changed ? "type_and_shape_changed"
                         : d.type_changed                  ? "type_changed"
                                                           : "shape_changed");
                break;
        }
        if (d.a != nullptr) json_tensor_side(w, "a", *d.a->info);
        if (d.b != nullptr) json_tensor_side(w, "b", *d.b->info);
        if (d.values) {
            const value_compare& c = *d.values;
            w.key("values");
            w.begin_object();
            w.key("non_finite_mismatches");  // first: the measures below see only the finite pairs
            w.number(c.non_finite_mismatches());
            w.key("first_non_finite_mismatch");
            if (const auto m = c.first_non_finite_mismatch()) {
                w.begin_object(true);
                w.key("index");
                w.number(m->index);
                w.key("a");
                w.number(static_cast<double>(m->a));
                w.key("b");
                w.number(static_cast<double>(m->b));
                w.end_object();
            } else {
                w.null();
            }
            w.key("count");
            w.number(c.count());
            w.key("compared");
            w.number(c.compared());
            w.key("max_abs_diff");
            w.number(c.max_abs_diff());
            w.key("rmse");
            w.number(c.rmse());
            json_optional(w, "cosine", c.cosine());
            json_optional(w, "relative_error", c.relative_error());
            w.end_object();
        } else if (d.values_error) {
            w.key("values_error");
            w.begin_object(true);
            w.key("code");
            w.string(gguf::to_string(d.values_error->code));
            w.key("message");
            w.string(json_text(d.values_error->message()));
            w.end_object();
        }
        w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish();
}

int run(out_buffer& out) {
    auto ma = open_model(opt.a, opt.no_mmap);
    if (!ma) return report_error(ma.error());
    auto mb = open_model(opt.b, opt.no_mmap);
    if (!mb) return report_error(mb.error());

    const std::vector<metadata_difference> md = diff_metadata(ma->metadata(), mb->metadata());
    const metadata_counts mc = count(md);
    tensor_counts tc;
    // A progress line per tensor whose values are compared (on a terminal only).
    std::optional<progress> bar;
    const auto on_progress = [&bar](std::string_view name, std::uint64_t done, std::uint64_t total) {
        if (!bar) bar.emplace(std::string("comparing ").append(gguf::escape(name)), false);
        bar->update(done, total);
        if (done >= total) bar.reset();
    };
    auto tensor_diffs = diff_tensors(*ma, *mb, opt.values, tc, on_progress);
    if (!tensor_diffs) return report_error(tensor_diffs.error());
    const std::vector<tensor_difference>& td = *tensor_diffs;

    if (opt.json) {
        print_json(md, mc, td, tc, out);
    } else {
        print_text(md, mc, td, tc, *ma, *mb, out);
    }
    return md.empty() && td.empty() ? exit_ok : exit_parse;
}

}  // namespace

void diff_add_options(CLI::App& sub) {
    sub.add_option("a", opt.a, "The first model (.gguf, or part 1 of a split set)")->required();
    sub.add_option("b", opt.b, "The second model; with --values its values are the reference of the relative error")
        ->required();
    sub.add_flag("--values", opt.values,
                 "For tensors of the same shape whose bytes differ (any two types), convert both to f32 and "
                 "report max |a-b|, RMSE, cosine similarity and relative error |a-b|/|b|");
    sub.add_flag("--json", opt.json, "Print one JSON document with the same facts");
    sub.add_flag("--no-mmap", opt.no_mmap, "Read the files into memory instead of mapping them");
    sub.footer(
        "Exit codes (as diff(1) for the first two):\n"
        "  0  the models are identical (metadata and tensors)\n"
        "  1  they differ; or a file is not a valid GGUF model (an error message on stderr says so)\n"
        "  2  usage error\n"
        "  3  I/O error: a file or split part cannot be opened or read, out of memory\n");
}

int diff_run() {
    warn_about_isa_choice();
    return run_printing(run);
}

}  // namespace minfer::cli
