// manifest: parsing llama-gguf-hash's manifests strictly, and matching their entries to a model by
// file name and tensor name (never by the path string as typed).
#include "minfer/check/manifest.hpp"
#include "errors.hpp"
#include "minfer/gguf/read_capped.hpp"
#include "minfer/check/errors.hpp"

#include <algorithm>
#include <map>
#include <set>


namespace minfer::check {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

std::vector<hash_kind> manifest::kinds() const {
    std::vector<hash_kind> out;
    for (hash_kind k : {hash_kind::sha256, hash_kind::sha1, hash_kind::xxh64, hash_kind::xxh3, hash_kind::uuid})
        if (std::any_of(entries.begin(), entries.end(), [&](const manifest_entry& e) { return e.kind == k; }))
            out.push_back(k);
    return out;
}

std::optional<hash_kind> manifest::strongest() const {
    const auto ks = kinds();
    if (ks.empty()) return std::nullopt;
    return ks.front();  // kinds() is in strength order
}

std::string_view to_string(entry_status s) noexcept {
    switch (s) {
        case entry_status::ok: return "Ok";
        case entry_status::mismatch: return "Mismatch";
        case entry_status::not_found: return "Not Found";
    }
    return "?";
}

std::string_view to_string(check_outcome o) noexcept {
    switch (o) {
        case check_outcome::success: return "Success";
        case check_outcome::mismatch: return "Failure";
        case check_outcome::no_entries: return "Manifest Missing Entry";
        case check_outcome::unknown_tensors: return "Unknown Tensors In Manifest";
        case check_outcome::incomplete: return "Tensors Missing From Manifest";
    }
    return "?";
}

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// The next whitespace-separated word of `s` (consumed from it).
std::string_view next_word(std::string_view& s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    std::size_t n = 0;
    while (n < s.size() && !is_space(s[n])) ++n;
    const std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
}

std::string_view last_component(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What an entry's name says, relative to one file name.
struct target {
    bool this_file = false;
    bool model = false;       // PATH alone
    std::string_view tensor;  // PATH:TENSOR
};

target resolve(std::string_view name, std::string_view file_name) noexcept {
    target t;
    if (file_name.empty()) return t;
    if (last_component(name) == file_name) {
        t.this_file = t.model = true;
        return t;
    }
    // PATH:TENSOR where PATH's last component is file_name: the leftmost "file_name:" that starts
    // the name or follows a '/'.
    for (std::size_t q = name.find(file_name); q != std::string_view::npos; q = name.find(file_name, q + 1)) {
        const std::size_t colon = q + file_name.size();
        if ((q == 0 || name[q - 1] == '/') && colon < name.size() && name[colon] == ':' && colon + 1 < name.size()) {
            t.this_file = true;
            t.tensor = name.substr(colon + 1);
            return t;
        }
    }
    return t;
}

// The file an entry is about, for a manifest that names one file only: up to ".gguf" when the
// name holds ".gguf:" (PATH:TENSOR), else the whole name; its last component.
std::string_view entry_file(std::string_view name) noexcept {
    const auto g = name.find(".gguf:");
    if (g != std::string_view::npos) name = name.substr(0, g + 5);
    return last_component(name);
}

error bad_line(std::uint32_t line, std::string_view type, std::string detail) {
    error e;
    e.code = check::codes::manifest_bad_line;
    e.where = gguf::section::file;
    e.index = line;
    e.subject = type;
    e.detail = std::move(detail);
    return e;
}

}  // namespace

result<manifest> parse_manifest(std::string_view text, std::string path) noexcept {
    try {
        manifest man;
        man.path = std::move(path);
        std::uint32_t line_no = 0;
        while (!text.empty()) {
            const auto nl = text.find('\n');
            std::string_view line = text.substr(0, nl);
            text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
            ++line_no;
            const std::string_view type = next_word(line);
            const auto kind = parse_hash_kind(type);
            if (!kind) continue;  // blank, a comment, a type we do not know: skipped, as llama-gguf-hash does
            const std::string_view hash = next_word(line);
            if (hash.empty()) {
                error e = bad_line(line_no, type, "has no hash");
                e.file = man.path;
                return unexpected(std::move(e));
            }
            std::string why;
            auto value = parse_digest(*kind, hash, &why);
            if (!value) {
                error e = bad_line(line_no, type, why);
                e.file = man.path;
                return unexpected(std::move(e));
            }
            const std::string_view name = trim(line);
            if (name.empty()) {
                error e = bad_line(line_no, type, "names no file or tensor");
                e.file = man.path;
                return unexpected(std::move(e));
            }
            man.entries.push_back(manifest_entry{*kind, *value, std::string(name), line_no});
        }
        return man;
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

result<manifest> read_manifest(const std::filesystem::path& path) noexcept {
    // Bounded from the start (gguf::read_capped): a FIFO, /dev/zero or a huge file costs at most
    // the cap before it is refused, never more.
    auto text = gguf::read_capped(path, max_manifest_bytes, check::codes::manifest_too_large);
    if (!text) return unexpected(std::move(text).error());
    try {
        return parse_manifest(*text, path.string());
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

check_report check_manifest(const manifest& man, const gguf::model& m, std::string_view file_name,
                            const model_digests& digests) {
    check_report rep;
    const auto tensors = m.tensors();

    auto matches_file = [&](std::string_view name) {
        return std::any_of(man.entries.begin(), man.entries.end(),
                           [&](const manifest_entry& e) { return resolve(e.name, name).this_file; });
    };
    std::string chosen(file_name);
    if (!matches_file(chosen)) {
        std::set<std::string_view> files;
        for (const auto& e : man.entries) files.insert(entry_file(e.name));
        if (files.size() == 1) {
            chosen = std::string(*files.begin());
            rep.renamed = true;
        }
    }
    rep.file_name = chosen;

    const auto checked = [&](hash_kind k) {
        return std::find(digests.kinds.begin(), digests.kinds.end(), k) != digests.kinds.end();
    };
    // First entry per (kind, target); later entries with another hash are conflicts.
    constexpr std::int64_t model_target = -1;
    std::map<std::pair<hash_kind, std::int64_t>, const manifest_entry*> first;
    bool tensor_entries = false;
    for (const auto& e : man.entries) {
        if (!checked(e.kind)) continue;
        const target t = resolve(e.name, chosen);
        if (!t.this_file) continue;
        std::int64_t index = model_target;
        if (!t.model) {
            tensor_entries = true;
            const auto* ref = m.find_tensor(t.tensor);
            if (ref == nullptr) {
                rep.unknown_tensors.push_back(&e);
                continue;
            }
            index = ref - tensors.data();
        }
        const auto [it, inserted] = first.try_emplace({e.kind, index}, &e);
        if (!inserted && !(it->second->value == e.value)) rep.conflicting.push_back(&e);
    }

    auto line_for = [&](hash_kind k, std::int64_t index, const digest& ours) {
        check_line l;
        l.kind = k;
        l.ours = ours;
        l.tensor = index;
        const auto it = first.find({k, index});
        if (it != first.end()) {
            l.entry = it->second;
            l.status = it->second->value == ours ? entry_status::ok : entry_status::mismatch;
        }
        return l;
    };
    std::vector<bool> covered(tensors.size(), false);
    if (!digests.tensors.empty()) {
        for (std::size_t t = 0; t < tensors.size(); ++t)
            for (std::size_t i = 0; i < digests.kinds.size(); ++i) {
                if (digests.kinds[i] == hash_kind::uuid) continue;
                rep.lines.push_back(line_for(digests.kinds[i], static_cast<std::int64_t>(t), digests.tensors[t][i]));
                if (rep.lines.back().status != entry_status::not_found) covered[t] = true;
            }
        if (tensor_entries)
            for (std::size_t t = 0; t < tensors.size(); ++t)
                if (!covered[t]) rep.missing_tensors.push_back(static_cast<std::uint32_t>(t));
    }
    for (std::size_t i = 0; i < digests.kinds.size(); ++i)
        rep.lines.push_back(line_for(digests.kinds[i], model_target, digests.model[i]));

    const bool any_found = std::any_of(rep.lines.begin(), rep.lines.end(),
                                       [](const check_line& l) { return l.status != entry_status::not_found; });
    const bool any_mismatch = std::any_of(rep.lines.begin(), rep.lines.end(),
                                          [](const check_line& l) { return l.status == entry_status::mismatch; });
    if (any_mismatch || !rep.conflicting.empty()) rep.outcome = check_outcome::mismatch;
    else if (!any_found && rep.unknown_tensors.empty()) rep.outcome = check_outcome::no_entries;
    else if (!rep.unknown_tensors.empty()) rep.outcome = check_outcome::unknown_tensors;
    else if (!rep.missing_tensors.empty()) rep.outcome = check_outcome::incomplete;
    else rep.outcome = check_outcome::success;
    return rep;
}

}  // namespace minfer::check
