#pragma once
// Advice to the kernel about the pages of a file mapping (mapped_file::bytes() or a part of it), for
// the readers that stream a tensor from start to end: read ahead, and give the pages back once read,
// so that the process's resident memory is the window being read, not the file. Only for bytes of
// a mapping (mapped_file::mapped()): on memory a file was read into, MADV_DONTNEED would discard it.
#include <cstddef>
#include <span>

namespace minfer::gguf {

/// MADV_SEQUENTIAL on the whole pages covering `bytes`: the kernel reads ahead further and drops
/// the pages behind sooner. Advice only: a failure is ignored.
void advise_sequential(std::span<const std::byte> bytes) noexcept;

/// MADV_DONTNEED on the whole pages inside `bytes` (a page shared with bytes outside stays): clean
/// pages of a read-only file mapping leave this process and stay in the page cache; a later read
/// maps them again. Advice only: a failure is ignored.
void release_pages(std::span<const std::byte> bytes) noexcept;

}  // namespace minfer::gguf
