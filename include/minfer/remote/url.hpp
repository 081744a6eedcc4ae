#pragma once
// Remote locations: which texts are URLs, hf:// names mapped to the Hub's resolve URLs, and the
// file name and sibling of a URL (where the other parts of a split set are).
#include <string>
#include <string_view>

#include "minfer/gguf/result.hpp"

namespace minfer::remote {

/// Whether `text` names a remote file: it starts with http://, https:// or hf:// (scheme in any case).
bool is_remote(std::string_view text) noexcept;

/// The http(s) URL to fetch for `text`: an http(s) URL checked (a host, no spaces or control
/// characters, no user:password part), or hf://OWNER/REPO/FILE[@REVISION] mapped to
/// https://huggingface.co/OWNER/REPO/resolve/REVISION/FILE (REVISION defaults to main). Every part
/// is validated strictly. @returns bad_value_text (detail = what is wrong) for anything else, or
/// out_of_memory.
gguf::result<std::string> resolve(std::string_view text) noexcept;

/// A checkpoint directory named by URL (`minfer convert URL`): the URL its files are under, and its name.
struct directory_location {
    std::string base;  ///< an http(s) URL ending in '/': a file's URL is base + its name, percent-encoded
    std::string name;  ///< the directory's name (a Hub repository's): never empty, ".", ".." or with a '/'
};

/// hf://OWNER/REPO[@REVISION] → https://huggingface.co/OWNER/REPO/resolve/REVISION/ (main by default), named
/// REPO; an http(s) URL checked as resolve() checks it, with a '/' added when its path does not end in one (no
/// query string or fragment), named by its last path segment (for a Hub URL .../REPO/resolve/REVISION/, REPO).
/// @returns bad_value_text (detail = what is wrong), out_of_memory.
gguf::result<directory_location> resolve_directory(std::string_view text) noexcept;

/// The URL of the file `name` (a relative path: '/' kept, everything else not unreserved percent-encoded)
/// of the directory. Throws std::bad_alloc.
std::string file_in(const directory_location& dir, std::string_view name);

/// The URL's last path segment, percent-decoded, without query string or fragment. Like
/// gguf::source_opener::file_name, whose answer it is, it throws std::bad_alloc when the string
/// cannot be made (model::open turns that into out_of_memory).
std::string file_name(std::string_view url);

/// `url` with its last path segment replaced by `name` (percent-encoded where needed); the query
/// string is kept, the fragment dropped. Throws std::bad_alloc as file_name does.
std::string sibling(std::string_view url, std::string_view name);

/// Whether the URL's host is the Hugging Face Hub (huggingface.co, hf.co): the only hosts a $HF_TOKEN goes to.
bool is_hub(std::string_view url) noexcept;

}  // namespace minfer::remote
