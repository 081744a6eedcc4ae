// toolbox::quantize: llama_model_quantize's file, planned whole before a byte is written. The steps:
// open the input, plan every tensor's type (quant::plan_types), check everything a real run could
// refuse that needs no tensor byte (options, imatrix entries, requantizing, shapes, the outputs), lay
// out the outputs (one file, keep_split's one per input part, or a split set within the limits) as
// writers whose converted tensors are streaming sources (quantize_source.cpp), then write them, part
// 1 last, removing what this run wrote if anything fails.
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
#include "minfer/quant/errors.hpp"
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
    put_part_metadata(w, c, part, count);
    for (std::size_t i = p.first; i < p.first + p.count; ++i) {
        const out_tensor& t = c.tensors[i];
        const std::span<const std::int64_t> ne(t.ref.info->ne.data(), t.n_dims);
        if (!t.choice->converted) {
            w.add_tensor(t.choice->name, t.choice->to, ne, c.src->tensor(t.ref));
            continue;
        }
        convert_job job;
        job.m = c.m;
        job.t = t.ref;
        job.to = t.choice->to;
        job.importance = t.importance;
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

// gguf::split_plan's greedy grouping over the output tensors: a tensor joins the current part while
// the part's whole file stays within both limits, else starts the next part; an empty part takes a
// tensor whatever its size.
gguf::result<std::vector<out_part>> group_by_limits(const context& c, const std::string& prefix) {
    const std::uint64_t max_tensors = c.rq->split_max_tensors.value_or(std::numeric_limits<std::uint64_t>::max());
    const std::uint64_t max_bytes = c.rq->split_max_bytes.value_or(std::numeric_limits<std::uint64_t>::max());
    auto head_size = [&c](std::uint32_t part) -> gguf::result<gguf::plan> {
        gguf::writer w;
        put_part_metadata(w, c, part, 2);  // the values of split.no / split.count do not change sizes
        return w.make_plan();
    };
    auto first = head_size(0);
    if (!first) return unexpected(std::move(first).error());
    auto later = head_size(1);
    if (!later) return unexpected(std::move(later).error());
    const std::uint64_t align = first->alignment();

    std::vector<out_part> parts;
    std::uint64_t head = first->file_size(), table = 0, data = 0, n = 0;
    out_part cur;
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
        const out_tensor& t = c.tensors[i];
        // Sizes below 2^63 (the loader's and the plan's limits), so these sums do not overflow.
        auto size_with = [&](std::uint64_t h, std::uint64_t tb, std::uint64_t db) {
            return gguf::pad_to(h + tb + table_record_bytes(t), align) + db + gguf::pad_to(t.n_bytes, align);
        };
        if (n > 0 && (n + 1 > max_tensors || size_with(head, table, data) > max_bytes)) {
            cur.count = static_cast<std::size_t>(n);
            parts.push_back(cur);
            cur = out_part{};
            cur.first = i;
            head = later->file_size();
            table = data = n = 0;
        }
        table += table_record_bytes(t);
        data += gguf::pad_to(t.n_bytes, align);
        ++n;
    }
    cur.count = static_cast<std::size_t>(n);
    parts.push_back(cur);
    if (parts.size() > gguf::max_split_parts) {
        error e;
        e.code = gguf_write::codes::too_many_parts;
        e.expected = gguf::max_split_parts;
        e.found = parts.size();
        return unexpected(std::move(e));
    }
    const auto count = static_cast<std::uint32_t>(parts.size());
    for (std::uint32_t i = 0; i < count; ++i) parts[i].path = gguf::split_file_name(prefix, i, count);
    return parts;
}

// The per-tensor checks a real run would fail on, in llama_model_quantize's order for one tensor
// (imatrix entry, then a missing imatrix, then requantizing), and ours (a 4-D tensor).
gguf::result<void> check_tensor(const quantize_request& rq, const quant::importance_matrix* im, out_tensor& t,
                                std::vector<std::string>& warnings) {
    const quant::tensor_choice& c = *t.choice;
    const gguf::tensor_info& info = *t.ref.info;
    if (im != nullptr) {
        const quant::importance_entry* e = im->find(c.name);
        const auto want = static_cast<std::uint64_t>(info.ne[0]) * static_cast<std::uint64_t>(info.ne[2]);
        if (e == nullptr) {
            warnings.push_back("no importance weights for " + c.name + ": quantized without them");
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
                                   "type " + type_name(c.to) + " needs importance weights and the imatrix has none for it");
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

// Refuse an output that is one of the input's files (or the imatrix), then check_output_path.
gguf::result<void> check_output(const std::filesystem::path& out, const gguf::model& m, const quantize_request& rq) {
    auto same = [&out](const std::filesystem::path& in) {
        std::error_code ec;
        return std::filesystem::equivalent(out, in, ec) && !ec;
    };
    bool clash = rq.imatrix && same(*rq.imatrix);
    for (const gguf::model_part& p : m.parts()) clash = clash || same(p.path);
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

gguf::result<quantize_report> run(const quantize_request& rq, const quantize_events& events) {
    const bool limits = rq.split_max_bytes.has_value() || rq.split_max_tensors.has_value();
    if (rq.keep_split && limits)
        return unexpected(make_error(errc::bad_value_text, "keep_split",
                                     "keep_split and the split limits cannot be combined"));
    if (rq.split_max_bytes && *rq.split_max_bytes == 0)
        return unexpected(make_error(errc::bad_value_text, "split_max_bytes", "must be at least 1"));
    if (rq.split_max_tensors && *rq.split_max_tensors == 0)
        return unexpected(make_error(errc::bad_value_text, "split_max_tensors", "must be at least 1"));

    auto opened = gguf::model::open(rq.input);
    if (!opened) return unexpected(std::move(opened).error());
    const gguf::model& m = *opened;
    if (auto r = m.require_complete(); !r) return unexpected(std::move(r).error());

    auto facts = model_facts_of(m);
    if (!facts) return unexpected(std::move(facts).error());

    quantize_report report;
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
            error e = make_error(quant::codes::importance_required, name,
                                 "type " + type_name(to) + " needs an importance matrix (--imatrix)");
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

    c.tensors.reserve(choices.size());
    for (const quant::tensor_choice& choice : choices) {
        out_tensor t;
        t.choice = &choice;
        const gguf::tensor_ref* ref = m.find_tensor(choice.name);
        if (ref == nullptr) return unexpected(make_error(errc::tensor_not_found, choice.name));
        t.ref = *ref;
        t.n_dims = n_dims_of(ref->info->ne);
        t.n_bytes = choice.converted ? converted_bytes(choice.to, ref->info->ne) : ref->info->n_bytes;
        if (choice.converted) {
            if (auto r = check_tensor(rq, im ? &*im : nullptr, t, report.warnings); !r) return unexpected(std::move(r).error());
        }
        report.input_tensor_bytes += ref->info->n_bytes;
        report.output_tensor_bytes += t.n_bytes;
        report.n_elements += ref->info->n_elements;
        c.tensors.push_back(t);
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

    auto src = gguf::model_source::open(m);
    if (!src) return unexpected(std::move(src).error());
    c.src = &*src;

    const auto n_parts = static_cast<std::uint32_t>(parts.size());
    std::vector<gguf::writer> writers;
    writers.reserve(n_parts);
    std::uint64_t total = 0;
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
        total += o.file_size;
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
    if (rq.dry_run) {
        if (rq.keep_split) report.plan.tensors = in_output_order();
        return report;
    }

    for (const out_part& p : parts)
        if (auto r = check_output(p.path, m, rq); !r) return unexpected(std::move(r).error());

    // Part 1 last: a set is opened through part 1, so there is no set to open until every part is
    // in place; an old part 1 goes first for the same reason (toolbox/split_write.hpp).
    if (rq.overwrite && n_parts > 1) {
        std::error_code ec;
        std::filesystem::remove(parts[0].path, ec);
    }
    std::vector<std::size_t> written;
    std::uint64_t before = 0;
    for (std::uint32_t k = 0; k < n_parts; ++k) {
        const std::uint32_t i = n_parts > 1 ? (k + 1) % n_parts : 0;
        gguf::write_options wo;
        wo.file.replace_existing = rq.overwrite;
        if (events.progress)
            wo.progress = [&events, before, total](std::uint64_t done, std::uint64_t) { events.progress(before + done, total); };
        if (auto r = writers[i].write(parts[i].path, wo); !r) {
            for (std::size_t j : written) {
                std::error_code ec;
                std::filesystem::remove(parts[j].path, ec);
            }
            return unexpected(std::move(r).error());
        }
        written.push_back(i);
        before += report.outputs[i].file_size;
    }
    if (rq.keep_split) report.plan.tensors = in_output_order();
    report.written = true;
    return report;
}

}  // namespace

gguf::result<quantize_report> quantize(const quantize_request& request, const quantize_events& events) noexcept {
    try {
        return run(request, events);
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("quantizing a model"));
    }
}

}  // namespace minfer::toolbox
