// model_source: descriptors on a model's parts, checked against what the loader verified.
#include "minfer/gguf_write/model_source.hpp"
#include "errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

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

model_source::model_source(model_source&& other) noexcept
    : fds_(std::move(other.fds_)), data_offsets_(std::move(other.data_offsets_)) {
    other.fds_.clear();
}

model_source& model_source::operator=(model_source&& other) noexcept {
    if (this != &other) {
        close_all();
        fds_ = std::move(other.fds_);
        data_offsets_ = std::move(other.data_offsets_);
        other.fds_.clear();
    }
    return *this;
}

model_source::~model_source() { close_all(); }

void model_source::close_all() noexcept {
    for (const int fd : fds_)
        if (fd >= 0) ::close(fd);
    fds_.clear();
}

result<model_source> model_source::open(const model& m) noexcept {
    // Every writer copies tensor bytes through a model_source: a model opened from heads has none.
    if (auto whole = m.require_complete(); !whole) return unexpected(whole.error());
    try {
        model_source out;
        out.fds_.reserve(m.parts().size());
        out.data_offsets_.reserve(m.parts().size());
        for (const model_part& part : m.parts()) {
            const int fd = ::open(part.path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) return unexpected(detail::io_error(part.path, "open the model file to copy from", errno));
            out.fds_.push_back(fd);
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
    if (t.info == nullptr || t.part >= fds_.size()) return {};
    return tensor_source::file_range(fds_[t.part], data_offsets_[t.part] + t.info->offset, t.info->n_bytes);
}

}  // namespace minfer::gguf
