#pragma once
// `verify`'s checks, once for both frontends (`minfer verify` prints the report, the Python module's
// verify() converts it): the vocabulary as llama.cpp loads it, then one walk over the model's bytes
// feeding the value checks (NaN and Inf in floats and in quantized blocks' scales, optionally every
// converted value) and the hashes the download checks need (a manifest's strongest type, the part
// files' SHA-256), then the tallies and the verdict. Reading the options and the manifest stays
// with the frontends: their refusals are worded for their users (--file-sha256 vs file_sha256).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "minfer/check/digest.hpp"
#include "minfer/check/manifest.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/check/vocab_check.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::toolbox {

struct verify_request {
    bool values = false;            ///< also convert every value to f32 and check it (--values)
    std::size_t max_examples = 10;  ///< findings kept per tensor (the counts are complete)
    unsigned threads = 0;           ///< the walk's job threads; 0: one per hardware thread
    /// A manifest to check with its strongest hash type, or null. It must outlive the report (whose
    /// manifest lines point into it).
    const check::manifest* manifest = nullptr;
    /// The model's file name as the manifest's lines name it (the entry's last path component).
    std::string file_name;
    /// The expected SHA-256 of each part file, in part order; empty: none checked.
    std::vector<check::digest> file_sha256;
    /// Called on the walking thread after each window: bytes walked so far, bytes to walk in all.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// One part file's SHA-256 against the one expected.
struct file_check {
    std::uint32_t part = 0;  ///< 0-based
    std::string path;
    check::digest ours;
    check::digest expected;
    bool match = false;
};

struct verify_report {
    std::vector<check::vocab_finding> vocabulary;  ///< findings first, then warnings (check_vocab's order)
    std::vector<check::tensor_verdict> verdicts;   ///< one per tensor, in model order
    std::optional<check::check_report> manifest;   ///< when a manifest was given
    std::vector<file_check> files;                 ///< when file SHA-256s were given: one per part

    // Tallies over the verdicts and the vocabulary.
    std::uint64_t bytes = 0;                           ///< tensor bytes walked
    std::uint64_t by_scope[3] = {0, 0, 0};             ///< tensors per check::check_scope
    std::uint64_t values_checked = 0;                  ///< tensors whose values were converted and checked
    std::uint64_t findings = 0, tensors_with_findings = 0;
    std::uint64_t warnings = 0;                        ///< all-zero tensors (one warning each)
    std::uint64_t vocab_findings = 0, vocab_warnings = 0;
    bool manifest_ok = true;  ///< no manifest, or its outcome is success
    bool files_ok = true;     ///< every part's SHA-256 matches (true when none was given)

    /// No finding in the values or the vocabulary, the manifest's outcome success, every file matches
    /// (warnings do not count): `verify`'s exit code 0.
    bool clean() const noexcept { return findings == 0 && vocab_findings == 0 && manifest_ok && files_ok; }
};

/// Run the checks over `m` (complete: a model opened from heads is model_incomplete).
/// @returns the walk's and the consumers' errors (io_error, model_incomplete, out_of_memory);
/// bad_value_text when the manifest has no line of a known hash type; buffer_size_mismatch when
/// file_sha256 is neither empty nor one per part (expected = the parts, found = the hashes given).
/// The frontends refuse both first, in their own words.
gguf::result<verify_report> verify(const gguf::model& m, const verify_request& request) noexcept;

}  // namespace minfer::toolbox
