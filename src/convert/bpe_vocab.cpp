// The vocabulary keys as convert_hf_to_gguf.py writes them (bpe_vocab.hpp): get_vocab_base's tokens
// and types, then SpecialVocab's merges, special ids, add flags and chat template, whose rules are
// followed step by step (including its crude reading of a TemplateProcessing post-processor), since
// their order is the file's key order.
#include "minfer/convert/bpe_vocab.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <system_error>

#include "bpe_text.hpp"
#include "json_tree.hpp"
#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/pre_tokenizer.hpp"
#include "capped_file.hpp"

namespace minfer::convert {

namespace {

constexpr std::uint64_t side_file_max_bytes = 16u << 20;  // tokenizer_config.json, chat templates

struct convert_failure {
    gguf::error e;
};

[[noreturn]] void fail(gguf::errc code, std::string file, std::uint64_t offset, std::string_view subject, std::string detail) {
    convert_failure f;
    f.e.code = code;
    f.e.where = gguf::section::metadata;
    f.e.file = std::move(file);
    f.e.offset = offset;
    f.e.subject = subject;
    f.e.detail = std::move(detail);
    throw f;
}

[[noreturn]] void rethrow(gguf::error e) {
    convert_failure f;
    f.e = std::move(e);
    throw f;
}

// A small file beside the checkpoint: nullopt when it does not exist.
std::optional<std::string> read_side_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    auto text = detail::read_capped_file(path, side_file_max_bytes, codes::bad_tokenizer);
    if (!text) rethrow(std::move(text).error());
    return *std::move(text);
}

// A JSON object file (tokenizer_config.json, chat_template.json), kept alive with its views.
struct json_file {
    std::string path;
    std::shared_ptr<detail::json_tree> tree;
    json_value root() const { return tree ? json_access::view(tree.get(), 0) : json_value(); }
};

std::optional<json_file> read_json_object(const std::filesystem::path& path) {
    auto text = read_side_file(path);
    if (!text) return std::nullopt;
    json_file f;
    f.path = path.string();
    f.tree = std::make_shared<detail::json_tree>();
    detail::json_failure failure;
    if (!detail::build_json_tree(*text, 0, detail::json_tree_limits{}, *f.tree, failure)) {
        if (failure.out_of_memory) throw std::bad_alloc();
        fail(codes::bad_tokenizer, f.path, failure.offset, "", "not valid JSON: " + failure.detail);
    }
    if (f.root().kind() != json_kind::object)
        fail(codes::bad_tokenizer, f.path, 0, "", "not a JSON object");
    return f;
}

// A value as SpecialVocab's Python sees it: None, a string, or anything else (a dict, a number …),
// which only matters for its truthiness and never equals a string.
struct py_value {
    enum class kind : std::uint8_t { none, string, other } k = kind::none;
    std::string s;
    bool truthy_other = false;
    json_value json;  // for a dict: its content is read later

    static py_value of(const json_value& v) {
        py_value p;
        p.json = v;
        switch (v.kind()) {
            case json_kind::absent:
            case json_kind::null: break;
            case json_kind::string:
                p.k = kind::string;
                p.s = *v.as_string();
                break;
            case json_kind::boolean:
                p.k = kind::other;
                p.truthy_other = *v.as_bool();
                break;
            case json_kind::number:
                p.k = kind::other;
                p.truthy_other = v.as_double().value_or(0) != 0;
                break;
            case json_kind::array:
            case json_kind::object:
                p.k = kind::other;
                p.truthy_other = v.size() > 0;
                break;
        }
        return p;
    }
    static py_value string(std::string text) {
        py_value p;
        p.k = kind::string;
        p.s = std::move(text);
        return p;
    }
    bool truthy() const { return k == kind::string ? !s.empty() : k == kind::other && truthy_other; }
    bool is(std::string_view text) const { return k == kind::string && s == text; }
};

// The template piece's SpecialToken id: `piece.get('SpecialToken', {}).get('id')`.
py_value special_token_id(const json_value& piece) { return py_value::of(piece.member("SpecialToken").member("id")); }

// tokenizer_config.json with SpecialVocab's writes on top of it (it assigns keys while reading the
// post-processor and reads them back afterwards).
class token_config {
public:
    explicit token_config(std::optional<json_file> f) : file_(std::move(f)) {}
    bool present() const { return file_.has_value(); }
    // Python's `not tokenizer_config`: None or an empty dict (never written to while empty)
    bool truthy() const { return file_ && (file_->root().size() > 0 || !writes_.empty()); }
    py_value get(const std::string& key) const {
        if (const auto it = writes_.find(key); it != writes_.end()) return it->second;
        return file_ ? py_value::of(file_->root().member(key)) : py_value{};
    }
    json_value raw(std::string_view key) const { return file_ ? file_->root().member(key) : json_value(); }
    void set(const std::string& key, py_value v) { writes_[key] = std::move(v); }
    const std::string& path() const {
        static const std::string none;
        return file_ ? file_->path : none;
    }

private:
    std::optional<json_file> file_;
    std::map<std::string, py_value> writes_;
};

// A Python dict's insertion order: set() keeps a key's first place.
template <class V>
struct ordered {
    std::vector<std::pair<std::string, V>> items;
    V* find(std::string_view k) {
        for (auto& [key, v] : items)
            if (key == k) return &v;
        return nullptr;
    }
    void set(std::string_view k, V v) {
        if (V* at = find(k)) *at = std::move(v);
        else items.emplace_back(std::string(k), std::move(v));
    }
};

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    std::string out;
    std::size_t at = 0;
    for (std::size_t hit; (hit = s.find(from, at)) != std::string::npos; at = hit + from.size()) {
        out.append(s, at, hit - at);
        out += to;
    }
    out.append(s, at, std::string::npos);
    return out;
}

// transformers' PreTrainedTokenizerBase.clean_up_tokenization.
std::string clean_up_tokenization(std::string s) {
    static constexpr std::pair<std::string_view, std::string_view> rules[] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : rules) s = replace_all(std::move(s), from, to);
    return s;
}

// Python's text-mode read of a UTF-8 file: strict decoding, universal newlines.
std::string python_text(const std::string& bytes, const std::filesystem::path& path) {
    if (const std::size_t bad = detail::first_invalid_utf8(bytes); bad != std::string::npos)
        fail(codes::bad_tokenizer, path.string(), bad, "", "not UTF-8 (Python's read fails)");
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == '\r') {
            out += '\n';
            if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
        } else {
            out += bytes[i];
        }
    }
    return out;
}

class vocab_builder {
public:
    vocab_builder(const std::filesystem::path& dir, const hf_config& config, const bpe_vocab_options& options)
        : dir_(dir), config_(config), options_(options) {}

    std::vector<vocab_key> build() {
        const bool llama = config_.arch == architecture::llama || config_.arch == architecture::mistral;
        std::error_code ec;
        // Llama and Qwen2/Qwen3 try SentencePiece first; Qwen3-MoE's class goes to BPE directly
        if (config_.arch != architecture::qwen3_moe && std::filesystem::exists(dir_ / "tokenizer.model", ec))
            fail(codes::unsupported_tokenizer, (dir_ / "tokenizer.model").string(), 0, "tokenizer.model",
                 "a SentencePiece model: the reference converts it with sentencepiece, not as a byte-level BPE");
        auto tok = bpe_tokenizer::read(dir_ / "tokenizer.json");
        if (!tok) rethrow(std::move(tok).error());
        tokenizer_ = *std::move(tok);
        config_file_.emplace(read_json_object(dir_ / "tokenizer_config.json"));
        std::vector<vocab_key> out;
        if (llama) {
            const json_value prefix = config_file_->raw("add_prefix_space");
            if (!prefix.is_none()) {
                if (!prefix.as_bool())
                    fail(codes::bad_tokenizer, config_file_->path(), prefix.offset(), "add_prefix_space", "not a boolean");
                out.push_back({"tokenizer.ggml.add_space_prefix", *prefix.as_bool()});
            }
            if (config_file_->get("tokenizer_class").is("HybridDNATokenizer"))
                fail(codes::unsupported_tokenizer, config_file_->path(), 0, "tokenizer_class",
                     "HybridDNATokenizer (converted through its own vocabulary path)");
            if (config_.vocab_size == 32016)
                fail(codes::unsupported_tokenizer, config_.file, 0, "vocab_size",
                     "32016 (the reference adds CodeLlama's infill tokens for this size)");
        }
        tokens_and_types(out);
        special_vocab(out);
        // LlamaModel: "Apply to granite small models only"; a key set twice keeps its first place
        if (llama && config_.vocab_size == 49152) set_key(out, "tokenizer.ggml.add_bos_token", false);
        return out;
    }

private:
    const std::string& tokenizer_file() const { return tokenizer_.file(); }

    void tokens_and_types(std::vector<vocab_key>& out) {
        const std::uint32_t vocab_size = config_.vocab_size;
        if (tokenizer_.id_count() > vocab_size)
            fail(codes::bad_tokenizer, tokenizer_file(), 0, "vocab_size",
                 "token id " + std::to_string(tokenizer_.id_count() - 1) + " is not below config.json's vocab_size " +
                     std::to_string(vocab_size));
        std::string pre = options_.pre;
        if (!pre.empty()) {
            if (!is_supported_pre_tokenizer(pre))
                fail(codes::unsupported_tokenizer, tokenizer_file(), 0, pre,
                     "not a supported pre-tokenizer name (one of: " + supported_pre_tokenizer_names() + ")");
        } else {
            auto found = find_pre_tokenizer(tokenizer_);
            if (!found) rethrow(std::move(found).error());
            pre = *std::move(found);
        }
        std::vector<std::string> tokens;
        std::vector<std::int32_t> types;
        tokens.reserve(vocab_size);
        types.reserve(vocab_size);
        for (std::uint32_t i = 0; i < vocab_size; ++i) {
            const std::string_view text = tokenizer_.token_text(i);
            if (text.empty()) {
                tokens.push_back("[PAD" + std::to_string(i) + "]");
                types.push_back(static_cast<std::int32_t>(token_type::unused));
                continue;
            }
            const added_token* a = tokenizer_.find_added(i);
            if (a == nullptr) {
                tokens.emplace_back(text);
                types.push_back(static_cast<std::int32_t>(token_type::normal));
                continue;
            }
            std::string token(text);
            // "The tokenizer in llama.cpp assumes the CONTROL and USER_DEFINED tokens are
            // pre-normalized": a token matched in the raw text is encoded and decoded back
            if (!a->normalized) token = round_trip(token);
            if (a->special || looks_special(token)) {
                types.push_back(static_cast<std::int32_t>(token_type::control));
            } else {
                token = replace_all(std::move(token), "\xE2\x96\x81", " ");  // U+2581 as a space (Gemma)
                types.push_back(static_cast<std::int32_t>(token_type::user_defined));
            }
            tokens.push_back(std::move(token));
        }
        out.push_back({"tokenizer.ggml.model", std::string("gpt2")});
        out.push_back({"tokenizer.ggml.pre", std::move(pre)});
        out.push_back({"tokenizer.ggml.tokens", std::move(tokens)});
        out.push_back({"tokenizer.ggml.token_type", std::move(types)});
    }

    // decode(encode(token, add_special_tokens=False)) with transformers' clean-up as the reference
    // harness applies it.
    std::string round_trip(const std::string& token) {
        auto ids = tokenizer_.encode(token, false);
        if (!ids) rethrow(std::move(ids).error());
        auto text = tokenizer_.decode(*ids);
        if (!text) rethrow(std::move(text).error());
        const json_value configured = config_file_->raw("clean_up_tokenization_spaces");
        std::string cleaned = clean_up_tokenization(*text);
        if (configured.is_none()) {
            if (cleaned != *text)
                fail(codes::unsupported_tokenizer, config_file_->present() ? config_file_->path() : tokenizer_file(), 0,
                     token, "clean_up_tokenization_spaces is unset and transformers' clean-up (whose default changed "
                            "across versions) would change this added token");
            return *std::move(text);
        }
        if (!configured.as_bool())
            fail(codes::bad_tokenizer, config_file_->path(), configured.offset(), "clean_up_tokenization_spaces",
                 "not a boolean");
        return *configured.as_bool() ? cleaned : *std::move(text);
    }

    // gguf-py's SpecialVocab(dir, load_merges=True), then add_to_gguf.
    void special_vocab(std::vector<vocab_key>& out) {
        std::vector<std::string> types{"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
        ordered<std::uint32_t> ids;
        ordered<bool> add;
        const auto set_special = [&](const std::string& typ, std::optional<std::uint32_t> id) {
            if (id && !ids.find(typ)) ids.set(typ, *id);
        };

        std::vector<std::string> merges = tokenizer_.gguf_merges();
        token_config& tc = *config_file_;
        const json_value added_tokens = tokenizer_.raw().member("added_tokens");

        py_value special_bos = tc.get("bos_token"), special_cls = tc.get("cls_token");
        py_value special_eos = tc.get("eos_token"), special_sep = tc.get("sep_token");
        if (!special_bos.truthy() && special_cls.truthy() && tc.truthy()) {
            special_bos = special_cls;
            tc.set("bos_token", special_bos);
        }
        if (!special_eos.truthy() && special_sep.truthy() && tc.truthy()) {
            special_eos = special_sep;
            tc.set("eos_token", special_eos);
        }
        const json_value post = tokenizer_.raw().member("post_processor");
        if (post.kind() == json_kind::object && post.size() > 0) {
            std::vector<json_value> processors;
            if (const json_value list = post.member("processors"); list.present()) {
                for (std::size_t i = 0; i < list.size(); ++i) processors.push_back(list.at(i));
            } else {
                processors.push_back(post);
            }
            for (const json_value& p : processors) {
                if (!p.member("type").as_string() || *p.member("type").as_string() != "TemplateProcessing") continue;
                template_processing(p, types, add, tc, special_bos, special_cls, special_eos, special_sep);
            }
        }
        std::optional<vocab_value> chat_template;
        if (tc.truthy()) {
            chat_template = template_of(tc);
            for (const std::string& typ : types) {
                if (const json_value flag = tc.raw("add_" + typ + "_token"); flag.kind() == json_kind::boolean)
                    add.set(typ, *flag.as_bool());
                const py_value entry = tc.get(typ + "_token");
                std::string content;
                if (entry.k == py_value::kind::string) {
                    content = entry.s;
                } else if (entry.json.kind() == json_kind::object) {
                    const auto c = entry.json.member("content").as_string();
                    if (!c) continue;
                    content = *c;
                } else {
                    continue;
                }
                // the first added token with this content (tokenizer.json's list)
                for (std::size_t i = 0; i < added_tokens.size(); ++i)
                    if (added_tokens.at(i).member("content").as_string() == std::optional<std::string_view>(content)) {
                        set_special(typ, static_cast<std::uint32_t>(*added_tokens.at(i).member("id").as_uint()));
                        break;
                    }
            }
        }
        // config.json's <typ>_token_id: an integer (Python's isinstance(x, int): a bool too); a list
        // is ignored
        const json_value root = config_.raw();
        for (const std::string& typ : types) {
            const json_value v = root.member(typ + "_token_id");
            if (v.kind() == json_kind::boolean) {
                set_special(typ, *v.as_bool() ? 1u : 0u);
            } else if (v.kind() == json_kind::number && v.is_integer()) {
                if (v.as_int() && *v.as_int() < 0)
                    fail(codes::bad_model_config, config_.file, v.offset(), typ + "_token_id", "a negative token id");
                if (!v.as_uint() || *v.as_uint() > 0xFFFFFFFFu)
                    fail(codes::bad_model_config, config_.file, v.offset(), typ + "_token_id",
                         "a token id beyond 32 bits (GGUF's u32)");
                set_special(typ, static_cast<std::uint32_t>(*v.as_uint()));
            }
        }

        // add_to_gguf
        if (!merges.empty()) out.push_back({"tokenizer.ggml.merges", std::move(merges)});
        static constexpr std::pair<std::string_view, std::string_view> id_keys[] = {
            {"bos", "tokenizer.ggml.bos_token_id"},       {"eos", "tokenizer.ggml.eos_token_id"},
            {"unk", "tokenizer.ggml.unknown_token_id"},   {"sep", "tokenizer.ggml.seperator_token_id"},
            {"pad", "tokenizer.ggml.padding_token_id"},   {"mask", "tokenizer.ggml.mask_token_id"},
            {"eot", "tokenizer.ggml.eot_token_id"},       {"eom", "tokenizer.ggml.eom_token_id"}};
        for (const auto& [typ, id] : ids.items)
            for (const auto& [t, key] : id_keys)
                if (t == typ) set_key(out, key, id);  // GGUFWriter: "Duplicated key name", overwritten in place
        static constexpr std::pair<std::string_view, std::string_view> add_keys[] = {
            {"bos", "tokenizer.ggml.add_bos_token"}, {"eos", "tokenizer.ggml.add_eos_token"},
            {"sep", "tokenizer.ggml.add_sep_token"}};
        for (const auto& [typ, value] : add.items)
            for (const auto& [t, key] : add_keys)
                if (t == typ) set_key(out, key, value);
        if (chat_template) set_key(out, "tokenizer.chat_template", *std::move(chat_template));
    }

    // SpecialVocab._try_load_from_tokenizer_json's reading of a TemplateProcessing: the single
    // template's first and last special tokens decide add_bos/add_eos (and may move the EOS to eot or
    // eom), the pair template's middle decides add_sep.
    void template_processing(const json_value& p, std::vector<std::string>& types, ordered<bool>& add, token_config& tc,
                             py_value& special_bos, py_value& special_cls, py_value& special_eos,
                             py_value& special_sep) {
        const json_value single = p.member("single");
        const json_value pair = p.member("pair");
        py_value special_first, special_last;
        if (single.size() > 1) {
            special_first = special_token_id(single.at(0));
            if (special_first.truthy()) {
                if (!tc.truthy()) {
                    special_bos = special_first;
                } else if (!special_bos.is(special_first.s) && !special_cls.is(special_first.s)) {
                    if (!special_bos.truthy()) {
                        special_bos = special_first;
                        tc.set("bos_token", special_bos);
                    }
                    if (!special_cls.truthy()) {
                        special_cls = special_first;
                        tc.set("cls_token", special_cls);
                    }
                }
                add.set("bos", special_bos.is(special_first.s) || special_cls.is(special_first.s));
            }
            special_last = special_token_id(single.at(single.size() - 1));
            if (special_last.truthy()) {
                if (!tc.truthy()) {
                    special_eos = special_last;
                } else if (!special_eos.is(special_last.s)) {
                    if (std::find(types.begin(), types.end(), "eot") == types.end()) {
                        types.push_back("eot");
                        tc.set("eot_token", special_eos);
                    } else if (std::find(types.begin(), types.end(), "eom") == types.end()) {
                        types.push_back("eom");
                        tc.set("eom_token", special_eos);
                    }
                    special_eos = special_last;
                    tc.set("eos_token", special_eos);
                }
                add.set("eos", special_eos.is(special_last.s));
            }
        }
        if (pair.size() == 0) return;
        // tmpl_pair[seq_start:seq_stop], then the A … B check and tmpl_pair[1:-1]
        std::size_t begin = special_first.truthy() && special_token_id(pair.at(0)).is(special_first.s) ? 1 : 0;
        std::size_t end = pair.size();
        if (special_last.truthy() && special_token_id(pair.at(pair.size() - 1)).is(special_last.s)) end -= 1;
        if (begin >= end) return;
        const py_value a = py_value::of(pair.at(begin).member("Sequence").member("id"));
        const py_value b = py_value::of(pair.at(end - 1).member("Sequence").member("id"));
        if (!a.is("A") || !b.is("B")) return;
        ++begin;
        --end;
        if (begin >= end) return;
        bool add_sep = false;
        const py_value first = special_token_id(pair.at(begin));
        if (first.truthy() && (special_sep.is(first.s) || special_eos.is(first.s)) && !special_last.truthy()) add_sep = true;
        if (end - begin == 2) {
            const py_value second = special_token_id(pair.at(begin + 1));
            if (second.truthy() && (special_sep.is(second.s) || special_eos.is(second.s))) add_sep = true;
        }
        add.set("sep", add_sep);
        if (add_sep && !special_sep.truthy() && tc.truthy()) tc.set("sep_token", special_eos);
    }

    // tokenizer_config's chat_template, else chat_template.jinja, else chat_template.json's.
    std::optional<vocab_value> template_of(const token_config& tc) {
        std::optional<std::string> alternative;
        bool alternative_is_list = false;
        const auto jinja_path = dir_ / "chat_template.jinja";
        const auto json_path = dir_ / "chat_template.json";
        if (auto jinja = read_side_file(jinja_path)) {
            alternative = python_text(*jinja, jinja_path);
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(dir_ / "additional_chat_templates", ec))
                if (e.path().extension() == ".jinja") alternative_is_list = true;
        } else if (auto file = read_json_object(json_path)) {
            const json_value t = file->root().member("chat_template");
            if (t.kind() == json_kind::array) alternative_is_list = true;
            else if (t.as_string()) alternative = std::string(*t.as_string());
            else if (!t.is_none()) return std::nullopt;  // "Bad type for chat_template field": ignored
        }
        const json_value given = tc.raw("chat_template");
        if (given.present()) {
            if (given.kind() == json_kind::null) return std::nullopt;
            if (given.as_string()) return std::string(*given.as_string());
            if (given.kind() == json_kind::array)
                fail(codes::unsupported_tokenizer, tc.path(), given.offset(), "chat_template",
                     "a list of named templates (tokenizer.chat_templates) is not written by this converter");
            return std::nullopt;  // another type: the reference warns and ignores it
        }
        if (alternative_is_list)
            fail(codes::unsupported_tokenizer, (dir_ / "additional_chat_templates").string(), 0, "chat_template",
                 "additional chat templates (a list of named templates) are not written by this converter");
        if (alternative) return *std::move(alternative);
        return std::nullopt;
    }

    std::filesystem::path dir_;
    const hf_config& config_;
    const bpe_vocab_options& options_;
    bpe_tokenizer tokenizer_;
    std::optional<token_config> config_file_;
};

}  // namespace

bool looks_special(std::string_view t) noexcept {
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    if (t.starts_with("<|") && t.ends_with("|>")) return true;
    if (t.starts_with("<\xEF\xBD\x9C") && t.ends_with("\xEF\xBD\x9C>")) return true;  // <｜ … ｜>
    return t.starts_with("<unused") && t.ends_with(">");
}

gguf::result<std::vector<vocab_key>> bpe_vocab(const std::filesystem::path& dir, const hf_config& config,
                                              const bpe_vocab_options& options) noexcept {
    try {
        return vocab_builder(dir, config, options).build();
    } catch (convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("building the vocabulary"));
    }
}

}  // namespace minfer::convert
