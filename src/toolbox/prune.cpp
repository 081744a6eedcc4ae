// toolbox::prune (prune.hpp): the plan (which blocks, experts and tensors go, the renumbering, the
// metadata changes), then the output's writers (kept tensors as kernel-copied ranges of the input,
// pruned expert tensors as gathers of the kept experts' ranges), written by toolbox::write_parts.
#include "minfer/toolbox/prune.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/page_advice.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/toolbox/errors.hpp"
#include "model_keys.hpp"
#include "output_parts.hpp"

namespace minfer::toolbox {
namespace {

using gguf::errc;
using gguf::error;
using gguf::unexpected;
using detail::block_of;
using detail::make_error;
using detail::quoted_text;
using detail::value_text;

// "3", "5-7": [first, last] of one list item.
bool parse_item(std::string_view item, std::uint64_t& first, std::uint64_t& last) {
    auto number = [](std::string_view s, std::uint64_t& v) {
        if (s.empty()) return false;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && p == s.data() + s.size();
    };
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
        if (!number(item, first)) return false;
        last = first;
        return true;
    }
    return number(item.substr(0, dash), first) && number(item.substr(dash + 1), last) && first <= last;
}

// The value bytes of an integer scalar of the record's own type (set_encoded's format).
std::vector<std::byte> encode_integer(gguf::value_type t, std::uint64_t v) {
    const std::uint32_t size = gguf::value_size(t);
    std::vector<std::byte> out(size);
    for (std::uint32_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);  // little-endian
    return out;
}

std::string integer_text(std::uint64_t v) { return std::to_string(v); }

// A tensor of a MoE block whose last dimension is the expert axis.
bool is_expert_tensor(std::string_view rest) {
    return rest.find("_exps.") != std::string_view::npos || rest.starts_with("ffn_gate_inp.") ||
           rest.starts_with("exp_probs_b.");
}

// Tensors llama.cpp requires for every architecture that has them (a warning when --tensors removes one).
bool looks_required(std::string_view name) {
    std::string_view rest;
    if (block_of(name, rest)) return rest.ends_with(".weight");
    return name == "token_embd.weight" || name == "output_norm.weight";
}

// One output tensor and where its bytes come from.
struct planned {
    const gguf::tensor_ref* ref = nullptr;
    std::string name;
    std::array<std::int64_t, 4> ne{1, 1, 1, 1};
    std::uint32_t n_dims = 1;
    std::uint64_t n_bytes = 0;
    std::vector<std::uint32_t> kept_experts;  // non-empty: gather these experts' slices
};

// A source that gathers the kept experts' slices of one tensor from the input's mapping, chunk by
// chunk, releasing the input pages it has read (the resident set stays a chunk, not the model).
gguf::tensor_source gather_source(const gguf::model& m, const planned& p) {
    const std::span<const std::byte> bytes = m.tensor_data(*p.ref);
    const std::uint64_t n_expert = static_cast<std::uint64_t>(p.ref->info->ne[p.n_dims - 1]);
    const std::uint64_t slice = p.ref->info->n_bytes / n_expert;
    auto kept = std::make_shared<std::vector<std::uint32_t>>(p.kept_experts);
    return gguf::tensor_source::callback(
        p.n_bytes, [bytes, slice, kept](std::uint64_t offset, std::span<std::byte> out) noexcept -> gguf::result<void> {
            while (!out.empty()) {
                const std::uint64_t k = offset / slice, within = offset % slice;
                if (k >= kept->size()) return unexpected(make_error(errc::index_out_of_range, {}, "an expert slice past the tensor's end"));
                const std::uint64_t from = (*kept)[static_cast<std::size_t>(k)] * slice + within;
                const std::uint64_t n = std::min<std::uint64_t>(out.size(), slice - within);
                if (from + n > bytes.size()) return unexpected(make_error(errc::data_truncated, {}, "an expert slice past the mapping"));
                const std::span<const std::byte> src = bytes.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(n));
                std::memcpy(out.data(), src.data(), src.size());
                gguf::release_pages(src);
                out = out.subspan(static_cast<std::size_t>(n));
                offset += n;
            }
            return {};
        });
}

struct metadata_plan {
    std::map<std::string, std::pair<gguf::value_type, std::vector<std::byte>>, std::less<>> replaced;  // in place
    std::set<std::string, std::less<>> erased;
    std::vector<std::pair<std::string, std::vector<std::byte>>> appended_u32;  // key, encoded u32 (last, in order)
    std::vector<std::pair<std::string, std::string>> appended_string;
    std::vector<pruned_key> shown;
};

struct pruner {
    const prune_request& rq;
    const gguf::model& m;
    std::string arch;
    std::uint32_t blocks = 0, experts = 0;
    std::vector<bool> drop_block;  // by input block
    std::vector<std::uint32_t> new_index;
    std::vector<std::uint32_t> kept_experts;
    metadata_plan meta;
    prune_report report;

    std::string key(std::string_view suffix) const { return arch + "." + std::string(suffix); }

    gguf::result<std::uint64_t> integer_key(std::string_view k, std::uint64_t fallback) const {
        const gguf::kv* e = m.find(k);
        if (e == nullptr) return fallback;
        auto v = e->as<std::uint64_t>();
        if (!v) return unexpected(std::move(v).error());
        return *v;
    }

    void replace_integer(std::string_view k, std::uint64_t v) {
        const gguf::kv* e = m.find(k);
        meta.replaced[std::string(k)] = {e->type, encode_integer(e->type, v)};
        meta.shown.push_back({std::string(k), value_text(*e), integer_text(v)});
    }

    gguf::result<void> plan_layers() {
        const std::uint32_t removed = static_cast<std::uint32_t>(std::count(drop_block.begin(), drop_block.end(), true));
        if (removed == 0) return {};
        if (removed >= blocks)
            return unexpected(make_error(codes::bad_selection, "layers", "every one of the model's " + std::to_string(blocks) +
                                                                             " layers would be removed"));
        std::uint32_t next = 0;
        new_index.assign(blocks, 0);
        for (std::uint32_t b = 0; b < blocks; ++b)
            if (!drop_block[b]) new_index[b] = next++;
        // Keys whose meaning is a period or a position no new value keeps.
        for (std::string_view k : {"interleave_moe_layer_step", "moe_every_n_layers", "full_attention_interval",
                                   "rescale_every_n_layers", "attention.shared_kv_layers"}) {
            if (m.find(key(k)) != nullptr)
                return unexpected(make_error(codes::key_not_adjustable, key(k),
                                             "it describes the layers by their positions, which removing layers changes"));
        }
        if (const gguf::kv* e = m.find(key("attention.sliding_window_pattern")); e != nullptr && !e->is_array())
            return unexpected(make_error(codes::key_not_adjustable, key("attention.sliding_window_pattern"),
                                         "a period of sliding-window layers: removing layers shifts the pattern"));
        // leading dense blocks: those removed below the boundary lower it
        auto lead = integer_key(key("leading_dense_block_count"), 0);
        if (!lead) return unexpected(std::move(lead).error());
        if (*lead > 0) {
            std::uint64_t below = 0;
            for (std::uint32_t b = 0; b < blocks && b < *lead; ++b) below += drop_block[b] ? 1u : 0u;
            if (below > 0) replace_integer(key("leading_dense_block_count"), *lead - below);
        }
        // MTP layers: the last N blocks
        auto nextn = integer_key(key("nextn_predict_layers"), 0);
        if (!nextn) return unexpected(std::move(nextn).error());
        if (*nextn > blocks)
            return unexpected(make_error(codes::key_not_adjustable, key("nextn_predict_layers"),
                                         "it counts more MTP layers than the model has layers"));
        if (*nextn > 0 && !rq.mtp) {
            std::uint64_t gone = 0;
            for (std::uint32_t b = blocks - static_cast<std::uint32_t>(*nextn); b < blocks; ++b) gone += drop_block[b] ? 1u : 0u;
            if (gone > 0) replace_integer(key("nextn_predict_layers"), *nextn - gone);
        }
        // per-layer arrays: drop the removed blocks' entries
        for (const gguf::kv& e : m.metadata().metadata()) {
            if (!e.is_array() || e.count != blocks || !e.key.starts_with(arch + ".")) continue;
            if (e.key.substr(arch.size() + 1).starts_with("rope.")) continue;  // rope sections: not per layer
            const std::uint32_t size = gguf::value_size(e.element_type);
            if (size == 0)
                return unexpected(make_error(codes::key_not_adjustable, e.key, "a per-layer array of strings"));
            std::vector<std::byte> v(4 + 8);
            const auto tag = static_cast<std::uint32_t>(e.element_type);
            std::memcpy(v.data(), &tag, 4);
            const std::uint64_t kept = blocks - removed;
            std::memcpy(v.data() + 4, &kept, 8);
            for (std::uint32_t b = 0; b < blocks; ++b)
                if (!drop_block[b]) v.insert(v.end(), e.payload.begin() + b * size, e.payload.begin() + (b + 1) * size);
            meta.replaced[std::string(e.key)] = {gguf::value_type::array, std::move(v)};
            meta.shown.push_back({std::string(e.key), value_text(e), "array[" + std::string(gguf::to_string(e.element_type)) +
                                                                          "] of " + std::to_string(kept)});
        }
        return {};
    }

    gguf::result<void> plan_experts(const std::vector<std::uint32_t>& expert_list) {
        if (expert_list.empty()) return {};
        if (experts == 0)
            return unexpected(make_error(codes::bad_selection, "experts", "the model has no experts (" + key("expert_count") + ")"));
        auto groups = integer_key(key("expert_group_count"), 0);
        if (!groups) return unexpected(std::move(groups).error());
        if (*groups > 1)
            return unexpected(make_error(codes::key_not_adjustable, key("expert_group_count"),
                                         "grouped routing: the " + std::to_string(*groups) +
                                             " groups would no longer divide the experts"));
        std::vector<bool> drop(experts, false);
        for (std::uint32_t x : expert_list) {
            if (x >= experts) {
                error e = make_error(codes::bad_selection, "experts", "expert " + std::to_string(x) + " does not exist: the model has " +
                                                                          std::to_string(experts) + " experts (0-" + std::to_string(experts - 1) + ")");
                e.expected = experts;
                e.found = x;
                return unexpected(std::move(e));
            }
            drop[x] = true;
        }
        for (std::uint32_t x = 0; x < experts; ++x)
            if (!drop[x]) kept_experts.push_back(x);
        if (kept_experts.empty())
            return unexpected(make_error(codes::bad_selection, "experts", "every one of the model's " + std::to_string(experts) +
                                                                              " experts would be removed"));
        const auto now = static_cast<std::uint32_t>(kept_experts.size());
        replace_integer(key("expert_count"), now);
        auto used = integer_key(key("expert_used_count"), 0);
        if (!used) return unexpected(std::move(used).error());
        if (*used > now) {
            replace_integer(key("expert_used_count"), now);
            report.warnings.push_back(key("expert_used_count") + " was " + std::to_string(*used) + ", more than the " +
                                      std::to_string(now) + " experts kept: lowered to " + std::to_string(now));
        }
        return {};
    }

    void plan_provenance(std::string recipe) {
        if (!rq.provenance) return;
        for (const gguf::kv& e : m.with_prefix("general.base_model.")) {
            meta.erased.insert(std::string(e.key));
            meta.shown.push_back({std::string(e.key), value_text(e), ""});
        }
        meta.appended_u32.push_back({"general.base_model.count", encode_integer(gguf::value_type::u32, 1)});
        meta.shown.push_back({"general.base_model.count", "", "1"});
        for (auto [from, to] : {std::pair{"general.name", "general.base_model.0.name"},
                                std::pair{"general.organization", "general.base_model.0.organization"},
                                std::pair{"general.version", "general.base_model.0.version"},
                                std::pair{"general.repo_url", "general.base_model.0.repo_url"}}) {
            auto v = m.get<std::string_view>(from);
            if (!v) continue;
            meta.appended_string.push_back({to, std::string(*v)});
            meta.shown.push_back({to, "", quoted_text(*v)});
        }
        meta.appended_string.push_back({"minfer.recipe", recipe});
        meta.shown.push_back({"minfer.recipe", "", quoted_text(recipe)});
    }
};

std::string list_text(const std::vector<std::uint32_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!s.empty()) s += ',';
        s += std::to_string(v[i]);
        if (j > i) {
            s += '-';  // appended: GCC 12 -O3 warns falsely (-Wrestrict) on "-" + string
            s += std::to_string(v[j]);
        }
        i = j + 1;
    }
    return s;
}

// Part 1's metadata: the input's records in order (its own split keys dropped), the changes in place,
// the appended keys last.
void put_metadata(gguf::writer& w, const pruner& p) {
    for (const gguf::kv& e : p.m.metadata().metadata()) {
        if (e.key.starts_with("split.")) continue;  // the input set's own split keys
        if (p.meta.erased.contains(e.key)) continue;
        if (auto r = p.meta.replaced.find(e.key); r != p.meta.replaced.end()) {
            w.set_encoded(e.key, r->second.first, r->second.second);
            continue;
        }
        w.set(e);
    }
    for (const auto& [k, v] : p.meta.appended_u32) w.set_encoded(k, gguf::value_type::u32, v);
    for (const auto& [k, v] : p.meta.appended_string) w.set_string(k, v);
}

gguf::result<prune_report> run(const prune_request& rq, const prune_events& events) {
    if (rq.mtp && rq.only_mtp)
        return unexpected(make_error(codes::bad_selection, "mtp", "mtp removes the MTP layers and only_mtp keeps only them: give one"));
    if (rq.layers.empty() && rq.experts.empty() && !rq.layers_text && !rq.experts_text && !rq.mtp && !rq.only_mtp && !rq.tensors)
        return unexpected(make_error(codes::bad_selection, "layers", "nothing to remove: give layers, experts, mtp or tensors"));
    std::optional<std::regex> pattern;
    if (rq.tensors) {
        try {
            pattern.emplace(*rq.tensors, std::regex::ECMAScript);
        } catch (const std::regex_error& x) {
            return unexpected(make_error(errc::bad_value_text, "tensors", "the pattern does not compile: " + std::string(x.what())));
        }
    }

    auto opened = gguf::model::open(rq.input);
    if (!opened) return unexpected(std::move(opened).error());
    const gguf::model& m = *opened;
    if (auto r = m.require_complete(); !r) return unexpected(std::move(r).error());

    pruner p{rq, m, {}, 0, 0, {}, {}, {}, {}, {}};
    auto arch = m.get<std::string_view>("general.architecture");
    if (!arch) return unexpected(std::move(arch).error());
    p.arch = std::string(*arch);
    auto blocks = p.integer_key(p.key("block_count"), 0);
    if (!blocks) return unexpected(std::move(blocks).error());
    if (*blocks > std::numeric_limits<std::uint32_t>::max())
        return unexpected(make_error(errc::value_out_of_range, p.key("block_count"), "more layers than a u32 counts"));
    p.blocks = static_cast<std::uint32_t>(*blocks);
    auto experts = p.integer_key(p.key("expert_count"), 0);
    if (!experts) return unexpected(std::move(experts).error());
    if (*experts > (1u << 20)) return unexpected(make_error(errc::value_out_of_range, p.key("expert_count"), "more than 2^20 experts"));
    p.experts = static_cast<std::uint32_t>(*experts);
    p.report.blocks_before = p.report.blocks_after = p.blocks;
    p.report.experts_before = p.report.experts_after = p.experts;

    // The lists given as text, read against the model's counts.
    std::vector<std::uint32_t> layers = rq.layers, expert_list = rq.experts;
    if (rq.layers_text) {
        auto l = parse_index_list(*rq.layers_text, p.blocks, "layers");
        if (!l) return unexpected(std::move(l).error());
        layers.insert(layers.end(), l->begin(), l->end());
    }
    if (rq.experts_text) {
        if (p.experts == 0)
            return unexpected(make_error(codes::bad_selection, "experts", "the model has no experts (" + p.key("expert_count") + ")"));
        auto x = parse_index_list(*rq.experts_text, p.experts, "experts");
        if (!x) return unexpected(std::move(x).error());
        expert_list.insert(expert_list.end(), x->begin(), x->end());
    }
    // Which blocks go.
    p.drop_block.assign(p.blocks, false);
    for (std::uint32_t b : layers) {
        if (b >= p.blocks) {
            error e = make_error(codes::bad_selection, "layers", "layer " + std::to_string(b) + " does not exist: the model has " +
                                                                     std::to_string(p.blocks) + " layers" +
                                                                     (p.blocks > 0 ? " (0-" + std::to_string(p.blocks - 1) + ")" : ""));
            e.expected = p.blocks;
            e.found = b;
            return unexpected(std::move(e));
        }
        p.drop_block[b] = true;
    }
    if (rq.mtp) {
        auto nextn = p.integer_key(p.key("nextn_predict_layers"), 0);
        if (!nextn) return unexpected(std::move(nextn).error());
        if (*nextn == 0)
            return unexpected(make_error(codes::bad_selection, "mtp", "the model has no MTP layers (" + p.key("nextn_predict_layers") +
                                                                          " is absent or 0)"));
        if (*nextn > p.blocks)
            return unexpected(make_error(codes::key_not_adjustable, p.key("nextn_predict_layers"),
                                         "it counts more MTP layers than the model has layers"));
        for (std::uint32_t b = p.blocks - static_cast<std::uint32_t>(*nextn); b < p.blocks; ++b) p.drop_block[b] = true;
        const gguf::kv* e = m.find(p.key("nextn_predict_layers"));
        p.meta.erased.insert(std::string(e->key));
        p.meta.shown.push_back({std::string(e->key), value_text(*e), ""});
    }
    if (rq.only_mtp) {
        auto nextn = p.integer_key(p.key("nextn_predict_layers"), 0);
        if (!nextn) return unexpected(std::move(nextn).error());
        if (*nextn == 0)
            return unexpected(make_error(codes::bad_selection, "mtp", "the model has no MTP layers (" + p.key("nextn_predict_layers") +
                                                                          " is absent or 0)"));
        if (*nextn >= p.blocks)
            return unexpected(make_error(codes::key_not_adjustable, p.key("nextn_predict_layers"),
                                         "every layer is already an MTP layer"));
        // the trunk's blocks go; the MTP blocks become blocks 0..N-1, and the key still counts them all
        for (std::uint32_t b = 0; b < p.blocks - static_cast<std::uint32_t>(*nextn); ++b) p.drop_block[b] = true;
    }
    if (auto r = p.plan_layers(); !r) return unexpected(std::move(r).error());
    if (auto r = p.plan_experts(expert_list); !r) return unexpected(std::move(r).error());
    const std::uint32_t removed_blocks = static_cast<std::uint32_t>(std::count(p.drop_block.begin(), p.drop_block.end(), true));
    if (removed_blocks > 0) {
        // removed and appended last, as gguf_set_val_u32 does in llama-quantize --prune-layers
        const gguf::kv* e = m.find(p.key("block_count"));
        p.meta.erased.insert(std::string(e->key));
        p.meta.appended_u32.insert(p.meta.appended_u32.begin(),
                                   {std::string(e->key), encode_integer(gguf::value_type::u32, p.blocks - removed_blocks)});
        p.meta.shown.push_back({std::string(e->key), value_text(*e), integer_text(p.blocks - removed_blocks)});
        p.report.blocks_after = p.blocks - removed_blocks;
    }
    if (!p.kept_experts.empty()) p.report.experts_after = static_cast<std::uint32_t>(p.kept_experts.size());

    // The output tensors.
    std::vector<planned> out;
    for (const gguf::tensor_ref& t : m.tensors()) {
        const gguf::tensor_info& info = *t.info;
        p.report.input_tensor_bytes += info.n_bytes;
        std::string_view rest;
        const std::optional<std::uint32_t> block = block_of(info.name, rest);
        bool drop = block && *block < p.blocks && p.drop_block[*block];
        if (!drop && pattern && std::regex_search(info.name.begin(), info.name.end(), *pattern)) {
            drop = true;
            if (looks_required(info.name))
                p.report.warnings.push_back("removed " + gguf::escape(info.name) + ", which llama.cpp requires for most architectures");
        }
        if (drop) {
            p.report.removed.emplace_back(info.name);
            continue;
        }
        planned o;
        o.ref = &t;
        o.name = std::string(info.name);
        if (block && *block < p.blocks && !p.new_index.empty() && p.new_index[*block] != *block)
            o.name = "blk." + std::to_string(p.new_index[*block]) + "." + std::string(rest);
        o.n_dims = std::max<std::uint32_t>(1, info.n_dims);
        o.ne = info.ne;
        o.n_bytes = info.n_bytes;
        if (!p.kept_experts.empty() && block && is_expert_tensor(rest)) {
            const std::uint32_t axis = o.n_dims - 1;
            if (static_cast<std::uint64_t>(info.ne[axis]) != p.experts)
                return unexpected(make_error(codes::sources_incompatible, info.name,
                                             "its last dimension is " + std::to_string(info.ne[axis]) + ", not the " +
                                                 std::to_string(p.experts) + " experts of " + p.key("expert_count")));
            o.ne[axis] = static_cast<std::int64_t>(p.kept_experts.size());
            o.n_bytes = info.n_bytes / p.experts * p.kept_experts.size();
            o.kept_experts = p.kept_experts;
        }
        out.push_back(std::move(o));
    }
    if (out.empty()) return unexpected(make_error(codes::bad_selection, "tensors", "every tensor would be removed"));

    std::string recipe = "prune";
    std::vector<std::uint32_t> named_layers;
    for (std::uint32_t b = 0; b < p.blocks; ++b)
        if (p.drop_block[b] && std::find(layers.begin(), layers.end(), b) != layers.end()) named_layers.push_back(b);
    std::vector<std::uint32_t> named_experts = expert_list;
    std::sort(named_experts.begin(), named_experts.end());
    named_experts.erase(std::unique(named_experts.begin(), named_experts.end()), named_experts.end());
    if (!named_layers.empty()) recipe += " --layers " + list_text(named_layers);
    if (!named_experts.empty()) recipe += " --experts " + list_text(named_experts);
    if (rq.mtp) recipe += " --mtp";
    if (rq.only_mtp) recipe += " --only-mtp";
    if (rq.tensors) recipe += " --tensors " + *rq.tensors;
    p.plan_provenance(recipe);

    for (const planned& o : out) {
        pruned_tensor t;
        t.name = o.name;
        t.source_name = std::string(o.ref->info->name);
        t.type = o.ref->info->type;
        t.ne.assign(o.ne.begin(), o.ne.begin() + o.n_dims);
        t.n_bytes = o.n_bytes;
        t.sliced = !o.kept_experts.empty();
        p.report.output_tensor_bytes += o.n_bytes;
        p.report.tensors.push_back(std::move(t));
    }
    p.report.metadata = p.meta.shown;

    // The output: one file, or a split set within the limits (output_parts.hpp), then write_parts.
    auto src = gguf::model_source::open(m);
    if (!src) return unexpected(std::move(src).error());
    std::vector<detail::output_tensor> tensors;
    tensors.reserve(out.size());
    for (const planned& o : out) {
        detail::output_tensor t;
        t.name = o.name;
        t.type = o.ref->info->type;
        t.ne.assign(o.ne.begin(), o.ne.begin() + o.n_dims);
        t.n_bytes = o.n_bytes;
        t.source = [&m, &src, &o] { return o.kept_experts.empty() ? src->tensor(*o.ref) : gather_source(m, o); };
        tensors.push_back(std::move(t));
    }
    detail::output_request orq;
    orq.output = rq.output;
    orq.split_max_bytes = rq.split_max_bytes;
    orq.split_max_tensors = rq.split_max_tensors;
    orq.overwrite = rq.overwrite;
    if (m.find(gguf::alignment_key) != nullptr)
        if (auto a = m.get_as<std::uint32_t>(gguf::alignment_key)) orq.alignment = *a;
    for (const gguf::model_part& in : m.parts()) orq.inputs.push_back(in.path);
    auto layout = detail::lay_out(tensors, [&p](gguf::writer& w) { put_metadata(w, p); }, orq);
    if (!layout) return unexpected(std::move(layout).error());
    for (const detail::laid_out_part& part : layout->parts)
        p.report.outputs.push_back({part.path, part.file_size, part.tensor_count});
    if (rq.dry_run) return std::move(p.report);
    if (auto r = detail::write_out(*layout, rq.overwrite, events.progress); !r) return unexpected(std::move(r).error());
    p.report.written = true;
    return std::move(p.report);
}

}  // namespace

gguf::result<std::vector<std::uint32_t>> parse_index_list(std::string_view text, std::uint32_t count, std::string_view what) {
    try {
        std::vector<bool> named(count, false);
        std::vector<std::uint32_t> out;
        std::size_t start = 0;
        while (start <= text.size()) {
            const std::size_t comma = std::min(text.find(',', start), text.size());
            const std::string_view item = text.substr(start, comma - start);
            std::uint64_t first = 0, last = 0;
            if (!parse_item(item, first, last))
                return unexpected(make_error(codes::bad_selection, what,
                                             "'" + gguf::escape(item, '\0') + "' is not an index or a range (expected a list such as 3, 5-7 or 0,2,30-31)"));
            if (last >= count) {
                error e = make_error(codes::bad_selection, what,
                                     std::string(what == "experts" ? "expert " : "layer ") + std::to_string(last) +
                                         " does not exist: the model has " + std::to_string(count) +
                                         (count > 0 ? " (0-" + std::to_string(count - 1) + ")" : std::string()));
                e.expected = count;
                e.found = last;
                return unexpected(std::move(e));
            }
            for (std::uint64_t i = first; i <= last; ++i) named[static_cast<std::size_t>(i)] = true;
            start = comma + 1;
        }
        for (std::uint32_t i = 0; i < count; ++i)
            if (named[i]) out.push_back(i);
        if (!out.empty() && out.size() == count)
            return unexpected(make_error(codes::bad_selection, what, "the list names all " + std::to_string(count) + " of them"));
        return out;
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("reading a list"));
    }
}

gguf::result<prune_report> prune(const prune_request& request, const prune_events& events) noexcept {
    try {
        return run(request, events);
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("pruning a model"));
    } catch (...) {
        return unexpected(gguf::out_of_memory_error("pruning a model"));
    }
}

}  // namespace minfer::toolbox
