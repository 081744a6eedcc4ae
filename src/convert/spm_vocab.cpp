// The SentencePiece vocabulary as convert_hf_to_gguf.py builds it (the rules, in order, are in
// minfer/convert/spm_vocab.hpp).
#include "minfer/convert/spm_vocab.hpp"

#include <limits>

#include "json_events.hpp"  // in_quotes
#include "minfer/convert/errors.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "special_vocab.hpp"
#include "tokenizer_files.hpp"

namespace minfer::convert {
namespace {

using detail::fail_file;
using detail::in_quotes;
using detail::json_file;

// The scores the reference gives what it adds: its padding, and added tokens.
constexpr float pad_score = -10000.0f;
constexpr float added_score = -1000.0f;

constexpr std::string_view sentencepiece_space = "\xE2\x96\x81";  // U+2581, sentencepiece's space

[[noreturn]] void unsupported(const std::filesystem::path& file, std::string_view subject, std::string detail) {
    fail_file(codes::unsupported_tokenizer, file.string(), 0, subject, std::move(detail), gguf::section::file);
}

[[noreturn]] void bad(const json_file& f, const json_value& at, std::string_view subject, std::string detail) {
    fail_file(codes::bad_tokenizer, f.path, at.present() ? at.offset() : f.root().offset(), subject, std::move(detail));
}

// TextModel.does_token_look_special.
bool looks_special(std::string_view t) noexcept {
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    if (t.starts_with("<|") && t.ends_with("|>")) return true;
    if (t.starts_with("<\xEF\xBD\x9C") && t.ends_with("\xEF\xBD\x9C>")) return true;  // U+FF5C, DeepSeek's fullwidth bar
    return t.starts_with("<unused") && t.ends_with(">");
}

// The type _create_vocab_sentencepiece gives piece `id`: the Python API's tests in its order.
token_type type_of_piece(const sentencepiece_model& m, std::size_t id) noexcept {
    if (m.is_unknown(id)) return token_type::unknown;
    if (m.is_control(id)) return token_type::control;
    if (m.is_unused(id)) return token_type::unused;
    if (m.is_byte(id)) return token_type::byte;
    return token_type::normal;  // NORMAL and USER_DEFINED
}

std::string replaced_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (s.substr(i).starts_with(sentencepiece_space)) {
            out += ' ';
            i += sentencepiece_space.size();
        } else {
            out += s[i++];
        }
    }
    return out;
}

// An added_tokens_decoder key, int(key): decimal digits only here (Python also takes signs, spaces,
// underscores and other scripts' digits); saturates past 64 bits (then it is out of range anyway).
std::optional<std::uint64_t> decimal_id(std::string_view s) noexcept {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        v = v > (std::numeric_limits<std::uint64_t>::max() - d) / 10 ? std::numeric_limits<std::uint64_t>::max() : v * 10 + d;
    }
    return v;
}

class vocab_builder {
public:
    vocab_builder(const std::filesystem::path& dir, const hf_config& config, spm_vocab& v)
        : dir_(dir), config_(config), v_(v) {}

    void build() {
        const bool llama = config_.arch == architecture::llama || config_.arch == architecture::mistral;
        if (config_.arch == architecture::qwen3_moe)
            unsupported(dir_ / sentencepiece_model_file_name, config_.architecture_name,
                        "the reference builds " + config_.architecture_name +
                            "'s vocabulary from tokenizer.json only (Qwen2MoeModel has no SentencePiece path)");
        if (llama && detail::is_file(dir_ / "tekken.json") && !detail::is_file(dir_ / "tokenizer.json"))
            unsupported(dir_ / "tekken.json", "tekken.json",
                        "Mistral's own tokenizer format (the reference converts it with mistral_common), not converted");

        // which vocabulary this is, before any file is read (LlamaModel reads tokenizer_config.json
        // first, but every path after it reads it again: only the error reported can differ)
        if (!has_sentencepiece_model(dir_))
            unsupported(dir_ / sentencepiece_model_file_name, sentencepiece_model_file_name,
                        "no tokenizer.model: not a SentencePiece vocabulary (the reference reads tokenizer.json then)");
        if (detail::is_file(dir_ / "tokenizer.json"))
            unsupported(dir_ / "tokenizer.json", "tokenizer.json",
                        "tokenizer.json beside tokenizer.model: the reference's SpecialVocab would take special ids, "
                        "add_bos/add_eos and normalizer flags from it, which is not implemented here");

        tokenizer_config_ = detail::read_json_if_file(dir_ / "tokenizer_config.json", tokenizer_file_max_bytes);
        if (tokenizer_config_ && tokenizer_config_->root().kind() != json_kind::object)
            bad(*tokenizer_config_, tokenizer_config_->root(), "",
                std::string(describe(tokenizer_config_->root().kind())) + ", not a JSON object");
        if (llama && tokenizer_config_) llama_tokenizer_config();

        auto model = read_sentencepiece_model(dir_ / sentencepiece_model_file_name);
        if (!model) throw detail::convert_failure{std::move(model).error()};
        v_.pieces = model->size();
        const std::uint32_t n_vocab = vocab_size();
        pieces(*model, n_vocab);
        added_tokens_json(n_vocab);
        added_tokens_decoder(n_vocab);

        set_key(v_.keys, tokenizer_key::model, std::string("llama"));
        set_key(v_.keys, tokenizer_key::pre, std::string("default"));
        set_key(v_.keys, tokenizer_key::tokens, vocab_array::tokens);
        set_key(v_.keys, tokenizer_key::scores, vocab_array::scores);
        set_key(v_.keys, tokenizer_key::token_type, vocab_array::token_types);
        detail::add_special_vocab({dir_, config_, tokenizer_config_, n_vocab}, v_.keys, v_.warnings);
        if (llama) llama_special_cases();
    }

private:
    // LlamaModel.set_vocab's look at tokenizer_config.json before the vocabulary.
    void llama_tokenizer_config() {
        const json_value root = tokenizer_config_->root();
        const json_value prefix = root.member("add_prefix_space");
        if (!prefix.is_none()) {
            const std::optional<bool> b = prefix.as_bool();
            if (!b)
                bad(*tokenizer_config_, prefix, "add_prefix_space",
                    std::string(describe(prefix.kind())) + "; expected true or false");
            set_key(v_.keys, tokenizer_key::add_space_prefix, *b);
        }
        if (root.member("tokenizer_class").as_string() == std::optional<std::string_view>("HybridDNATokenizer"))
            unsupported(tokenizer_config_->path, "tokenizer_class",
                        "HybridDNATokenizer: the reference builds that vocabulary otherwise, not converted");
    }

    // find_hparam(["vocab_size_per_layer_input", "vocab_size"]): the first key present, null included.
    std::uint32_t vocab_size() const {
        const json_value per_layer = config_.raw().member("vocab_size_per_layer_input");
        if (per_layer.present() && per_layer.as_uint() != std::optional<std::uint64_t>(config_.vocab_size))
            fail_file(codes::bad_model_config, config_.file, per_layer.offset(), "vocab_size_per_layer_input",
                      "differs from vocab_size (" + std::to_string(config_.vocab_size) +
                          "): the reference would size the vocabulary by it and write the other as llama.vocab_size");
        if (config_.vocab_size > spm_vocab_max_tokens) {
            const json_value v = config_.raw().member("vocab_size");
            fail_file(codes::bad_model_config, config_.file, v.offset(), "vocab_size",
                      std::to_string(config_.vocab_size) + " tokens, more than the " +
                          std::to_string(spm_vocab_max_tokens) + " a vocabulary may have here",
                      gguf::section::metadata, spm_vocab_max_tokens, config_.vocab_size);
        }
        return config_.vocab_size;
    }

    // _create_vocab_sentencepiece: every id padding first, then the pieces that fit.
    void pieces(const sentencepiece_model& m, std::uint32_t n_vocab) {
        v_.tokens.reserve(n_vocab);
        for (std::uint32_t i = 0; i < n_vocab; ++i) v_.tokens.push_back("[PAD" + std::to_string(i) + "]");
        v_.scores.assign(n_vocab, pad_score);
        v_.token_types.assign(n_vocab, static_cast<std::int32_t>(token_type::unused));
        for (std::size_t id = 0; id < m.size(); ++id) {
            if (id >= n_vocab) {
                v_.warnings.push_back("ignore tokens from " + std::to_string(id) + ": id is out of range, max=" +
                                      std::to_string(n_vocab - 1));
                break;
            }
            v_.tokens[id] = m.pieces[id].piece;
            v_.scores[id] = m.pieces[id].score;
            v_.token_types[id] = static_cast<std::int32_t>(type_of_piece(m, id));
        }
    }

    void added_tokens_json(std::uint32_t n_vocab) {
        const std::optional<json_file> f = detail::read_json_if_file(dir_ / "added_tokens.json", tokenizer_file_max_bytes);
        if (!f) return;
        const json_value root = f->root();
        if (root.kind() != json_kind::object)
            bad(*f, root, "", std::string(describe(root.kind())) + ", not a JSON object of token text to id");
        for (std::size_t i = 0; i < root.size(); ++i) {
            const std::string_view text = root.key_at(i);
            const json_value id = root.at(i);
            const std::optional<std::uint64_t> u = id.as_uint();
            if (!u)
                bad(*f, id, text,
                    (id.as_int() ? "a negative token id" : std::string(describe(id.kind()))) +
                        "; expected a token id (a non-negative integer)");
            if (*u >= n_vocab) {
                v_.warnings.push_back("ignore token " + std::to_string(*u) + ": id is out of range, max=" +
                                      std::to_string(n_vocab - 1));
                continue;
            }
            v_.tokens[*u] = std::string(text);
            v_.scores[*u] = added_score;
            v_.token_types[*u] = static_cast<std::int32_t>(token_type::user_defined);
        }
    }

    void added_tokens_decoder(std::uint32_t n_vocab) {
        if (!tokenizer_config_) return;
        const json_file& f = *tokenizer_config_;
        const json_value decoder = f.root().member("added_tokens_decoder");
        if (!decoder.present()) return;
        if (decoder.kind() != json_kind::object)
            bad(f, decoder, "added_tokens_decoder",
                std::string(describe(decoder.kind())) + ", not an object of token id to token");
        for (std::size_t i = 0; i < decoder.size(); ++i) {
            const std::string_view key = decoder.key_at(i);
            const json_value entry = decoder.at(i);
            const std::optional<std::uint64_t> id = decimal_id(key);
            if (!id) bad(f, entry, "added_tokens_decoder", "key " + in_quotes(key) + " is not a token id (decimal digits)");
            if (entry.kind() != json_kind::object)
                bad(f, entry, "added_tokens_decoder",
                    "token " + std::string(key) + " is " + std::string(describe(entry.kind())) + ", not an object");
            const json_value content = entry.member("content");
            const std::optional<std::string_view> text = content.as_string();
            if (!text)
                bad(f, content.present() ? content : entry, "added_tokens_decoder",
                    "token " + std::string(key) + "'s content is " + std::string(describe(content.kind())) + ", not a string");
            const json_value special = entry.member("special");
            if (!special.is_none() && !special.as_bool())
                bad(f, special, "added_tokens_decoder",
                    "token " + std::string(key) + "'s special is " + std::string(describe(special.kind())) +
                        "; expected true or false");
            if (*id >= n_vocab) {
                v_.warnings.push_back("ignore token " + std::to_string(*id) + ": id is out of range, max=" +
                                      std::to_string(n_vocab - 1));
                continue;
            }
            const std::size_t at = static_cast<std::size_t>(*id);
            if (v_.token_types[at] != static_cast<std::int32_t>(token_type::unused) && v_.tokens[at] != *text)
                v_.warnings.push_back("replacing token " + std::to_string(at) + ": " + in_quotes(v_.tokens[at]) + " -> " +
                                      in_quotes(*text));
            if (special.as_bool().value_or(false) || looks_special(*text)) {
                v_.token_types[at] = static_cast<std::int32_t>(token_type::control);
                v_.tokens[at] = std::string(*text);
            } else {
                v_.token_types[at] = static_cast<std::int32_t>(token_type::user_defined);
                v_.tokens[at] = replaced_spaces(*text);  // pre-normalized user-defined spaces
            }
            v_.scores[at] = added_score;
        }
    }

    // LlamaModel.set_vocab after the vocabulary: CodeLlama's end-of-turn token, Granite's add_bos.
    void llama_special_cases() {
        if (config_.vocab_size == 32016) {
            // a second SpecialVocab with the types prefix, suffix, middle, eot: only eot has a GGUF key;
            // config.json's <type>_token_id first, else 32007 … 32010 (no n_vocab there, so no range check)
            for (const auto& [type, fallback] : {std::pair<std::string_view, int>{"prefix", 32007}, {"suffix", 32008}, {"middle", 32009}}) {
                const std::optional<std::int64_t> id = config_.raw().member(std::string(type) + "_token_id").as_int();
                v_.warnings.push_back("No handler for special token type " + std::string(type) + " with id " +
                                      std::to_string(id && *id >= 0 ? *id : fallback) + " - skipping");
            }
            std::uint32_t eot = 32010;
            const json_value given = config_.raw().member("eot_token_id");
            if (given.kind() == json_kind::number && given.is_integer()) {
                const std::optional<std::uint64_t> u = given.as_uint();
                if (!u || *u > std::numeric_limits<std::uint32_t>::max())
                    fail_file(codes::bad_model_config, config_.file, given.offset(), "eot_token_id",
                              "a token id that is negative or beyond 32 bits");
                eot = static_cast<std::uint32_t>(*u);
            } else if (given.kind() == json_kind::boolean) {
                fail_file(codes::bad_model_config, config_.file, given.offset(), "eot_token_id",
                          "a boolean; expected a token id");
            }
            set_key(v_.keys, tokenizer_key::eot_id, eot);
        }
        if (config_.vocab_size == 49152) {
            if (find_key(v_.keys, tokenizer_key::add_bos) != nullptr)
                v_.warnings.push_back("Duplicated key name 'tokenizer.ggml.add_bos_token', overwriting it with new value False "
                                      "of type BOOL");
            set_key(v_.keys, tokenizer_key::add_bos, false);
        }
    }

    const std::filesystem::path& dir_;
    const hf_config& config_;
    spm_vocab& v_;
    std::optional<json_file> tokenizer_config_;
};

}  // namespace

bool has_sentencepiece_model(const std::filesystem::path& directory) noexcept {
    try {
        return detail::is_file(directory / sentencepiece_model_file_name);
    } catch (...) {  // the path's allocation
        return false;
    }
}

gguf::result<spm_vocab> build_spm_vocab(const std::filesystem::path& directory, const hf_config& config) noexcept {
    try {
        spm_vocab v;
        vocab_builder(directory, config, v).build();
        return v;
    } catch (detail::convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {  // std::bad_alloc
        return gguf::unexpected(gguf::out_of_memory_error("building a SentencePiece vocabulary"));
    }
}

}  // namespace minfer::convert
