// The sample model generator (see sample_model.hpp). All arithmetic is integer or plain IEEE f32
// (built with -ffp-contract=off, no libm calls), so the bytes are the same on every platform.
#include "sample_model.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "minfer/gguf/split.hpp"
#include "quant.hpp"

namespace minfer::sample {

const std::string_view chat_template =
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}"
    "{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

namespace {

// ---------------------------------------------------------------------------------------------
// Tokenizer

// The text the merges are learned from (written for this tool).
constexpr std::string_view corpus =
    "The lighthouse keeper kept a small notebook on the table beside the lamp. Every evening she\n"
    "wrote down the weather, the ships that passed, and the time the light was lit. The notebook\n"
    "was old, and the pages were thin, but the writing was clear and the numbers were careful.\n"
    "In the morning she walked down to the harbour to buy bread, fish and a little coffee. The\n"
    "people in the town knew her well. They asked about the sea, the wind and the birds, and she\n"
    "told them what she had seen: a storm in the north, a seal on the rocks, a boat with a red sail.\n"
    "\n"
    "A model file is a long list of numbers with a short list of names in front of it. The names\n"
    "tell the reader what the numbers mean: how many layers there are, how wide each layer is, which\n"
    "words the model knows and how to join their pieces together. The reader checks every name and\n"
    "every size before it trusts a single number, because a file that lies about its shape can make\n"
    "a program read memory that it does not own. When the checks pass, the numbers are mapped into\n"
    "memory and used where they lie, without being copied, and the model is ready to run.\n"
    "\n"
    "Small models are useful for testing. They load in a moment, they fit in a few pages of memory,\n"
    "and when something goes wrong the whole file can be printed and read by a person. A test that\n"
    "writes the same model twice should get the same bytes twice; if it does not, something in the\n"
    "writer depends on the time, the machine or the order in which things happened to be stored.\n"
    "\n"
    "The keeper said that the light was there for the ships that would never know her name. She\n"
    "cleaned the glass, turned the wick, and wound the clock that made the lamp go round. On quiet\n"
    "nights she read books about the stars and the tides, and on loud nights she listened to the\n"
    "waves and counted the seconds between the flashes: one, two, three, four, five, and again.\n"
    "Questions are welcome, answers are better, and a good answer is short, true and kind.\n";

enum class char_class { letter, digit, space, other };
char_class classify(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return char_class::letter;
    if (c >= '0' && c <= '9') return char_class::digit;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') return char_class::space;
    return char_class::other;
}

// A simplified Qwen2 pre-tokenizer for ASCII text: " ?letters", single digits, " ?punctuation",
// whitespace runs (leaving a last space to the word after them).
std::vector<std::string_view> pretokenize(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        const std::size_t start = i;
        if (s[i] == ' ' && i + 1 < n &&
            (classify(s[i + 1]) == char_class::letter || classify(s[i + 1]) == char_class::other))
            ++i;
        const char_class c = classify(s[i]);
        if (c == char_class::letter || c == char_class::other) {
            while (i < n && classify(s[i]) == c) ++i;
        } else if (c == char_class::digit) {
            ++i;
        } else {
            while (i < n && classify(s[i]) == char_class::space) ++i;
            if (i < n && i - start > 1 && s[i - 1] == ' ' && classify(s[i]) != char_class::digit) --i;
        }
        out.push_back(s.substr(start, i - start));
    }
    return out;
}

// GPT-2's byte order: the printable bytes first (they spell themselves), then the others mapped to
// U+0100 onwards.
std::array<std::uint32_t, 256> byte_code_points(std::array<std::uint8_t, 256>* id_order) {
    std::array<std::uint32_t, 256> cp{};
    std::array<bool, 256> printable{};
    std::size_t k = 0;
    auto keep = [&](unsigned lo, unsigned hi) {
        for (unsigned b = lo; b <= hi; ++b) {
            printable[b] = true;
            cp[b] = b;
            if (id_order != nullptr) (*id_order)[k] = static_cast<std::uint8_t>(b);
            ++k;
        }
    };
    keep(0x21, 0x7e);
    keep(0xa1, 0xac);
    keep(0xae, 0xff);
    std::uint32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
        if (printable[b]) continue;
        cp[b] = next++;
        if (id_order != nullptr) (*id_order)[k] = static_cast<std::uint8_t>(b);
        ++k;
    }
    return cp;
}

void append_utf8(std::string& s, std::uint32_t cp) {
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {  // every code point here is below U+0800
        s.push_back(static_cast<char>(0xc0u | (cp >> 6)));
        s.push_back(static_cast<char>(0x80u | (cp & 0x3fu)));
    }
}

// ---------------------------------------------------------------------------------------------
// Values

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

struct splitmix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Irwin-Hall: the sum of 12 uniform 24-bit draws, centred, has mean 0 and variance ~1. Summed as
    // integers and converted once, so the result is exact and portable.
    float normalish() {
        std::uint64_t sum = 0;
        for (int i = 0; i < 12; ++i) sum += next() >> 40;
        const std::int64_t twice_centred =
            2 * static_cast<std::int64_t>(sum) - 12 * ((std::int64_t{1} << 24) - 1);
        return static_cast<float>(twice_centred) * 0x1p-25f;
    }
};

constexpr std::uint64_t global_seed = 0x6d696e6665722d31ull;  // "minfer-1"

std::string size_label(std::uint64_t n) {
    const char* unit = "";
    std::uint64_t div = 1;
    if (n >= 1000000000ull) { unit = "B"; div = 1000000000ull; }
    else if (n >= 1000000ull) { unit = "M"; div = 1000000ull; }
    else if (n >= 1000ull) { unit = "K"; div = 1000ull; }
    // Integers at and above 10 units ("140K"), one decimal below ("0.5B" style: "7.2M").
    if (n / div >= 10 || div == 1) return std::to_string((n + div / 2) / div) + unit;
    const std::uint64_t tenths = (n * 10 + div / 2) / div;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + unit;
}

gguf::error split_error(gguf::errc code, std::uint64_t expected, std::uint64_t found, std::string detail) {
    gguf::error e;
    e.code = code;
    e.where = gguf::section::split;
    e.subject = "split.count";
    e.expected = expected;
    e.found = found;
    e.detail = std::move(detail);
    return e;
}

gguf::error oom_error() {
    gguf::error e;
    e.code = gguf::errc::out_of_memory;
    return e;
}

}  // namespace

std::string byte_to_unicode(std::uint8_t b) {
    static const std::array<std::uint32_t, 256> cp = byte_code_points(nullptr);
    std::string s;
    append_utf8(s, cp[b]);
    return s;
}

vocabulary sample_vocabulary() {
    vocabulary v;
    std::array<std::uint8_t, 256> order{};
    const std::array<std::uint32_t, 256> cp = byte_code_points(&order);
    std::array<std::uint32_t, 256> byte_id{};
    std::unordered_map<std::string, std::uint32_t> ids;
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::string t;
        append_utf8(t, cp[order[i]]);
        byte_id[order[i]] = i;
        ids.emplace(t, i);
        v.tokens.push_back(std::move(t));
    }

    // Distinct pre-tokens with their counts, each as a sequence of token ids.
    std::map<std::string_view, std::uint64_t> counts;
    for (std::string_view w : pretokenize(corpus)) ++counts[w];
    std::vector<std::pair<std::vector<std::uint32_t>, std::uint64_t>> words;
    for (const auto& [w, c] : counts) {
        std::vector<std::uint32_t> seq;
        for (char ch : w) seq.push_back(byte_id[static_cast<unsigned char>(ch)]);
        words.emplace_back(std::move(seq), c);
    }

    // BPE: repeatedly merge the most frequent adjacent pair (ties: the smallest ids).
    const std::size_t target = n_vocab - 3;
    while (v.tokens.size() < target) {
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> pairs;
        for (const auto& [seq, c] : words)
            for (std::size_t i = 0; i + 1 < seq.size(); ++i) pairs[{seq[i], seq[i + 1]}] += c;
        if (pairs.empty()) break;
        auto best = pairs.begin();
        for (auto it = pairs.begin(); it != pairs.end(); ++it)
            if (it->second > best->second) best = it;
        const auto [a, b] = best->first;
        std::string merged = v.tokens[a] + v.tokens[b];
        v.merges.push_back(v.tokens[a] + " " + v.tokens[b]);
        std::uint32_t id;
        if (auto found = ids.find(merged); found != ids.end()) {
            id = found->second;
        } else {
            id = static_cast<std::uint32_t>(v.tokens.size());
            ids.emplace(merged, id);
            v.tokens.push_back(std::move(merged));
        }
        for (auto& [seq, c] : words) {
            std::vector<std::uint32_t> out;
            out.reserve(seq.size());
            for (std::size_t i = 0; i < seq.size(); ++i) {
                if (i + 1 < seq.size() && seq[i] == a && seq[i + 1] == b) {
                    out.push_back(id);
                    ++i;
                } else {
                    out.push_back(seq[i]);
                }
            }
            seq = std::move(out);
        }
    }
    v.token_types.assign(v.tokens.size(), token_type_normal);
    for (std::string_view s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
        v.tokens.emplace_back(s);
        v.token_types.push_back(token_type_control);
    }
    return v;
}

std::size_t tensor_spec::n_elements() const noexcept {
    std::size_t n = 1;
    for (std::int64_t d : ne) n *= static_cast<std::size_t>(d);
    return n;
}

std::vector<tensor_spec> sample_tensor_specs() {
    using tt = gguf::tensor_type;
    constexpr auto e = static_cast<std::int64_t>(n_embd);
    constexpr auto f = static_cast<std::int64_t>(n_ff);
    constexpr auto kv = static_cast<std::int64_t>(n_head_kv * head_dim);
    constexpr auto nv = static_cast<std::int64_t>(n_vocab);
    constexpr float w = 0.02f;
    std::vector<tensor_spec> s;
    s.push_back({"token_embd.weight", tt::q4_0, {e, nv}, 0.0f, w});
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        s.push_back({p + "attn_norm.weight", tt::f32, {e}, 1.0f, w});
        s.push_back({p + "attn_q.weight", tt::q4_0, {e, e}, 0.0f, w});
        s.push_back({p + "attn_q.bias", tt::f32, {e}, 0.0f, w});
        s.push_back({p + "attn_k.weight", tt::q4_0, {e, kv}, 0.0f, w});
        s.push_back({p + "attn_k.bias", tt::f32, {kv}, 0.0f, w});
        s.push_back({p + "attn_v.weight", tt::q4_0, {e, kv}, 0.0f, w});
        s.push_back({p + "attn_v.bias", tt::f32, {kv}, 0.0f, w});
        s.push_back({p + "attn_output.weight", tt::q4_0, {e, e}, 0.0f, w});
        s.push_back({p + "ffn_norm.weight", tt::f32, {e}, 1.0f, w});
        s.push_back({p + "ffn_gate.weight", tt::q4_0, {e, f}, 0.0f, w});
        s.push_back({p + "ffn_up.weight", tt::q4_0, {e, f}, 0.0f, w});
        s.push_back({p + "ffn_down.weight", tt::f16, {f, e}, 0.0f, w});
    }
    s.push_back({"output_norm.weight", tt::f32, {e}, 1.0f, w});
    s.push_back({"output.weight", tt::q8_0, {e, nv}, 0.0f, w});
    return s;
}

std::vector<float> sample_values(const tensor_spec& spec) {
    splitmix64 rng{fnv1a(spec.name) ^ global_seed};
    std::vector<float> v(spec.n_elements());
    for (float& x : v) x = spec.mean + spec.scale * rng.normalish();
    return v;
}

std::vector<std::byte> sample_tensor_bytes(const tensor_spec& spec) {
    const std::vector<float> v = sample_values(spec);
    std::vector<std::byte> out;
    switch (spec.type) {
        case gguf::tensor_type::f32: {
            const auto b = std::as_bytes(std::span<const float>(v));
            out.assign(b.begin(), b.end());
            break;
        }
        case gguf::tensor_type::f16: {
            std::vector<std::uint16_t> h(v.size());
            if (!convert_f32_to_f16(v, h)) return {};
            const auto b = std::as_bytes(std::span<const std::uint16_t>(h));
            out.assign(b.begin(), b.end());
            break;
        }
        case gguf::tensor_type::q4_0:
            out.resize(q4_0_bytes(v.size()));
            if (!quantize_q4_0(v, out)) return {};
            break;
        case gguf::tensor_type::q8_0:
            out.resize(q8_0_bytes(v.size()));
            if (!quantize_q8_0(v, out)) return {};
            break;
        default:
            return {};
    }
    return out;
}

void add_sample_metadata(gguf::writer& w) {
    std::uint64_t n_params = 0;
    for (const tensor_spec& s : sample_tensor_specs()) n_params += s.n_elements();
    const vocabulary v = sample_vocabulary();

    w.set_string("general.architecture", "qwen2");
    w.set_string("general.type", "model");
    w.set_string("general.name", "Minfer Sample Qwen2");
    w.set_string("general.size_label", size_label(n_params));
    w.set_u32("qwen2.block_count", n_layer);
    w.set_u32("qwen2.context_length", n_ctx_train);
    w.set_u32("qwen2.embedding_length", n_embd);
    w.set_u32("qwen2.feed_forward_length", n_ff);
    w.set_u32("qwen2.attention.head_count", n_head);
    w.set_u32("qwen2.attention.head_count_kv", n_head_kv);
    w.set_f32("qwen2.rope.freq_base", rope_freq_base);
    w.set_f32("qwen2.attention.layer_norm_rms_epsilon", rms_norm_eps);
    w.set_u32("general.file_type", file_type);
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", "qwen2");
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(v.tokens));
    w.set_array("tokenizer.ggml.token_type", gguf::value_type::i32, std::span<const std::int32_t>(v.token_types));
    w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(v.merges));
    w.set_u32("tokenizer.ggml.eos_token_id", eos_token_id);
    w.set_u32("tokenizer.ggml.padding_token_id", pad_token_id);
    w.set_u32("tokenizer.ggml.bos_token_id", bos_token_id);
    w.set_bool("tokenizer.ggml.add_bos_token", false);
    w.set_string("tokenizer.chat_template", chat_template);
    w.set_u32("general.quantization_version", 2);
}

gguf::result<std::vector<gguf::writer>> sample_model_writers(int n_splits) noexcept {
    try {
        const std::vector<tensor_spec> specs = sample_tensor_specs();
        const std::size_t n_tensors = specs.size();
        if (n_splits < 0 || static_cast<std::size_t>(n_splits) > n_tensors)
            return gguf::unexpected(split_error(gguf::errc::split_bad_key, n_tensors,
                                                static_cast<std::uint64_t>(static_cast<std::int64_t>(n_splits)),
                                                "the split count must be 1 to the number of tensors"));
        const std::size_t n_parts = n_splits == 0 ? 1 : static_cast<std::size_t>(n_splits);
        std::vector<gguf::writer> parts(n_parts);
        add_sample_metadata(parts[0]);
        if (n_splits > 0) {
            for (std::size_t p = 0; p < n_parts; ++p) {
                parts[p].set_u16("split.no", static_cast<std::uint16_t>(p));
                parts[p].set_u16("split.count", static_cast<std::uint16_t>(n_parts));
                parts[p].set_i32("split.tensors.count", static_cast<std::int32_t>(n_tensors));
            }
        }
        for (std::size_t i = 0; i < n_tensors; ++i) {
            const tensor_spec& s = specs[i];
            const std::vector<std::byte> bytes = sample_tensor_bytes(s);
            // Part p holds tensors [p * T / N, (p + 1) * T / N): in order, sizes differing by at most one.
            const std::size_t p = i * n_parts / n_tensors;
            parts[p].add_tensor(s.name, s.type, s.ne, bytes);
        }
        return parts;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(oom_error());
    }
}

std::vector<std::filesystem::path> sample_model_paths(const std::filesystem::path& out, int n_splits) {
    if (n_splits <= 0) return {out};
    std::string name = out.filename().string();
    constexpr std::string_view ext = ".gguf";
    if (name.size() > ext.size() && name.ends_with(ext)) name.resize(name.size() - ext.size());
    std::vector<std::filesystem::path> paths;
    const auto n = static_cast<std::uint32_t>(n_splits);
    for (std::uint32_t i = 0; i < n; ++i) paths.push_back(out.parent_path() / gguf::split_file_name(name, i, n));
    return paths;
}

gguf::result<std::vector<written_file>> make_sample_model(const std::filesystem::path& out, int n_splits) noexcept {
    try {
        auto writers = sample_model_writers(n_splits);
        if (!writers) return gguf::unexpected(std::move(writers).error());
        const std::vector<std::filesystem::path> paths = sample_model_paths(out, n_splits);
        std::vector<written_file> files;
        for (std::size_t i = 0; i < paths.size(); ++i) {
            if (auto r = (*writers)[i].write(paths[i]); !r) return gguf::unexpected(std::move(r).error());
            std::error_code ec;
            const std::uintmax_t size = std::filesystem::file_size(paths[i], ec);
            if (ec) {
                gguf::error e;
                e.code = gguf::errc::io_error;
                e.file = paths[i].string();
                e.detail = "stat";
                e.sys_errno = ec.value();
                return gguf::unexpected(std::move(e));
            }
            files.push_back({paths[i], static_cast<std::uint64_t>(size)});
        }
        return files;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(oom_error());
    }
}

}  // namespace minfer::sample
