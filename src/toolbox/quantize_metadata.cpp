// toolbox::quantize's metadata: --override-kv's text, the facts the type plan reads, the loader's
// file type for COPY, and the output's keys in llama_model_quantize's order.
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "model_keys.hpp"
#include "quantize_internal.hpp"

namespace minfer::toolbox {
namespace {

gguf::error bad_override(std::string_view text, const char* why) {
    gguf::error e;
    e.code = gguf::errc::bad_value_text;
    e.subject = text;
    e.detail = why;
    return e;
}

}  // namespace

gguf::result<kv_override> parse_kv_override(std::string_view text) {
    // llama.cpp's string_parse_kv_override, stricter where it reads garbage as 0 (atol, atof): a
    // value that does not parse whole is refused rather than written as something else. One '+' may
    // lead (from_chars takes none); a sign after it is garbage to atol ("+-5" is 0), refused here.
    auto unsigned_after_plus = [](std::string_view& digits) {
        if (!digits.starts_with('+')) return true;
        digits.remove_prefix(1);
        return !digits.starts_with('-') && !digits.starts_with('+');
    };
    const std::size_t sep = text.find('=');
    if (sep == std::string_view::npos) return gguf::unexpected(bad_override(text, "expected KEY=TYPE:VALUE"));
    if (sep == 0) return gguf::unexpected(bad_override(text, "the key is empty"));
    if (sep >= 128) return gguf::unexpected(bad_override(text, "the key is longer than 127 bytes"));
    if (text.find('\0') != std::string_view::npos) return gguf::unexpected(bad_override(text, "a NUL byte in the text"));
    kv_override o;
    o.key.assign(text.substr(0, sep));
    std::string_view v = text.substr(sep + 1);
    auto take = [&v](std::string_view prefix) {
        if (!v.starts_with(prefix)) return false;
        v.remove_prefix(prefix.size());
        return true;
    };
    if (take("int:")) {
        o.type = kv_override::kind::int_;
        std::string_view digits = v;
        const bool sign_ok = unsigned_after_plus(digits);
        const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), o.int_value);
        if (!sign_ok || digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
            return gguf::unexpected(bad_override(text, "the value is not a 64-bit integer"));
    } else if (take("float:")) {
        o.type = kv_override::kind::float_;
        std::string_view digits = v;
        const bool sign_ok = unsigned_after_plus(digits);
        const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), o.float_value);
        if (!sign_ok || digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
            return gguf::unexpected(bad_override(text, "the value is not a number"));
    } else if (take("bool:")) {
        o.type = kv_override::kind::bool_;
        if (v == "true") {
            o.bool_value = true;
        } else if (v == "false") {
            o.bool_value = false;
        } else {
            return gguf::unexpected(bad_override(text, "a bool is true or false"));
        }
    } else if (take("str:")) {
        o.type = kv_override::kind::str;
        if (v.size() > 127) return gguf::unexpected(bad_override(text, "the value is longer than 127 bytes"));
        o.str_value.assign(v);
    } else {
        return gguf::unexpected(bad_override(text, "the type is not one of int, float, bool, str"));
    }
    return o;
}

namespace quantize_detail {
namespace {

// A count key of the plan: absent is 0; a scalar as u32; an array (per-layer counts) by its first
// element, layer 0's, as llama.cpp's hparams.n_head(0) reads it.
gguf::result<std::uint32_t> layer0_count(const gguf::model& m, const std::string& key) {
    const gguf::kv* e = m.find(key);
    if (e == nullptr) return std::uint32_t{0};
    if (!e->is_array()) return e->as<std::uint32_t>();
    auto a = e->get<gguf::array_view>();
    if (!a) return gguf::unexpected(std::move(a).error());
    if (a->empty()) return std::uint32_t{0};
    std::vector<std::uint32_t> all(static_cast<std::size_t>(a->size()));  // a verified array: its bytes exist
    auto copied = a->copy_to(std::span<std::uint32_t>(all));
    if (!copied) {
        gguf::error err = std::move(copied).error();
        err.subject = key;
        return gguf::unexpected(std::move(err));
    }
    return all.front();
}

// "blk.<N>." at the start of a tensor name: N (at most 9 digits, so it fits).
bool block_number(std::string_view name, std::uint32_t& n) noexcept {
    constexpr std::string_view prefix = "blk.";
    if (name.substr(0, prefix.size()) != prefix) return false;
    name.remove_prefix(prefix.size());
    std::size_t digits = 0;
    std::uint32_t v = 0;
    while (digits < name.size() && digits < 9 && name[digits] >= '0' && name[digits] <= '9')
        v = v * 10 + static_cast<std::uint32_t>(name[digits++] - '0');
    if (digits == 0 || digits >= name.size() || name[digits] != '.') return false;
    n = v;
    return true;
}

}  // namespace

gguf::result<quant::model_facts> model_facts_of(const gguf::model& m) noexcept {
    try {
        quant::model_facts f;
        auto arch = m.get_or<std::string_view>("general.architecture", std::string_view{});
        if (!arch) return gguf::unexpected(std::move(arch).error());
        f.arch.assign(*arch);
        const std::string p = f.arch + ".";
        auto n_layer = m.get_or<std::uint32_t>(p + "block_count", 0);
        if (!n_layer) return gguf::unexpected(std::move(n_layer).error());
        f.n_layer = *n_layer;
        auto n_head = layer0_count(m, p + "attention.head_count");
        if (!n_head) return gguf::unexpected(std::move(n_head).error());
        f.n_head = *n_head;
        f.n_head_kv = f.n_head;
        if (m.find(p + "attention.head_count_kv") != nullptr) {
            auto kv = layer0_count(m, p + "attention.head_count_kv");
            if (!kv) return gguf::unexpected(std::move(kv).error());
            f.n_head_kv = *kv;
        }
        auto n_expert = m.get_or<std::uint32_t>(p + "expert_count", 0);
        if (!n_expert) return gguf::unexpected(std::move(n_expert).error());
        f.n_expert = *n_expert;
        f.type_70b = quant::is_llama_70b(f.arch, f.n_layer, f.n_head, f.n_head_kv);
        f.tensors.reserve(m.tensors().size());
        for (const gguf::tensor_ref& t : m.tensors()) {
            quant::tensor_fact x;
            x.name.assign(t.info->name);
            x.type = t.info->type;
            x.ne = t.info->ne;
            f.tensors.push_back(std::move(x));
        }
        // An architecture llama.cpp does not know may name no block_count (every known one has it,
        // llama.cpp's loader requires it). The per-layer rules ("the first eighth of the layers",
        // use_more_bits) then count the blocks the tensor names number: blk.0 … blk.N gives N + 1.
        if (m.find(p + "block_count") == nullptr) {
            std::uint32_t blocks = 0;
            for (const quant::tensor_fact& x : f.tensors) {
                std::uint32_t n = 0;
                if (block_number(x.name, n)) blocks = std::max(blocks, n + 1);
            }
            f.n_layer = blocks;
            f.type_70b = quant::is_llama_70b(f.arch, f.n_layer, f.n_head, f.n_head_kv);
        }
        return f;
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("reading the model's hyperparameters"));
    }
}

std::uint32_t loader_file_type(const gguf::model& m, std::span<const quant::tensor_choice> tensors) noexcept {
    if (m.find(key_file_type) != nullptr) {
        if (auto declared = m.get_as<std::uint32_t>(key_file_type)) return *declared;
    }
    using tt = gguf::tensor_type;
    std::uint32_t count[gguf::tensor_type_count] = {};
    std::uint32_t best = 0;
    tt best_type = tt::f32;
    for (const quant::tensor_choice& c : tensors) {
        const auto id = static_cast<std::uint32_t>(c.from);
        if (id >= gguf::tensor_type_count) continue;  // the loader refuses such a file before this
        if (++count[id] > best) {
            best = count[id];
            best_type = c.from;
        }
    }
    const std::uint32_t ftype = detail::llama_file_type_of(best_type);
    constexpr std::uint32_t guessed = 1024;  // LLAMA_FTYPE_GUESSED
    return ftype | guessed;
}

void put_quantized_metadata(gguf::writer& w, const gguf::model& m, std::uint32_t file_type,
                            std::span<const kv_override> overrides) {
    for (const gguf::kv& record : m.metadata().metadata()) w.set(record);
    // gguf_set_val_* moves a key it sets to the end; the writer's set keeps the position: erase first.
    w.erase(key_quantization_version).set_u32(key_quantization_version, quantization_version);
    w.erase(key_file_type).set_u32(key_file_type, file_type);
    w.erase(key_split_no).erase(key_split_count).erase(key_split_tensors);
    for (const kv_override& o : overrides) {
        w.erase(o.key);
        switch (o.type) {
            case kv_override::kind::float_: w.set_f32(o.key, static_cast<float>(o.float_value)); break;
            case kv_override::kind::int_: {
                // (uint32_t)std::abs(v), without abs's overflow at INT64_MIN.
                const std::uint64_t v = static_cast<std::uint64_t>(o.int_value);
                const std::uint64_t mag = o.int_value < 0 ? std::uint64_t{0} - v : v;
                w.set_u32(o.key, static_cast<std::uint32_t>(mag));
                break;
            }
            case kv_override::kind::bool_: w.set_bool(o.key, o.bool_value); break;
            case kv_override::kind::str: w.set_string(o.key, o.str_value); break;
        }
    }
}

std::optional<std::uint32_t> output_alignment(const gguf::model& m, std::span<const kv_override> overrides) noexcept {
    for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
        if (it->key != gguf::alignment_key) continue;
        if (it->type != kv_override::kind::int_) return std::nullopt;
        const std::uint64_t v = static_cast<std::uint64_t>(it->int_value);
        return static_cast<std::uint32_t>(it->int_value < 0 ? std::uint64_t{0} - v : v);
    }
    if (m.find(gguf::alignment_key) == nullptr) return std::nullopt;
    auto a = m.get_as<std::uint32_t>(gguf::alignment_key);
    return a ? std::optional<std::uint32_t>(*a) : std::nullopt;
}

}  // namespace quantize_detail
gguf::result<quant::type_override> make_tensor_type(std::string_view pattern, std::string_view type) {
    auto refuse = [&](std::string why) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.subject = std::string(pattern) + "=" + std::string(type);
        e.detail = std::move(why);
        return gguf::unexpected(std::move(e));
    };
    if (pattern.empty()) return refuse("the tensor name pattern is empty");
    if (type.empty()) return refuse("the type is empty");
    const auto t = gguf::tensor_type_from_name(type);
    if (!t) {
        // appended, not "'" + string: GCC 12 -O3 warns falsely (-Wrestrict) on a literal + std::string
        std::string why(1, '\'');
        why += gguf::escape(type);
        why += "' is not a ggml type name (q4_0, q4_K, q8_0, iq4_xs, f16, …)";
        return refuse(std::move(why));
    }
    quant::type_override o;
    o.pattern.assign(pattern);
    for (char& c : o.pattern) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    o.type = *t;
    return o;
}

gguf::result<quant::type_override> parse_tensor_type(std::string_view text) {
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
        gguf::error e;
        e.code = gguf::errc::bad_value_text;
        e.subject = text;
        e.detail = "expected PATTERN=TYPE (e.g. attn_v=q8_0)";
        return gguf::unexpected(std::move(e));
    }
    auto o = make_tensor_type(text.substr(0, eq), text.substr(eq + 1));
    if (!o) {
        gguf::error e = std::move(o).error();
        e.subject = text;
        return gguf::unexpected(std::move(e));
    }
    return o;
}

}  // namespace minfer::toolbox
