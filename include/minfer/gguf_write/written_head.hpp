#pragma once
// written_head: whether a file just written, before it gets its name, is one the loader accepts. The
// writer's plan follows the loader's rules already; this reads the head back from the file itself
// (what reached it, not what was meant to) and parses it with the loader against the file's size, so
// that a file the loader would refuse is never named. Used by every output that is named only when
// complete: toolbox::write_parts (split sets, quantize) and the C API's minfer_writer_write.
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/atomic_file.hpp"

namespace minfer::gguf {

/// Read [0, head_bytes) of the uncommitted `file` back (through a second, read-only descriptor of the
/// same open file: the temporary is write-only) and parse it with file_view::parse_head against the
/// file's size: header, metadata, tensor table, every tensor's range inside the data section.
/// `target` names the file in errors, `what` it is ("part", "file").
/// @returns io_error (stat, reopen or read failed: file = target, detail = the operation, sys_errno),
/// the loader's error (detail adds that the written `what` does not pass the loader), out_of_memory.
result<void> verify_written_head(const atomic_file& file, std::uint64_t head_bytes, const std::string& target,
                                 std::string_view what = "file") noexcept;

}  // namespace minfer::gguf
