#pragma once
// mapped_file: the bytes of one file, owned (RAII, move-only). By default the whole file is mapped
// read-only from offset 0 (MAP_PRIVATE, PROT_READ), so the base is page-aligned and nothing is read
// until touched. load_mode::read copies the file into memory instead: slower, but immune to SIGBUS
// when another process truncates the file while it is mapped.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

enum class load_mode : std::uint8_t {
    map,   ///< mmap the file (default): zero-copy, lazy
    read,  ///< read the whole file into an owned buffer (no mapping)
};

class mapped_file {
public:
    /// Open `path` read-only. @returns io_error (sys_errno set; a directory gives EISDIR; a FIFO,
    /// device or socket gives sys_errno 0 and a detail "it is a FIFO (named pipe), not a regular
    /// file") or out_of_memory.
    static result<mapped_file> open(const std::filesystem::path& path, load_mode mode = load_mode::map) noexcept;

    /// Take ownership of bytes already in memory (a buffer, a remote file's head); mode() is read.
    static mapped_file adopt(std::unique_ptr<std::byte[]> bytes, std::size_t size) noexcept;

    mapped_file() noexcept = default;
    mapped_file(mapped_file&& other) noexcept;
    mapped_file& operator=(mapped_file&& other) noexcept;
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file();

    /// The file's bytes; valid while this object lives (moving it keeps them valid).
    std::span<const std::byte> bytes() const& noexcept MINFER_LIFETIMEBOUND { return {data_, size_}; }
    std::span<const std::byte> bytes() const&& = delete;  // a view of a temporary would dangle
    std::size_t size() const noexcept { return size_; }
    load_mode mode() const noexcept { return mode_; }
    /// Whether bytes() is a mapping of the file (page_advice.hpp may then be used on it); false for
    /// a file read into memory, an adopted buffer and an empty file.
    bool mapped() const noexcept { return mapped_; }

private:
    void release() noexcept;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    load_mode mode_ = load_mode::map;
    bool mapped_ = false;                 // true when data_ came from mmap (an empty file is not mapped)
    std::unique_ptr<std::byte[]> owned_;  // load_mode::read
};

}  // namespace minfer::gguf
