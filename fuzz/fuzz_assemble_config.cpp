// The assembly config reader (toolbox::parse_assemble_config) on arbitrary text. A refusal is one
// of the config codes with a reason and a byte inside the text; an acceptance must hold every
// promise of the header (one of models and slices, sources non-empty without NUL, ranges
// increasing within the cap, numbers finite, lists within the caps, regexes compiled), evaluate
// every parameter at a few sites without failing, and read back the same from the JSON written of
// it here (the reader is consistent with itself whatever the YAML spelling). A broken promise traps.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "minfer/toolbox/assemble_config.hpp"

namespace {

namespace tb = minfer::toolbox;
using minfer::gguf::errc;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_assemble_config: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

// ---- the structure as JSON ----

// Valid UTF-8 throughout (yaml-cpp writes a lone surrogate escape, "\uD800", as its three bytes).
bool utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (len == 0 || s.size() - i < len) return false;
        std::uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
        for (std::size_t k = 1; k < len; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0u) != 0x80u) return false;
            cp = (cp << 6) | (b & 0x3Fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

// A JSON string: the characters YAML's reader refuses raw (controls, C1, U+FFFE/U+FFFF) as \u escapes.
void string_to(std::string& out, std::string_view s) {
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        std::uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
        for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
        const bool printable = cp == '\t' || (cp >= 0x20 && cp < 0x7F) || cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) ||
                               (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
        if (cp == '"' || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (!printable || cp == '\t') {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
            out += buf;
        } else {
            out.append(s.substr(i, len));
        }
        i += len;
    }
    out += '"';
}

void number_to(std::string& out, double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
}

void numbers_to(std::string& out, const tb::scalar_or_gradient& v) {
    if (!v.gradient) return number_to(out, v.numbers.at(0));
    out += '[';
    for (std::size_t i = 0; i < v.numbers.size(); ++i) {
        if (i) out += ',';
        number_to(out, v.numbers[i]);
    }
    out += ']';
}

void parameters_to(std::string& out, const tb::parameter_map& pm) {
    out += '{';
    for (std::size_t i = 0; i < pm.settings.size(); ++i) {
        const tb::parameter_setting& s = pm.settings[i];
        if (i) out += ',';
        string_to(out, s.name);
        out += ':';
        if (s.conditions.empty()) {
            numbers_to(out, s.value);
            continue;
        }
        out += '[';
        for (std::size_t k = 0; k < s.conditions.size(); ++k) {
            if (k) out += ',';
            out += '{';
            if (s.conditions[k].filter) {
                out += "\"filter\":";
                string_to(out, *s.conditions[k].filter);
                out += ',';
            }
            out += "\"value\":";
            numbers_to(out, s.conditions[k].value);
            out += '}';
        }
        out += ']';
    }
    out += '}';
}

void source_to(std::string& out, const tb::model_source& m) {
    out += "{\"model\":{\"path\":";  // the map form: never split at '+'
    string_to(out, m.text);
    out += "}}";
}

std::string to_json(const tb::assemble_config& c) {
    std::string out = "{\"merge_method\":";
    string_to(out, tb::to_string(c.method));
    if (c.base_model) {
        out += ",\"base_model\":";
        source_to(out, *c.base_model);
    }
    if (!c.models.empty()) {
        out += ",\"models\":[";
        for (std::size_t i = 0; i < c.models.size(); ++i) {
            if (i) out += ',';
            out += "{\"model\":";
            source_to(out, c.models[i].model);
            out += ",\"parameters\":";
            parameters_to(out, c.models[i].parameters);
            out += '}';
        }
        out += ']';
    }
    if (!c.slices.empty()) {
        out += ",\"slices\":[";
        for (std::size_t i = 0; i < c.slices.size(); ++i) {
            const tb::output_slice& s = c.slices[i];
            if (i) out += ',';
            out += "{\"sources\":[";
            for (std::size_t k = 0; k < s.sources.size(); ++k) {
                if (k) out += ',';
                out += "{\"model\":";
                source_to(out, s.sources[k].model);
                out += ",\"layer_range\":[" + std::to_string(s.sources[k].first) + "," + std::to_string(s.sources[k].end) + "]";
                out += ",\"parameters\":";
                parameters_to(out, s.sources[k].parameters);
                out += '}';
            }
            out += ']';
            if (s.base_model) {
                out += ",\"base_model\":";
                source_to(out, *s.base_model);
            }
            out += ",\"parameters\":";
            parameters_to(out, s.parameters);
            out += '}';
        }
        out += ']';
    }
    out += ",\"parameters\":";
    parameters_to(out, c.parameters);
    if (c.dtype) out += ",\"dtype\":\"" + std::string(tb::to_string(*c.dtype)) + "\"";
    if (c.out_dtype) out += ",\"out_dtype\":\"" + std::string(tb::to_string(*c.out_dtype)) + "\"";
    if (c.tokenizer == tb::tokenizer_choice::base) out += ",\"tokenizer_source\":\"base\"";
    if (!c.name.empty()) {
        out += ",\"name\":";
        string_to(out, c.name);
    }
    if (!c.tensors.empty()) {
        out += ",\"tensors\":[";
        for (std::size_t i = 0; i < c.tensors.size(); ++i) {
            if (i) out += ',';
            out += "{\"name\":";
            string_to(out, c.tensors[i].pattern);
            out += ",\"model\":";
            source_to(out, c.tensors[i].model);
            out += '}';
        }
        out += ']';
    }
    out += "}\n";
    return out;
}

// ---- the promises ----

bool all_utf8(const tb::parameter_map& pm) {
    for (const tb::parameter_setting& s : pm.settings) {
        if (!utf8(s.name)) return false;
        for (const tb::parameter_condition& c : s.conditions)
            if (c.filter && !utf8(*c.filter)) return false;
    }
    return true;
}

void check_numbers(const tb::scalar_or_gradient& v) {
    require(!v.numbers.empty() && v.numbers.size() <= tb::max_config_items, "a value without numbers or too many");
    require(v.gradient || v.numbers.size() == 1, "a scalar of several numbers");
    for (double d : v.numbers) require(std::isfinite(d), "a number that is not finite");
}

void check_parameters(const tb::parameter_map& pm, tb::merge_method m, bool per_model) {
    require(pm.settings.size() <= tb::max_config_items, "too many parameters");
    for (const tb::parameter_setting& s : pm.settings) {
        const tb::method_parameter* def = tb::find_method_parameter(m, s.name);
        require(def != nullptr, "a parameter the method does not read");
        require(!per_model || def->per_model, "a merge parameter under a model");
        require(pm.find(s.name) == &s, "a parameter name twice");
        if (s.conditions.empty()) check_numbers(s.value);
        require(s.conditions.size() <= tb::max_config_items, "too many conditions");
        for (const tb::parameter_condition& c : s.conditions) check_numbers(c.value);
    }
}

void check_source(const tb::model_source& m) {
    require(!m.text.empty() && m.text.find('\0') == std::string::npos, "an empty source or one with a NUL");
}

void check_values(const tb::assemble_config& c) {
    // every parameter the method reads, at a few sites, for every input
    const std::string_view names[] = {"blk.0.attn_q.weight", "blk.7.ffn_up.weight", "token_embd.weight", ""};
    const std::size_t slices = c.slices.empty() ? 1 : c.slices.size();
    for (std::size_t sl = 0; sl < slices && sl < 8; ++sl) {
        const std::uint32_t layers = c.slices.empty() ? 9 : c.slices[sl].layers();
        const std::size_t inputs = c.slices.empty() ? c.models.size() : c.slices[sl].sources.size();
        for (const tb::method_parameter& p : tb::method_parameters(c.method))
            for (std::string_view name : names)
                for (std::optional<std::uint32_t> layer : {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{0},
                                                           std::optional<std::uint32_t>{layers - 1}}) {
                    const tb::tensor_site site{name, "blk.3.attn_q.weight", "llama", sl, layer, layers};
                    for (std::size_t in = 0; in <= inputs && in < 8; ++in) {
                        const auto src = in == inputs ? std::optional<std::size_t>{} : std::optional<std::size_t>{in};
                        if (src && !p.per_model) continue;
                        const auto v = tb::parameter_value(c, p.name, site, src);
                        require(!v || std::isfinite(*v), "a parameter value that is not finite");
                    }
                }
    }
    for (std::string_view name : names) {
        auto r = tb::find_tensor_rule(c, name);
        require(r.has_value() || r.error().code == errc::out_of_memory, "a tensors search that fails");
    }
}

void check(const tb::assemble_config& c, std::string_view text) {
    require(c.models.empty() != c.slices.empty(), "not exactly one of models and slices");
    require(c.models.size() <= tb::max_config_items && c.slices.size() <= tb::max_config_items, "a list over the cap");
    if (c.base_model) check_source(*c.base_model);
    check_parameters(c.parameters, c.method, false);
    bool text_ok = utf8(c.name) && all_utf8(c.parameters) && (!c.base_model || utf8(c.base_model->text));
    for (const tb::input_model& m : c.models) {
        check_source(m.model);
        check_parameters(m.parameters, c.method, true);
        require(m.offset < text.size() && m.model.offset < text.size(), "an offset outside the text");
        text_ok = text_ok && utf8(m.model.text) && all_utf8(m.parameters);
    }
    for (const tb::output_slice& s : c.slices) {
        require(!s.sources.empty() && s.sources.size() <= tb::max_config_items, "a slice without sources or too many");
        if (s.base_model) check_source(*s.base_model);
        check_parameters(s.parameters, c.method, false);
        for (const tb::slice_source& src : s.sources) {
            check_source(src.model);
            require(src.first < src.end && src.end <= tb::max_config_layer, "a layer range that does not increase");
            require(src.end - src.first == s.layers(), "sources of a slice that differ in length");
            check_parameters(src.parameters, c.method, true);
            text_ok = text_ok && utf8(src.model.text) && all_utf8(src.parameters);
        }
        text_ok = text_ok && all_utf8(s.parameters) && (!s.base_model || utf8(s.base_model->text));
    }
    for (const tb::tensor_rule& r : c.tensors) {
        check_source(r.model);
        require(!r.pattern.empty() && r.pattern.size() <= tb::max_regex_bytes, "an empty or long regex");
        text_ok = text_ok && utf8(r.pattern) && utf8(r.model.text);
    }
    check_values(c);
    if (!text_ok) return;
    // the same config, written as JSON, reads back the same
    const std::string json = to_json(c);
    if (json.size() > tb::max_config_bytes) return;
    auto again = tb::parse_assemble_config(json);
    if (!again) {
        std::fprintf(stderr, "%s\n%s\n", again.error().message().c_str(), json.c_str());
        fail("the JSON written of an accepted config is refused");
    }
    require(to_json(*again) == json, "the JSON written of an accepted config reads back otherwise");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = tb::parse_assemble_config(text, "fuzz.yml");
    if (!r) {
        const minfer::gguf::error& e = r.error();
        require(e.code == tb::codes::bad_config || e.code == tb::codes::unsupported_config || e.code == errc::input_too_large ||
                    e.code == errc::out_of_memory,
                "a refusal with another code");
        require(e.code == errc::out_of_memory || !e.detail.empty(), "a refusal without a reason");
        require(e.offset <= size, "a refusal's offset outside the text");
        require(e.file == "fuzz.yml", "a refusal without the file");
        return 0;
    }
    check(*r, text);
    return 0;
}
