// atomic_file: O_TMPFILE + linkat to a random name + rename, or a random O_EXCL|O_NOFOLLOW name +
// rename; fsync of the file before the rename and of the directory after. Every name operation is
// relative to a descriptor of the target's directory opened once, so the temporary and the target
// are always in the same directory (rename is atomic only within one filesystem).
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "errors.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace minfer::gguf {
namespace {
using detail::io_error;
using detail::oom;

// 16 hex digits nobody can predict: getrandom, or (where it fails) the clock and a counter mixed.
std::string random_suffix() {
    std::uint64_t r = 0;
    if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
        static std::uint64_t counter = 0;
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        r = (static_cast<std::uint64_t>(ts.tv_nsec) << 20) ^ static_cast<std::uint64_t>(ts.tv_sec) ^
            (static_cast<std::uint64_t>(::getpid()) << 40) ^ (++counter * 0x9E3779B97F4A7C15ull);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
    return hex;
}

// O_TMPFILE is refused with EOPNOTSUPP by filesystems without it, and with EISDIR or EINVAL by
// kernels or libcs that do not know the flag.
bool tmpfile_unsupported(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

// Just before the rename that replaces it: the name must still hold a regular file (or nothing).
// create() checked it, but a FIFO, device or link may have been put there since (by the user, or by
// anyone who can write the directory). A window remains between this fstatat and the rename; it is
// harmless: rename never follows a link nor opens what it replaces (it swaps the directory entry, in
// the directory opened at create()), and whoever can put something there can equally remove it.
result<void> still_replaceable(int dir_fd, const std::string& leaf, const std::filesystem::path& target) {
    struct stat st {};
    if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return {};
        return unexpected(io_error(target, "inspect the output", errno));
    }
    if (S_ISREG(st.st_mode)) return {};
    // The same words as check_output_path's.
    auto again = check_output_path(target, true);
    if (!again) return unexpected(std::move(again).error());
    return unexpected(detail::file_error(gguf::write_codes::output_not_regular, target, "it changed into something other than a "
                                                                           "regular file while being written"));
}

constexpr int max_name_attempts = 16;  // collisions of 64 random bits: only an attacker causes more than one

}  // namespace

result<atomic_file> atomic_file::create(const std::filesystem::path& target,
                                        const atomic_file_options& options) noexcept {
    try {
        atomic_file f;
        f.target_ = target;
        f.replace_existing_ = options.replace_existing;
        // Only a new name or a regular file is ever written (output_path.hpp); a link is followed
        // here, once, and the rename below is relative to its target's directory. Whether a regular
        // file may be replaced is the commit's decision (the kernel's, atomically), not this check's.
        auto checked = check_output_path(target, true);
        if (!checked) return unexpected(std::move(checked).error());
        const std::filesystem::path& resolved = checked->path;
        f.target_leaf_ = resolved.filename().string();
        const std::filesystem::path dir = resolved.has_parent_path() ? resolved.parent_path() : std::filesystem::path(".");
        if (f.target_leaf_.empty() || f.target_leaf_ == "." || f.target_leaf_ == "..")
            return unexpected(io_error(target, "name the output file (the path is a directory)", EISDIR));
        f.resolved_ = dir / f.target_leaf_;
        f.dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f.dir_fd_ < 0) return unexpected(io_error(dir, "open the output directory", errno));
        const auto mode = static_cast<mode_t>(options.mode & 07777);
        if (options.use_tmpfile) {
            f.fd_ = ::openat(f.dir_fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
            if (f.fd_ >= 0) return f;
            if (!tmpfile_unsupported(errno))
                return unexpected(io_error(dir, "create a temporary file (O_TMPFILE) in", errno));
        }
        for (int attempt = 0; attempt < max_name_attempts; ++attempt) {
            std::string leaf = f.target_leaf_ + ".tmp." + random_suffix();
            // O_EXCL|O_NOFOLLOW: a name planted in the directory (a symlink, a file) is never opened.
            f.fd_ = ::openat(f.dir_fd_, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
            if (f.fd_ >= 0) {
                f.temp_ = dir / leaf;
                f.temp_leaf_ = std::move(leaf);
                return f;
            }
            if (const int err = errno; err != EEXIST)
                return unexpected(io_error(dir / leaf, "create the temporary file", err));
        }
        return unexpected(io_error(dir, "find a free temporary name in", EEXIST));
    } catch (...) {  // bad_alloc from a path or a string
        return unexpected(oom("creating the output file"));
    }
}

atomic_file::atomic_file(atomic_file&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      dir_fd_(std::exchange(other.dir_fd_, -1)),
      target_(std::move(other.target_)),
      resolved_(std::move(other.resolved_)),
      temp_(std::move(other.temp_)),
      temp_leaf_(std::move(other.temp_leaf_)),
      target_leaf_(std::move(other.target_leaf_)),
      replace_existing_(other.replace_existing_) {}

atomic_file& atomic_file::operator=(atomic_file&& other) noexcept {
    if (this != &other) {
        discard();
        fd_ = std::exchange(other.fd_, -1);
        dir_fd_ = std::exchange(other.dir_fd_, -1);
        target_ = std::move(other.target_);
        resolved_ = std::move(other.resolved_);
        temp_ = std::move(other.temp_);
        temp_leaf_ = std::move(other.temp_leaf_);
        target_leaf_ = std::move(other.target_leaf_);
        replace_existing_ = other.replace_existing_;
    }
    return *this;
}

atomic_file::~atomic_file() { discard(); }

void atomic_file::discard() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_leaf_.empty() && dir_fd_ >= 0) ::unlinkat(dir_fd_, temp_leaf_.c_str(), 0);
    temp_leaf_.clear();
    temp_.clear();
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = -1;
}

result<void> atomic_file::sync() noexcept {
    if (fd_ < 0 || ::fsync(fd_) == 0) return {};
    const int err = errno;
    try {
        return unexpected(io_error(temp_.empty() ? target_ : temp_, "fsync the temporary file", err));
    } catch (...) {
        return unexpected(oom("reporting a failed fsync"));
    }
}

result<void> atomic_file::commit(bool sync_directory) noexcept {
    try {
        if (fd_ < 0) return unexpected(io_error(target_, "commit (the file was already committed or discarded)", EBADF));
        // The bytes reach the disk before the name does, so after a crash the name holds the old
        // file or the complete new one.
        if (::fsync(fd_) != 0) {
            const int err = errno;
            const auto where = temp_.empty() ? target_ : temp_;
            discard();
            return unexpected(io_error(where, "fsync the temporary file", err));
        }
        if (temp_leaf_.empty() && !replace_existing_) {
            // An O_TMPFILE that must not replace anything is linked straight to the target name:
            // linkat fails with EEXIST when the name exists, and no intermediate name is ever left
            // behind by a kill.
            int rc = ::linkat(fd_, "", dir_fd_, target_leaf_.c_str(), AT_EMPTY_PATH);
            if (rc != 0 && (errno == ENOENT || errno == EPERM)) {
                const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
                rc = ::linkat(AT_FDCWD, proc.c_str(), dir_fd_, target_leaf_.c_str(), AT_SYMLINK_FOLLOW);
            }
            if (rc != 0) {
                const int err = errno;
                discard();
                return unexpected(io_error(target_, err == EEXIST ? "refuse to replace the existing file"
                                                                  : "link the new file to",
                                           err));
            }
            ::close(fd_);  // bytes are durable already (fsync above)
            fd_ = -1;
            const int derr = sync_directory && ::fsync(dir_fd_) != 0 ? errno : 0;
            discard();
            if (derr != 0) return unexpected(io_error(target_, "fsync the directory of", derr));
            return {};
        }
        if (temp_leaf_.empty()) {
            // An O_TMPFILE has no name. linkat cannot replace an existing file, so it gets a fresh
            // random one first, and the rename below replaces the target atomically.
            for (int attempt = 0; attempt < max_name_attempts && temp_leaf_.empty(); ++attempt) {
                std::string leaf = target_leaf_ + ".tmp." + random_suffix();
                int rc = ::linkat(fd_, "", dir_fd_, leaf.c_str(), AT_EMPTY_PATH);
                if (rc != 0 && (errno == ENOENT || errno == EPERM)) {
                    // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd does not.
                    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
                    rc = ::linkat(AT_FDCWD, proc.c_str(), dir_fd_, leaf.c_str(), AT_SYMLINK_FOLLOW);
                }
                if (rc == 0) {
                    temp_ = target_.parent_path() / leaf;
                    temp_leaf_ = std::move(leaf);
                } else if (errno != EEXIST) {
                    const int err = errno;
                    discard();
                    return unexpected(io_error(target_, "link the temporary file next to", err));
                }
            }
            if (temp_leaf_.empty()) {
                discard();
                return unexpected(io_error(target_, "find a free temporary name next to", EEXIST));
            }
        }
        // Closed before the rename: some filesystems (NFS) report write errors only here, and
        // then the target must stay as it was. (EINTR still closes the descriptor on Linux.)
        const int close_rc = ::close(fd_);
        fd_ = -1;
        if (close_rc != 0 && errno != EINTR) {
            const int err = errno;
            const auto where = temp_;
            discard();
            return unexpected(io_error(where, "close the temporary file", err));
        }
        if (!replace_existing_) {
            // The kernel decides whether the target exists, at the instant of the rename.
            int rc = ::renameat2(dir_fd_, temp_leaf_.c_str(), dir_fd_, target_leaf_.c_str(), RENAME_NOREPLACE);
            if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
                // A filesystem without RENAME_NOREPLACE: link() fails with EEXIST just as atomically.
                rc = ::linkat(dir_fd_, temp_leaf_.c_str(), dir_fd_, target_leaf_.c_str(), 0);
                if (rc == 0) ::unlinkat(dir_fd_, temp_leaf_.c_str(), 0);
            }
            if (rc != 0) {
                const int err = errno;
                discard();  // removes the temporary
                return unexpected(io_error(target_, err == EEXIST ? "refuse to replace the existing file"
                                                                  : "rename the temporary file to",
                                           err));
            }
        } else if (auto kind = still_replaceable(dir_fd_, target_leaf_, target_); !kind) {
            discard();
            return unexpected(std::move(kind).error());
        } else if (::renameat(dir_fd_, temp_leaf_.c_str(), dir_fd_, target_leaf_.c_str()) != 0) {
            const int err = errno;
            discard();  // removes the temporary
            return unexpected(io_error(target_, "rename the temporary file over", err));
        }
        temp_leaf_.clear();  // it is the target now: discard() must not remove it
        temp_.clear();
        // The rename itself reaches the disk only with the directory.
        const int err = sync_directory && ::fsync(dir_fd_) != 0 ? errno : 0;
        discard();
        if (err != 0) return unexpected(io_error(target_, "fsync the directory of", err));
        return {};
    } catch (...) {
        discard();
        return unexpected(oom("creating the output file"));
    }
}

}  // namespace minfer::gguf
