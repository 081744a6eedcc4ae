#pragma once
// Internal: moving bytes between descriptors at explicit offsets (the descriptors' file positions
// are never used, so one input descriptor can serve many tensors). Failures are reported as the
// failed side and its errno; the writer turns them into errors with the tensor's context.
#include <cstddef>
#include <cstdint>
#include <span>

namespace minfer::gguf::detail {

struct copy_status {
    enum class what : std::uint8_t { ok, read, write, kernel_copy, short_source } failed = what::ok;
    int err = 0;                ///< errno of the failed call
    std::uint64_t done = 0;     ///< bytes copied before the failure
    bool ok() const noexcept { return failed == what::ok; }
};

/// pwrite all of `bytes` at `offset`, retrying short writes and EINTR.
copy_status write_all(int fd, std::span<const std::byte> bytes, std::uint64_t offset) noexcept;

/// Ask the kernel to start writing [offset, offset + length) of `fd` to the device now
/// (sync_file_range with SYNC_FILE_RANGE_WRITE on Linux; nothing elsewhere), without waiting for
/// it. The writer calls it after each chunk so that the final fsync finds little left to write
/// instead of the whole file. Advisory: a failure is ignored (the fsync reports real errors).
void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) noexcept;

/// pread exactly out.size() bytes at `offset` (short_source when the file ends first).
copy_status read_all(int fd, std::span<std::byte> out, std::uint64_t offset) noexcept;

/// Copy [in_offset, in_offset + length) of `in` to `out` at `out_offset`. With `kernel` set it
/// tries copy_file_range, and clears `kernel` (for this and later calls) where the kernel refuses
/// the pair (EXDEV, EINVAL, ENOSYS, EOPNOTSUPP); then it copies through `chunk` with pread/pwrite.
copy_status copy_range(int in, std::uint64_t in_offset, int out, std::uint64_t out_offset, std::uint64_t length,
                       bool& kernel, std::span<std::byte> chunk) noexcept;

}  // namespace minfer::gguf::detail
