#pragma once
// atomic_file: an output file that appears under its name complete or not at all. Readers of the old
// file (and a crash, a full disk, a kill) must never see a half-written model under the target name,
// and a temporary at a guessable name would let anyone with write access to the directory plant a
// symlink there. So the bytes go to an unnamed O_TMPFILE in the target's directory (nothing to clean
// up if the process dies), which commit() links to a fresh random name and renames over the target
// (linkat cannot replace a file); where O_TMPFILE is not supported, to a random name created with
// O_CREAT|O_EXCL|O_NOFOLLOW. commit() fsyncs the file before the rename and the directory after it,
// so after a crash the name holds the old file or the new one. Anything but a successful commit()
// removes the temporary and leaves the target untouched.
#include <filesystem>
#include <string>

#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

struct atomic_file_options {
    /// Use an unnamed O_TMPFILE when the filesystem supports it (false: always a named temporary).
    bool use_tmpfile = true;
    /// Permission bits of the new file, before the process umask is applied.
    unsigned mode = 0644;
    /// false: commit() fails with io_error EEXIST (and removes the temporary) when the target
    /// exists at that moment, decided atomically by the kernel (renameat2 RENAME_NOREPLACE, else
    /// link()), so a file that appears between a check and the commit is never replaced.
    bool replace_existing = true;
};

class atomic_file {
public:
    /// Open a temporary for `target` in the target's directory. @returns io_error with file = the
    /// directory or the temporary, detail = what failed, sys_errno; or out_of_memory.
    static result<atomic_file> create(const std::filesystem::path& target,
                                      const atomic_file_options& options = {}) noexcept;

    atomic_file(atomic_file&& other) noexcept;
    atomic_file& operator=(atomic_file&& other) noexcept;
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    /// Discards the temporary unless committed.
    ~atomic_file();

    /// The temporary's descriptor (write-only), -1 after commit() or discard().
    int fd() const noexcept { return fd_; }
    const std::filesystem::path& target() const noexcept { return target_; }
    /// Where commit() puts the file: the target, or a link's final target (the link stays).
    const std::filesystem::path& resolved_target() const noexcept { return resolved_; }
    /// The temporary's name, empty while it is an unnamed O_TMPFILE.
    const std::filesystem::path& temp_path() const noexcept { return temp_; }

    /// fsync the file, give it the target's name (atomically replacing an existing file), fsync the
    /// directory. @returns io_error (file, detail, sys_errno); on failure before the rename the
    /// temporary is removed and the target untouched. A failed directory fsync is reported after the
    /// rename: the new file is in place but its name may not survive a crash.
    result<void> commit() noexcept { return commit(true); }
    /// commit() with the directory's fsync left to the caller when sync_directory is false: an
    /// output of several files (toolbox::write_parts) renames them all at once and syncs each
    /// directory once after, so that no kill between two renames is likely.
    result<void> commit(bool sync_directory) noexcept;
    /// fsync the temporary now (write_parts syncs each part as soon as it is written, so that the
    /// renames of a set follow one another without a flush between them). @returns io_error.
    result<void> sync() noexcept;
    /// Close and remove the temporary (also what the destructor does).
    void discard() noexcept;

private:
    atomic_file() noexcept = default;
    int fd_ = -1;
    int dir_fd_ = -1;
    std::filesystem::path target_;
    std::filesystem::path resolved_;  ///< the directory opened as dir_fd_, then target_leaf_
    std::filesystem::path temp_;  ///< empty for an O_TMPFILE
    std::string temp_leaf_;       ///< temp_'s file name, for the *at() calls relative to dir_fd_
    std::string target_leaf_;
    bool replace_existing_ = true;
};

}  // namespace minfer::gguf
