#pragma once
// Writing a split set: the protocol `minfer split` and toolbox.split share. Part 1 is written last
// (a set is opened through part 1, so until the last commit there is no set to open, and a run killed
// part-way leaves no set that looks whole); when replacing, an old part 1 is removed first for the
// same reason; a failure removes the parts this run wrote, so a failed split leaves nothing behind.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/split_plan.hpp"

namespace minfer::toolbox {

struct split_write_options {
    bool overwrite = false;  ///< replace existing parts (the frontend checked every target first)
    /// Bytes written over all parts so far, and the total (plan.total_bytes()); may be empty.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// What write_split did when it failed (nothing when it succeeded).
struct split_write_failure {
    gguf::error error;
    std::optional<std::uint32_t> part;  ///< the 0-based part being written; nullopt: failed before any write
    std::vector<std::string> removed;   ///< the parts this run had written, removed again
    std::vector<std::pair<std::string, std::error_code>> not_removed;  ///< written parts that could not be removed
};

/// Write every part of `plan` (made on `m`) to `targets` (one per part, checked by the caller: none is
/// a file of `m`, each is a new name or a regular file when `overwrite`): parts 2, 3, …, N, then 1.
/// @returns nullopt when every part is written, or the failure and what was rolled back.
std::optional<split_write_failure> write_split(const gguf::model& m, const gguf::split_plan& plan,
                                               const std::vector<std::string>& targets, const split_write_options& o);

}  // namespace minfer::toolbox
