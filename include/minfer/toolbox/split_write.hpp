#pragma once
// Writing an output of several files: the one protocol `minfer split`, toolbox.split, `minfer quantize`
// (its split and --keep-split outputs) and the commands to come share. Every part is written whole to
// an unnamed temporary first (gguf::writer::write_uncommitted), synced, and its head read back and
// parsed by the loader against the file's size (a part the loader would refuse is never named); only
// when all are complete are they
// given their names, parts 2..N first and part 1 last (a set is opened through part 1). So a failure or
// a kill while the bytes are written (minutes for a large model) leaves no part visible and every
// existing output as it was; with overwrite, an old part 1 is removed just before the renames, so that
// a kill during them (milliseconds) leaves no part 1, never an old part 1 over new later parts. A
// failure while naming removes the parts this run had named. Links are written through (their targets
// replaced, the links kept), as atomic_file does for every output.
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
#include "minfer/gguf_write/writer.hpp"

namespace minfer::toolbox {

struct split_write_options {
    bool overwrite = false;  ///< replace existing parts (the frontend checked every target first)
    /// Bytes written over all parts so far, and the total (plan.total_bytes()); may be empty.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// What write_split did when it failed (nothing when it succeeded).
struct split_write_failure {
    gguf::error error;
    std::optional<std::uint32_t> part;  ///< the 0-based part being written or named; nullopt: failed before any write
    std::vector<std::string> removed;   ///< the parts this run had named, removed again (a failure while naming)
    std::vector<std::pair<std::string, std::error_code>> not_removed;  ///< written parts that could not be removed
};

/// Write `writers[i]` to `targets[i]` for every part, by the protocol above. The caller has checked
/// every target (none is an input, each is a new name or, with overwrite, a regular file or a link to
/// one). `targets` and `writers` have the same size. Each temporary holds two descriptors until the
/// renames: the soft RLIMIT_NOFILE is raised towards the hard limit when the parts need it, and a set
/// that still does not fit is refused (io_error EMFILE) before a byte is written.
/// @returns nullopt when every part is written and named, or the failure and what was rolled back.
std::optional<split_write_failure> write_parts(const std::vector<gguf::writer>& writers,
                                               const std::vector<std::string>& targets, const split_write_options& o);

/// Write every part of `plan` (made on `m`) to `targets` (one per part, checked by the caller: none is
/// a file of `m`, each is a new name or a regular file when `overwrite`) through write_parts.
/// @returns nullopt when every part is written, or the failure and what was rolled back.
std::optional<split_write_failure> write_split(const gguf::model& m, const gguf::split_plan& plan,
                                               const std::vector<std::string>& targets, const split_write_options& o);

}  // namespace minfer::toolbox
