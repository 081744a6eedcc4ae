// toolbox::assemble (assemble.hpp): a mergekit config run on GGUF models. The config is read by
// assemble_config; every model it names is opened once; the output's tensors are planned (a stack
// of the slices' layers, then the `tensors:` rules), the metadata rebuilt, and the parts written by
// output_parts / write_parts with every tensor a kernel-copied range of its source.
#include "minfer/toolbox/assemble.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/read_capped.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/toolbox/assemble_config.hpp"
#include "minfer/toolbox/errors.hpp"
#include "assemble_merge.hpp"
#include "model_keys.hpp"
#include "output_parts.hpp"
#include "remote_models.hpp"

namespace minfer::toolbox {
namespace {

using gguf::errc;
using gguf::error;
using gguf::unexpected;
using detail::block_of;
using detail::make_error;
using detail::value_text;

// One opened source model: a local file (its tensors kernel-copied) or a URL (heads only; its
// tensors fetched by remote_models).
struct source {
    std::string text;  // as the config names it
    gguf::model model;
    std::optional<gguf::model_source> files;  // local only
    std::string arch;
    std::uint32_t blocks = 0;
    bool remote() const { return !files.has_value(); }
};

// The per-layer hyperparameters llama.cpp reads as arrays (get_key_or_arr): a difference between
// stacked models becomes an array.
constexpr std::string_view per_layer_keys[] = {"attention.head_count", "attention.head_count_kv", "feed_forward_length"};
// Keys that index or count layers by position: refused in a stack.
constexpr std::string_view positional_keys[] = {"leading_dense_block_count", "nextn_predict_layers",
                                                "interleave_moe_layer_step", "moe_every_n_layers",
                                                "full_attention_interval", "rescale_every_n_layers",
                                                "attention.shared_kv_layers"};

// The bytes a kv's value is stored as (for comparing two models' values).
bool same_value(const gguf::kv& a, const gguf::kv& b) {
    return a.type == b.type && a.element_type == b.element_type && a.count == b.count && a.payload.size() == b.payload.size() &&
           std::equal(a.payload.begin(), a.payload.end(), b.payload.begin());
}

// Entry `layer` of a per-layer key of `m` as u32 (the scalar for every layer, or the array's item).
std::optional<std::uint32_t> per_layer_value(const gguf::model& m, const std::string& key, std::uint32_t layer) {
    const gguf::kv* e = m.find(key);
    if (e == nullptr) return std::nullopt;
    if (!e->is_array()) {
        auto v = e->as<std::uint32_t>();
        return v ? std::optional<std::uint32_t>(*v) : std::nullopt;
    }
    auto a = e->get<gguf::array_view>();
    if (!a || layer >= a->size()) return std::nullopt;
    if (a->element_type() == gguf::value_type::u32) {
        auto v = a->at<std::uint32_t>(layer);
        return v ? std::optional<std::uint32_t>(*v) : std::nullopt;
    }
    if (a->element_type() == gguf::value_type::i32) {
        auto v = a->at<std::int32_t>(layer);
        return v && *v >= 0 ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
    }
    return std::nullopt;
}

// llama.cpp loader's guess of a file type from the type most tensors have (no GUESSED bit: the output
// declares it).
std::uint32_t file_type_of(std::span<const gguf::tensor_type> types) {
    std::map<gguf::tensor_type, std::uint64_t> count;
    gguf::tensor_type best = gguf::tensor_type::f32;
    std::uint64_t most = 0;
    for (gguf::tensor_type t : types)
        if (++count[t] > most) {
            most = count[t];
            best = t;
        }
    return detail::llama_file_type_of(best);
}

struct planned {
    const source* from = nullptr;
    const gguf::tensor_ref* ref = nullptr;
    std::string name;
    bool by_rule = false;
    std::optional<gguf::tensor_source> merged;  // a merge's streaming source (ref: the donor's tensor)
};

merge_math::method method_of(merge_method m) {
    switch (m) {
        case merge_method::linear: return merge_math::method::linear;
        case merge_method::slerp: return merge_math::method::slerp;
        case merge_method::task_arithmetic: return merge_math::method::task_arithmetic;
        default: return merge_math::method::ties;
    }
}

gguf::result<assemble_report> run(const assemble_request& rq, const assemble_events& events) {
    auto cfg = rq.config_text ? parse_assemble_config(*rq.config_text, rq.config.string()) : read_assemble_config(rq.config);
    if (!cfg) return unexpected(std::move(cfg).error());
    const assemble_config& c = *cfg;
    const bool merging = c.method != merge_method::passthrough;
    if (!merging && c.slices.empty())
        return unexpected(make_error(codes::unsupported_config, "models",
                                     "passthrough of models: (one model as it is): use slices with its layer_range"));

    // Every model the config names, opened once, in first-use order.
    std::vector<std::unique_ptr<source>> sources;
    detail::remote_models remotes(rq.remote);
    auto open = [&](const model_source& ms) -> gguf::result<const source*> {
        for (const auto& s : sources)
            if (s->text == ms.text) return s.get();
        std::unique_ptr<source> s;
        if (names_remote_model(ms.text)) {
            auto m = remotes.open(ms.text);
            if (!m) return unexpected(std::move(m).error());
            s = std::make_unique<source>(source{ms.text, std::move(*m), std::nullopt, {}, 0});
        } else {
            auto m = gguf::model::open(ms.text);
            if (!m) return unexpected(std::move(m).error());
            if (auto r = m->require_complete(); !r) return unexpected(std::move(r).error());
            auto files = gguf::model_source::open(*m);
            if (!files) return unexpected(std::move(files).error());
            s = std::make_unique<source>(source{ms.text, std::move(*m), std::move(*files), {}, 0});
        }
        auto arch = s->model.get<std::string_view>("general.architecture");
        if (!arch) return unexpected(std::move(arch).error());
        s->arch = std::string(*arch);
        auto blocks = s->model.get_or<std::uint32_t>(s->arch + ".block_count", 0);
        if (!blocks) return unexpected(std::move(blocks).error());
        s->blocks = *blocks;
        sources.push_back(std::move(s));
        return sources.back().get();
    };
    auto donor = open(donor_model(c));
    if (!donor) return unexpected(std::move(donor).error());
    const source& d = **donor;
    const std::string arch = d.arch;

    // The stack: output layer o from (source, layer): the slices' layers in order (a merge names them
    // after each slice's base source), or the donor's layers for a merge of models:.
    struct layer_origin {
        const source* from;
        std::uint32_t layer;
    };
    std::vector<layer_origin> stack;
    // A merge's inputs, per slice (one group for models:), and each output layer's group and offset.
    struct merge_input {
        const source* src;
        std::uint32_t first = 0;                  // the source's first layer of the slice
        std::optional<std::size_t> index;         // into c.models or the slice's sources; none: the added base
    };
    struct merge_group {
        std::vector<merge_input> inputs;
        std::size_t base = 0;
        std::size_t slice = 0;
        std::uint32_t layers = 0;
    };
    std::vector<merge_group> groups;
    std::vector<std::pair<std::size_t, std::uint32_t>> layer_group;
    auto check_arch = [&](const source& s, const std::string& text) -> gguf::result<void> {
        if (s.arch != arch)
            return unexpected(make_error(codes::sources_incompatible, "general.architecture", text + " is " + s.arch + ", " + d.text + " is " + arch));
        return {};
    };
    if (merging && c.slices.empty()) {
        merge_group g;
        if (c.base_model) {
            bool listed = false;
            for (const input_model& im : c.models) listed = listed || im.model.text == c.base_model->text;
            if (!listed) g.inputs.push_back({&d, 0, std::nullopt});
        }
        for (std::size_t i = 0; i < c.models.size(); ++i) {
            auto s = open(c.models[i].model);
            if (!s) return unexpected(std::move(s).error());
            if (auto r = check_arch(**s, c.models[i].model.text); !r) return unexpected(std::move(r).error());
            g.inputs.push_back({*s, 0, i});
        }
        if (c.base_model)
            for (std::size_t i = 0; i < g.inputs.size(); ++i)
                if (g.inputs[i].src->text == c.base_model->text) g.base = i;
        g.layers = d.blocks;
        groups.push_back(std::move(g));
        for (std::uint32_t l = 0; l < d.blocks; ++l) {
            stack.push_back({&d, l});
            layer_group.push_back({0, l});
        }
    }
    for (std::size_t i = 0; i < c.slices.size(); ++i) {
        const output_slice& sl = c.slices[i];
        if (!merging && sl.sources.size() != 1)
            return unexpected(make_error(codes::bad_config, "slices[" + std::to_string(i) + "].sources",
                                         "passthrough takes exactly one source per slice"));
        merge_group g;
        g.slice = i;
        g.layers = sl.layers();
        const model_source* slice_base = sl.base_model ? &*sl.base_model : (c.base_model ? &*c.base_model : nullptr);
        for (std::size_t k = 0; k < sl.sources.size(); ++k) {
            const slice_source& ss = sl.sources[k];
            auto s = open(ss.model);
            if (!s) return unexpected(std::move(s).error());
            if (auto r = check_arch(**s, ss.model.text); !r) return unexpected(std::move(r).error());
            if (ss.end > (*s)->blocks)
                return unexpected(make_error(codes::sources_incompatible,
                                             "slices[" + std::to_string(i) + "].sources[" + std::to_string(k) + "].layer_range",
                                             "[" + std::to_string(ss.first) + ", " + std::to_string(ss.end) + ") is beyond the " +
                                                 std::to_string((*s)->blocks) + " layers of " + ss.model.text));
            g.inputs.push_back({*s, ss.first, k});
            if (slice_base != nullptr && ss.model.text == slice_base->text) g.base = k;
        }
        for (std::uint32_t j = 0; j < g.layers; ++j) {
            stack.push_back({g.inputs[g.base].src, g.inputs[g.base].first + j});
            layer_group.push_back({groups.size(), j});
        }
        groups.push_back(std::move(g));
    }
    assemble_report report;
    report.method = std::string(to_string(c.method));
    report.blocks = static_cast<std::uint32_t>(stack.size());

    // Keys that must agree, keys a stack cannot keep.
    bool identity = stack.size() == d.blocks;
    for (std::size_t o = 0; o < stack.size() && identity; ++o) identity = stack[o].from == &d && stack[o].layer == o;
    for (const auto& s : sources) {
        for (std::string_view k : {"embedding_length", "expert_count"}) {
            const gguf::kv* a = d.model.find(arch + "." + std::string(k));
            const gguf::kv* b = s->model.find(arch + "." + std::string(k));
            if ((a == nullptr) != (b == nullptr) || (a != nullptr && !same_value(*a, *b)))
                return unexpected(make_error(codes::sources_incompatible, arch + "." + std::string(k),
                                             (a ? value_text(*a) : std::string("absent")) + " in " + d.text + ", " +
                                                 (b ? value_text(*b) : std::string("absent")) + " in " + s->text));
        }
        if (identity) continue;
        for (std::string_view k : positional_keys) {
            const gguf::kv* e = s->model.find(arch + "." + std::string(k));
            if (e == nullptr) continue;
            auto v = e->as<std::uint64_t>();
            if (v && *v == 0) continue;
            return unexpected(make_error(codes::key_not_adjustable, arch + "." + std::string(k),
                                         "it places layers by position in " + s->text + ", which a stack of slices changes"));
        }
    }

    // The output tensors: the donor's non-block tensors before its first block, the stacked blocks,
    // the donor's after its blocks.
    std::vector<planned> plan;
    bool blocks_placed = false;
    auto place_blocks = [&] {
        for (std::size_t o = 0; o < stack.size(); ++o) {
            const std::string prefix = "blk." + std::to_string(stack[o].layer) + ".";
            for (const gguf::tensor_ref& t : stack[o].from->model.tensors()) {
                if (!t.info->name.starts_with(prefix)) continue;
                plan.push_back({stack[o].from, &t, "blk." + std::to_string(o) + "." + std::string(t.info->name.substr(prefix.size())), false, std::nullopt});
            }
        }
        blocks_placed = true;
    };
    for (const gguf::tensor_ref& t : d.model.tensors()) {
        std::string_view rest;
        if (block_of(t.info->name, rest)) {
            if (!blocks_placed) place_blocks();
            continue;
        }
        plan.push_back({&d, &t, std::string(t.info->name), false, std::nullopt});
    }
    if (!blocks_placed) place_blocks();

    std::optional<quant::importance_matrix> importance;
    if (merging && rq.imatrix) {
        auto im = quant::read_importance(*rq.imatrix);
        if (!im) return unexpected(std::move(im).error());
        importance = std::move(*im);
    }
    // A merge: every output tensor merged from the same tensor of every input of its group (a block's
    // tensor from each source's layer at the same offset; a tensor before the blocks from the first
    // slice's sources, one after them from the last slice's, as mergekit's planner takes them).
    // The remote bytes the plan takes (each merge input once: it is fetched into a temporary copy),
    // and where those copies go: beside the output.
    std::uint64_t remote_tensor_bytes = 0;
    const std::filesystem::path spool_dir = rq.output.has_parent_path() ? rq.output.parent_path() : std::filesystem::path(".");
    if (merging) {
        auto default_of = [&](std::string_view name) -> std::optional<double> {
            const method_parameter* mp = find_method_parameter(c.method, name);
            return mp != nullptr ? mp->default_value : std::nullopt;
        };
        std::size_t first_block = plan.size(), last_block = 0;
        for (std::size_t i = 0; i < plan.size(); ++i) {
            std::string_view rest;
            if (block_of(plan[i].name, rest)) {
                first_block = std::min(first_block, i);
                last_block = i;
            }
        }
        for (std::size_t pi = 0; pi < plan.size(); ++pi) {
            planned& p = plan[pi];
            const gguf::tensor_info& info = *p.ref->info;
            if (!quant::can_quantize(info.type) && info.type != gguf::tensor_type::f32)
                return unexpected(make_error(codes::sources_incompatible, p.name,
                                             std::string("its type ") + std::string(gguf::to_string(info.type)) + " cannot be merged and written back"));
            std::string_view rest;
            const std::optional<std::uint32_t> out_layer = block_of(p.name, rest);
            const merge_group* g = nullptr;
            std::optional<std::uint32_t> offset;
            if (out_layer && *out_layer < layer_group.size()) {
                g = &groups[layer_group[*out_layer].first];
                offset = layer_group[*out_layer].second;
            } else {
                g = pi < first_block ? &groups.front() : &groups.back();
                (void)last_block;
            }
            detail::merge_job job;
            job.spool_dir = spool_dir;
            job.name = p.name;
            job.to = info.type;
            job.ne = info.ne;
            if (importance) {
                if (const quant::importance_entry* e = importance->find(p.name)) {
                    const auto want = static_cast<std::uint64_t>(info.ne[0]) * static_cast<std::uint64_t>(info.ne[2]);
                    if (e->values.size() != want) {
                        error err = make_error(quant::codes::imatrix_mismatch, p.name, {});
                        err.expected = want;
                        err.found = e->values.size();
                        return unexpected(std::move(err));
                    }
                    job.importance = e->values;
                }
            }
            merge_math::tensor_merge& tm = job.merge;
            tm.how = method_of(c.method);
            tm.base = g->base;
            tm.n_values = info.n_elements;
            const tensor_site merge_site{p.name, p.name, arch, g->slice, offset, g->layers};
            for (std::size_t k = 0; k < g->inputs.size(); ++k) {
                const merge_input& in = g->inputs[k];
                const std::string name = offset ? "blk." + std::to_string(in.first + *offset) + "." + std::string(rest) : p.name;
                const gguf::tensor_ref* t = in.src->model.find_tensor(name);
                if (t == nullptr) return unexpected(make_error(codes::sources_incompatible, name, in.src->text + " has no such tensor"));
                if (t->info->ne != info.ne)
                    return unexpected(make_error(codes::sources_incompatible, name, "another shape in " + in.src->text + " than in " + p.from->text));
                job.models.push_back(&in.src->model);
                job.tensors.push_back(t);
                if (in.src->remote()) {
                    job.reads.push_back([&remotes, m = &in.src->model, t](std::uint64_t off, std::span<std::byte> out) {
                        return remotes.read(*m, *t, off, out);
                    });
                    remote_tensor_bytes += remotes.to_fetch(in.src->model, *t);
                } else {
                    job.reads.emplace_back();
                }
                const tensor_site site{p.name, name, arch, g->slice, offset, g->layers};
                merge_math::model_parameters mp;
                const bool is_base = k == g->base && c.method != merge_method::linear;
                auto weight = parameter_value(c, "weight", site, in.index);
                if (!weight) weight = default_of("weight");
                if (!weight && !is_base && c.method != merge_method::slerp)
                    return unexpected(make_error(codes::bad_config, "weight",
                                                 "no weight for " + p.name + " of " + in.src->text + " (mergekit requires one)"));
                mp.weight = weight.value_or(1.0);
                mp.density = parameter_value(c, "density", site, in.index).value_or(default_of("density").value_or(1.0));
                tm.models.push_back(mp);
            }
            tm.t = parameter_value(c, "t", merge_site).value_or(default_of("t").value_or(0.0));
            if (c.method == merge_method::slerp && g->inputs.size() > 1 && !parameter_value(c, "t", merge_site))
                return unexpected(make_error(codes::bad_config, "t", "no t for " + p.name + " (slerp requires one)"));
            tm.normalize = parameter_value(c, "normalize", merge_site).value_or(merge_math::default_normalize(tm.how) ? 1.0 : 0.0) != 0.0;
            tm.rescale = parameter_value(c, "rescale", merge_site).value_or(0.0) != 0.0;
            tm.int8_mask = parameter_value(c, "int8_mask", merge_site).value_or(0.0) != 0.0;
            tm.lambda = parameter_value(c, "lambda", merge_site).value_or(1.0);
            auto src = detail::merged_source(std::move(job));
            if (!src) {
                error e = std::move(src).error();
                if (e.subject.empty()) e.subject = p.name;
                return unexpected(std::move(e));
            }
            p.merged = std::move(*src);
        }
    }

    // tensors: rules: the same name and shape from the rule's model.
    for (planned& p : plan) {
        auto rule = find_tensor_rule(c, p.name);
        if (!rule) return unexpected(std::move(rule).error());
        if (*rule == nullptr) continue;
        auto s = open((*rule)->model);
        if (!s) return unexpected(std::move(s).error());
        if ((*s)->arch != arch)
            return unexpected(make_error(codes::sources_incompatible, "general.architecture",
                                         (*rule)->model.text + " is " + (*s)->arch + ", " + d.text + " is " + arch));
        const gguf::tensor_ref* t = (*s)->model.find_tensor(p.name);
        if (t == nullptr)
            return unexpected(make_error(codes::sources_incompatible, p.name,
                                         "the tensors: rule '" + (*rule)->pattern + "' takes it from " + (*s)->text + ", which has no such tensor"));
        if (t->info->ne != p.ref->info->ne)
            return unexpected(make_error(codes::sources_incompatible, p.name, "another shape in " + (*s)->text + " than in " + p.from->text));
        p.from = *s;
        p.ref = t;
        p.by_rule = true;
        p.merged.reset();
    }

    // Metadata: the donor's, block_count, per-layer arrays, file type, provenance.
    std::map<std::string, std::pair<gguf::value_type, std::vector<std::byte>>, std::less<>> replaced;
    auto encode_u32 = [](std::uint32_t v) {
        std::vector<std::byte> b(4);
        std::memcpy(b.data(), &v, 4);
        return b;
    };
    const std::string block_key = arch + ".block_count";
    if (d.model.find(block_key) != nullptr && stack.size() != d.blocks) {
        replaced[block_key] = {gguf::value_type::u32, encode_u32(static_cast<std::uint32_t>(stack.size()))};
        report.metadata.push_back({block_key, std::to_string(stack.size())});
    }
    for (std::string_view k : per_layer_keys) {
        const std::string key = arch + "." + std::string(k);
        if (d.model.find(key) == nullptr) continue;
        std::vector<std::uint32_t> values;
        bool all_same = true;
        for (const layer_origin& o : stack) {
            auto v = per_layer_value(o.from->model, key, o.layer);
            if (!v)
                return unexpected(make_error(codes::sources_incompatible, key, "absent or not a u32 for layer " + std::to_string(o.layer) +
                                                                                  " of " + o.from->text));
            all_same = all_same && (values.empty() || *v == values.front());
            values.push_back(*v);
        }
        const gguf::kv* e = d.model.find(key);
        if (all_same && !e->is_array() && !values.empty() && per_layer_value(d.model, key, 0) == values.front()) continue;
        std::vector<std::byte> arr(12 + 4 * values.size());
        const auto tag = static_cast<std::uint32_t>(gguf::value_type::u32);
        const std::uint64_t n = values.size();
        std::memcpy(arr.data(), &tag, 4);
        std::memcpy(arr.data() + 4, &n, 8);
        std::memcpy(arr.data() + 12, values.data(), 4 * values.size());
        replaced[key] = {gguf::value_type::array, std::move(arr)};
        report.metadata.push_back({key, "array[u32] of " + std::to_string(values.size())});
    }
    // other {arch}.* per-layer arrays of the donor: rebuilt from each layer's source's array
    for (const gguf::kv& e : d.model.metadata().metadata()) {
        if (!e.is_array() || e.count != d.blocks || !e.key.starts_with(arch + ".") || replaced.contains(e.key)) continue;
        if (e.key.substr(arch.size() + 1).starts_with("rope.")) continue;
        const std::uint32_t size = gguf::value_size(e.element_type);
        if (size == 0) return unexpected(make_error(codes::key_not_adjustable, e.key, "a per-layer array of strings"));
        std::vector<std::byte> arr(12);
        const auto tag = static_cast<std::uint32_t>(e.element_type);
        const std::uint64_t n = stack.size();
        std::memcpy(arr.data(), &tag, 4);
        std::memcpy(arr.data() + 4, &n, 8);
        for (const layer_origin& o : stack) {
            const gguf::kv* f = o.from->model.find(e.key);
            if (f == nullptr || !f->is_array() || f->element_type != e.element_type || f->count != o.from->blocks)
                return unexpected(make_error(codes::sources_incompatible, e.key, "not a per-layer array of the same type in " + o.from->text));
            arr.insert(arr.end(), f->payload.begin() + o.layer * size, f->payload.begin() + (o.layer + 1) * size);
        }
        if (stack.size() == d.blocks && std::equal(arr.begin() + 12, arr.end(), e.payload.begin(), e.payload.end())) continue;
        replaced[std::string(e.key)] = {gguf::value_type::array, std::move(arr)};
        report.metadata.push_back({std::string(e.key), "array[" + std::string(gguf::to_string(e.element_type)) + "] of " + std::to_string(n)});
    }
    // other scalars that differ: the donor's, with a warning
    const std::string arch_prefix = arch + ".";  // with_prefix keeps a view of it: it must outlive the loop
    for (const auto& s : sources) {
        if (s.get() == &d) continue;
        for (const gguf::kv& e : s->model.with_prefix(arch_prefix)) {
            if (e.is_array() || replaced.contains(e.key) || e.key == block_key) continue;
            const gguf::kv* mine = d.model.find(e.key);
            if (mine != nullptr && same_value(*mine, e)) continue;
            report.warnings.push_back(gguf::escape(e.key) + " is " + value_text(e) + " in " + s->text + " and " +
                                      (mine ? value_text(*mine) : std::string("absent")) + " in " + d.text + ": the output keeps " +
                                      d.text + "'s");
        }
    }
    // file type: kept when every source declares the same, else the loader's guess from the types
    std::optional<std::uint32_t> declared;
    bool same_declared = true;
    std::set<const source*> used;
    for (const planned& p : plan) used.insert(p.from);
    for (const source* s : used) {
        auto ft = s->model.get_as<std::uint32_t>("general.file_type");
        if (!ft) {
            same_declared = false;
            break;
        }
        if (declared && *declared != *ft) same_declared = false;
        declared = *ft;
    }
    const bool donor_only = used.size() == 1 && *used.begin() == &d;
    if (!donor_only && (!same_declared || !declared)) {
        std::vector<gguf::tensor_type> types;
        for (const planned& p : plan) types.push_back(p.ref->info->type);
        const std::uint32_t ft = file_type_of(types);
        replaced["general.file_type"] = {gguf::value_type::u32, encode_u32(ft)};
        report.metadata.push_back({"general.file_type", std::to_string(ft)});
    }
    std::vector<std::pair<std::string, std::string>> appended_strings;
    std::vector<std::pair<std::string, std::uint32_t>> appended_u32;
    std::set<std::string, std::less<>> erased;
    if (rq.provenance) {
        for (const gguf::kv& e : d.model.with_prefix("general.base_model.")) erased.insert(std::string(e.key));
        std::vector<const source*> named;  // every model the output takes bytes or values from
        for (const auto& s : sources) named.push_back(s.get());
        appended_u32.push_back({"general.base_model.count", static_cast<std::uint32_t>(named.size())});
        for (std::size_t i = 0; i < named.size(); ++i) {
            const std::string base = "general.base_model." + std::to_string(i) + ".";
            for (auto [from, to] : {std::pair{"general.name", "name"}, std::pair{"general.organization", "organization"},
                                    std::pair{"general.version", "version"}, std::pair{"general.repo_url", "repo_url"}}) {
                auto v = named[i]->model.get<std::string_view>(from);
                if (v) appended_strings.push_back({base + to, std::string(*v)});
            }
        }
        std::string recipe;
        if (rq.config_text) {
            recipe = *rq.config_text;
        } else {
            auto text = gguf::read_capped(rq.config, max_config_bytes);
            if (text) recipe.assign(reinterpret_cast<const char*>(text->data()), text->size());
        }
        appended_strings.push_back({"minfer.recipe", recipe});
        report.metadata.push_back({"general.base_model.count", std::to_string(named.size())});
        report.metadata.push_back({"minfer.recipe", "(the config)"});
    }
    for (const auto& s : sources) report.models.push_back(s->text);

    auto put_metadata = [&](gguf::writer& w) {
        for (const gguf::kv& e : d.model.metadata().metadata()) {
            if (e.key.starts_with("split.") || erased.contains(e.key)) continue;
            if (auto r = replaced.find(e.key); r != replaced.end()) {
                w.set_encoded(e.key, r->second.first, r->second.second);
                continue;
            }
            w.set(e);
        }
        for (const auto& [k, v] : replaced)
            if (d.model.find(k) == nullptr) w.set_encoded(k, v.first, v.second);
        for (const auto& [k, v] : appended_u32) w.set_u32(k, v);
        for (const auto& [k, v] : appended_strings) w.set_string(k, v);
    };

    std::vector<detail::output_tensor> tensors;
    for (const planned& p : plan) {
        detail::output_tensor t;
        t.name = p.name;
        t.type = p.ref->info->type;
        t.ne.assign(p.ref->info->ne.begin(), p.ref->info->ne.begin() + std::max<std::uint32_t>(1, p.ref->info->n_dims));
        t.n_bytes = p.ref->info->n_bytes;
        t.source = [&p, &remotes] {
            if (p.merged) return *p.merged;
            return p.from->remote() ? remotes.tensor(p.from->model, *p.ref) : p.from->files->tensor(*p.ref);
        };
        if (!p.merged && p.from->remote()) remote_tensor_bytes += remotes.to_fetch(p.from->model, *p.ref);
        report.tensors.push_back({p.name, p.merged ? std::string("(merged)") : p.from->text, std::string(p.ref->info->name), t.type, t.ne,
                                  t.n_bytes, p.by_rule});
        report.output_tensor_bytes += t.n_bytes;
        tensors.push_back(std::move(t));
    }
    detail::output_request orq;
    orq.output = rq.output;
    orq.split_max_bytes = rq.split_max_bytes;
    orq.split_max_tensors = rq.split_max_tensors;
    orq.overwrite = rq.overwrite;
    if (auto a = d.model.get_as<std::uint32_t>(gguf::alignment_key)) orq.alignment = *a;
    for (const auto& s : sources)
        if (!s->remote())
            for (const gguf::model_part& part : s->model.parts()) orq.inputs.push_back(part.path);
    if (!rq.config_text) orq.inputs.push_back(rq.config);
    if (rq.imatrix) orq.inputs.push_back(*rq.imatrix);
    auto layout = detail::lay_out(tensors, put_metadata, orq);
    if (!layout) return unexpected(std::move(layout).error());
    for (const detail::laid_out_part& part : layout->parts) report.outputs.push_back({part.path, part.file_size, part.tensor_count});
    // Before anything is written: the remote tensors must fit what --max-fetch leaves after the heads.
    if (auto r = remotes.start_tensors(remote_tensor_bytes); !r) return unexpected(std::move(r).error());
    report.fetched = remotes.totals();
    if (rq.dry_run) return report;
    auto written = detail::write_out(*layout, rq.overwrite, events.progress);
    report.fetched = remotes.totals();
    if (!written) return unexpected(std::move(written).error());
    report.written = true;
    return report;
}

}  // namespace

gguf::result<assemble_report> assemble(const assemble_request& request, const assemble_events& events) noexcept {
    try {
        return run(request, events);
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("assembling a model"));
    }
}

}  // namespace minfer::toolbox
