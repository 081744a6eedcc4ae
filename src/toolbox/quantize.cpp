// toolbox::quantize: llama_model_quantize's file, planned whole before a byte is written. The steps:
// open the input, plan every tensor's type (quant::plan_types), check everything a real run could
// refuse that needs no tensor byte (options, imatrix entries, requantizing, shapes, the outputs), lay
// out the outputs (one file, keep_split's one per input part, or a split set within the limits) as
// writers whose converted tensors are streaming sources (quantize_source.cpp), then write them by
// the toolbox's one multi-file protocol (write_parts: all complete before any is named, part 1 last).
#include "minfer/toolbox/quantize.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/gguf_write/known_keys.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "quantize_internal.hpp"

namespace minfer::toolbox {
namespace {
using namespace quantize_detail;
using gguf::errc;
using gguf::error;
using gguf::unexpected;

error make_error(errc code, std::string_view subject, std::string detail = {}) {
    error e;
    e.code = code;
    e.subject = subject;
    e.detail = std::move(detail);
    return e;
}

std::string type_name(gguf::tensor_type t) { return std::string(gguf::to_string(t)); }

// ggml_n_dims: trailing dimensions of 1 are not written (at least one dimension is).
std::uint32_t n_dims_of(const std::array<std::int64_t, 4>& ne) noexcept {
    for (std::uint32_t i = 4; i > 1; --i)
        if (ne[i - 1] > 1) return i;
    return 1;
}

// llama-quantize's --keep-split prefix: the output without its ".gguf".
std::string prefix_of(const std::filesystem::path& output) {
    std::string s = output.string();
    if (s.size() >= 5 && s.ends_with(".gguf")) s.resize(s.size() - 5);
    return s;
}

enum class layout { single, keep_split, limits };

// One tensor of the output, in output order.
struct out_tensor {
    const quant::tensor_choice* choice = nullptr;
    gguf::tensor_ref ref{};
    std::span<const float> importance;  // ne[0] weights per matrix, or none
    std::uint32_t n_dims = 1;
    std::uint64_t n_bytes = 0;  // in the output
};

struct out_part {
    std::filesystem::path path;
    std::size_t first = 0, count = 0;  // a run of out_tensors
};

// Everything a part's writer is built from.
struct context {
    const quantize_request* rq = nullptr;
    const gguf::model* m = nullptr;
    const gguf::model_source* src = nullptr;
    const tensor_values* values = nullptr;  // the tensors' bytes when they are not in m's files
    layout how = layout::single;
    std::uint32_t file_type = 0;
    std::vector<kv_override> overrides;  // the user's, then the imatrix's
    std::optional<std::uint32_t> alignment;  // general.alignment of the output's part 1
    std::vector<out_tensor> tensors;
};

// Part `part` of `count`'s metadata. Part 1 holds the model's (put_quantized_metadata); with
// keep_split, later parts hold only the split keys, as llama_model_quantize writes them (split.no,
// split.count, split.tensors.count, and only when there are several parts); with split limits, the
// keys of gguf::split_plan (split.no, split.tensors.count, split.count, on every part) and
// general.alignment on every part.
void put_part_metadata(gguf::writer& w, const context& c, std::uint32_t part, std::uint32_t count) {
    if (part == 0) put_quantized_metadata(w, *c.m, c.file_type, c.overrides);
    const auto total = static_cast<std::int32_t>(c.tensors.size());
    if (c.how == layout::keep_split && count > 1) {
        w.set_u16(key_split_no, static_cast<std::uint16_t>(part));
        w.set_u16(key_split_count, static_cast<std::uint16_t>(count));
        w.set_i32(key_split_tensors, total);
    } else if (c.how == layout::limits) {
        if (part > 0 && c.alignment) w.set_u32(gguf::alignment_key, *c.alignment);
        w.set_u16(key_split_no, static_cast<std::uint16_t>(part));
        w.set_i32(key_split_tensors, total);
        w.set_u16(key_split_count, static_cast<std::uint16_t>(count));
    }
}

gguf::result<gguf::writer> part_writer(const context& c, const out_part& p, std::uint32_t part, std::uint32_t count) {
    gguf::writer w;
    w.pad_table_without_tensors();  // as ggml's writer: a vocabulary-only output is llama.cpp's bytes
    put_part_metadata(w, c, part, count);
    for (std::size_t i = p.first; i < p.first + p.count; ++i) {
        const out_tensor& t = c.tensors[i];
        const std::span<const std::int64_t> ne(t.ref.info->ne.data(), t.n_dims);
        if (!t.choice->converted) {
            if (c.values) {
                auto raw = c.values->raw(t.ref);
                if (!raw) return unexpected(std::move(raw).error());
                w.add_tensor(t.choice->name, t.choice->to, ne, std::move(*raw));
            } else {
                w.add_tensor(t.choice->name, t.choice->to, ne, c.src->tensor(t.ref));
            }
            continue;
        }
        convert_job job;
        job.m = c.m;
        job.t = t.ref;
        job.to = t.choice->to;
        job.importance = t.importance;
        job.values = c.values;
        job.threads = c.rq->threads;
        auto s = converted_source(job);
        if (!s) return unexpected(std::move(s).error());
        w.add_tensor(t.choice->name, t.choice->to, ne, std::move(*s));
    }
    return w;
}

// A tensor's record in the tensor table: name (u64 length + bytes), n_dims, ne[n_dims], type, offset.
std::uint64_t table_record_bytes(const out_tensor& t) noexcept {
    return 8 + t.choice->name.size() + 4 + 8ull * t.n_dims + 4 + 8;
}

// The output tensors grouped by gguf::group_into_parts, the grouping split_plan uses (the parts'
// heads as this output's writers lay them out; every sum checked).
gguf::result<std::vector<out_part>> group_by_limits(const context& c, const std::string& prefix) {
    auto head_size = [&c](std::uint32_t part) -> gguf::result<gguf::plan> {
        gguf::writer w;
        put_part_metadata(w, c, part, 2);  // the values of split.no / split.count do not change sizes
        return w.make_plan();
    };
    auto first = head_size(0);
    if (!first) return unexpected(std::move(first).error());
    auto later = head_size(1);
    if (!later) return unexpected(std::move(later).error());

    std::vector<gguf::grouped_tensor> grouped;
    grouped.reserve(c.tensors.size());
    for (const out_tensor& t : c.tensors) grouped.push_back({table_record_bytes(t), t.n_bytes});
    gguf::part_grouping g;
    g.first_head_bytes = first->file_size();
    g.later_head_bytes = later->file_size();
    g.alignment = first->alignment();
    g.max_tensors = c.rq->split_max_tensors.value_or(std::numeric_limits<std::uint64_t>::max());
    g.max_bytes = c.rq->split_max_bytes.value_or(std::numeric_limits<std::uint64_t>::max());
    auto grouped_parts = gguf::group_into_parts(grouped, g);
    if (!grouped_parts) {
        error e = std::move(grouped_parts).error();
        if (e.index >= 0 && static_cast<std::size_t>(e.index) < c.tensors.size())
            e.subject = c.tensors[static_cast<std::size_t>(e.index)].choice->name;
        return unexpected(std::move(e));
    }
    std::vector<out_part> parts;
    parts.reserve(grouped_parts->size());
    const auto count = static_cast<std::uint32_t>(grouped_parts->size());
    for (std::uint32_t i = 0; i < count; ++i) {
        out_part p;
        p.path = gguf::split_file_name(prefix, i, count);
        p.first = (*grouped_parts)[i].first;
        p.count = (*grouped_parts)[i].count;
        parts.push_back(std::move(p));
    }
    return parts;
}

// The per-tensor checks a real run would fail on, in llama_model_quantize's order for one tensor
// (imatrix entry, then a missing imatrix, then requantizing), and ours (a 4-D tensor).
gguf::result<void> check_tensor(const quantize_request& rq, const quant::importance_matrix* im, out_tensor& t,
                                std::vector<std::string>& warnings, std::vector<std::string>& missing) {
    const quant::tensor_choice& c = *t.choice;
    const gguf::tensor_info& info = *t.ref.info;
    if (im != nullptr) {
        const quant::importance_entry* e = im->find(c.name);
        const auto want = static_cast<std::uint64_t>(info.ne[0]) * static_cast<std::uint64_t>(info.ne[2]);
        if (e == nullptr) {
            missing.push_back(c.name);  // said once for all of them (run)
        } else if (e->values.size() != want) {
            if (c.name != "token_embd.weight" && c.name != "per_layer_token_embd.weight") {
                error err = make_error(quant::codes::imatrix_mismatch, c.name);
                err.expected = want;
                err.found = e->values.size();
                return unexpected(std::move(err));
            }
            // llama-quantize lets the token embedding through (its imatrix entry rarely fits).
            warnings.push_back("the importance entry of " + c.name + " holds " + std::to_string(e->values.size()) +
                               " weights, the tensor needs " + std::to_string(want) + ": quantized without them");
        } else {
            t.importance = e->values;
        }
        if (t.importance.empty() && c.needs_importance) {
            error err = make_error(quant::codes::importance_required, c.name,
                                   "the importance matrix given has no entry for this tensor");
            err.found = static_cast<std::uint64_t>(c.to);
            return unexpected(std::move(err));
        }
    }
    const gguf::type_traits* from = gguf::traits(info.type);
    const bool quantized = from != nullptr && from->block_elems > 1;
    if (info.type != gguf::tensor_type::f32) {
        if (quantized && !rq.allow_requantize) {
            error err = make_error(quant::codes::requantize_refused, c.name);
            err.found = static_cast<std::uint64_t>(info.type);
            return unexpected(std::move(err));
        }
        if (!quant::can_dequantize(info.type)) {
            error err = make_error(quant::codes::type_not_convertible, c.name);
            err.found = static_cast<std::uint64_t>(info.type);
            return unexpected(std::move(err));
        }
        if (quantized)
            warnings.push_back("requantizing " + c.name + " from " + type_name(info.type) + " to " + type_name(c.to) +
                               ": its values pass through a lossy format twice");
    }
    // The rules fall back to a type whose blocks fit the rows; a type the user named for a tensor
    // (--output-tensor-type, --token-embedding-type, --tensor-type) is taken as given, and llama.cpp
    // then fails inside the quantizer. Say which tensor and which type before anything is written.
    if (const gguf::type_traits* to = gguf::traits(c.to);
        to != nullptr && to->block_elems > 1 && info.ne[0] % static_cast<std::int64_t>(to->block_elems) != 0) {
        error err = make_error(errc::not_block_multiple, c.name,
                               "type " + type_name(c.to) + " (" + c.why + ") stores rows in blocks of " +
                                   std::to_string(to->block_elems) + " values");
        err.expected = to->block_elems;
        err.found = static_cast<std::uint64_t>(info.ne[0]);
        err.shape = info.ne;
        return unexpected(std::move(err));
    }
    if (info.n_elements == 0) {
        // No value to quantize; ggml would write its shape without the 0 (a tensor the file does not
        // hold). Said before anything is written, about the input tensor.
        std::uint32_t zero = 0;
        while (zero + 1 < gguf::max_dims && info.ne[zero] != 0) ++zero;
        error err = make_error(errc::bad_dim, c.name,
                               "the tensor has no values (dimension " + std::to_string(zero) +
                                   " is 0): there is nothing to quantize; keep it with --tensor-type '" + c.name +
                                   "=" + type_name(info.type) + "' or drop it from the model");
        err.expected = zero;
        err.found = 0;
        err.shape = info.ne;
        return unexpected(std::move(err));
    }
    if (static_cast<std::uint64_t>(info.ne[0]) > max_row_values) {
        // A row is quantized whole (the quantizers read the whole row's statistics): its values and
        // quantized bytes are the memory bound when rows outgrow a batch.
        error err = make_error(quant::codes::row_too_long, c.name);
        err.expected = max_row_values;
        err.found = static_cast<std::uint64_t>(info.ne[0]);
        err.shape = info.ne;
        return unexpected(std::move(err));
    }
    if (info.ne[3] > 1) {
        // llama_model_quantize quantizes ne[2] matrices of ne[1] rows and would drop the rest.
        error err = make_error(errc::bad_n_dims, c.name, "a 4-D tensor cannot be quantized (llama.cpp quantizes 3-D at most)");
        err.expected = 3;
        err.found = 4;
        err.shape = info.ne;
        return unexpected(std::move(err));
    }
    if (!quant::can_quantize(c.to)) {
        // A type without a quantizer here (every type llama-quantize writes has one today; a type
        // named by --tensor-type, such as q8_K, may not). Said before anything is written, with the
        // tensor, rather than by quantize_rows in the middle of the data.
        error err = make_error(quant::codes::type_not_quantizable, c.name, "minfer has no quantizer for it");
        err.found = static_cast<std::uint64_t>(c.to);
        return unexpected(std::move(err));
    }
    return {};
}

// --override-kv by `minfer edit`'s rules: no split.* key (quantize writes them itself, for its own
// parts; a single file with split.count 3 is a part 1 whose other parts do not exist, which every
// loader refuses), and a key llama.cpp reads keeps the type it reads it as (a u32 hyperparameter
// written as f32 makes llama.cpp refuse the model) unless allow_type_change. The types an override
// writes: int as u32, float as f32, bool, str.
gguf::result<void> check_overrides(const quantize_request& rq, std::string_view arch, std::vector<std::string>& warnings) {
    for (const kv_override& o : rq.kv_overrides) {
        if (o.key.starts_with("split."))
            return unexpected(make_error(errc::bad_value_text, o.key,
                                         "the split.* keys say how a model is cut into files: quantize writes them "
                                         "for its own split outputs (--split-max-size, --split-max-tensors, "
                                         "--keep-split), and a single file with them is a part whose other parts do "
                                         "not exist"));
        gguf::value_type written = gguf::value_type::u32;
        switch (o.type) {
            case kv_override::kind::int_: written = gguf::value_type::u32; break;
            case kv_override::kind::float_: written = gguf::value_type::f32; break;
            case kv_override::kind::bool_: written = gguf::value_type::boolean; break;
            case kv_override::kind::str: written = gguf::value_type::string; break;
        }
        const auto llama = gguf::known_keys::lookup(o.key, arch);
        if (!llama || llama->type == written) continue;
        const std::string want = gguf::known_keys::describe(*llama);
        if (!rq.allow_type_change)
            return unexpected(make_error(errc::bad_value_text, o.key,
                                         "llama.cpp reads " + o.key + " as " + want + " and refuses a model that stores "
                                         "another type; this override writes " + std::string(gguf::to_string(written)) +
                                         " (int: u32, float: f32, bool, str); give the matching type, or force it with "
                                         "--allow-type-change (Python: allow_type_change=True)"));
        warnings.push_back(o.key + " becomes " + std::string(gguf::to_string(written)) + " although llama.cpp reads it as " +
                           want + ": llama.cpp will not load the model");
    }
    return {};
}

// Refuse an output that is one of the input's files (or the imatrix), then check_output_path.
gguf::result<void> check_output(const std::filesystem::path& out, const gguf::model& m, const quantize_request& rq,
                                std::span<const std::filesystem::path> protected_inputs) {
    auto same = [&out](const std::filesystem::path& in) {
        std::error_code ec;
        return std::filesystem::equivalent(out, in, ec) && !ec;
    };
    bool clash = rq.imatrix && same(*rq.imatrix);
    for (const gguf::model_part& p : m.parts()) clash = clash || same(p.path);
    for (const std::filesystem::path& p : protected_inputs) clash = clash || same(p);
    if (clash) {
        error e;
        e.code = errc::io_error;
        e.sys_errno = EINVAL;
        e.file = out.string();
        e.detail = "the output is one of the input files";
        return unexpected(std::move(e));
    }
    auto checked = gguf::check_output_path(out, rq.overwrite);
    if (!checked) return unexpected(std::move(checked).error());
    return {};
}

// The layout options, checked before the input is opened.
gguf::result<void> check_layout_options(const quantize_request& rq) {
    const bool limits = rq.split_max_bytes.has_value() || rq.split_max_tensors.has_value();
    if (rq.keep_split && limits)
        return unexpected(make_error(errc::bad_value_text, "keep_split",
                                     "keep_split and the split limits cannot be combined"));
    if (rq.split_max_bytes && *rq.split_max_bytes == 0)
        return unexpected(make_error(errc::bad_value_text, "split_max_bytes", "must be at least 1"));
    if (rq.split_max_tensors && *rq.split_max_tensors == 0)
        return unexpected(make_error(errc::bad_value_text, "split_max_tensors", "must be at least 1"));
    return {};
}

gguf::result<quantize_report> run(const quantize_request& rq, const quantize_events& events) {
    if (auto r = check_layout_options(rq); !r) return unexpected(std::move(r).error());
    auto opened = gguf::model::open(rq.input);
    if (!opened) return unexpected(std::move(opened).error());
    if (auto r = opened->require_complete(); !r) return unexpected(std::move(r).error());
    return quantize_model(*opened, nullptr, {}, rq, events);
}

}  // namespace

gguf::result<quantize_report> quantize_detail::quantize_model(const gguf::model& m, const tensor_values* values,
                                             std::span<const std::filesystem::path> protected_inputs,
                                             const quantize_request& rq, const quantize_events& events) {
    const bool limits = rq.split_max_bytes.has_value() || rq.split_max_tensors.has_value();
    if (auto r = check_layout_options(rq); !r) return unexpected(std::move(r).error());

    auto facts = model_facts_of(m);
    if (!facts) return unexpected(std::move(facts).error());

    quantize_report report;
    if (auto r = check_overrides(rq, facts->arch, report.warnings); !r) return unexpected(std::move(r).error());
    // llama-quantize's frontend rules, here so that every frontend refuses the same requests.
    if (!rq.imatrix_filter.include.empty() && !rq.imatrix_filter.exclude.empty())
        return unexpected(make_error(errc::bad_value_text, "include_weights",
                                     "include_weights and exclude_weights cannot be used together (as in llama-quantize)"));
    if (!rq.imatrix && (!rq.imatrix_filter.include.empty() || !rq.imatrix_filter.exclude.empty()))
        return unexpected(make_error(errc::bad_value_text,
                                     rq.imatrix_filter.include.empty() ? "exclude_weights" : "include_weights",
                                     "it filters the importance matrix, and no importance matrix (imatrix) is given"));
    std::optional<quant::importance_matrix> im;
    if (rq.imatrix) {
        auto read = quant::read_importance(*rq.imatrix, rq.imatrix_filter);
        if (!read) return unexpected(std::move(read).error());
        // llama-quantize passes no imatrix at all when the filter leaves no entry.
        if (read->entries.empty()) {
            report.warnings.push_back("the importance matrix has no entry left after the filter: quantizing without it");
        } else {
            im = std::move(*read);
        }
    }

    quant::plan_options po;
    po.ftype = rq.type.ftype;
    po.copy = rq.type.copy;
    po.output_type = rq.output_tensor_type;
    po.token_embd_type = rq.token_embedding_type;
    po.leave_output = rq.leave_output_tensor;
    po.pure = rq.pure;
    po.overrides = rq.tensor_types;
    po.has_imatrix = im.has_value();
    auto plan = quant::plan_types(*facts, po);
    if (!plan) return unexpected(std::move(plan).error());
    report.plan = std::move(*plan);
    const std::vector<quant::tensor_choice>& choices = report.plan.tensors;

    if (report.plan.needs_importance) {
        const auto it = std::find_if(choices.begin(), choices.end(),
                                     [](const quant::tensor_choice& c) { return c.quantizable && c.needs_importance; });
        const std::string name = it != choices.end() ? it->name : std::string();
        const gguf::tensor_type to = it != choices.end() ? it->to : gguf::tensor_type::f32;
        if (!rq.dry_run) {
            error e = make_error(quant::codes::importance_required, name);
            e.found = static_cast<std::uint64_t>(to);
            return unexpected(std::move(e));
        }
        report.warnings.push_back("this quantization needs an importance matrix (" + name + " becomes " + type_name(to) +
                                  "): a real run without one fails");
    }

    context c;
    c.rq = &rq;
    c.m = &m;
    c.file_type = rq.type.copy ? loader_file_type(m, choices) : static_cast<std::uint32_t>(rq.type.ftype);
    c.overrides = rq.kv_overrides;
    if (im) {
        // llama-quantize's own overrides, after the user's.
        kv_override o;
        o.type = kv_override::kind::str;
        o.key = "quantize.imatrix.file";
        o.str_value = im->file;
        c.overrides.push_back(o);
        if (im->has_dataset) {
            o.key = "quantize.imatrix.dataset";
            o.str_value = im->dataset;
            c.overrides.push_back(o);
        }
        o = kv_override{};
        o.type = kv_override::kind::int_;
        o.key = "quantize.imatrix.entries_count";
        o.int_value = static_cast<std::int64_t>(im->entries.size());
        c.overrides.push_back(o);
        if (im->chunks_count > 0) {
            o.key = "quantize.imatrix.chunks_count";
            o.int_value = im->chunks_count;
            c.overrides.push_back(o);
        }
        report.imatrix_entries = static_cast<std::uint32_t>(im->entries.size());
    }
    c.alignment = output_alignment(m, c.overrides);

    std::size_t n_converted = 0;
    std::vector<std::string> without_importance;  // converted tensors the imatrix has no entry for
    c.tensors.reserve(choices.size());
    for (const quant::tensor_choice& choice : choices) {
        out_tensor t;
        t.choice = &choice;
        const gguf::tensor_ref* ref = m.find_tensor(choice.name);
        if (ref == nullptr) return unexpected(make_error(errc::tensor_not_found, choice.name));
        t.ref = *ref;
        // ggml_n_dims, as llama_model_quantize writes shapes; a tensor with a dimension of 0 keeps its
        // own (ggml's count would drop the 0 and describe a tensor of values the file does not hold).
        t.n_dims = ref->info->n_elements == 0 ? ref->info->n_dims : n_dims_of(ref->info->ne);
        t.n_bytes = choice.converted ? converted_bytes(choice.to, ref->info->ne) : ref->info->n_bytes;
        if (choice.converted) {
            ++n_converted;
            if (auto r = check_tensor(rq, im ? &*im : nullptr, t, report.warnings, without_importance); !r)
                return unexpected(std::move(r).error());
        }
        report.input_tensor_bytes += ref->info->n_bytes;
        report.output_tensor_bytes += t.n_bytes;
        report.n_elements += ref->info->n_elements;
        c.tensors.push_back(t);
    }
    if (!without_importance.empty()) {
        // One line, not one per tensor: an imatrix of another model would otherwise give a warning
        // for every tensor and no verdict.
        std::string names;
        for (std::size_t i = 0; i < without_importance.size() && i < 3; ++i)
            names += (i > 0 ? ", " : "") + without_importance[i];
        if (without_importance.size() > 3) names += ", …";
        if (without_importance.size() == n_converted)
            report.warnings.push_back("the importance matrix has an entry for none of the " + std::to_string(n_converted) +
                                      " tensors converted (was it computed for another model?): all are quantized "
                                      "without importance weights, though the output names the imatrix in its "
                                      "quantize.imatrix.* keys, as llama-quantize writes them");
        else
            report.warnings.push_back("no importance weights for " + std::to_string(without_importance.size()) + " of " +
                                      std::to_string(n_converted) + " tensors converted (" + names +
                                      "): quantized without them");
    }
    if (report.plan.n_fallback > 0)
        report.warnings.push_back(std::to_string(report.plan.n_fallback) + " of " + std::to_string(choices.size()) +
                                  " tensors needed a fallback type (their rows do not fit the chosen type's blocks)");

    // The outputs.
    std::vector<out_part> parts;
    if (rq.keep_split) {
        c.how = layout::keep_split;
        // llama_model_quantize sorts by (input part, offset) and writes one output per input part.
        std::stable_sort(c.tensors.begin(), c.tensors.end(), [](const out_tensor& a, const out_tensor& b) {
            if (a.ref.part != b.ref.part) return a.ref.part < b.ref.part;
            return a.ref.info->offset < b.ref.info->offset;
        });
        std::uint32_t n_split = 1;
        for (const out_tensor& t : c.tensors) n_split = std::max(n_split, t.ref.part + 1);
        const std::string prefix = prefix_of(rq.output);
        parts.resize(n_split);
        for (std::uint32_t i = 0; i < n_split; ++i) parts[i].path = gguf::split_file_name(prefix, i, n_split);
        for (std::size_t i = 0; i < c.tensors.size(); ++i) {
            out_part& p = parts[c.tensors[i].ref.part];
            if (p.count == 0) p.first = i;
            ++p.count;
        }
    } else if (limits) {
        c.how = layout::limits;
        auto grouped = group_by_limits(c, prefix_of(rq.output));
        if (!grouped) return unexpected(std::move(grouped).error());
        parts = std::move(*grouped);
    } else {
        parts.resize(1);
        parts[0].path = rq.output;
        parts[0].count = c.tensors.size();
    }

    std::optional<gguf::model_source> src;
    if (values) {
        c.values = values;
    } else {
        auto opened_source = gguf::model_source::open(m);
        if (!opened_source) return unexpected(std::move(opened_source).error());
        src.emplace(std::move(*opened_source));
        c.src = &*src;
    }

    const auto n_parts = static_cast<std::uint32_t>(parts.size());
    std::vector<gguf::writer> writers;
    writers.reserve(n_parts);
    for (std::uint32_t i = 0; i < n_parts; ++i) {
        auto w = part_writer(c, parts[i], i, n_parts);
        if (!w) return unexpected(std::move(w).error());
        auto layout_plan = w->make_plan();
        if (!layout_plan) return unexpected(std::move(layout_plan).error());
        quantize_output o;
        o.path = parts[i].path;
        o.file_size = layout_plan->file_size();
        o.tensor_count = static_cast<std::uint32_t>(parts[i].count);
        if (rq.split_max_bytes && o.file_size > *rq.split_max_bytes)
            report.warnings.push_back(o.path.string() + " is " + std::to_string(o.file_size) + " bytes, above the limit of " +
                                      std::to_string(*rq.split_max_bytes) + ": a single tensor (or the metadata) does not fit");
        report.outputs.push_back(std::move(o));
        writers.push_back(std::move(*w));
    }
    // The report's plan in output order (keep_split's differs from the plan's); c.tensors points
    // into it, so it is rebuilt only once nothing reads them before the write.
    auto in_output_order = [&c]() {
        std::vector<quant::tensor_choice> v;
        v.reserve(c.tensors.size());
        for (const out_tensor& t : c.tensors) v.push_back(*t.choice);
        return v;
    };
    // The outputs, in a dry run too: it refuses what the real run would (an existing output without
    // overwrite, one of the input's files, a directory), for every frontend alike.
    for (const out_part& p : parts)
        if (auto r = check_output(p.path, m, rq, protected_inputs); !r) return unexpected(std::move(r).error());
    if (rq.dry_run) {
        if (rq.keep_split) report.plan.tensors = in_output_order();
        return report;
    }

    // The one protocol of multi-file outputs (toolbox/split_write.hpp): every part complete before
    // any is named, part 1 named last; nothing replaced if anything fails.
    std::vector<std::string> targets;
    targets.reserve(parts.size());
    for (const out_part& p : parts) targets.push_back(p.path.string());
    split_write_options wo;
    wo.overwrite = rq.overwrite;
    wo.progress = events.progress;
    if (auto failed = write_parts(writers, targets, wo)) return unexpected(std::move(failed->error));
    if (rq.keep_split) report.plan.tensors = in_output_order();
    report.written = true;
    return report;
}


gguf::result<quantize_report> quantize(const quantize_request& request, const quantize_events& events) noexcept {
    try {
        return run(request, events);
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("quantizing a model"));
    }
}

}  // namespace minfer::toolbox
