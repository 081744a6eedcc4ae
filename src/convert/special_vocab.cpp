// gguf-py's SpecialVocab for a checkpoint without tokenizer.json (special_vocab.hpp).
#include "special_vocab.hpp"

#include <dirent.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <variant>

#include "json_events.hpp"  // in_quotes
#include "minfer/convert/errors.hpp"
#include "minfer/convert/spm_vocab.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::convert::detail {
namespace {

// SpecialVocab.special_token_types, in its order, with the GGUF keys gguf-py's writer has for each
// (add_<typ>_token_id and add_add_<typ>_token; an empty key: no handler, the value is dropped).
struct special_type {
    std::string_view name;
    std::string_view id_key;
    std::string_view add_key;
};
constexpr std::array<special_type, 7> special_types{{
    {"bos", tokenizer_key::bos_id, tokenizer_key::add_bos},
    {"eos", tokenizer_key::eos_id, tokenizer_key::add_eos},
    {"unk", tokenizer_key::unk_id, {}},
    {"sep", tokenizer_key::sep_id, tokenizer_key::add_sep},
    {"pad", tokenizer_key::pad_id, {}},
    {"cls", {}, {}},
    {"mask", tokenizer_key::mask_id, {}},
}};

const special_token_id& config_id(const hf_config& c, std::string_view type) {
    if (type == "bos") return c.bos_token_id;
    if (type == "eos") return c.eos_token_id;
    if (type == "unk") return c.unk_token_id;
    if (type == "sep") return c.sep_token_id;
    if (type == "pad") return c.pad_token_id;
    if (type == "cls") return c.cls_token_id;
    return c.mask_token_id;
}

// A chat template as the reference holds it: none, one text, or a list of named choices.
struct template_choice {
    std::string name;                    // as given (sanitized when written)
    std::optional<std::string> text;     // None: the choice is skipped
};
using chat_template_value = std::variant<std::monostate, std::string, std::vector<template_choice>>;

// The list form of a JSON value (tokenizer_config.json's or chat_template.json's chat_template): each
// item an object whose name (default "") and template (default None) are strings.
std::vector<template_choice> choices_of(const json_value& list, const std::string& file) {
    std::vector<template_choice> choices;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json_value item = list.at(i);
        if (item.kind() != json_kind::object)
            fail_file(codes::bad_tokenizer, file, item.offset(), "chat_template",
                      "a chat template list item that is " + std::string(describe(item.kind())) +
                          ", not an object of name and template");
        template_choice c;
        const json_value name = item.member("name");
        if (name.present()) {
            const std::optional<std::string_view> s = name.as_string();
            if (!s) fail_file(codes::bad_tokenizer, file, name.offset(), "chat_template",
                              "a template name that is " + std::string(describe(name.kind())) + ", not a string");
            c.name = std::string(*s);
        }
        const json_value text = item.member("template");
        if (!text.is_none()) {
            const std::optional<std::string_view> s = text.as_string();
            if (!s) fail_file(codes::bad_tokenizer, file, text.offset(), "chat_template",
                              "a template that is " + std::string(describe(text.kind())) + ", not a string");
            c.text = std::string(*s);
        }
        choices.push_back(std::move(c));
    }
    return choices;
}

// A JSON chat_template as SpecialVocab takes it: None, a str, a list; anything else is ignored with a
// warning.
chat_template_value template_of(const json_value& v, const std::string& file, std::vector<std::string>& warnings) {
    if (v.is_none()) return std::monostate{};
    if (const std::optional<std::string_view> s = v.as_string()) return std::string(*s);
    if (v.kind() == json_kind::array) return choices_of(v, file);
    warnings.push_back("Bad type for chat_template field in " + in_quotes(file) + " (" + std::string(describe(v.kind())) +
                       ") - ignoring");
    return std::monostate{};
}

// Path.stem of a name ending in ".jinja".
std::string stem_of(const std::string& name) { return name == ".jinja" ? name : name.substr(0, name.size() - 6); }

// chat_template.jinja, with additional_chat_templates/*.jinja the list form ({"default": it} first).
// The reference lists the folder in the order the file system gives (os.scandir): sorted by name here.
chat_template_value jinja_templates(const std::filesystem::path& dir) {
    std::optional<std::string> main = read_text_if_file(dir / "chat_template.jinja", tokenizer_file_max_bytes);
    if (!main) return std::monostate{};
    const std::filesystem::path extra_dir = dir / "additional_chat_templates";
    std::vector<std::string> names;
    if (detail::is_directory(extra_dir)) {
        // opendir/readdir: libstdc++'s non-throwing directory_iterator allocates inside noexcept
        // functions, so a failed allocation there would be std::terminate
        const std::unique_ptr<DIR, int (*)(DIR*)> listing(::opendir(extra_dir.c_str()), &::closedir);
        if (!listing)
            fail_file(gguf::errc::io_error, extra_dir.string(), 0, "", std::strerror(errno), gguf::section::file);
        for (;;) {
            errno = 0;
            const dirent* entry = ::readdir(listing.get());
            if (entry == nullptr) {
                if (errno != 0)
                    fail_file(gguf::errc::io_error, extra_dir.string(), 0, "", std::strerror(errno), gguf::section::file);
                break;
            }
            const std::string_view name(entry->d_name);
            if (name.ends_with(".jinja")) names.emplace_back(name);
        }
        std::sort(names.begin(), names.end());
    }
    if (names.empty()) return std::move(*main);
    std::vector<template_choice> choices;
    choices.push_back({"default", std::move(*main)});
    for (const std::string& name : names) {
        const std::filesystem::path p = extra_dir / name;
        std::optional<std::string> text = read_text_if_file(p, tokenizer_file_max_bytes);
        if (!text)  // the reference opens whatever the glob lists: a folder or a dangling link fails there
            fail_file(codes::bad_tokenizer, p.string(), 0, "", "not a file (the reference reads every *.jinja listed here)",
                      gguf::section::file);
        choices.push_back({stem_of(name), std::move(*text)});
    }
    return choices;
}

// GGUFWriter.add_chat_template's name filter: each character (code point) outside [A-Za-z0-9] becomes
// '_'. A byte that starts no UTF-8 character (a file name's) counts as one character, as Python's
// surrogate escapes make it.
std::string sanitized(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size();) {
        const char c = name[i];
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out += alnum ? c : '_';
        const std::size_t n = gguf::utf8_length_at(name, i);
        i += n == 0 ? 1 : n;
    }
    return out;
}

void add_chat_template(chat_template_value value, std::vector<vocab_key>& keys) {
    if (std::holds_alternative<std::monostate>(value)) return;
    if (std::string* text = std::get_if<std::string>(&value)) {
        set_key(keys, tokenizer_key::chat_template, std::move(*text));
        return;
    }
    std::optional<std::string> default_text;
    std::vector<std::string> names;  // the reference keeps a set: its order is Python's hash order; first seen here
    for (template_choice& c : std::get<std::vector<template_choice>>(value)) {
        std::string name = sanitized(c.name);
        if (name.empty() || !c.text) continue;
        if (name == "default") {
            default_text = std::move(c.text);
            continue;
        }
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        set_key(keys, std::string(tokenizer_key::chat_template_prefix) + name, std::move(*c.text));
    }
    if (!names.empty()) set_key(keys, tokenizer_key::chat_templates, std::move(names));
    if (default_text) set_key(keys, tokenizer_key::chat_template, std::move(*default_text));
}

}  // namespace

void add_special_vocab(const special_vocab_input& in, std::vector<vocab_key>& keys, std::vector<std::string>& warnings) {
    // _try_load_from_config_json: each type's id, an integer below n_vocab (hf_config has refused
    // negative ones and non-integers; a list is ignored)
    std::vector<std::pair<const special_type*, std::uint32_t>> ids;
    for (const special_type& t : special_types) {
        const std::optional<std::int64_t> id = config_id(in.config, t.name).single();
        if (!id) continue;
        if (static_cast<std::uint64_t>(*id) >= in.n_vocab) {
            warnings.push_back("Special token type " + std::string(t.name) + ", id " + std::to_string(*id) +
                               " out of range, must be under " + std::to_string(in.n_vocab) + " - skipping");
            continue;
        }
        ids.emplace_back(&t, static_cast<std::uint32_t>(*id));
    }

    // _try_load_from_tokenizer_json without tokenizer.json: only when tokenizer_config.json is a
    // non-empty object (the caller has refused one that is not an object)
    std::vector<std::pair<const special_type*, bool>> adds;
    chat_template_value chat_template;
    const bool config_given = in.tokenizer_config && in.tokenizer_config->root().size() > 0;
    if (config_given) {
        const json_value root = in.tokenizer_config->root();
        const std::string& file = in.tokenizer_config->path;
        // chat_template.jinja is read whether or not tokenizer_config.json's chat_template wins, as the
        // reference reads it (so a broken one fails either way); chat_template.json only without it
        chat_template_value alternative = jinja_templates(in.directory);
        if (std::holds_alternative<std::monostate>(alternative)) {
            if (const std::optional<json_file> json = read_json_if_file(in.directory / "chat_template.json", tokenizer_file_max_bytes)) {
                const json_value r = json->root();
                if (r.kind() != json_kind::object)
                    fail_file(codes::bad_tokenizer, json->path, r.offset(), "",
                              std::string(describe(r.kind())) + ", not a JSON object");
                alternative = template_of(r.member("chat_template"), json->path, warnings);
            }
        }
        const json_value own = root.member("chat_template");
        chat_template = own.present() ? template_of(own, file, warnings) : std::move(alternative);

        for (const special_type& t : special_types) {
            const std::string key = "add_" + std::string(t.name) + "_token";
            const json_value add = root.member(key);
            if (const std::optional<bool> b = add.as_bool()) {
                adds.emplace_back(&t, *b);
            } else if (!add.is_none()) {
                warnings.push_back(in_quotes(key) + " in " + in_quotes(file) + " is " + std::string(describe(add.kind())) +
                                   ", not a bool: ignored, as the reference ignores it");
            }
        }
    }

    // add_to_gguf: ids, then add_*_token, then the chat template
    for (const auto& [t, id] : ids) {
        if (t->id_key.empty()) {
            warnings.push_back("No handler for special token type " + std::string(t->name) + " with id " +
                               std::to_string(id) + " - skipping");
            continue;
        }
        set_key(keys, t->id_key, id);
    }
    for (const auto& [t, value] : adds) {
        if (t->add_key.empty()) {
            warnings.push_back("No handler for add_" + std::string(t->name) + "_token with value " +
                               (value ? "True" : "False") + " - skipping");
            continue;
        }
        set_key(keys, t->add_key, value);
    }
    add_chat_template(std::move(chat_template), keys);
}

}  // namespace minfer::convert::detail
