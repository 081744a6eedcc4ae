// Byte moving for the writer: pwrite/pread loops and copy_file_range with its fallback.
#include "copy.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace minfer::gguf::detail {
namespace {
// One call moves at most this much, so that a huge tensor does not become one unbounded syscall
// (and so the sizes fit ssize_t everywhere).
constexpr std::uint64_t max_call = std::uint64_t{1} << 30;
// A kernel copy moves at most this much per call, and its write-back is started after each (see
// start_writeback): the device writes while the next range is copied, instead of all at the fsync.
constexpr std::uint64_t writeback_step = std::uint64_t{32} << 20;
}  // namespace

copy_status write_all(int fd, std::span<const std::byte> bytes, std::uint64_t offset) noexcept {
    copy_status s;
    while (s.done < bytes.size()) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() - s.done, max_call));
        const ssize_t w = ::pwrite(fd, bytes.data() + s.done, n, static_cast<off_t>(offset + s.done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {  // 0 for a non-empty write: treat as no space rather than loop forever
            s.failed = copy_status::what::write;
            s.err = w < 0 ? errno : ENOSPC;
            return s;
        }
        s.done += static_cast<std::uint64_t>(w);
    }
    return s;
}

void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) noexcept {
#if defined(__linux__)
    if (length > 0) (void)::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length), SYNC_FILE_RANGE_WRITE);
#else
    (void)fd, (void)offset, (void)length;
#endif
}

copy_status read_all(int fd, std::span<std::byte> out, std::uint64_t offset) noexcept {
    copy_status s;
    while (s.done < out.size()) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size() - s.done, max_call));
        const ssize_t r = ::pread(fd, out.data() + s.done, n, static_cast<off_t>(offset + s.done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            s.failed = copy_status::what::read;
            s.err = errno;
            return s;
        }
        if (r == 0) {
            s.failed = copy_status::what::short_source;
            return s;
        }
        s.done += static_cast<std::uint64_t>(r);
    }
    return s;
}

namespace {

// Every byte of the range, holes included.
copy_status copy_dense(int in, std::uint64_t in_offset, int out, std::uint64_t out_offset, std::uint64_t length,
                       bool& kernel, std::span<std::byte> chunk) noexcept {
    copy_status s;
    while (kernel && s.done < length) {
        auto in_off = static_cast<off_t>(in_offset + s.done);
        auto out_off = static_cast<off_t>(out_offset + s.done);
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length - s.done, writeback_step));
        const ssize_t c = ::copy_file_range(in, &in_off, out, &out_off, n, 0);
        if (c < 0 && errno == EINTR) continue;
        if (c < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
            kernel = false;  // this pair of files cannot be copied in the kernel: pread/pwrite below
            break;
        }
        if (c < 0) {
            s.failed = errno == EFBIG || errno == ENOSPC || errno == EDQUOT ? copy_status::what::write
                                                                            : copy_status::what::kernel_copy;
            s.err = errno;
            return s;
        }
        if (c == 0) {  // the input ended before the range did
            s.failed = copy_status::what::short_source;
            return s;
        }
        start_writeback(out, out_offset + s.done, static_cast<std::uint64_t>(c));
        s.done += static_cast<std::uint64_t>(c);
    }
    if (s.done < length && chunk.empty()) {  // a caller's bug, but never a loop that cannot progress
        s.failed = copy_status::what::read;
        s.err = EINVAL;
        return s;
    }
    while (s.done < length) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length - s.done, chunk.size()));
        copy_status r = read_all(in, chunk.first(n), in_offset + s.done);
        if (!r.ok()) {
            r.done += s.done;
            return r;
        }
        copy_status w = write_all(out, chunk.first(n), out_offset + s.done);
        if (!w.ok()) {
            w.done += s.done;
            return w;
        }
        start_writeback(out, out_offset + s.done, n);
        s.done += n;
    }
    return s;
}

}  // namespace

// The output is a fresh file, whose unwritten ranges read as zeros, so the source's holes (a sparse
// model, zero tensors of a converter) are skipped rather than copied: they stay holes, cost no disk
// and no time, as `cp` keeps them. SEEK_DATA/SEEK_HOLE find them; a filesystem without them (EINVAL,
// ENOTSUP) gets the dense copy.
copy_status copy_range(int in, std::uint64_t in_offset, int out, std::uint64_t out_offset, std::uint64_t length,
                       bool& kernel, std::span<std::byte> chunk) noexcept {
    struct stat st {};
    if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode))
        return copy_dense(in, in_offset, out, out_offset, length, kernel, chunk);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (in_offset > size || length > size - in_offset) {
        // The source ends inside the range: copy what exists, then report the short source.
        const std::uint64_t have = in_offset > size ? 0 : size - in_offset;
        copy_status s = copy_range(in, in_offset, out, out_offset, have, kernel, chunk);
        if (s.ok()) s.failed = copy_status::what::short_source;
        return s;
    }
    const std::uint64_t end = in_offset + length;
    // SEEK_HOLE scans from its offset to the next hole, which in a dense file is the end: asked once
    // per tensor, a model's copy would scan the file once per tensor (on tmpfs, 10 % of the time).
    // The data run it found is remembered per file, and a range inside it is copied at once.
    thread_local struct {
        dev_t dev = 0;
        ino_t ino = 0;
        off_t size = -1;
        std::uint64_t data_begin = 0, data_end = 0;
    } known;
    const bool same_file = known.dev == st.st_dev && known.ino == st.st_ino && known.size == st.st_size;
    if (same_file && in_offset >= known.data_begin && end <= known.data_end)
        return copy_dense(in, in_offset, out, out_offset, length, kernel, chunk);
    std::uint64_t pos = in_offset;
    while (pos < end) {
        const off_t data = ::lseek(in, static_cast<off_t>(pos), SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // a hole up to the end of the file
            return copy_dense(in, pos, out, out_offset + (pos - in_offset), end - pos, kernel, chunk);
        }
        const auto data_start = static_cast<std::uint64_t>(data);
        if (data_start >= end) break;
        const off_t hole = ::lseek(in, data, SEEK_HOLE);
        if (hole > data) {
            known.dev = st.st_dev;
            known.ino = st.st_ino;
            known.size = st.st_size;
            known.data_begin = data_start;
            known.data_end = static_cast<std::uint64_t>(hole);
        }
        const std::uint64_t data_end =
            hole < 0 ? end : std::min<std::uint64_t>(static_cast<std::uint64_t>(hole), end);
        copy_status c = copy_dense(in, data_start, out, out_offset + (data_start - in_offset), data_end - data_start,
                                   kernel, chunk);
        if (!c.ok()) {
            c.done += data_start - in_offset;
            return c;
        }
        pos = data_end;
    }
    copy_status s;
    s.done = length;
    return s;
}

}  // namespace minfer::gguf::detail
