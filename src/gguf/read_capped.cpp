// read_capped: a small input read whole, up to a cap, whatever the file claims to be.
#include "minfer/gguf/read_capped.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace minfer::gguf {
namespace {

error io(const std::string& name, int err, std::string detail) {
    error e;
    e.code = errc::io_error;
    e.sys_errno = err;
    e.file = name;
    e.detail = std::move(detail);
    return e;
}

error too_big(const std::string& name, std::uint64_t cap, std::uint64_t found, errc code) {
    error e;
    e.code = code;
    e.file = name;
    e.expected = cap;
    e.found = found;
    return e;
}

result<std::string> read_fd(int fd, const std::string& name, std::uint64_t cap, errc too_large) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return unexpected(io(name, errno, "stat"));
    if (S_ISDIR(st.st_mode)) return unexpected(io(name, EISDIR, {}));
    // A regular file's size refuses a big file before any read; it is not trusted otherwise (it can
    // grow while read, and /proc files say 0), so the loop below checks the cap itself.
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > cap)
        return unexpected(too_big(name, cap, static_cast<std::uint64_t>(st.st_size), too_large));
    // The buffer grows twofold as bytes arrive (std::string doubles its capacity anyway), up to the
    // cap exactly; one more byte read into `probe` then tells "more than the cap" without a buffer
    // of twice the cap.
    std::string text;
    std::uint64_t room = std::min<std::uint64_t>(cap, std::uint64_t{64} << 10);
    if (S_ISREG(st.st_mode))
        room = std::min<std::uint64_t>(cap, std::max<std::uint64_t>(room, static_cast<std::uint64_t>(st.st_size) + 1));
    text.resize(static_cast<std::size_t>(room));
    std::uint64_t have = 0;
    char probe = 0;
    for (;;) {
        if (have == text.size() && have < cap)
            text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(cap, std::max<std::uint64_t>(2 * have, 1))));
        char* at = have < cap ? text.data() + have : &probe;
        const std::size_t want = have < cap ? text.size() - static_cast<std::size_t>(have) : 1;
        const ssize_t n = ::read(fd, at, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            return unexpected(io(name, errno, "read"));
        }
        if (n == 0) break;
        have += static_cast<std::uint64_t>(n);
        if (have > cap) break;
    }
    if (have > cap) return unexpected(too_big(name, cap, have, too_large));
    text.resize(static_cast<std::size_t>(have));
    return text;
}

}  // namespace

result<std::string> read_capped_fd(int fd, const std::string& name, std::uint64_t cap, errc too_large) noexcept {
    try {
        if (cap >= SIZE_MAX / 2) cap = SIZE_MAX / 2 - 1;
        return read_fd(fd, name, cap, too_large);
    } catch (...) {
        // Building the error must not throw in turn (a noexcept function: std::terminate); the
        // name is added only if it can be copied.
        error e = out_of_memory_error("reading the file");
        try {
            e.file = name;
        } catch (...) {
        }
        return unexpected(std::move(e));
    }
}

result<std::string> read_capped(const std::filesystem::path& path, std::uint64_t cap, errc too_large) noexcept {
    std::string name;
    try {
        name = path.string();
    } catch (...) {
        error e;
        e.code = errc::out_of_memory;
        return unexpected(std::move(e));
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        try {
            return unexpected(io(name, err, {}));
        } catch (...) {
            return unexpected(out_of_memory_error("reporting a file that cannot be opened"));
        }
    }
    auto r = read_capped_fd(fd, name, cap, too_large);
    ::close(fd);
    return r;
}

}  // namespace minfer::gguf
