#pragma once
// model_source: the tensors of an opened model as writer sources, copied by the kernel from the
// model's own files. Edit, split and merge all rewrite an existing model; its tensor bytes must reach
// the output unchanged and without passing through memory, so each tensor becomes a file_range of
// its part's path (copy_file_range shares or splices the extents). The model was verified through
// its mapping; open() checks that each file is still the one that was verified (same size, same
// bytes before the data section) and refuses a file that was replaced or rewritten in between. No
// descriptor is kept: the writer opens a part only while it copies that part's tensors, and refuses
// a file that is no longer the one it checked (another inode or size), so a set of 5,000 parts
// needs one descriptor at a time.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/source.hpp"

namespace minfer::gguf {

class model_source {
public:
    /// Check every part of `m`. @returns io_error (file = the part; detail = the operation, or
    /// "the file changed since it was opened" with sys_errno ESTALE when its size or its bytes
    /// before the data section differ from what was verified) or out_of_memory.
    static result<model_source> open(const model& m) noexcept;

    /// A source for tensor `t` of the model given to open(): a file_range of its part's path,
    /// [data_offset + offset, + n_bytes). A handle of another model (a part index out of range)
    /// gets an empty source, which the writer refuses as a size mismatch.
    tensor_source tensor(const tensor_ref& t) const noexcept;
    std::uint32_t part_count() const noexcept { return static_cast<std::uint32_t>(paths_.size()); }

private:
    std::vector<std::filesystem::path> paths_;
    std::vector<std::uint64_t> data_offsets_;
};

}  // namespace minfer::gguf
