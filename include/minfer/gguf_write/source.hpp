#pragma once
// tensor_source: where the writer gets one tensor's bytes. A model of 70 GB cannot pass through
// memory, so a source describes the bytes rather than holding them: a borrowed span (another model's
// mapping, no copy), a range of a file (copied by the kernel with copy_file_range), a callback that
// fills the writer's fixed chunk buffer on demand (a converter, a quantizer), zeros (written as a
// hole), or owned bytes (small tensors, tests). The writer reads every source in order, once, with a
// bounded buffer whatever the size. Every factory only moves its arguments, so none can fail: a bad
// source (a path that does not open, a range past the end of its file, a size that differs from the
// tensor's shape) is reported by the writer before the output file is created.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

class tensor_source {
public:
    enum class kind : std::uint8_t { zeros, borrowed, owned, file, callback };

    /// Fills `out` with the tensor's bytes [offset, offset + out.size()). The writer calls it in
    /// increasing offset order, covering [0, size) exactly once, with chunks of at most
    /// write_options::chunk_bytes. An error it returns ends the write (the target is left untouched);
    /// the writer adds the tensor's name and index when the error has no subject.
    using fill_fn = std::function<result<void>(std::uint64_t offset, std::span<std::byte> out)>;

    /// An empty source (zero bytes).
    tensor_source() noexcept = default;

    /// `n_bytes` zeros: a hole in the output file, so it costs no disk.
    static tensor_source zeros(std::uint64_t n_bytes) noexcept;
    /// Bytes the caller keeps alive until the write returns (e.g. a model's tensor_data()).
    static tensor_source borrow(std::span<const std::byte> bytes) noexcept;
    /// Bytes the source owns (moved in).
    static tensor_source own(std::vector<std::byte> bytes) noexcept;
    /// [offset, offset + length) of an open file descriptor, read with pread/copy_file_range at
    /// explicit offsets; finding the range's holes (lseek SEEK_DATA/SEEK_HOLE) MOVES the descriptor's
    /// file position, so do not give a descriptor whose position someone else relies on. The caller
    /// keeps `fd` open until the write returns.
    static tensor_source file_range(int fd, std::uint64_t offset, std::uint64_t length) noexcept;
    /// [offset, offset + length) of the file at `path`, opened read-only when the write starts.
    static tensor_source file_range(std::filesystem::path path, std::uint64_t offset, std::uint64_t length) noexcept;
    /// `length` bytes produced by `fill` (see fill_fn).
    static tensor_source callback(std::uint64_t length, fill_fn fill) noexcept;

    kind what() const noexcept { return kind_; }
    /// The number of bytes the source provides.
    std::uint64_t size() const noexcept { return size_; }

    /// borrowed and owned: the bytes; empty for the other kinds.
    std::span<const std::byte> bytes() const noexcept {
        if (kind_ == kind::owned) return owned_;
        return kind_ == kind::borrowed ? borrowed_ : std::span<const std::byte>();
    }
    /// file: the descriptor given to file_range(fd, …), or -1 when the source names a path.
    int fd() const noexcept { return fd_; }
    /// file: the path given to file_range(path, …), empty when the source is a descriptor.
    const std::filesystem::path& path() const noexcept { return path_; }
    /// file: where the range starts in the file.
    std::uint64_t file_offset() const noexcept { return file_offset_; }
    /// callback: the function.
    const fill_fn& fill() const noexcept { return fill_; }

private:
    kind kind_ = kind::zeros;
    std::uint64_t size_ = 0;
    std::span<const std::byte> borrowed_;
    std::vector<std::byte> owned_;
    int fd_ = -1;
    std::filesystem::path path_;
    std::uint64_t file_offset_ = 0;
    fill_fn fill_;
};

}  // namespace minfer::gguf
