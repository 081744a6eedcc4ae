#pragma once
// manifest: llama-gguf-hash's manifest (its own output saved to a file: lines of `type  hash  name`,
// name = `PATH:TENSOR` for a tensor, `PATH` for the whole model) and checking a model against it.
//
// Where llama-gguf-hash is lax, this is strict (docs/CLI.md, `minfer hash --check`):
// - entries are matched by tensor name whatever the path prefix (`./m.gguf:x` matches `m.gguf:x`):
//   an entry belongs to this file when its path's last component is the file's name; a manifest
//   that names exactly one file is taken for the model whatever that file is called (a renamed
//   download, a split set checked against the merged model's manifest);
// - tensors of the model that have no entry are reported (incomplete manifest), and so are entries
//   for tensors the model does not have;
// - a uuid entry is compared with the uuid (llama-gguf-hash looks it up as "sha256");
// - a line of a known type with a malformed hash is an error, not silently skipped.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/check/digest.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/gguf/model.hpp"

namespace minfer::check {

/// The largest manifest read (bytes): 64 MiB. A manifest of a 100k-tensor model with all five
/// kinds is about 50 MiB (a line per tensor and kind, ~100 bytes with a part name of 50 characters),
/// so no real manifest comes near it; refusing /dev/zero or a wrong file costs at most this much.
inline constexpr std::uint64_t max_manifest_bytes = std::uint64_t{64} << 20;

struct manifest_entry {
    hash_kind kind = hash_kind::xxh64;
    digest value;
    std::string name;       ///< as written: PATH or PATH:TENSOR
    std::uint32_t line = 0; ///< 1-based
};

struct manifest {
    std::string path;                    ///< as given (for messages)
    std::vector<manifest_entry> entries; ///< entries of known types, in file order
    /// Kinds present, in llama-gguf-hash's header order (sha256, sha1, xxh64, xxh3, uuid).
    std::vector<hash_kind> kinds() const;
    /// The strongest kind present (sha256 > sha1 > xxh64 > xxh3 > uuid); nullopt when none.
    std::optional<hash_kind> strongest() const;
};

/// Parse manifest text. A line's first two words are its type and hash; a line whose first word is
/// not a known hash type (or which is blank) is skipped, as llama-gguf-hash does; a known type needs a
/// valid hash and a name. The name is the rest of the line with surrounding whitespace removed (a path
/// with spaces stays whole; llama-gguf-hash would take its first word only).
/// @returns manifest_bad_line (index = line, subject = type word, detail = why).
result<manifest> parse_manifest(std::string_view text, std::string path) noexcept;
/// Read and parse a manifest file. @returns io_error (file = the path), manifest_too_large, and the
/// errors of parse_manifest.
result<manifest> read_manifest(const std::filesystem::path& path) noexcept;

/// llama-gguf-hash's three results for one line it prints.
enum class entry_status : std::uint8_t { ok, mismatch, not_found };
/// "Ok", "Mismatch", "Not Found".
std::string_view to_string(entry_status s) noexcept;

/// One printed line of a check: a digest of ours and what the manifest says of it.
struct check_line {
    hash_kind kind = hash_kind::xxh64;
    digest ours;
    std::int64_t tensor = -1;              ///< index into model.tensors(); -1: the whole model
    entry_status status = entry_status::not_found;
    const manifest_entry* entry = nullptr; ///< the entry compared (first match), if any
};

/// The outcome, most serious first; the CLI's exit code for `hash --check` is the value.
enum class check_outcome : int {
    success = 0,          ///< every line found matches, and every tensor has an entry
    mismatch = 1,         ///< a digest differs from its entry
    no_entries = 3,       ///< the manifest has no entry of the checked kinds for this file
    unknown_tensors = 6,  ///< (ours) all found entries match, but some name tensors the model does not have
    incomplete = 7,       ///< (ours) all found entries match, but some tensors have no entry
};
/// llama-gguf-hash's words: "Success", "Failure", "Manifest Missing Entry"; ours: "Unknown Tensors In
/// Manifest", "Tensors Missing From Manifest".
std::string_view to_string(check_outcome o) noexcept;

struct check_report {
    std::string file_name;                  ///< the file name the entries were taken for
    bool renamed = false;                   ///< the manifest names one other file, taken for this one
    std::vector<check_line> lines;          ///< in llama-gguf-hash's order: per tensor per kind, then model lines
    std::vector<const manifest_entry*> unknown_tensors;  ///< entries of this file naming absent tensors
    /// Tensors with no entry of any checked kind, when the manifest has tensor entries for this file
    /// (a manifest made with --no-layer has none and is not incomplete).
    std::vector<std::uint32_t> missing_tensors;
    std::vector<const manifest_entry*> conflicting;      ///< later entries for the same (kind, name) with another hash
    check_outcome outcome = check_outcome::success;
};

/// Compare digests with a manifest. `file_name` is the model's file name (the last component of the
/// path the user gave; for a split set, part 1's). `digests` must hold the kinds to check (with
/// per-tensor digests unless only the model lines are to be checked). The report points into `m`'s
/// manifest: keep it alive while the report is used.
check_report check_manifest(const manifest& man, const gguf::model& m, std::string_view file_name,
                            const model_digests& digests);

}  // namespace minfer::check
