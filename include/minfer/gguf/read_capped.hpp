#pragma once
// read_capped: the whole of a small input the user names (a chat template file, a hash manifest,
// standard input), read up to a cap. A named file can be a FIFO, /dev/zero, a growing log or a file
// of gigabytes: its st_size is not trusted, the buffer grows only as bytes arrive, and the read stops
// after cap + 1 bytes, so memory stays at most about twice the accepted input and refusing costs at
// most the cap.
#include <cstdint>
#include <filesystem>
#include <string>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

/// Read all of `path` (at most `cap` bytes). @returns io_error (file = the path, sys_errno; a
/// directory is EISDIR), out_of_memory, or `too_large` (input_too_large by default) with
/// expected = cap, found = the file's size when it is a regular file, else cap + 1 ("more than").
result<std::string> read_capped(const std::filesystem::path& path, std::uint64_t cap,
                                errc too_large = errc::input_too_large) noexcept;

/// The same for a descriptor already open (0: standard input), called `name` in errors. The
/// descriptor is read from its current position and not closed.
result<std::string> read_capped_fd(int fd, const std::string& name, std::uint64_t cap,
                                   errc too_large = errc::input_too_large) noexcept;

}  // namespace minfer::gguf
