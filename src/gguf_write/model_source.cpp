// model_source: a model's parts checked against what the loader verified, as path ranges for the writer.
#include "minfer/gguf_write/model_source.hpp"
#include "errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace minfer::gguf {
namespace {

// Compare [0, n) of the file with the verified bytes, in chunks (the head of a big vocabulary is
// tens of MB; no need to hold a second copy).
bool same_head(int fd, std::span<const std::byte> verified, std::uint64_t n, int& err) {
    constexpr std::size_t chunk = std::size_t{1} << 20;
    std::unique_ptr<std::byte[]> buf(new (std::nothrow) std::byte[chunk]);
    if (!buf) {
        err = ENOMEM;
        return false;
    }
    std::uint64_t done = 0;
    while (done < n) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - done));
        const ssize_t got = ::pread(fd, buf.get(), want, static_cast<off_t>(done));
        if (got < 0) {
            if (errno == EINTR) continue;
            err = errno;
            return false;
        }
        if (got == 0) {
            err = ESTALE;
            return false;
        }
        if (std::memcmp(buf.get(), verified.data() + done, static_cast<std::size_t>(got)) != 0) {
            err = ESTALE;
            return false;
        }
        done += static_cast<std::uint64_t>(got);
    }
    return true;
}

}  // namespace

result<model_source> model_source::open(const model& m) noexcept {
    // Every writer copies tensor bytes through a model_source: a model opened from heads has none.
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    try {
        model_source out;
        out.paths_.reserve(m.parts().size());
        out.data_offsets_.reserve(m.parts().size());
        for (const model_part& part : m.parts()) {
            // Checked now, closed at once: the writer opens each part again only while it copies
            // it (and refuses a file that is no longer the one checked here).
            const int fd = ::open(part.path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) return unexpected(detail::io_error(part.path, "open the model file to copy from", errno));
            struct fd_closer {
                int fd;
                ~fd_closer() { ::close(fd); }
            } closer{fd};
            out.paths_.push_back(part.path);
            out.data_offsets_.push_back(part.view.data_offset());
            struct stat st {};
            if (::fstat(fd, &st) != 0) return unexpected(detail::io_error(part.path, "stat", errno));
            const std::span<const std::byte> verified = part.file.bytes();
            if (static_cast<std::uint64_t>(st.st_size) != verified.size())
                return unexpected(detail::io_error(part.path, "the file changed since it was opened", ESTALE));
            int err = 0;
            if (!same_head(fd, verified, part.view.data_offset(), err))
                return unexpected(detail::io_error(
                    part.path, err == ESTALE ? "the file changed since it was opened" : "read", err));
        }
        return out;
    } catch (...) {
        return unexpected(detail::oom("opening the model's files"));
    }
}

tensor_source model_source::tensor(const tensor_ref& t) const noexcept {
    if (t.info == nullptr || t.part >= paths_.size()) return {};
    try {
        return tensor_source::file_range(paths_[t.part], data_offsets_[t.part] + t.info->offset, t.info->n_bytes);
    } catch (...) {
        return {};  // a path that cannot be copied (out of memory): an empty source the writer refuses
    }
}

}  // namespace minfer::gguf
