// POSIX mapping. The only file in src/ that talks to the operating system for reading.
#include <cerrno>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "minfer/gguf/mapped_file.hpp"

namespace minfer::gguf {
namespace {
error io(const std::filesystem::path& path, const char* what, int err) {
    error e;
    e.code = errc::io_error;
    e.where = section::file;
    e.file = path.string();
    e.detail = what;
    e.sys_errno = err;
    return e;
}

// Not an OS failure: the path names something that is not a file of bytes. sys_errno stays 0 and
// the detail says what it is.
error not_regular(const std::filesystem::path& path, mode_t mode) {
    const char* what = S_ISFIFO(mode)   ? "a FIFO (named pipe)"
                       : S_ISCHR(mode)  ? "a character device"
                       : S_ISBLK(mode)  ? "a block device"
                       : S_ISSOCK(mode) ? "a socket"
                                        : "a special file";
    error e = io(path, "open", 0);
    e.detail = std::string("it is ") + what + ", not a regular file";
    return e;
}

struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};
}  // namespace

result<mapped_file> mapped_file::open(const std::filesystem::path& path, load_mode mode) noexcept {
    // Building an error allocates (the path, a detail): a std::bad_alloc there, or anywhere else in
    // here, becomes out_of_memory instead of std::terminate. The lambda shares open()'s access.
    try {
        return [&]() -> result<mapped_file> {
            // O_NONBLOCK: opening a FIFO for reading would otherwise block until a writer appears, before the
            // S_ISREG check below can refuse it. It has no effect on reads of regular files.
            fd_guard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
            if (fd.fd < 0) return unexpected(io(path, "open", errno));
            struct stat st {};
            if (::fstat(fd.fd, &st) != 0) return unexpected(io(path, "stat", errno));
            if (S_ISDIR(st.st_mode)) return unexpected(io(path, "open", EISDIR));
            if (!S_ISREG(st.st_mode)) return unexpected(not_regular(path, st.st_mode));  // no stable size to map or read

            mapped_file f;
            f.mode_ = mode;
            f.size_ = static_cast<std::size_t>(st.st_size);
            if (f.size_ == 0) return f;  // mmap of length 0 is invalid; an empty file is simply empty
            if (mode == load_mode::map) {
                void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd.fd, 0);
                if (p == MAP_FAILED) return unexpected(io(path, "map", errno));
                f.data_ = static_cast<const std::byte*>(p);
                f.mapped_ = true;
                return f;  // the mapping stays valid after the descriptor is closed
            }
            try {
                f.owned_.reset(new std::byte[f.size_]);
            } catch (const std::bad_alloc&) {
                return unexpected(out_of_memory_error("reading the file into memory"));
            }
            std::size_t done = 0;
            while (done < f.size_) {
                const ssize_t n = ::read(fd.fd, f.owned_.get() + done, f.size_ - done);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) return unexpected(io(path, "read", errno));
                if (n == 0) break;  // the file shrank since fstat: keep what is there
                done += static_cast<std::size_t>(n);
            }
            f.size_ = done;
            f.data_ = f.owned_.get();
            return f;
        }();
    } catch (...) {
        error e;  // no allocation: code only
        e.code = errc::out_of_memory;
        return unexpected(std::move(e));
    }
}

mapped_file mapped_file::adopt(std::unique_ptr<std::byte[]> bytes, std::size_t size) noexcept {
    mapped_file f;
    f.mode_ = load_mode::read;
    f.owned_ = std::move(bytes);
    f.data_ = f.owned_.get();
    f.size_ = f.owned_ ? size : 0;
    return f;
}

mapped_file::mapped_file(mapped_file&& o) noexcept
    : data_(o.data_), size_(o.size_), mode_(o.mode_), mapped_(o.mapped_), owned_(std::move(o.owned_)) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
}

mapped_file& mapped_file::operator=(mapped_file&& o) noexcept {
    if (this != &o) {
        release();
        data_ = o.data_;
        size_ = o.size_;
        mode_ = o.mode_;
        mapped_ = o.mapped_;
        owned_ = std::move(o.owned_);
        o.data_ = nullptr;
        o.size_ = 0;
        o.mapped_ = false;
    }
    return *this;
}

mapped_file::~mapped_file() { release(); }

void mapped_file::release() noexcept {
    if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
    owned_.reset();
    data_ = nullptr;
    size_ = 0;
    mapped_ = false;
}

}  // namespace minfer::gguf
