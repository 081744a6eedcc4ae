// mergekit's merge configuration, read and validated: the tree from assemble_config_yaml.cpp into an
// assemble_config, with mergekit's rules (the header names the file and function of each).
#include "minfer/toolbox/assemble_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <new>
#include <string>
#include <utility>

#include "assemble_config_yaml.hpp"
#include "minfer/gguf/read_capped.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::toolbox {

namespace {

using config_yaml::document;
using config_yaml::node;
using config_yaml::plain_kind;

// ---- names ----

constexpr std::string_view method_names[] = {"passthrough", "linear", "slerp", "task_arithmetic", "ties"};
constexpr std::string_view supported_methods = "passthrough, linear, slerp, task_arithmetic, ties";
// mergekit's other methods (merge_methods/registry.py STATIC_MERGE_METHODS and the @merge_method ones
// its __init__.py imports: multislerp, nearswap, ram, ramplus_tl, sce).
constexpr std::string_view other_mergekit_methods[] = {
    "nuslerp",    "model_stock", "arcee_fusion", "karcher",     "dare_ties",    "dare_linear",
    "breadcrumbs", "breadcrumbs_ties", "della", "della_linear", "multislerp",   "nearswap",
    "ram",        "ramplus_tl",  "sce"};

// MergeMethod.parameters() (per tensor) and tensor_parameters() (per model) of each method.
constexpr method_parameter linear_parameters[] = {
    {"weight", true, true, std::nullopt},
    {"normalize", false, false, 1.0},
};
constexpr method_parameter slerp_parameters[] = {
    {"t", false, true, std::nullopt},
};
constexpr method_parameter passthrough_parameters[] = {
    {"scale", true, false, std::nullopt},
};
constexpr method_parameter task_arithmetic_parameters[] = {
    {"weight", true, true, std::nullopt}, {"density", true, false, 1.0}, {"int8_mask", false, false, 0.0},
    {"normalize", false, false, 0.0},     {"rescale", false, false, 0.0}, {"lambda", false, false, 1.0},
};
constexpr method_parameter ties_parameters[] = {
    {"weight", true, true, std::nullopt}, {"density", true, false, 1.0}, {"int8_mask", false, false, 0.0},
    {"normalize", false, false, 1.0},     {"rescale", false, false, 0.0}, {"lambda", false, false, 1.0},
};

constexpr std::string_view top_keys =
    "merge_method, base_model, models, slices, parameters, dtype, out_dtype, tokenizer_source, tokenizer, "
    "chat_template, name, tensors";

// ---- failures: thrown inside, returned as data at the API ----

struct config_failure {
    gguf::error e;
};

std::string num(std::uint64_t v) { return std::to_string(v); }

// Text quoted for a message: escaped, at most 60 bytes of it.
std::string shown(std::string_view s) {
    std::string q = "'";
    q += gguf::escape(s.substr(0, 60));
    if (s.size() > 60) q += "...";
    q += "'";
    return q;
}

// A double as Python's repr writes it (the shortest text that reads back the same).
std::string show_number(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string join_path(std::string_view base, std::string_view key) {
    if (base.empty()) return std::string(key);
    std::string p(base);
    p += '.';
    p += key;
    return p;
}
std::string index_path(std::string_view base, std::size_t i) {
    std::string p(base);
    p += '[';
    p += num(i);
    p += ']';
    return p;
}

bool pyyaml_bool(const node& n, bool& v) { return n.type == node::kind::scalar && !n.quoted && config_yaml::bool_word(n.text, v); }

class reader {
public:
    reader(const document& doc, std::string_view file) : doc_(doc), file_(file) {}

    assemble_config read() {
        assemble_config c;
        c.file = std::string(file_);
        top(c);
        check(c);
        return c;
    }

private:
    const document& doc_;
    std::string_view file_;
    // where each top-level key was (for the cross checks' errors)
    std::uint64_t root_offset_ = 0;
    std::optional<std::uint64_t> parameters_offset_;

    const node& at(std::uint32_t i) const { return doc_.at(i); }

    [[noreturn]] void fail(gguf::errc code, std::uint64_t offset, std::string_view subject, std::string detail) const {
        config_failure f;
        f.e.code = code;
        f.e.offset = offset;
        f.e.subject = subject;
        f.e.file = std::string(file_);
        f.e.detail = std::move(detail);
        throw f;
    }
    [[noreturn]] void bad(const node& n, std::string_view subject, std::string detail) const {
        fail(codes::bad_config, n.offset, subject, std::move(detail));
    }
    [[noreturn]] void unsupported(const node& n, std::string_view subject, std::string detail) const {
        fail(codes::unsupported_config, n.offset, subject, std::move(detail));
    }

    // What a node is, for "found ...".
    static std::string found(const node& n) {
        switch (n.type) {
            case node::kind::null: return "nothing";
            case node::kind::sequence: return "a list";
            case node::kind::map: return "a map";
            case node::kind::scalar: break;
        }
        if (n.quoted) return "the text " + shown(n.text);
        switch (config_yaml::resolve(n.text)) {
            case plain_kind::boolean: return "the boolean " + shown(n.text);
            case plain_kind::integer:
            case plain_kind::floating: return "the number " + shown(n.text);
            case plain_kind::timestamp: return "the date " + shown(n.text);
            default: break;
        }
        return "the text " + shown(n.text);
    }

    // ---- kinds ----

    bool is_null(const node& n) const { return n.type == node::kind::null; }

    void expect_map(const node& n, std::string_view path, std::string_view what) const {
        if (n.type != node::kind::map) bad(n, path, std::string("expected ") + std::string(what) + ", found " + found(n));
    }
    void expect_list(const node& n, std::string_view path, std::string_view what) const {
        if (n.type != node::kind::sequence) bad(n, path, std::string("expected ") + std::string(what) + ", found " + found(n));
    }

    // A string as pydantic's str takes it: a quoted scalar, or a plain one PyYAML reads as a string.
    std::string text(const node& n, std::string_view path, std::string_view what) const {
        if (n.type == node::kind::scalar && (n.quoted || config_yaml::resolve(n.text) == plain_kind::string)) return n.text;
        std::string d = std::string("expected ") + std::string(what) + ", found " + found(n);
        if (n.type == node::kind::scalar) d += " (mergekit's YAML reader does not make text of it: quote it)";
        bad(n, path, std::move(d));
    }

    // A number of a parameter setting (pydantic's float in lax mode: a number, a boolean, numeric text).
    double number(const node& n, std::string_view path) const {
        bool b = false;
        if (pyyaml_bool(n, b)) return b ? 1.0 : 0.0;
        if (n.type != node::kind::scalar) bad(n, path, "expected a number, found " + found(n));
        double v = 0;
        std::string why;
        if (decimal(n.text, v, why)) return v;
        if (why.empty()) {
            const plain_kind k = n.quoted ? plain_kind::string : config_yaml::resolve(n.text);
            const bool special = n.text.find_first_of("iInN") != std::string::npos;  // .inf, .nan
            if (k == plain_kind::floating && special)
                why = "expected a finite number, found " + shown(n.text) + " (a merge cannot use infinity or NaN)";
            else if (k == plain_kind::integer || k == plain_kind::floating)
                why = "expected a plain decimal number, found " + shown(n.text) +
                      " (mergekit's YAML 1.1 reader gives 0x, 0b, sexagesimal and _-separated numbers values a plain "
                      "reading would not)";
            else
                why = "expected a number, found " + found(n);
        }
        bad(n, path, std::move(why));
    }

    // Decimal: [+-]? (digits (. digits?)? | . digits) ([eE] [+-]? digits)?; an integer with a leading zero
    // is refused (PyYAML: octal). `why` is set when the text has the form but not an acceptable value.
    static bool decimal(std::string_view s, double& v, std::string& why) {
        std::size_t i = 0;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        const std::size_t int_start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        const std::size_t int_digits = i - int_start;
        std::size_t frac_digits = 0;
        bool point = false;
        if (i < s.size() && s[i] == '.') {
            point = true;
            ++i;
            const std::size_t f = i;
            while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
            frac_digits = i - f;
        }
        if (int_digits + frac_digits == 0) return false;
        bool exp = false;
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
            exp = true;
            ++i;
            if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
            const std::size_t d = i;
            while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
            if (i == d) return false;
        }
        if (i != s.size()) return false;
        if (!point && !exp && int_digits > 1 && s[int_start] == '0') {
            why = "expected a number, found " + shown(s) +
                  " (a leading zero: mergekit's YAML 1.1 reader takes it as octal; write it without)";
            return false;
        }
        const char* first = s.data() + (s[0] == '+' ? 1 : 0);
        auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
            why = "expected a finite number, found " + shown(s) + " (out of the range of a double)";
            return false;
        }
        return true;
    }

    // A whole number >= 0 (layer_range): digits, plain or quoted (pydantic's int takes "5").
    std::uint64_t whole(const node& n, std::string_view path) const {
        if (n.type == node::kind::scalar) {
            std::string_view s = n.text;
            const bool negative = !s.empty() && s[0] == '-';
            if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
            if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                if (negative) bad(n, path, "expected a layer index >= 0, found " + shown(n.text));
                if (s.size() > 1 && s[0] == '0')
                    bad(n, path, "expected a layer index, found " + shown(n.text) +
                                     " (a leading zero: mergekit's YAML 1.1 reader takes it as octal; write it without)");
                if (s.size() > 9)
                    bad(n, path, "expected a layer index of at most " + num(max_config_layer) + ", found " + shown(n.text));
                std::uint64_t v = 0;
                for (char c : s) v = v * 10 + static_cast<std::uint64_t>(c - '0');
                return v;
            }
        }
        bad(n, path, "expected a whole number (a layer index), found " + found(n));
    }

    // ---- maps ----

    template <class F>
    void entries(const node& map, F&& f) const {
        for (std::size_t k = 0; k + 1 < map.children.size(); k += 2) f(at(map.children[k]), at(map.children[k + 1]));
    }

    // ---- model sources ----

    model_source source(const node& n, std::string_view path) const {
        model_source m;
        m.offset = n.offset;
        if (n.type == node::kind::map) {  // ModelReference's map form: {model: path or {path, revision}, lora, ...}
            const node* model = nullptr;
            entries(n, [&](const node& k, const node& v) {
                const std::string p = join_path(path, k.text);
                if (k.text == "model") {
                    model = &v;
                } else if (k.text == "lora" || k.text == "override_architecture") {
                    if (!is_null(v))
                        unsupported(k, p,
                                    k.text == "lora" ? "LoRA adapters (a model with a LoRA merged in first) are not supported; "
                                                       "merge the adapter into a GGUF model and name that"
                                                     : "override_architecture is not supported: the GGUF model's own "
                                                       "architecture is used");
                } else {
                    unsupported(k, p, "unknown key of a model reference; the keys are: model, lora, override_architecture");
                }
            });
            if (model == nullptr) bad(n, join_path(path, "model"), "expected the model's path in a model reference map");
            const std::string mp = join_path(path, "model");
            if (model->type == node::kind::map) {  // ModelPath: {path, revision}
                const node* p = nullptr;
                entries(*model, [&](const node& k, const node& v) {
                    const std::string kp = join_path(mp, k.text);
                    if (k.text == "path") {
                        p = &v;
                    } else if (k.text == "revision") {
                        if (!is_null(v))
                            unsupported(k, kp, "a revision is not supported here; write it in the source: hf://OWNER/REPO/FILE@REV");
                    } else {
                        unsupported(k, kp, "unknown key of a model path; the keys are: path, revision");
                    }
                });
                if (p == nullptr) bad(*model, join_path(mp, "path"), "expected the model's path");
                m.text = text(*p, join_path(mp, "path"), "the model's path (text)");
                m.offset = p->offset;
            } else {
                m.text = text(*model, mp, "the model's path (text)");
                m.offset = model->offset;
            }
        } else {
            m.text = text(n, path, "a model (a path or URL)");
            // ModelReference.validate_string: "a+b" is model a with LoRA b; more pieces do not parse.
            const auto plus = std::count(m.text.begin(), m.text.end(), '+');
            if (plus == 1)
                unsupported(n, path,
                            "a model with a LoRA adapter (" + shown(m.text) +
                                ": mergekit reads 'model+lora') is not supported; merge the adapter into a GGUF model "
                                "first (a path with '+' in it is written {model: {path: ...}})");
            if (plus > 1)
                bad(n, path, "mergekit cannot parse " + shown(m.text) + " (more than one '+'); a path with '+' in it is written "
                             "{model: {path: ...}}");
        }
        if (m.text.empty()) bad(n, path, "expected a model (a path or URL), found empty text");
        if (m.text.find('\0') != std::string::npos) bad(n, path, "a model path cannot contain a NUL character");
        return m;
    }

    std::optional<model_source> optional_source(const node& n, std::string_view path) const {
        if (is_null(n)) return std::nullopt;
        return source(n, path);
    }

    // ---- parameters ----

    scalar_or_gradient scalar_or_list(const node& n, std::string_view path) const {
        scalar_or_gradient v;
        if (n.type == node::kind::sequence) {
            if (n.children.empty())
                bad(n, path, "expected a number or a gradient (a list of numbers), found an empty list (mergekit fails "
                             "on it: config.py evaluate_setting indexes it)");
            v.gradient = true;
            v.numbers.reserve(n.children.size());
            for (std::size_t i = 0; i < n.children.size(); ++i) {
                const node& item = at(n.children[i]);
                if (item.type != node::kind::scalar)
                    bad(item, index_path(path, i), "expected a number of the gradient, found " + found(item));
                v.numbers.push_back(number(item, index_path(path, i)));
            }
            return v;
        }
        if (n.type != node::kind::scalar)
            bad(n, path, "expected a number or a gradient (a list of numbers), found " + found(n));
        v.numbers.push_back(number(n, path));
        return v;
    }

    parameter_setting setting(const node& n, std::string_view name, std::string_view path) const {
        parameter_setting s;
        s.name = std::string(name);
        s.offset = n.offset;
        if (n.type == node::kind::map)
            bad(n, path,
                "a single {filter, value} map: mergekit's schema takes it but config.py evaluate_setting fails on it "
                "('Unexpected setting value'); write a list of one entry: [{filter: ..., value: ...}]");
        if (n.type == node::kind::sequence && !n.children.empty() && at(n.children[0]).type == node::kind::map) {
            for (std::size_t i = 0; i < n.children.size(); ++i) {
                const node& e = at(n.children[i]);
                const std::string ep = index_path(path, i);
                if (e.type != node::kind::map)
                    bad(e, ep, "expected a {filter, value} entry like the list's first, found " + found(e) +
                                   " (a list is either numbers, a gradient, or {filter, value} entries)");
                parameter_condition c;
                c.offset = e.offset;
                const node* value = nullptr;
                entries(e, [&](const node& k, const node& v) {
                    const std::string kp = join_path(ep, k.text);
                    if (k.text == "filter") {
                        if (!is_null(v)) c.filter = text(v, kp, "a filter (text found in tensor names)");
                    } else if (k.text == "value") {
                        value = &v;
                    } else {
                        unsupported(k, kp, "unknown key of a conditional parameter; the keys are: filter, value");
                    }
                });
                if (value == nullptr) bad(e, join_path(ep, "value"), "expected a value in each {filter, value} entry");
                c.value = scalar_or_list(*value, join_path(ep, "value"));
                s.conditions.push_back(std::move(c));
            }
            return s;
        }
        if (is_null(n)) bad(n, path, "expected a number, a gradient or a conditional list, found nothing");
        s.value = scalar_or_list(n, path);
        return s;
    }

    parameter_map parameters(const node& n, std::string_view path) const {
        parameter_map m;
        if (is_null(n)) return m;
        expect_map(n, path, "a map of parameters (name: value)");
        entries(n, [&](const node& k, const node& v) {
            const std::string p = join_path(path, k.text);
            m.settings.push_back(setting(v, k.text, p));
        });
        return m;
    }

    // ---- the top level ----

    void top(assemble_config& c) {
        const node& root = at(doc_.root);
        root_offset_ = root.offset;
        expect_map(root, {}, "a map (merge_method, models or slices, ...) at the top of the config");
        const node* method = nullptr;
        const node* tokenizer_source = nullptr;
        const node* tokenizer = nullptr;
        entries(root, [&](const node& k, const node& v) {
            const std::string& key = k.text;
            if (key == "merge_method") {
                method = &v;
            } else if (key == "base_model") {
                c.base_model = optional_source(v, key);
            } else if (key == "models") {
                models(c, v);
            } else if (key == "slices") {
                slices(c, v);
            } else if (key == "parameters") {
                c.parameters = parameters(v, key);
                parameters_offset_ = v.offset;
            } else if (key == "dtype") {
                c.dtype = dtype(v, key);
            } else if (key == "out_dtype") {
                c.out_dtype = dtype(v, key);
            } else if (key == "tokenizer_source") {
                if (!is_null(v)) tokenizer_source = &v;
            } else if (key == "tokenizer") {
                if (!is_null(v)) tokenizer = &v;
            } else if (key == "chat_template") {
                chat_template(v);
            } else if (key == "name") {
                if (!is_null(v)) {
                    if (v.type != node::kind::scalar) bad(v, key, "expected the merge's name (text), found " + found(v));
                    c.name = v.text;
                }
            } else if (key == "tensors") {
                tensors(c, v);
            } else if (key == "modules") {
                unsupported(k, key,
                            "modules (mergekit's per-module merges of multi-module models) are not supported; the keys "
                            "are: " + std::string(top_keys));
            } else {
                unsupported(k, key, "unknown key; the keys are: " + std::string(top_keys));
            }
        });
        if (method == nullptr)
            fail(codes::bad_config, root.offset, "merge_method",
                 "expected merge_method (one of " + std::string(supported_methods) + ")");
        c.method = merge_method_of(*method);
        if (tokenizer_source != nullptr && tokenizer != nullptr)
            bad(*tokenizer, "tokenizer",
                "tokenizer and tokenizer_source are both given; mergekit refuses it (config.py validate_tokenizer): "
                "keep one");
        if (tokenizer_source != nullptr) c.tokenizer = tokenizer_of(*tokenizer_source, "tokenizer_source", c);
        if (tokenizer != nullptr) c.tokenizer = tokenizer_map(*tokenizer, c);
    }

    merge_method merge_method_of(const node& n) const {
        const std::string name = text(n, "merge_method", "a merge method's name");
        for (std::size_t i = 0; i < std::size(method_names); ++i)
            if (name == method_names[i]) return static_cast<merge_method>(i);
        for (std::string_view other : other_mergekit_methods)
            if (name == other)
                unsupported(n, "merge_method", name + " is not implemented; supported: " + std::string(supported_methods));
        bad(n, "merge_method", "mergekit has no merge method " + shown(name) + "; supported: " + std::string(supported_methods));
    }

    std::optional<config_dtype> dtype(const node& n, std::string_view path) const {
        if (is_null(n)) return std::nullopt;
        const std::string whole = text(n, path, "a dtype (bfloat16, float16 or float32)");
        std::string_view s = whole;
        if (s.starts_with("torch.")) s.remove_prefix(6);  // common.py dtype_from_name
        if (s == "float32") return config_dtype::float32;
        if (s == "float16") return config_dtype::float16;
        if (s == "bfloat16") return config_dtype::bfloat16;
        if (s == "int64") unsupported(n, path, "int64 is not supported (no merge writes integer weights); supported: bfloat16, float16, float32");
        bad(n, path, "expected bfloat16, float16 or float32 (as mergekit's dtype_from_name reads them), found " + shown(whole));
    }

    void chat_template(const node& n) const {
        if (is_null(n)) return;
        const std::string t = text(n, "chat_template", "a chat template (text)");
        if (t.empty()) return;  // falsy: mergekit sets none (merge.py _set_chat_template)
        unsupported(n, "chat_template",
                    "a chat template other than the base model's is not supported (the output keeps the base model's "
                    "tokenizer and template); remove chat_template, or set it afterwards with `minfer edit "
                    "--chat-template`");
    }

    // tokenizer_source / tokenizer.source: "union", "base", or a model (tokenizer/config.py, config.py).
    tokenizer_choice tokenizer_of(const node& n, std::string_view path, const assemble_config& c) const {
        if (n.type == node::kind::scalar) {
            const std::string s = text(n, path, "union, base or a model");
            if (s == "base") return tokenizer_choice::base;
            if (s == "union")
                unsupported(n, path,
                            "union (a vocabulary made of every model's) is not supported: only the base model's tokenizer is "
                            "kept; supported: base, or no tokenizer_source (the base model's tokenizer as it is)");
        }
        const model_source m = source(n, path);
        if (c.base_model && m.text == c.base_model->text) return tokenizer_choice::base;
        unsupported(n, path,
                    "another model's tokenizer (" + shown(m.text) +
                        ") is not supported: only the base model's is kept; supported: base, the base model's name, or "
                        "none");
    }

    tokenizer_choice tokenizer_map(const node& n, const assemble_config& c) const {
        expect_map(n, "tokenizer", "a map {source, tokens, pad_to_multiple_of}");
        const node* src = nullptr;
        entries(n, [&](const node& k, const node& v) {
            const std::string p = join_path("tokenizer", k.text);
            if (k.text == "source") {
                src = &v;
            } else if (k.text == "tokens") {
                if (is_null(v)) return;
                expect_map(v, p, "a map of tokens");
                if (!v.children.empty())
                    unsupported(v, p, "tokens (embeddings added or taken from other models by token) are not supported; "
                                      "the output keeps the base model's tokenizer and embeddings");
            } else if (k.text == "pad_to_multiple_of") {
                if (!is_null(v))
                    unsupported(v, p, "pad_to_multiple_of (padding the vocabulary) is not supported; the output keeps the "
                                      "base model's vocabulary");
            } else {
                unsupported(k, p, "unknown key of tokenizer; the keys are: source, tokens, pad_to_multiple_of");
            }
        });
        if (src == nullptr || is_null(*src))  // TokenizerConfig.source defaults to "union"
            unsupported(n, "tokenizer.source",
                        "tokenizer without source means source: union (a vocabulary made of every model's), which is not "
                        "supported; write source: base");
        return tokenizer_of(*src, "tokenizer.source", c);
    }

    void models(assemble_config& c, const node& n) const {
        if (is_null(n)) return;
        expect_list(n, "models", "a list of models ({model: ..., parameters: ...})");
        for (std::size_t i = 0; i < n.children.size(); ++i) {
            const node& e = at(n.children[i]);
            const std::string p = index_path("models", i);
            expect_map(e, p, "a map {model: ..., parameters: ...}");
            input_model m;
            m.offset = e.offset;
            bool have_model = false;
            entries(e, [&](const node& k, const node& v) {
                const std::string kp = join_path(p, k.text);
                if (k.text == "model") {
                    m.model = source(v, kp);
                    have_model = true;
                } else if (k.text == "parameters") {
                    m.parameters = parameters(v, kp);
                } else {
                    unsupported(k, kp, "unknown key of a model; the keys are: model, parameters");
                }
            });
            if (!have_model) bad(e, join_path(p, "model"), "expected model: the model's path or URL");
            c.models.push_back(std::move(m));
        }
    }

    void slices(assemble_config& c, const node& n) const {
        if (is_null(n)) return;
        expect_list(n, "slices", "a list of slices ({sources: [...]})");
        for (std::size_t i = 0; i < n.children.size(); ++i) {
            const node& e = at(n.children[i]);
            const std::string p = index_path("slices", i);
            expect_map(e, p, "a map {sources: [...], parameters: ...}");
            output_slice s;
            s.offset = e.offset;
            const node* sources = nullptr;
            entries(e, [&](const node& k, const node& v) {
                const std::string kp = join_path(p, k.text);
                if (k.text == "sources") {
                    sources = &v;
                } else if (k.text == "base_model") {
                    s.base_model = optional_source(v, kp);
                } else if (k.text == "parameters") {
                    s.parameters = parameters(v, kp);
                } else if (k.text == "residual_weight") {
                    if (!is_null(v))
                        unsupported(k, kp, "residual_weight is not supported (mergekit declares it and no method reads it)");
                } else {
                    unsupported(k, kp, "unknown key of a slice; the keys are: sources, base_model, parameters");
                }
            });
            const std::string sp = join_path(p, "sources");
            if (sources == nullptr) bad(e, sp, "expected sources: the list of layer ranges merged into this slice");
            expect_list(*sources, sp, "a list of sources ({model: ..., layer_range: [first, end]})");
            if (sources->children.empty())
                bad(*sources, sp, "expected at least one source, found an empty list (mergekit fails on it: plan.py plan_slice)");
            for (std::size_t j = 0; j < sources->children.size(); ++j)
                s.sources.push_back(slice_source_of(at(sources->children[j]), index_path(sp, j)));
            c.slices.push_back(std::move(s));
        }
    }

    slice_source slice_source_of(const node& e, const std::string& p) const {
        expect_map(e, p, "a map {model: ..., layer_range: [first, end]}");
        slice_source s;
        s.offset = e.offset;
        bool have_model = false;
        const node* range = nullptr;
        entries(e, [&](const node& k, const node& v) {
            const std::string kp = join_path(p, k.text);
            if (k.text == "model") {
                s.model = source(v, kp);
                have_model = true;
            } else if (k.text == "layer_range") {
                range = &v;
            } else if (k.text == "parameters") {
                s.parameters = parameters(v, kp);
            } else {
                unsupported(k, kp, "unknown key of a slice source; the keys are: model, layer_range, parameters");
            }
        });
        if (!have_model) bad(e, join_path(p, "model"), "expected model: the model's path or URL");
        const std::string rp = join_path(p, "layer_range");
        if (range == nullptr) bad(e, rp, "expected layer_range: [first, end), the layers taken from the model");
        if (range->type != node::kind::sequence || range->children.size() != 2)
            bad(*range, rp,
                "expected [first, end) with first < end, found " +
                    (range->type == node::kind::sequence ? "a list of " + num(range->children.size()) + " items" : found(*range)));
        const std::uint64_t a = whole(at(range->children[0]), index_path(rp, 0));
        const std::uint64_t b = whole(at(range->children[1]), index_path(rp, 1));
        if (a >= b)
            bad(*range, rp, "expected [first, end) with first < end, found [" + num(a) + ", " + num(b) + "]");
        if (b > max_config_layer)
            bad(*range, rp, "expected an end of at most " + num(max_config_layer) + " (the most read), found [" + num(a) + ", " + num(b) + "]");
        s.first = static_cast<std::uint32_t>(a);
        s.end = static_cast<std::uint32_t>(b);
        return s;
    }

    void tensors(assemble_config& c, const node& n) const {
        if (is_null(n)) return;
        expect_list(n, "tensors", "a list of rules ({name: REGEX, model: SOURCE})");
        for (std::size_t i = 0; i < n.children.size(); ++i) {
            const node& e = at(n.children[i]);
            const std::string p = index_path("tensors", i);
            expect_map(e, p, "a map {name: REGEX, model: SOURCE}");
            tensor_rule r;
            r.offset = e.offset;
            const node* name = nullptr;
            bool have_model = false;
            entries(e, [&](const node& k, const node& v) {
                const std::string kp = join_path(p, k.text);
                if (k.text == "name") {
                    name = &v;
                } else if (k.text == "model") {
                    r.model = source(v, kp);
                    have_model = true;
                } else {
                    unsupported(k, kp, "unknown key of a tensors rule; the keys are: name, model");
                }
            });
            const std::string np = join_path(p, "name");
            if (name == nullptr) bad(e, np, "expected name: a regular expression found in the output tensor names");
            if (!have_model) bad(e, join_path(p, "model"), "expected model: the model the tensors are taken from");
            r.pattern = text(*name, np, "a regular expression (text)");
            compile(r, *name, np);
            c.tensors.push_back(std::move(r));
        }
    }

    void compile(tensor_rule& r, const node& n, std::string_view path) const {
        const std::string& s = r.pattern;
        if (s.empty()) bad(n, path, "expected a regular expression, found empty text (it would take every tensor)");
        if (s.size() > max_regex_bytes)
            bad(n, path, "a regular expression of at most " + num(max_regex_bytes) + " bytes, found " + num(s.size()));
        // The nesting, the back-references and a bound of the automaton's size, read from the text.
        std::uint32_t depth = 0, max_depth = 0;
        std::uint64_t multiplier = 1;
        bool in_class = false;
        for (std::size_t i = 0; i < s.size(); ++i) {
            const char ch = s[i];
            if (ch == '\\') {
                if (i + 1 < s.size() && !in_class && s[i + 1] >= '1' && s[i + 1] <= '9')
                    unsupported(n, path, "back-references (\\" + std::string(1, s[i + 1]) +
                                             ") are not supported: they force a backtracking search");
                ++i;
                continue;
            }
            if (in_class) {
                if (ch == ']') in_class = false;
                continue;
            }
            if (ch == '[') {
                in_class = true;
                max_depth = std::max(max_depth, depth + 1);
            } else if (ch == '(') {
                max_depth = std::max(max_depth, ++depth);
            } else if (ch == ')') {
                if (depth > 0) --depth;
            } else if (ch == '{') {
                // {n}, {n,}, {n,m}: the automaton repeats what precedes up to max(n, m) + 1 times
                std::uint64_t a = 0, b = 0;
                std::size_t j = i + 1;
                bool any = false;
                while (j < s.size() && s[j] >= '0' && s[j] <= '9' && a <= max_regex_states) a = a * 10 + static_cast<std::uint64_t>(s[j++] - '0'), any = true;
                if (j < s.size() && s[j] == ',') {
                    ++j;
                    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && b <= max_regex_states) b = b * 10 + static_cast<std::uint64_t>(s[j++] - '0');
                }
                if (any) multiplier = std::min<std::uint64_t>(multiplier * (std::max(a, b) + 1), std::uint64_t{1} << 32);
            }
            if (max_depth > max_regex_depth)
                bad(n, path, "a regular expression nested at most " + num(max_regex_depth) + " levels deep");
        }
        if (multiplier * s.size() > max_regex_states)
            bad(n, path, "a regular expression too large once its {n,m} repetitions are expanded (at most about " +
                             num(max_regex_states) + " states)");
        try {
            r.regex = std::regex(s, std::regex::ECMAScript | std::regex_constants::__polynomial);
        } catch (const std::regex_error& e) {
            bad(n, path, std::string("not a valid ECMAScript regular expression: ") + e.what());
        }
    }

    // ---- the cross checks ----

    struct input_ref {
        const model_source* model;
        const parameter_map* parameters;  // nullptr: the base model mergekit adds to models:
        std::string path;                 // of the input (its entry)
        std::uint64_t offset;
    };

    void check(const assemble_config& c) const {
        const bool has_models = !c.models.empty(), has_slices = !c.slices.empty();
        if (has_models == has_slices)
            fail(codes::bad_config, root_offset_, has_models ? "slices" : "models",
                 has_models ? "models and slices are both given; mergekit takes exactly one (config.py validate_inputs)"
                            : "expected models (whole models to merge) or slices (layer ranges), found neither");
        const bool needs_base = c.method == merge_method::slerp || c.method == merge_method::task_arithmetic ||
                                c.method == merge_method::ties;
        const std::string m(to_string(c.method));

        check_parameters(c.parameters, c.method, "parameters", false);
        if (has_models) {
            // models: one slice of every model, plus the base model when it is not listed (plan.py normalize_config)
            std::vector<input_ref> inputs;
            for (std::size_t i = 0; i < c.models.size(); ++i) {
                const input_model& im = c.models[i];
                const std::string p = index_path("models", i);
                for (std::size_t j = 0; j < i; ++j)
                    if (c.models[j].model.text == im.model.text)
                        fail(codes::bad_config, im.model.offset, join_path(p, "model"),
                             shown(im.model.text) + " is listed twice (as models[" + num(j) +
                                 "]); mergekit keys the inputs by model, so one of the two would be lost");
                check_parameters(im.parameters, c.method, join_path(p, "parameters"), true);
                inputs.push_back({&im.model, &im.parameters, p, im.offset});
            }
            if (needs_base && !c.base_model)
                fail(codes::bad_config, root_offset_, "base_model", m + " needs base_model (the model the others are merged into)");
            if (c.base_model && std::none_of(c.models.begin(), c.models.end(),
                                             [&](const input_model& im) { return im.model.text == c.base_model->text; }))
                inputs.push_back({&*c.base_model, nullptr, "base_model", c.base_model->offset});
            check_inputs(c, inputs, nullptr, c.base_model ? &*c.base_model : nullptr, "models", root_offset_);
        } else {
            for (std::size_t i = 0; i < c.slices.size(); ++i) {
                const output_slice& s = c.slices[i];
                const std::string p = index_path("slices", i);
                check_parameters(s.parameters, c.method, join_path(p, "parameters"), false);
                std::vector<input_ref> inputs;
                for (std::size_t j = 0; j < s.sources.size(); ++j) {
                    const slice_source& src = s.sources[j];
                    const std::string sp = index_path(join_path(p, "sources"), j);
                    for (std::size_t k = 0; k < j; ++k)
                        if (s.sources[k].model.text == src.model.text)
                            fail(codes::bad_config, src.model.offset, join_path(sp, "model"),
                                 shown(src.model.text) + " is a source of this slice twice (as sources[" + num(k) +
                                     "]); mergekit keys a slice's inputs by model, so one of the two would be lost");
                    if (src.end - src.first != s.layers())
                        fail(codes::bad_config, src.offset, join_path(sp, "layer_range"),
                             "every source of a slice covers the same number of layers (plan.py plan_slice): sources[0] has " +
                                 num(s.layers()) + ", this one " + num(src.end - src.first));
                    check_parameters(src.parameters, c.method, join_path(sp, "parameters"), true);
                    inputs.push_back({&src.model, &src.parameters, sp, src.offset});
                }
                const model_source* base = s.base_model ? &*s.base_model : (c.base_model ? &*c.base_model : nullptr);
                if (needs_base && base == nullptr)
                    fail(codes::bad_config, s.offset, join_path(p, "base_model"),
                         m + " needs a base model: base_model at the top, or in each slice");
                // GTATask reads tensors[base_model]; SlerpTask passes one tensor through, base or not
                const bool base_needed_here = needs_base && (c.method != merge_method::slerp || inputs.size() > 1);
                if (base_needed_here && std::none_of(inputs.begin(), inputs.end(),
                                                     [&](const input_ref& r) { return r.model->text == base->text; }))
                    fail(codes::bad_config, s.offset, join_path(p, "sources"),
                         m + " merges into the base model, which must be one of the slice's sources (" + shown(base->text) +
                             " is not)");
                check_inputs(c, inputs, &s, base, p, s.offset);
            }
        }
        check_required_global(c);
    }

    // Names the method reads, where they may be written, what values they take.
    void check_parameters(const parameter_map& pm, merge_method method, const std::string& path, bool per_model) const {
        const std::string m(to_string(method));
        for (const parameter_setting& s : pm.settings) {
            const std::string p = join_path(path, s.name);
            const method_parameter* def = find_method_parameter(method, s.name);
            if (def == nullptr) {
                std::string names;
                for (const method_parameter& d : method_parameters(method)) {
                    if (!names.empty()) names += ", ";
                    names += d.name;
                }
                fail(codes::unsupported_config, s.offset, p,
                     shown(s.name) + " is not a parameter of " + m + " (mergekit would ignore it); " + m + " reads: " + names);
            }
            if (per_model && !def->per_model)
                fail(codes::bad_config, s.offset, p,
                     s.name + " is a parameter of the merge, read once per tensor: mergekit never reads it for a model "
                              "(config.py ConfigReader.parameter with model=None); set it in the slice's or the config's "
                              "parameters");
            if (method == merge_method::ties && s.name == "density") {
                auto positive = [&](const scalar_or_gradient& v, std::uint64_t offset) {
                    for (double d : v.numbers)
                        if (!(d > 0))
                            fail(codes::bad_config, offset, p,
                                 "ties keeps int(density x size) values of each task vector and fails when that is 0 "
                                 "(sparsify.py magnitude): expected a density > 0, found " + show_number(d));
                };
                if (s.conditions.empty()) positive(s.value, s.offset);
                for (const parameter_condition& cond : s.conditions) positive(cond.value, cond.offset);
            }
        }
    }

    // The inputs of one slice (or of models:): their count for the method, and the per-model required
    // parameters of each.
    void check_inputs(const assemble_config& c, const std::vector<input_ref>& inputs, const output_slice* slice,
                      const model_source* base, const std::string& path, std::uint64_t offset) const {
        const std::string m(to_string(c.method));
        if (c.method == merge_method::passthrough && inputs.size() != 1)
            fail(codes::bad_config, offset, path,
                 slice != nullptr
                     ? "passthrough takes one source per slice (PassthroughMergeTask: exactly one tensor), found " +
                           num(inputs.size()) + "; stack layers with one slice per range"
                     : "passthrough takes one model (PassthroughMergeTask: exactly one tensor), found " + num(inputs.size()) +
                           (c.base_model ? " with base_model" : "") + "; stack layers with slices:");
        if (c.method == merge_method::slerp && inputs.size() > 2)
            fail(codes::bad_config, offset, path,
                 "slerp interpolates between two models (the base model and one other), found " + num(inputs.size()) +
                     (slice == nullptr && c.base_model ? " with base_model" : ""));
        for (const method_parameter& d : method_parameters(c.method)) {
            if (!d.per_model || !d.required) continue;
            for (const input_ref& in : inputs) {
                const bool is_base = base != nullptr && in.model->text == base->text;
                if (is_base && c.method != merge_method::linear) continue;  // plan_tensor: required and not is_base
                const bool set = (in.parameters != nullptr && in.parameters->find(d.name) != nullptr) ||
                                 (slice != nullptr && slice->parameters.find(d.name) != nullptr) ||
                                 c.parameters.find(d.name) != nullptr;
                if (set) continue;
                std::string why = m + " needs " + std::string(d.name) + " for " + shown(in.model->text) + ": set it in ";
                if (in.parameters == nullptr) {
                    why += "the config's parameters, or list the base model in models: with its own (mergekit adds it to "
                           "the inputs without parameters, and " + m + " weighs every input)";
                    fail(codes::bad_config, in.offset, join_path("parameters", d.name), why);
                }
                why += slice != nullptr ? "its parameters, the slice's or the config's" : "its parameters or the config's";
                fail(codes::bad_config, in.offset, join_path(in.path, join_path("parameters", d.name)), why);
            }
        }
    }

    void check_required_global(const assemble_config& c) const {
        for (const method_parameter& d : method_parameters(c.method)) {
            if (d.per_model || !d.required) continue;
            if (c.parameters.find(d.name) != nullptr) continue;
            const std::string m(to_string(c.method));
            if (c.slices.empty())
                fail(codes::bad_config, parameters_offset_.value_or(root_offset_), join_path("parameters", d.name),
                     m + " needs " + std::string(d.name) + " in the config's parameters");
            for (std::size_t i = 0; i < c.slices.size(); ++i)
                if (c.slices[i].parameters.find(d.name) == nullptr)
                    fail(codes::bad_config, c.slices[i].offset, join_path(join_path(index_path("slices", i), "parameters"), d.name),
                         m + " needs " + std::string(d.name) + ": set it in the config's parameters or in every slice's");
        }
    }
};

gguf::error to_error(config_yaml::failure&& f, std::string_view file) {
    gguf::error e;
    e.code = f.code;
    e.offset = f.offset;
    e.subject = f.subject;
    e.detail = std::move(f.detail);
    e.expected = f.expected;
    e.found = f.found;
    e.file = std::string(file);
    return e;
}

}  // namespace

std::string_view to_string(merge_method m) noexcept {
    const auto i = static_cast<std::size_t>(m);
    return i < std::size(method_names) ? method_names[i] : std::string_view("unknown");
}

std::string_view to_string(config_dtype d) noexcept {
    switch (d) {
        case config_dtype::float32: return "float32";
        case config_dtype::float16: return "float16";
        case config_dtype::bfloat16: return "bfloat16";
    }
    return "unknown";
}

const parameter_setting* parameter_map::find(std::string_view name) const noexcept {
    for (const parameter_setting& s : settings)
        if (s.name == name) return &s;
    return nullptr;
}

std::span<const method_parameter> method_parameters(merge_method m) noexcept {
    switch (m) {
        case merge_method::passthrough: return passthrough_parameters;
        case merge_method::linear: return linear_parameters;
        case merge_method::slerp: return slerp_parameters;
        case merge_method::task_arithmetic: return task_arithmetic_parameters;
        case merge_method::ties: return ties_parameters;
    }
    return {};
}

const method_parameter* find_method_parameter(merge_method m, std::string_view name) noexcept {
    for (const method_parameter& p : method_parameters(m))
        if (p.name == name) return &p;
    return nullptr;
}

gguf::result<assemble_config> parse_assemble_config(std::string_view text, std::string_view file) noexcept {
    try {
        document doc;
        config_yaml::failure why;
        if (!config_yaml::parse(text, doc, why)) return gguf::unexpected(to_error(std::move(why), file));
        return reader(doc, file).read();
    } catch (config_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("reading an assembly config"));
    } catch (...) {  // nothing else is thrown (std::length_error at most, past any cap): an allocation failure
        return gguf::unexpected(gguf::out_of_memory_error("reading an assembly config"));
    }
}

gguf::result<assemble_config> read_assemble_config(const std::filesystem::path& path) noexcept {
    auto text = gguf::read_capped(path, max_config_bytes);
    if (!text) {
        gguf::error e = std::move(text).error();
        if (e.code == gguf::errc::input_too_large) {
            try {
                e.detail = "an assembly config";
            } catch (...) {
            }
        }
        return gguf::unexpected(std::move(e));
    }
    std::string name;
    try {
        name = path.string();
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading an assembly config"));
    }
    return parse_assemble_config(*text, name);
}

}  // namespace minfer::toolbox
