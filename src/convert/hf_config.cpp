// config.json into hf_config: the JSON read into a json_tree, then each field taken as
// convert_hf_to_gguf.py takes it (the table in hf_config.hpp) and checked.
#include "minfer/convert/hf_config.hpp"

#include <array>
#include <cerrno>
#include <cmath>
#include <limits>
#include <span>

#include "json_tree.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/gguf/text.hpp"
#include "capped_file.hpp"

namespace minfer::convert {

namespace {

// The reference's key lists (find_hparam), in its order.
using key_list = std::span<const std::string_view>;
constexpr std::array<std::string_view, 4> layers_keys{"n_layers", "num_hidden_layers", "n_layer", "num_layers"};
constexpr std::array<std::string_view, 6> context_keys{
    "max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length", "model_max_length"};
constexpr std::array<std::string_view, 3> hidden_keys{"hidden_size", "n_embd", "dim"};
constexpr std::array<std::string_view, 4> ffn_keys{"prefix_dense_intermediate_size", "intermediate_size",
                                                           "n_inner", "hidden_dim"};
constexpr std::array<std::string_view, 3> heads_keys{"num_attention_heads", "n_head", "n_heads"};
constexpr std::array<std::string_view, 2> kv_heads_keys{"num_key_value_heads", "n_kv_heads"};
constexpr std::array<std::string_view, 5> rope_theta_keys{"global_rope_theta", "rope_global_theta",
                                                                  "rope_theta_global", "rope_theta", "rotary_emb_base"};
constexpr std::array<std::string_view, 2> rms_eps_keys{"rms_norm_eps", "norm_eps"};
constexpr std::array<std::string_view, 3> experts_keys{"num_local_experts", "num_experts", "n_routed_experts"};
constexpr std::array<std::string_view, 3> experts_used_keys{"num_experts_per_tok", "num_experts_per_token",
                                                                    "top_k_experts"};
constexpr std::array<std::string_view, 1> vocab_keys{"vocab_size"};
constexpr std::array<std::string_view, 1> moe_ffn_keys{"moe_intermediate_size"};
constexpr std::array<std::string_view, 1> shared_ffn_keys{"shared_expert_intermediate_size"};
constexpr std::array<std::string_view, 1> head_dim_keys{"head_dim"};
constexpr std::array<std::string_view, 1> sparse_step_keys{"decoder_sparse_step"};

// Keys under which a multimodal config holds its text model (load_hparams renames them to text_config,
// which TextModel merges into the root).
constexpr std::array<std::string_view, 6> text_model_keys{"text_config", "llm_config", "lm_config",
                                                                  "thinker_config", "language_config", "lfm"};

constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();


// Thrown inside this file only; read_hf_config and parse_hf_config turn it into their result.
struct config_failure {
    gguf::error e;
};

class config_reader {
public:
    config_reader(const detail::json_tree& tree, std::string_view file)
        : root_(json_access::view(&tree, 0)), file_(file) {}

    void read(hf_config& c) {
        if (root_.kind() != json_kind::object)
            fail(codes::bad_model_config, root_, "", "the config is " + std::string(describe(root_.kind())) +
                                                        ", not a JSON object");
        architecture_of(c);
        c.num_hidden_layers = required_u32("num_hidden_layers", layers_keys, 1);
        c.vocab_size = required_u32("vocab_size", vocab_keys, 1);
        c.hidden_size = required_u32("hidden_size", hidden_keys, 1);
        c.intermediate_size = required_u32("intermediate_size", ffn_keys, 1);
        c.num_attention_heads = required_u32("num_attention_heads", heads_keys, 1);
        c.max_position_embeddings = required_u32("max_position_embeddings", context_keys, 1);
        c.rms_norm_eps = required_positive("rms_norm_eps", rms_eps_keys);
        const bool llama_like = c.arch == architecture::llama || c.arch == architecture::mistral;
        // LlamaModel.modify_tensors reads the KV heads without a default (KeyError)
        c.num_key_value_heads = llama_like ? required_u32("num_key_value_heads", kv_heads_keys, 1) : optional_u32(kv_heads_keys, 1);
        c.head_dim = optional_u32(head_dim_keys, 1);
        check_heads(c);
        rope_of(c);

        c.tie_word_embeddings = optional_bool("tie_word_embeddings");
        c.torch_dtype = optional_string(root_.member("torch_dtype").present() ? "torch_dtype" : "dtype");
        c.sliding_window = optional_uint("sliding_window");
        c.use_sliding_window = optional_bool("use_sliding_window");
        c.name_or_path = optional_string("_name_or_path");
        c.model_type = optional_string("model_type");
        const json_value quant = root_.member("quantization_config");
        c.has_quantization_config = quant.kind() == json_kind::object && quant.size() > 0;

        c.bos_token_id = token_id("bos_token_id");
        c.eos_token_id = token_id("eos_token_id");
        c.unk_token_id = token_id("unk_token_id");
        c.sep_token_id = token_id("sep_token_id");
        c.pad_token_id = token_id("pad_token_id");
        c.cls_token_id = token_id("cls_token_id");
        c.mask_token_id = token_id("mask_token_id");

        experts_of(c);
    }

private:
    [[noreturn]] void fail(gguf::errc code, const json_value& at, std::string_view subject, std::string detail,
                           std::uint64_t expected = 0, std::uint64_t found = 0) const {
        config_failure f;
        f.e.code = code;
        f.e.where = gguf::section::metadata;
        f.e.file = std::string(file_);
        f.e.offset = at.present() ? at.offset() : root_.offset();
        f.e.subject = subject;
        f.e.detail = std::move(detail);
        f.e.expected = expected;
        f.e.found = found;
        throw f;
    }
    [[noreturn]] void bad(const json_value& at, std::string_view subject, std::string detail, std::uint64_t expected = 0,
                          std::uint64_t found = 0) const {
        fail(codes::bad_model_config, at, subject, std::move(detail), expected, found);
    }

    static bool same_value(const json_value& a, const json_value& b) {
        if (a.kind() != b.kind()) return false;
        switch (a.kind()) {
            case json_kind::null: return true;
            case json_kind::boolean: return a.as_bool() == b.as_bool();
            case json_kind::number: return a.is_integer() == b.is_integer() && a.as_double() == b.as_double() &&
                                           a.as_int() == b.as_int() && a.as_uint() == b.as_uint();
            case json_kind::string: return a.as_string() == b.as_string();
            default: return false;  // arrays and objects are never hyperparameters here
        }
    }

    // find_hparam: the first key present wins; any other key of the list that is present must agree.
    // `key` is the key found (the list's first when none is).
    json_value hparam(key_list keys, std::string_view& key) const {
        json_value chosen;
        for (std::string_view k : keys) {
            const json_value v = root_.member(k);
            if (!v.present()) continue;
            if (!chosen.present()) {
                chosen = v;
                key = k;
            } else if (!same_value(chosen, v)) {
                bad(v, k, "both " + detail::in_quotes(key) + " and " + detail::in_quotes(k) +
                              " are given, with different values (convert_hf_to_gguf.py reads one or the other "
                              "depending on where it looks)");
            }
        }
        if (!chosen.present()) key = *keys.begin();
        return chosen;
    }

    static std::string looked_for(key_list keys) {
        if (keys.size() < 2) return "absent";
        std::string s = "absent (looked for";
        const char* separator = " ";
        for (std::string_view k : keys) {
            s += separator;
            s += k;
            separator = ", ";
        }
        return s + ")";
    }

    std::uint64_t integer_of(const json_value& v, std::string_view key) const {
        if (const std::optional<std::uint64_t> u = v.as_uint()) return *u;
        if (v.kind() == json_kind::number && v.is_integer())
            bad(v, key, "a negative number, " + std::to_string(*v.as_int()) + "; expected a non-negative integer");
        if (v.kind() == json_kind::number)
            bad(v, key, "a number with a fraction or an exponent (or beyond 64 bits); expected an integer");
        bad(v, key, std::string(describe(v.kind())) + "; expected an integer");
    }

    std::uint32_t checked_u32(const json_value& v, std::string_view key, std::uint64_t min) const {
        const std::uint64_t u = integer_of(v, key);
        if (u < min) bad(v, key, std::to_string(u) + " is below " + std::to_string(min), min, u);
        if (u > u32_max) bad(v, key, std::to_string(u) + " does not fit the 32 bits GGUF stores it in", u32_max, u);
        return static_cast<std::uint32_t>(u);
    }

    // `name`: what an absent field is called (the Hugging Face key, not always the list's first).
    std::uint32_t required_u32(std::string_view name, key_list keys,
                               std::uint64_t min) const {
        std::string_view key;
        const json_value v = hparam(keys, key);
        if (!v.present()) bad(v, name, looked_for(keys));
        if (v.kind() == json_kind::null) bad(v, key, "null; expected an integer");
        return checked_u32(v, key, min);
    }

    std::optional<std::uint32_t> optional_u32(key_list keys, std::uint64_t min) const {
        std::string_view key;
        const json_value v = hparam(keys, key);
        if (v.is_none()) return std::nullopt;
        return checked_u32(v, key, min);
    }

    std::optional<std::uint64_t> optional_uint(std::string_view key) const {
        const json_value v = root_.member(key);
        if (v.is_none()) return std::nullopt;
        return integer_of(v, key);
    }

    double positive_number(const json_value& v, std::string_view key) const {
        const std::optional<double> d = v.as_double();
        if (!d) bad(v, key, std::string(describe(v.kind())) + "; expected a number");
        if (!std::isfinite(*d) || *d <= 0) bad(v, key, "expected a finite number above 0");
        return *d;
    }

    double required_positive(std::string_view name, key_list keys) const {
        std::string_view key;
        const json_value v = hparam(keys, key);
        if (!v.present()) bad(v, name, looked_for(keys));
        if (v.kind() == json_kind::null) bad(v, key, "null; expected a number");
        return positive_number(v, key);
    }

    std::optional<bool> optional_bool(std::string_view key) const {
        const json_value v = root_.member(key);
        if (v.is_none()) return std::nullopt;
        if (const std::optional<bool> b = v.as_bool()) return b;
        bad(v, key, std::string(describe(v.kind())) + "; expected true or false");
    }

    std::optional<std::string> optional_string(std::string_view key) const {
        const json_value v = root_.member(key);
        if (v.is_none()) return std::nullopt;
        if (const std::optional<std::string_view> s = v.as_string()) return std::string(*s);
        bad(v, key, std::string(describe(v.kind())) + "; expected a string");
    }

    // SpecialVocab._try_load_from_config_json: an int is used and a negative one raises; a list is
    // ignored there but kept here (Llama 3's eos_token_id lists the end-of-turn ids).
    special_token_id token_id(std::string_view key) const {
        special_token_id t;
        const json_value v = root_.member(key);
        if (v.is_none()) return t;
        const auto one = [&](const json_value& item) -> std::int64_t {
            if (item.kind() == json_kind::number && item.is_integer() && item.as_int() && *item.as_int() < 0)
                bad(item, key, "a negative token id, " + std::to_string(*item.as_int()) +
                                   " (convert_hf_to_gguf.py refuses it too)");
            const std::uint64_t u = integer_of(item, key);
            if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                bad(item, key, "a token id beyond 63 bits");
            return static_cast<std::int64_t>(u);
        };
        if (v.kind() == json_kind::array) {
            t.listed = true;
            for (std::size_t i = 0; i < v.size(); ++i) t.ids.push_back(one(v.at(i)));
            return t;
        }
        if (v.kind() != json_kind::number) bad(v, key, std::string(describe(v.kind())) + "; expected a token id or a list of them");
        t.ids.push_back(one(v));
        return t;
    }

    void architecture_of(hf_config& c) const {
        const json_value list = root_.member("architectures");
        if (list.is_none() || (list.kind() == json_kind::array && list.size() == 0))
            bad(list, "architectures", "no architecture is named (architectures is absent, null or empty)");
        if (list.kind() != json_kind::array)
            bad(list, "architectures", std::string(describe(list.kind())) + "; expected a list of class names");
        const json_value first = list.at(0);
        const std::optional<std::string_view> name = first.as_string();
        if (!name) bad(first, "architectures", std::string(describe(first.kind())) + "; expected a class name");
        c.architecture_name = std::string(*name);
        for (std::string_view k : text_model_keys) {
            const json_value inner = root_.member(k);
            if (inner.present())
                fail(codes::unsupported_architecture, inner, *name,
                     "a multimodal config: its text model, in " + detail::in_quotes(k) +
                         ", is not converted (supported: " + std::string(supported_architecture_names()) + ")");
        }
        const std::optional<architecture> a = architecture_from_hf_name(*name);
        if (!a)
            fail(codes::unsupported_architecture, first, *name,
                 "not converted (supported: " + std::string(supported_architecture_names()) + ")");
        c.arch = *a;
        if (c.arch == architecture::llama || c.arch == architecture::mistral) {
            // LlamaModel turns these into EAGLE-3 draft models (another GGUF architecture)
            const json_value draft = root_.member("draft_vocab_size");
            const json_value layers = root_.member("num_hidden_layers");
            if (draft.present() && layers.as_uint() == std::optional<std::uint64_t>(1))
                fail(codes::unsupported_architecture, draft, *name,
                     "an EAGLE-3 draft model (draft_vocab_size with one layer) is not converted");
            const json_value speculator = root_.member("transformer_layer_config");
            if (speculator.present())
                fail(codes::unsupported_architecture, speculator, *name,
                     "an EAGLE-3 speculator (transformer_layer_config) is not converted");
        }
    }

    void check_heads(const hf_config& c) const {
        if (c.num_attention_heads % c.kv_heads() != 0) {
            std::string_view key;
            const json_value v = hparam(kv_heads_keys, key);
            bad(v, key,
                std::to_string(c.kv_heads()) + " KV heads do not divide " + std::to_string(c.num_attention_heads) +
                    " attention heads",
                c.num_attention_heads, c.kv_heads());
        }
        if (!c.head_dim && c.hidden_size % c.num_attention_heads != 0) {
            std::string_view key;
            const json_value v = hparam(hidden_keys, key);
            bad(v, key,
                std::to_string(c.hidden_size) + " is not a multiple of the " + std::to_string(c.num_attention_heads) +
                    " attention heads, and head_dim is absent",
                c.num_attention_heads, c.hidden_size);
        }
    }

    // TextModel.__init__ and set_gguf_parameters: the rope parameters are rope_parameters (null: {}),
    // else rope_scaling; without full_attention/sliding_attention sections, a rope_theta or rope_type
    // absent from them is taken from the root (rope_theta's key list) or from "type".
    void rope_of(hf_config& c) const {
        const json_value rp = rope_parameters_of(root_);
        if (rp.present() && rp.kind() != json_kind::object && rp.kind() != json_kind::null)
            bad(rp, root_.member("rope_parameters").present() ? "rope_parameters" : "rope_scaling",
                std::string(describe(rp.kind())) + "; expected an object");
        const bool sections = rp.member("full_attention").present() || rp.member("sliding_attention").present();
        json_value theta;
        json_value type;
        std::string_view theta_key = "rope_theta";
        std::string_view type_key = "rope_type";
        if (sections) {
            const json_value full = rp.member("full_attention");
            if (full.present() && full.kind() != json_kind::object)
                bad(full, "full_attention", std::string(describe(full.kind())) + "; expected an object");
            const json_value params = full.present() ? full : rp;
            theta = params.member("rope_theta");
            type = params.member("rope_type");
        } else {
            if (rp.member("rope_theta").present())
                theta = rp.member("rope_theta");
            else
                theta = hparam(rope_theta_keys, theta_key);
            type = rp.member("rope_type");
            if (!type.present()) {
                type = rp.member("type");
                type_key = "type";
            }
        }
        if (!theta.is_none()) c.rope_theta = positive_number(theta, theta_key);
        if (!type.is_none()) {
            const std::optional<std::string_view> s = type.as_string();
            if (!s) bad(type, type_key, std::string(describe(type.kind())) + "; expected a string");
            c.rope_type = std::string(*s);
        }
    }

    void experts_of(hf_config& c) const {
        const bool moe = is_moe(c.arch);
        c.num_experts = moe ? required_u32("num_experts", experts_keys, 1) : optional_u32(experts_keys, 0);
        c.num_experts_per_tok = moe ? required_u32("num_experts_per_tok", experts_used_keys, 1) : optional_u32(experts_used_keys, 0);
        c.moe_intermediate_size = moe ? required_u32("moe_intermediate_size", moe_ffn_keys, 1) : optional_u32(moe_ffn_keys, 0);
        c.shared_expert_intermediate_size = optional_u32(shared_ffn_keys, 0);
        c.norm_topk_prob = optional_bool("norm_topk_prob");
        c.decoder_sparse_step = optional_u32(sparse_step_keys, moe ? 1 : 0);
        if (moe && *c.num_experts_per_tok > *c.num_experts) {
            std::string_view key;
            const json_value v = hparam(experts_used_keys, key);
            bad(v, key,
                std::to_string(*c.num_experts_per_tok) + " experts per token, but there are " +
                    std::to_string(*c.num_experts),
                *c.num_experts, *c.num_experts_per_tok);
        }
        const json_value layers = root_.member("mlp_only_layers");
        if (layers.is_none()) return;
        if (layers.kind() != json_kind::array)
            bad(layers, "mlp_only_layers", std::string(describe(layers.kind())) + "; expected a list of layer indices");
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const json_value item = layers.at(i);
            const std::uint64_t layer = integer_of(item, "mlp_only_layers");
            if (layer >= c.num_hidden_layers)
                bad(item, "mlp_only_layers",
                    "layer " + std::to_string(layer) + " of " + std::to_string(c.num_hidden_layers), c.num_hidden_layers,
                    layer);
            c.mlp_only_layers.push_back(static_cast<std::uint32_t>(layer));
        }
    }

public:
    static json_value rope_parameters_of(const json_value& root) {
        // hparams.get("rope_parameters", hparams.get("rope_scaling")) or {}
        const json_value parameters = root.member("rope_parameters");
        return parameters.present() ? parameters : root.member("rope_scaling");
    }

private:
    json_value root_;
    std::string_view file_;
};

gguf::error config_error(std::string file, std::uint64_t offset, std::string detail) {
    gguf::error e;
    e.code = codes::bad_model_config;
    e.where = gguf::section::metadata;
    e.file = std::move(file);
    e.offset = offset;
    e.detail = std::move(detail);
    return e;
}

}  // namespace

json_value hf_config::raw() const& noexcept { return json_access::view(document.get(), 0); }

json_value hf_config::find_hparam(std::initializer_list<std::string_view> keys) const& noexcept {
    const json_value root = raw();
    for (std::string_view k : keys)
        if (const json_value v = root.member(k); v.present()) return v;
    return {};
}

json_value hf_config::rope_parameters() const& noexcept {
    const json_value rp = config_reader::rope_parameters_of(raw());
    return rp.kind() == json_kind::object ? rp : json_value();
}

gguf::result<hf_config> parse_hf_config(std::string_view text, std::string file) noexcept {
    try {
        auto tree = std::make_shared<detail::json_tree>();
        detail::json_failure failure;
        if (!detail::build_json_tree(text, 0, detail::json_tree_limits{}, *tree, failure)) {
            if (failure.out_of_memory) return gguf::unexpected(gguf::out_of_memory_error("reading config.json"));
            return gguf::unexpected(config_error(std::move(file), failure.offset, "not valid JSON: " + failure.detail));
        }
        hf_config c;
        c.file = file;
        c.document = tree;
        config_reader(*tree, c.file).read(c);
        return c;
    } catch (config_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {  // std::bad_alloc
        return gguf::unexpected(gguf::out_of_memory_error("reading config.json"));
    }
}

gguf::result<hf_config> read_hf_config(const std::filesystem::path& path) noexcept {
    auto text = detail::read_capped_file(path, hf_config_max_bytes, codes::bad_model_config, detail::when_missing::refuse);
    if (!text) return gguf::unexpected(std::move(text).error());
    try {
        return parse_hf_config(*text, path.string());
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading config.json"));
    }
}

}  // namespace minfer::convert
