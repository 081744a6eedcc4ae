// output_path: lstat the name; a symbolic link is opened with O_PATH (followed by the kernel, with its
// protected_symlinks rule, never opening a device or blocking on a FIFO) and named by what the
// descriptor resolves to, checked to be the same inode.
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "errors.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace minfer::gguf {
namespace {
using detail::file_error;
using detail::io_error;
using detail::oom;

const char* kind_of(mode_t mode) {
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "a special file";
}

error not_regular(const std::filesystem::path& path, mode_t mode, const std::string& through) {
    error e = file_error(gguf::write_codes::output_not_regular, path, std::string("it is ") + through + kind_of(mode));
    e.found = static_cast<std::uint64_t>(mode & S_IFMT);
    return e;
}

struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

// The name `fd` (an O_PATH descriptor) has now, if it still names that inode.
std::string name_of(int fd, const std::filesystem::path& link, const struct stat& st) {
    const auto same = [&st](const std::string& p) {
        struct stat now {};
        return !p.empty() && p.front() == '/' && ::lstat(p.c_str(), &now) == 0 && now.st_dev == st.st_dev &&
               now.st_ino == st.st_ino;
    };
    char buf[PATH_MAX + 1];
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(proc.c_str(), buf, PATH_MAX);
    if (n > 0) {
        std::string p(buf, static_cast<std::size_t>(n));
        if (same(p)) return p;
    }
    // No /proc: the C library resolves the link again (the inode check catches a swap in between).
    if (char* r = ::realpath(link.c_str(), nullptr)) {
        std::string p(r);
        std::free(r);
        if (same(p)) return p;
    }
    return {};
}

}  // namespace

result<output_path> check_output_path(const std::filesystem::path& path, bool replace_existing) noexcept {
    try {
        output_path out;
        out.path = path;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) return out;  // created (a missing directory is atomic_file's error)
            return unexpected(io_error(path, "inspect the output", errno));
        }
        if (S_ISLNK(st.st_mode)) {
            // Followed as open() would follow it, so the system's policy on links (protected_symlinks
            // in sticky world-writable directories) is the one a plain `cp` meets. O_PATH opens no
            // device and does not wait for a FIFO's writer.
            const fd_guard fd{::open(path.c_str(), O_PATH | O_CLOEXEC)};
            if (fd.fd < 0) {
                if (errno == ENOENT) {
                    error e = file_error(gguf::write_codes::output_not_regular, path,
                                         "it is a symbolic link to a missing file");
                    e.found = static_cast<std::uint64_t>(S_IFLNK);
                    return unexpected(std::move(e));
                }
                return unexpected(io_error(path, "follow the symbolic link", errno));
            }
            if (::fstat(fd.fd, &st) != 0) return unexpected(io_error(path, "inspect the output", errno));
            if (!S_ISREG(st.st_mode)) return unexpected(not_regular(path, st.st_mode, "a symbolic link to "));
            std::string target = name_of(fd.fd, path, st);
            if (target.empty())
                return unexpected(io_error(path, "resolve the symbolic link (it changed while being checked)", ESTALE));
            out.path = std::move(target);
        } else if (!S_ISREG(st.st_mode)) {
            return unexpected(not_regular(path, st.st_mode, ""));
        }
        out.exists = true;
        if (!replace_existing) return unexpected(io_error(path, "refuse to replace the existing file", EEXIST));
        return out;
    } catch (...) {
        return unexpected(oom("checking the output path"));
    }
}

}  // namespace minfer::gguf
