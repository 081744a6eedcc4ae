// Fixture generator for the open-time benchmark. See fixtures.hpp.
#include "fixtures.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unistd.h>

#include "minfer/gguf/split.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::bench {
namespace {

namespace fs = std::filesystem;
using gguf::tensor_type;
using gguf::value_type;
using gguf::writer;

// splitmix64: tiny, deterministic, good enough for fake token text.
class rng {
public:
    explicit rng(std::uint64_t seed) noexcept : s_(seed) {}
    std::uint64_t next() noexcept {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint32_t below(std::uint32_t n) noexcept { return static_cast<std::uint32_t>(next() % n); }

private:
    std::uint64_t s_;
};

constexpr std::string_view space_mark = "\xC4\xA0";  // 'Ġ', the byte-level BPE marker for a leading space

void append_letters(std::string& out, std::size_t n, rng& r) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t x = r.below(64);
        out.push_back(x < 52 ? static_cast<char>('a' + x % 26) : static_cast<char>(x < 60 ? 'a' + x % 8 : 'A' + x % 26));
    }
}

// A word of exactly `len` bytes, sometimes with the leading-space marker.
std::string word(std::size_t len, rng& r) {
    std::string s;
    s.reserve(len);
    if (len >= 3 && r.below(2) == 0) {
        s.append(space_mark);
        len -= space_mark.size();
    }
    append_letters(s, len, r);
    return s;
}

// Specials named like a ChatML-style model's; the rest of the vocabulary after them is padding.
constexpr std::array<std::string_view, 22> special_names = {
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
    "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"};

struct vocab {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;  // 1 normal, 3 control, 6 byte
    std::uint32_t first_special = 0;
};

// 256 byte tokens, then words whose lengths cycle through 1..17 (mean 9), then the specials, then
// "[PADn]" up to the vocabulary size.
vocab make_vocab(std::uint32_t n) {
    vocab v;
    v.tokens.reserve(n);
    v.types.reserve(n);
    rng r(0x51A7E5EEDull + n);
    const std::uint32_t n_pad = n >= 151936 ? 271u : 0u;
    const std::uint32_t n_words_end = n - n_pad - static_cast<std::uint32_t>(special_names.size());
    v.first_special = n_words_end;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::string t;
        std::int32_t type = 1;
        if (i < 256) {
            // GPT-2's byte alphabet: printable ASCII as itself, other bytes as a 2-byte code point.
            if (i >= 33 && i <= 126) {
                t.push_back(static_cast<char>(i));
            } else {
                const std::uint32_t cp = 256 + i;
                t.push_back(static_cast<char>(0xC0 | (cp >> 6)));
                t.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
            }
        } else if (i < n_words_end) {
            t = word(1 + (i * 7u) % 17u, r);
        } else if (i < n_words_end + special_names.size()) {
            t = special_names[i - n_words_end];
            type = 3;
        } else {
            t = "[PAD" + std::to_string(i) + "]";
            type = 3;
        }
        v.tokens.push_back(std::move(t));
        v.types.push_back(type);
    }
    return v;
}

// `n` merges "left right" whose byte lengths sum to exactly `total` (each at least 3 bytes).
std::vector<std::string> make_merges(std::uint32_t n, std::uint64_t total) {
    std::vector<std::string> m;
    if (n == 0) return m;
    if (total < 3ull * n) throw std::runtime_error("merges: byte budget too small");
    std::vector<std::uint32_t> len(n);
    const std::uint64_t base = total / n;
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        // A spread of -5..+5 around the mean, never below 3 bytes.
        const std::int64_t delta = static_cast<std::int64_t>((i * 5u) % 11u) - 5;
        const std::int64_t l = std::max<std::int64_t>(3, static_cast<std::int64_t>(base) + delta);
        len[i] = static_cast<std::uint32_t>(l);
        sum += len[i];
    }
    // Correct the sum to the exact budget, one byte at a time over the first merges.
    for (std::uint32_t i = 0; sum != total; i = (i + 1) % n) {
        if (sum < total) {
            ++len[i];
            ++sum;
        } else if (len[i] > 3) {
            --len[i];
            --sum;
        }
    }
    rng r(0x3E6E5ull + n);
    m.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t left = 1 + r.below(len[i] - 2);  // left + ' ' + right, right >= 1
        std::string s = word(left, r);
        s.push_back(' ');
        append_letters(s, len[i] - 1 - left, r);
        m.push_back(std::move(s));
    }
    return m;
}

// A ChatML-style Jinja template of exactly `n` bytes (padded with a Jinja comment).
std::string chat_template(std::size_t n) {
    std::string t =
        "{%- if tools %}\n"
        "    {{- '<|im_start|>system\\n' }}\n"
        "    {%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}{%- else %}"
        "{{- 'You are a helpful assistant.' }}{%- endif %}\n"
        "    {{- '\\n\\n# Tools\\n\\nYou may call one or more functions. Signatures:\\n<tools>' }}\n"
        "    {%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}\n"
        "    {{- '\\n</tools>\\n\\nReturn each call as JSON inside <tool_call></tool_call> tags.<|im_end|>\\n' }}\n"
        "{%- else %}\n"
        "    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
        "    {%- else %}\n"
        "        {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}\n"
        "    {%- endif %}\n"
        "{%- endif %}\n"
        "{%- for message in messages %}\n"
        "    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}\n"
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n"
        "    {%- elif message.role == 'assistant' %}\n"
        "        {{- '<|im_start|>assistant' }}\n"
        "        {%- if message.content %}{{- '\\n' + message.content }}{%- endif %}\n"
        "        {%- for call in message.tool_calls | default([]) %}\n"
        "            {{- '\\n<tool_call>\\n{\"name\": \"' + call.function.name + '\", \"arguments\": ' }}\n"
        "            {{- call.function.arguments | tojson + '}\\n</tool_call>' }}\n"
        "        {%- endfor %}\n"
        "        {{- '<|im_end|>\\n' }}\n"
        "    {%- elif message.role == 'tool' %}\n"
        "        {{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}\n";
    if (t.size() > n) throw std::runtime_error("chat template: requested size too small");
    std::size_t pad = n - t.size();
    if (pad >= 7) {
        t += "{# ";
        t.append(pad - 7, '.');
        t += " #}\n";
    } else {
        t.append(pad, '\n');
    }
    return t;
}

struct tensor_spec {
    std::string name;
    tensor_type type;
    std::vector<std::int64_t> ne;
};

std::vector<tensor_spec> qwen_tensors(const qwen_options& o) {
    constexpr std::int64_t embd = 896, ffn = 4864, kv = 128;
    const std::int64_t vocab = o.vocab;
    std::vector<tensor_spec> t;
    t.push_back({"token_embd.weight", tensor_type::q4_0, {embd, vocab}});
    for (std::uint32_t b = 0; b < o.blocks; ++b) {
        const std::string p = "blk." + std::to_string(b) + ".";
        t.push_back({p + "attn_k.bias", tensor_type::f32, {kv}});
        t.push_back({p + "attn_k.weight", tensor_type::q4_0, {embd, kv}});
        t.push_back({p + "attn_norm.weight", tensor_type::f32, {embd}});
        t.push_back({p + "attn_output.weight", tensor_type::q4_0, {embd, embd}});
        t.push_back({p + "attn_q.bias", tensor_type::f32, {embd}});
        t.push_back({p + "attn_q.weight", tensor_type::q4_0, {embd, embd}});
        t.push_back({p + "attn_v.bias", tensor_type::f32, {kv}});
        t.push_back({p + "attn_v.weight", tensor_type::q4_0, {embd, kv}});
        t.push_back({p + "ffn_down.weight", tensor_type::q4_0, {ffn, embd}});
        t.push_back({p + "ffn_gate.weight", tensor_type::q4_0, {embd, ffn}});
        t.push_back({p + "ffn_norm.weight", tensor_type::f32, {embd}});
        t.push_back({p + "ffn_up.weight", tensor_type::q4_0, {embd, ffn}});
    }
    t.push_back({"output_norm.weight", tensor_type::f32, {embd}});
    t.push_back({"output.weight", tensor_type::q8_0, {embd, vocab}});
    return t;
}

// Encoded sizes, to steer the layout to the reference offsets.
std::uint64_t key_bytes(std::string_view key) { return 8 + key.size() + 4; }
std::uint64_t strings_bytes(std::span<const std::string> v) {
    std::uint64_t n = 0;
    for (const std::string& s : v) n += 8 + s.size();
    return n;
}

// Sets the model's metadata and tracks its encoded size (everything after the 24-byte header).
class meta {
public:
    explicit meta(writer& w) noexcept : w_(w) {}
    void str(std::string_view k, std::string_view v) {
        w_.set_string(k, v);
        bytes_ += key_bytes(k) + 8 + v.size();
    }
    void u32(std::string_view k, std::uint32_t v) {
        w_.set_u32(k, v);
        bytes_ += key_bytes(k) + 4;
    }
    void f32(std::string_view k, float v) {
        w_.set_f32(k, v);
        bytes_ += key_bytes(k) + 4;
    }
    void boolean(std::string_view k, bool v) {
        w_.set_bool(k, v);
        bytes_ += key_bytes(k) + 1;
    }
    void strings(std::string_view k, std::span<const std::string> v) {
        w_.set_strings(k, v);
        bytes_ += key_bytes(k) + 12 + strings_bytes(v);
    }
    template <class T>
    void array(std::string_view k, value_type t, std::span<const T> v) {
        w_.set_array(k, t, v);
        bytes_ += key_bytes(k) + 12 + v.size_bytes();
    }
    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    writer& w_;
    std::uint64_t bytes_ = 0;
};

constexpr std::size_t template_bytes = 2'484;  // about the size of a real ChatML tool-use template

void write_or_throw(const writer& w, const fs::path& path) {
    auto r = w.write(path);
    if (!r) throw std::runtime_error("writing " + path.string() + ": " + r.error().message());
}

}  // namespace

fixture write_qwen(const fs::path& dir, const std::string& name, const std::string& stem, const qwen_options& o) {
    if (o.split_parts == 0) throw std::runtime_error("split_parts must be >= 1");
    const vocab v = make_vocab(o.vocab);
    const bool spm = o.merges == 0;  // no merges: a SentencePiece-style vocabulary with scores
    // Merges at a mean of ~10 bytes unless steered to the reference layout below.
    std::vector<std::string> merges = make_merges(o.merges, 10ull * o.merges);

    writer w;
    meta m(w);
    m.str("general.architecture", "qwen2");
    m.str("general.type", "model");
    m.str("general.name", "Qwen2.5 0.5B Instruct");
    m.str("general.finetune", "Instruct");
    m.str("general.basename", "Qwen2.5");
    m.str("general.size_label", "0.5B");
    m.u32("qwen2.block_count", o.blocks);
    m.u32("qwen2.context_length", 32768);
    m.u32("qwen2.embedding_length", 896);
    m.u32("qwen2.feed_forward_length", 4864);
    m.u32("qwen2.attention.head_count", 14);
    m.u32("qwen2.attention.head_count_kv", 2);
    m.f32("qwen2.rope.freq_base", 1000000.0f);
    m.f32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
    m.u32("general.file_type", 2);  // LLAMA_FTYPE_MOSTLY_Q4_0
    m.str("tokenizer.ggml.model", spm ? "llama" : "gpt2");
    m.str("tokenizer.ggml.pre", "qwen2");
    m.strings("tokenizer.ggml.tokens", v.tokens);
    m.array("tokenizer.ggml.token_type", value_type::i32, std::span<const std::int32_t>(v.types));
    if (spm) {
        std::vector<float> scores(o.vocab);
        for (std::uint32_t i = 0; i < o.vocab; ++i) scores[i] = -static_cast<float>(i);
        m.array("tokenizer.ggml.scores", value_type::f32, std::span<const float>(scores));
    } else {
        m.strings("tokenizer.ggml.merges", merges);
    }
    m.u32("tokenizer.ggml.eos_token_id", v.first_special + 2);      // <|im_end|>
    m.u32("tokenizer.ggml.padding_token_id", v.first_special);      // <|endoftext|>
    m.u32("tokenizer.ggml.bos_token_id", v.first_special);
    m.boolean("tokenizer.ggml.add_bos_token", false);
    m.str("tokenizer.chat_template", chat_template(template_bytes));
    m.u32("general.quantization_version", 2);

    const bool steer = o.match_reference_layout && !spm;  // a split set keeps (a)'s metadata + split keys
    if (steer) {
        // Re-make the merges so that the metadata ends exactly where the real file's does.
        const std::uint64_t end = 24 + m.bytes();
        const std::uint64_t merges_now = strings_bytes(merges) - 8ull * merges.size();
        const auto want = static_cast<std::int64_t>(merges_now) +
                          (static_cast<std::int64_t>(qwen_reference_metadata_end) - static_cast<std::int64_t>(end));
        if (want < 3 * static_cast<std::int64_t>(o.merges)) throw std::runtime_error("qwen fixture: layout budget");
        merges = make_merges(o.merges, static_cast<std::uint64_t>(want));
        w.set_strings("tokenizer.ggml.merges", merges);  // replaces the value in place
    }

    const std::vector<tensor_spec> tensors = qwen_tensors(o);
    fixture f;
    f.name = name;
    f.n_tensors = tensors.size();
    for (const tensor_spec& t : tensors) f.tensor_names.push_back(t.name);

    const std::uint32_t n_parts = o.split_parts;
    const std::size_t per_part = (tensors.size() + n_parts - 1) / n_parts;
    for (std::uint32_t p = 0; p < n_parts; ++p) {
        writer part;
        writer& pw = p == 0 ? w : part;
        if (n_parts > 1) {
            pw.set_u16("split.no", static_cast<std::uint16_t>(p));
            pw.set_u16("split.count", static_cast<std::uint16_t>(n_parts));
            pw.set_i32("split.tensors.count", static_cast<std::int32_t>(tensors.size()));
        }
        const std::size_t lo = std::min(tensors.size(), p * per_part);
        const std::size_t hi = std::min(tensors.size(), lo + per_part);
        for (std::size_t i = lo; i < hi; ++i) pw.add_zero_tensor(tensors[i].name, tensors[i].type, tensors[i].ne);
        const fs::path path =
            dir / (n_parts > 1 ? gguf::split_file_name(stem, p, n_parts) : stem + ".gguf");
        write_or_throw(pw, path);
        if (p == 0) f.n_kv = pw.kv_count();
        f.parts.push_back(path);
        f.file_bytes += fs::file_size(path);
    }
    f.entry = f.parts.front();
    return f;
}

fixture write_many_tensors(const fs::path& dir, const std::string& name, std::uint32_t n) {
    writer w;
    w.set_string("general.architecture", "bench");
    w.set_string("general.name", "many tensors");
    w.set_u32("bench.tensor_count", n);
    fixture f;
    f.name = name;
    const std::array<std::int64_t, 1> ne{32};
    for (std::uint32_t i = 0; i < n; ++i) {
        // MoE-like names: 64 experts per block.
        std::string t = "blk." + std::to_string(i / 64) + ".ffn_up_exps." + std::to_string(i % 64) + ".weight";
        w.add_zero_tensor(t, tensor_type::f32, ne);
        f.tensor_names.push_back(std::move(t));
    }
    const fs::path path = dir / (name + ".gguf");
    write_or_throw(w, path);
    f.entry = path;
    f.parts = {path};
    f.n_kv = w.kv_count();
    f.n_tensors = n;
    f.file_bytes = fs::file_size(path);
    return f;
}

fixture write_many_kvs(const fs::path& dir, const std::string& name, std::uint32_t n) {
    writer w;
    w.set_string("general.architecture", "bench");
    char key[32];
    for (std::uint32_t i = 0; i < n; ++i) {
        const int len = std::snprintf(key, sizeof key, "bench.kv.%07u", i);
        w.set_u32(std::string_view(key, static_cast<std::size_t>(len)), i);
    }
    const fs::path path = dir / (name + ".gguf");
    write_or_throw(w, path);
    fixture f;
    f.name = name;
    f.entry = path;
    f.parts = {path};
    f.n_kv = n + 1ull;
    f.n_tensors = 0;
    f.file_bytes = fs::file_size(path);
    return f;
}

std::vector<fixture> write_all(const fs::path& dir, bool large) {
    std::vector<fixture> all;
    all.push_back(write_qwen(dir, "qwen", "qwen2.5-0.5b-instruct-q4_0"));
    qwen_options split;
    split.split_parts = 2;
    all.push_back(write_qwen(dir, "qwen_split", "qwen2.5-0.5b-instruct-q4_0-split", split));
    if (large) {
        qwen_options big;
        big.vocab = 262144;
        big.merges = 0;
        big.match_reference_layout = false;
        all.push_back(write_qwen(dir, "vocab262k", "vocab-262144", big));
        // 1x, 10x, 100x: open must scale linearly in the number of tensors and of KVs.
        all.push_back(write_many_tensors(dir, "tensors1k", 1'000));
        all.push_back(write_many_tensors(dir, "tensors10k", 10'000));
        all.push_back(write_many_tensors(dir, "tensors100k", 100'000));
        all.push_back(write_many_kvs(dir, "kv10k", 10'000));
        all.push_back(write_many_kvs(dir, "kv100k", 100'000));
        all.push_back(write_many_kvs(dir, "kv1m", 1'000'000));
    }
    return all;
}

fs::path make_scratch_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/minfer-bench-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    return tmpl;
}

}  // namespace minfer::bench
