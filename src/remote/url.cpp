// URLs: recognising them, hf:// names, file names and siblings.
#include "minfer/remote/url.hpp"

#include <cstddef>
#include <new>
#include <string>
#include <vector>

namespace minfer::remote {
namespace {

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_ci(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (lower(s[i]) != prefix[i]) return false;
    return true;
}

bool is_alnum(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_unreserved(char c) noexcept { return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

gguf::error bad(std::string_view text, std::string why) {
    gguf::error e;
    e.code = gguf::errc::bad_value_text;
    e.file = std::string(text);
    e.detail = std::move(why);
    return e;
}

// The Hub's user and repository names: letters, digits, '-', '_', '.', not starting or ending with
// '-' or '.', no "--" or "..", at most 96 characters.
bool hub_name(std::string_view s) noexcept {
    if (s.empty() || s.size() > 96) return false;
    for (char c : s)
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
    if (s.front() == '-' || s.front() == '.' || s.back() == '-' || s.back() == '.') return false;
    return s.find("--") == std::string_view::npos && s.find("..") == std::string_view::npos;
}

// A path segment of a file in a repository: unreserved characters and a few more, not "." or "..".
bool file_segment(std::string_view s) noexcept {
    if (s.empty() || s == "." || s == "..") return false;
    for (char c : s)
        if (!is_unreserved(c) && c != '+' && c != '=' && c != ',' && c != '@' && c != '(' && c != ')') return false;
    return true;
}

std::string percent_encode(std::string_view s, bool keep_slash) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (char c : s) {
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            out += c;
        } else {
            const auto b = static_cast<unsigned char>(c);
            out += '%';
            out += hex[b >> 4];
            out += hex[b & 15];
        }
    }
    return out;
}

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

struct url_parts {
    std::size_t path_begin = 0;  // the '/' after the authority (or npos: no path)
    std::size_t path_end = 0;    // the '?' or '#' or the end
};

url_parts split_url(std::string_view url) noexcept {
    url_parts p;
    const std::size_t scheme = url.find("://");
    const std::size_t auth = scheme == std::string_view::npos ? 0 : scheme + 3;
    p.path_end = url.find_first_of("?#", auth);
    if (p.path_end == std::string_view::npos) p.path_end = url.size();
    p.path_begin = url.find('/', auth);
    if (p.path_begin != std::string_view::npos && p.path_begin > p.path_end) p.path_begin = std::string_view::npos;
    return p;
}

std::string_view host_of(std::string_view url) noexcept {
    const std::size_t scheme = url.find("://");
    if (scheme == std::string_view::npos) return {};
    std::string_view rest = url.substr(scheme + 3);
    const std::size_t end = rest.find_first_of("/?#");
    std::string_view auth = rest.substr(0, end);
    const std::size_t at = auth.rfind('@');
    if (at != std::string_view::npos) auth.remove_prefix(at + 1);
    if (!auth.empty() && auth.front() == '[') {
        const std::size_t close = auth.find(']');
        return close == std::string_view::npos ? auth : auth.substr(0, close + 1);
    }
    const std::size_t colon = auth.find(':');
    return auth.substr(0, colon);
}

// hf://OWNER/REPO/FILE[@REVISION] (with_file) or hf://OWNER/REPO[@REVISION] (a repository), split
// and validated.
struct hf_name {
    std::string_view owner, repo, file;
    std::string revision = "main";
};

gguf::result<hf_name> parse_hf(std::string_view text, bool with_file) {
    hf_name n;
    std::string_view rest = text.substr(5);  // after "hf://"
    const std::size_t at = rest.rfind('@');
    if (at != std::string_view::npos) {
        const std::string_view rev = rest.substr(at + 1);
        if (rev.empty() || rev.size() > 256) return gguf::unexpected(bad(text, "the revision after '@' is empty or too long"));
        for (char c : rev)
            if (!is_alnum(c) && c != '-' && c != '_' && c != '.' && c != '/')
                return gguf::unexpected(bad(text, "the revision may hold letters, digits, '-', '_', '.' and '/' only"));
        if (rev.front() == '/' || rev.back() == '/' || rev.find("..") != std::string_view::npos ||
            rev.find("//") != std::string_view::npos)
            return gguf::unexpected(bad(text, "the revision is not a valid branch, tag or commit name"));
        n.revision = std::string(rev);
        rest = rest.substr(0, at);
    }
    const std::size_t s1 = rest.find('/');
    const std::size_t s2 = s1 == std::string_view::npos ? s1 : rest.find('/', s1 + 1);
    if (with_file ? s2 == std::string_view::npos : (s1 == std::string_view::npos || s2 != std::string_view::npos))
        return gguf::unexpected(bad(text, with_file ? "an hf:// name is hf://OWNER/REPO/FILE[@REVISION]"
                                                    : "a repository's hf:// name is hf://OWNER/REPO[@REVISION]"));
    n.owner = rest.substr(0, s1);
    n.repo = with_file ? rest.substr(s1 + 1, s2 - s1 - 1) : rest.substr(s1 + 1);
    if (!hub_name(n.owner)) return gguf::unexpected(bad(text, "the owner is not a valid Hub name"));
    if (!hub_name(n.repo)) return gguf::unexpected(bad(text, "the repository is not a valid Hub name"));
    if (!with_file) return n;
    n.file = rest.substr(s2 + 1);
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = n.file.find('/', start);
        const std::string_view seg = n.file.substr(start, slash == std::string_view::npos ? slash : slash - start);
        if (!file_segment(seg))
            return gguf::unexpected(bad(text, "the file path has an empty, '.' or '..' segment or a character other than "
                                              "letters, digits and -._~+=,@()"));
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return n;
}

// https://huggingface.co/OWNER/REPO/resolve/REVISION/
std::string hub_base(const hf_name& n) {
    std::string url = "https://huggingface.co/";
    url.append(n.owner).append("/").append(n.repo).append("/resolve/").append(percent_encode(n.revision, false)).append("/");
    return url;
}

gguf::result<std::string> resolve_hf(std::string_view text) {
    auto n = parse_hf(text, true);
    if (!n) return gguf::unexpected(std::move(n).error());
    return hub_base(*n) + percent_encode(n->file, true);
}

std::string file_name_of(std::string_view url) {
    const url_parts p = split_url(url);
    if (p.path_begin == std::string_view::npos) return {};
    const std::string_view path = url.substr(p.path_begin, p.path_end - p.path_begin);
    return percent_decode(path.substr(path.rfind('/') + 1));
}

// An http(s) URL checked (scheme, characters, no user part, host, port), its scheme in lower case.
gguf::result<std::string> checked_http(std::string_view text) {
    if (!starts_with_ci(text, "http://") && !starts_with_ci(text, "https://"))
        return gguf::unexpected(bad(text, "not an http://, https:// or hf:// URL"));
    for (char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if (b <= 0x20 || b == 0x7f || b >= 0x80)
            return gguf::unexpected(bad(text, "a URL may not hold spaces, control characters or non-ASCII bytes"));
    }
    const std::size_t scheme = text.find("://");
    std::string_view rest = text.substr(scheme + 3);
    const std::string_view auth = rest.substr(0, rest.find_first_of("/?#"));
    if (auth.find('@') != std::string_view::npos)
        return gguf::unexpected(bad(text, "a user name or password in the URL is not supported (use $HF_TOKEN for the Hub)"));
    const std::string_view host = host_of(text);
    if (host.empty()) return gguf::unexpected(bad(text, "the URL has no host"));
    const std::size_t colon = host.front() == '[' ? auth.find(':', host.size()) : auth.find(':');
    if (colon != std::string_view::npos) {
        const std::string_view port = auth.substr(colon + 1);
        if (port.empty() || port.size() > 5) return gguf::unexpected(bad(text, "the port is not a number from 1 to 65535"));
        unsigned v = 0;
        for (char c : port) {
            if (c < '0' || c > '9') return gguf::unexpected(bad(text, "the port is not a number from 1 to 65535"));
            v = v * 10 + static_cast<unsigned>(c - '0');
        }
        if (v == 0 || v > 65535) return gguf::unexpected(bad(text, "the port is not a number from 1 to 65535"));
    }
    std::string url(text);
    // the scheme in lower case: libcurl and our checks expect it so
    for (std::size_t i = 0; i < scheme; ++i) url[i] = lower(url[i]);
    return url;
}

gguf::result<std::string> resolve_checked(std::string_view text) {
    if (starts_with_ci(text, "hf://")) return resolve_hf(text);
    auto url = checked_http(text);
    if (!url) return url;
    if (file_name_of(*url).empty()) return gguf::unexpected(bad(text, "the URL does not name a file (its path ends in '/')"));
    return url;
}

// A name usable as a directory's: not empty, "." or "..", no '/', '\' or NUL.
bool directory_name_ok(std::string_view s) noexcept {
    return !s.empty() && s != "." && s != ".." && s.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

gguf::result<directory_location> resolve_directory_checked(std::string_view text) {
    directory_location d;
    if (starts_with_ci(text, "hf://")) {
        auto n = parse_hf(text, false);
        if (!n) return gguf::unexpected(std::move(n).error());
        d.base = hub_base(*n);
        d.name = std::string(n->repo);
        return d;
    }
    auto url = checked_http(text);
    if (!url) return gguf::unexpected(std::move(url).error());
    if (url->find_first_of("?#") != std::string::npos)
        return gguf::unexpected(bad(text, "a directory's URL may not hold a query string or fragment (its files' names are appended)"));
    d.base = std::move(*url);
    if (split_url(d.base).path_begin == std::string_view::npos || d.base.back() != '/') d.base += '/';
    // the last non-empty path segment; for a Hub resolve URL (.../REPO/resolve/REVISION/), REPO
    std::vector<std::string> segments;
    const url_parts p = split_url(d.base);
    std::string_view path = std::string_view(d.base).substr(p.path_begin, p.path_end - p.path_begin);
    while (!path.empty()) {
        const std::size_t slash = path.find('/');
        const std::string_view seg = path.substr(0, slash);
        if (!seg.empty()) segments.push_back(percent_decode(seg));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    if (segments.size() >= 3 && segments[segments.size() - 2] == "resolve") {
        d.name = segments[segments.size() - 3];
    } else if (!segments.empty()) {
        d.name = segments.back();
    }
    if (!directory_name_ok(d.name))
        return gguf::unexpected(bad(text, "the URL's path has no last segment to name the checkpoint by (http://HOST/…/NAME/)"));
    return d;
}

}  // namespace

gguf::result<std::string> resolve(std::string_view text) noexcept {
    try {
        return resolve_checked(text);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("resolving the URL"));
    }
}

gguf::result<directory_location> resolve_directory(std::string_view text) noexcept {
    try {
        return resolve_directory_checked(text);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("resolving the URL"));
    }
}

std::string file_in(const directory_location& dir, std::string_view name) { return dir.base + percent_encode(name, true); }

bool is_remote(std::string_view text) noexcept {
    return starts_with_ci(text, "http://") || starts_with_ci(text, "https://") || starts_with_ci(text, "hf://");
}

std::string file_name(std::string_view url) { return file_name_of(url); }

std::string sibling(std::string_view url, std::string_view name) {
    const url_parts p = split_url(url);
    std::string out;
    std::string_view query;
    if (p.path_end < url.size() && url[p.path_end] == '?') {
        query = url.substr(p.path_end);
        query = query.substr(0, query.find('#'));
    }
    if (p.path_begin == std::string_view::npos) {
        out.append(url.substr(0, p.path_end)).append("/");
    } else {
        const std::string_view path = url.substr(0, p.path_end);
        out.append(path.substr(0, path.rfind('/') + 1));
    }
    out.append(percent_encode(name, false)).append(query);
    return out;
}

bool is_hub(std::string_view url) noexcept {
    std::string_view h = host_of(url);
    auto eq = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (lower(a[i]) != b[i]) return false;
        return true;
    };
    return eq(h, "huggingface.co") || eq(h, "hf.co");
}

}  // namespace minfer::remote
