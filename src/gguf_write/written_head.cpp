// verify_written_head: the written file's head [0, head_bytes) read back and parsed by the loader
// against the file's size (header, metadata, tensor table, every tensor's range within the data
// section).
#include "minfer/gguf_write/written_head.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "minfer/gguf/file_view.hpp"

namespace minfer::gguf {

result<void> verify_written_head(const atomic_file& file, std::uint64_t head_bytes, const std::string& target,
                                 std::string_view what) noexcept {
    try {
        const std::string noun(what);
        struct stat st {};
        if (::fstat(file.fd(), &st) != 0) {
            const int err = errno;
            return unexpected(detail::io_error(target, "stat the written " + noun, err));
        }
        std::vector<std::byte> head(static_cast<std::size_t>(head_bytes));
        // The temporary is open write-only (O_TMPFILE needs a writable descriptor): read it through
        // another, read-only descriptor of the same open file.
        const std::string self = "/proc/self/fd/" + std::to_string(file.fd());
        const int rfd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
        if (rfd < 0) {
            const int err = errno;
            return unexpected(detail::io_error(target, "open the written " + noun + " again to read its head", err));
        }
        struct closer {
            int fd;
            ~closer() { ::close(fd); }
        } close_rfd{rfd};
        std::size_t done = 0;
        while (done < head.size()) {
            const ssize_t r = ::pread(rfd, head.data() + done, head.size() - done, static_cast<off_t>(done));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                const int err = r < 0 ? errno : EIO;
                return unexpected(detail::io_error(target, "read back the written " + noun + "'s head", err));
            }
            done += static_cast<std::size_t>(r);
        }
        auto view = file_view::parse_head(head, static_cast<std::uint64_t>(st.st_size));
        if (!view) {
            error e = std::move(view).error();
            e.file = target;
            e.detail = (e.detail.empty() ? std::string() : e.detail + "; ") + "the written " + noun +
                       " does not pass the loader";
            return unexpected(std::move(e));
        }
        return {};
    } catch (...) {  // std::bad_alloc of the head buffer or a text
        return unexpected(detail::oom("reading back the written head"));
    }
}

}  // namespace minfer::gguf
