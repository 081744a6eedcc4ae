#pragma once
// model_source: the tensors of an opened model as writer sources, copied by the kernel from the
// model's own files. Edit, split and merge all rewrite an existing model; its tensor bytes must reach
// the output unchanged and without passing through memory, so each tensor becomes a file_range of a
// descriptor on its part (copy_file_range shares or splices the extents). The model was verified
// through its mapping; the descriptors are opened afterwards, so open() checks that each file is
// still the one that was verified (same size, same bytes before the data section) and refuses a file
// that was replaced or rewritten in between. The descriptors stay open as long as this object, so a
// rename or unlink of the path afterwards does not change what is copied.
#include <cstdint>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/source.hpp"

namespace minfer::gguf {

class model_source {
public:
    /// Open every part of `m` read-only. @returns io_error (file = the part; detail = the operation,
    /// or "the file changed since it was opened" with sys_errno ESTALE when its size or its bytes
    /// before the data section differ from what was verified) or out_of_memory.
    static result<model_source> open(const model& m) noexcept;

    model_source() noexcept = default;
    model_source(model_source&& other) noexcept;
    model_source& operator=(model_source&& other) noexcept;
    model_source(const model_source&) = delete;
    model_source& operator=(const model_source&) = delete;
    ~model_source();

    /// A source for tensor `t` of the model given to open(): a file_range of its part's descriptor,
    /// [data_offset + offset, + n_bytes). A handle of another model (a part index out of range)
    /// gets an empty source, which the writer refuses as a size mismatch.
    tensor_source tensor(const tensor_ref& t) const noexcept;
    /// The descriptor of a part (0-based), -1 when out of range.
    int fd(std::uint32_t part) const noexcept { return part < fds_.size() ? fds_[part] : -1; }
    std::uint32_t part_count() const noexcept { return static_cast<std::uint32_t>(fds_.size()); }

private:
    void close_all() noexcept;
    std::vector<int> fds_;
    std::vector<std::uint64_t> data_offsets_;
};

}  // namespace minfer::gguf
