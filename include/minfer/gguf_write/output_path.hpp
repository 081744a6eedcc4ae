#pragma once
// output_path: where a write may go. Every output of the toolbox (edit -o, split's parts, merge,
// tensor --dump, the journal of an in-place edit, the Python functions) is written through
// atomic_file, which asks this check first; the commands ask it too, before any work, for their
// messages. The rule, documented in docs/CLI.md "Output files":
//   - a missing name is created;
//   - a regular file is replaced only with replace_existing (--force, overwrite=True);
//   - a symbolic link is followed as open() follows it (the kernel's fs.protected_symlinks applies):
//     its final target is what is checked and replaced, the link stays and names the new file, as
//     `cp` writes through a link. A link to a missing file is refused (as GNU cp refuses to write
//     through a dangling link): the file would appear wherever the link points, which is rarely
//     what the user means and is the shape of a planted-link attack;
//   - anything else (a directory, FIFO, character or block device, socket) is never replaced, not
//     even with force: a rename over /dev/null, as root, would replace the system's /dev/null.
#include <cerrno>
#include <filesystem>

#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

struct output_path {
    /// Where the file is written: the link's final target for a symbolic link, else the path given.
    std::filesystem::path path;
    /// A regular file is there now (and replace_existing allowed replacing it).
    bool exists = false;
};

/// Check `path` as an output. @returns output_not_regular (file = the path, found = the file type
/// bits (st_mode & S_IFMT) of what is there, detail = what it is); io_error EEXIST "refuse to replace
/// the existing file" for a regular file without replace_existing; io_error for a failed lstat/open
/// (ELOOP, EACCES from protected_symlinks, …); out_of_memory.
result<output_path> check_output_path(const std::filesystem::path& path, bool replace_existing) noexcept;

/// The refusal of an existing regular file without replace_existing (this check's, or atomic_file
/// commit's when the file appeared meanwhile): the commands turn it into "use --force".
inline bool is_output_exists(const error& e) noexcept { return e.code == errc::io_error && e.sys_errno == EEXIST; }

}  // namespace minfer::gguf
