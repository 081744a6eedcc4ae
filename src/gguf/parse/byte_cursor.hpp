#pragma once
// Internal: the only code that turns file offsets into reads. Every read is bounds-checked by
// subtraction from the trusted size (never by adding untrusted numbers) and copies with memcpy.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace minfer::gguf::detail {

// The bytes may be the head of a longer file (file_view::parse_head): reads stop at the head, while
// the bounds that depend on the file's length (counts, strings, arrays, the data section) use the
// whole file's size, so a head gives the verdict of the whole file or says it needs more bytes.
class byte_cursor {
public:
    explicit byte_cursor(std::span<const std::byte> b) noexcept
        : base_(b.data()), size_(b.size()), file_size_(b.size()) {}
    byte_cursor(std::span<const std::byte> head, std::uint64_t file_size) noexcept
        : base_(head.data()), size_(head.size()), file_size_(file_size < head.size() ? head.size() : file_size) {}

    std::uint64_t tell() const noexcept { return pos_; }
    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t remaining() const noexcept { return size_ - pos_; }
    /// The length of the whole file, and what of it lies after the position (≥ remaining()).
    std::uint64_t file_size() const noexcept { return file_size_; }
    std::uint64_t file_remaining() const noexcept { return file_size_ - pos_; }
    /// n bytes are in the file but not all of them in the head: the parse needs a longer head.
    bool beyond_head(std::uint64_t n) const noexcept { return n > remaining() && n <= file_remaining(); }
    bool has(std::uint64_t n) const noexcept { return n <= size_ - pos_; }
    const std::byte* here() const noexcept { return base_ + pos_; }

    /// Read a little-endian scalar; false (position unchanged) when fewer than sizeof(T) bytes remain.
    template <class T>
    bool read(T& out) noexcept {
        if (!has(sizeof(T))) return false;
        std::memcpy(&out, base_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return true;
    }
    /// Advance by n bytes the caller has already checked with has().
    void skip(std::uint64_t n) noexcept { pos_ += n; }

private:
    const std::byte* base_;
    std::uint64_t size_;
    std::uint64_t file_size_;
    std::uint64_t pos_ = 0;
};

}  // namespace minfer::gguf::detail
