// The source factories only move their arguments (so they cannot fail); the writer opens and
// checks sources when a write starts.
#include "minfer/gguf_write/source.hpp"

#include <utility>

namespace minfer::gguf {

tensor_source tensor_source::zeros(std::uint64_t n_bytes) noexcept {
    tensor_source s;
    s.kind_ = kind::zeros;
    s.size_ = n_bytes;
    return s;
}

tensor_source tensor_source::borrow(std::span<const std::byte> bytes) noexcept {
    tensor_source s;
    s.kind_ = kind::borrowed;
    s.size_ = bytes.size();
    s.borrowed_ = bytes;
    return s;
}

tensor_source tensor_source::own(std::vector<std::byte> bytes) noexcept {
    tensor_source s;
    s.kind_ = kind::owned;
    s.size_ = bytes.size();
    s.owned_ = std::move(bytes);
    return s;
}

tensor_source tensor_source::file_range(int fd, std::uint64_t offset, std::uint64_t length) noexcept {
    tensor_source s;
    s.kind_ = kind::file;
    s.size_ = length;
    s.fd_ = fd;
    s.file_offset_ = offset;
    return s;
}

tensor_source tensor_source::file_range(std::filesystem::path path, std::uint64_t offset,
                                        std::uint64_t length) noexcept {
    tensor_source s;
    s.kind_ = kind::file;
    s.size_ = length;
    s.path_ = std::move(path);
    s.file_offset_ = offset;
    return s;
}

tensor_source tensor_source::callback(std::uint64_t length, fill_fn fill) noexcept {
    tensor_source s;
    s.kind_ = kind::callback;
    s.size_ = length;
    s.fill_ = std::move(fill);
    return s;
}

}  // namespace minfer::gguf
