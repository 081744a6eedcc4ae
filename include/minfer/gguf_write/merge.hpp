#pragma once
// merge: a split set back into one file, through rewrite(). model::open has already found and
// verified every part (split keys, counts, order, duplicates, architecture); the merged file is
// part 1's metadata without the three split keys, then every tensor of every part in order, each
// copied by the kernel from its part. Unlike llama-gguf-split (which keeps split.no and
// split.tensors.count and sets split.count to 0), no split key is left, so `split` then `merge` of
// a file without split keys gives back the same bytes when the original's layout is canonical
// (zero padding, nothing after the data, GGUF v3).
#include <cstdint>
#include <string>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::gguf {

/// A key of a later part that the merged file will not carry (only part 1's metadata is kept).
/// Parts written by llama-gguf-split or minfer split hold only the split keys (and, from minfer,
/// general.alignment), so anything else was added by hand or by another tool and is worth a word.
struct merge_warning {
    std::uint32_t part = 0;  ///< 1-based
    std::string key;         ///< raw bytes (escape to print)
};

/// Check that `m` is a split set and list what merging drops. A file with split.count >= 1 is a
/// set (1: a one-part set, as split writes for a small model and llama-gguf-split accepts).
/// @returns split_bad_key (subject split.count; detail says it is absent or 0) when it is not a
/// set, or out_of_memory.
result<std::vector<merge_warning>> check_merge(const model& m) noexcept;

/// The writer of the merged file: `src` opened on `m`, outliving the writer's write(). Call
/// check_merge first. @returns out_of_memory only (the rules are checked by make_plan/write).
result<writer> merge_writer(const model& m, const model_source& src) noexcept;

}  // namespace minfer::gguf
