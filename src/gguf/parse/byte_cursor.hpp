#pragma once
// Internal: the only code that turns file offsets into reads. Every read is bounds-checked by
// subtraction from the trusted size (never by adding untrusted numbers) and copies with memcpy.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace minfer::gguf::detail {

class byte_cursor {
public:
    explicit byte_cursor(std::span<const std::byte> b) noexcept : base_(b.data()), size_(b.size()) {}

    std::uint64_t tell() const noexcept { return pos_; }
    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t remaining() const noexcept { return size_ - pos_; }
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
    std::uint64_t pos_ = 0;
};

}  // namespace minfer::gguf::detail
