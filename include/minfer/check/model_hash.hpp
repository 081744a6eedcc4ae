#pragma once
// model_hash: llama-gguf-hash's hashes of a model, in one walk of its bytes. For each tensor, the
// hash of exactly its bytes (ggml_nbytes: no padding, no tensor info, no metadata); for the model,
// one stream over every tensor's bytes in file order (part after part in a split set, so a split
// set hashes like the same model merged); optionally the SHA-256 of each file as stored (what the
// Hugging Face Hub shows as a file's LFS checksum). Per-tensor hashes run as separate jobs on the
// walker's threads; each whole-model stream is one job per window, in order.
#include <cstdint>
#include <span>
#include <vector>

#include "minfer/check/data_walk.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/gguf/model.hpp"

namespace minfer::check {

struct hash_options {
    /// The hashes to compute, any order, duplicates ignored; printed in all_hash_kinds order.
    std::vector<hash_kind> kinds{hash_kind::xxh64};
    bool per_tensor = true;    ///< a digest per tensor for every kind but uuid (llama-gguf-hash without --no-layer)
    bool file_sha256 = false;  ///< the SHA-256 of each part file, every byte
};

struct model_digests {
    std::vector<hash_kind> kinds;  ///< the kinds computed, in all_hash_kinds order
    /// [tensor index][i]: the digest of kinds[i] for that tensor (uuid: not computed, left empty:
    /// size 0). Empty when !per_tensor.
    std::vector<std::vector<digest>> tensors;
    std::vector<digest> model;     ///< [i]: the whole-model digest of kinds[i]
    std::vector<digest> files;     ///< [part]: SHA-256 of the file, when asked
};

/// A consumer for walk_model_data: add it to a walk with other consumers (minfer verify hashes
/// while it checks values), then take() the digests.
class hash_consumer final : public data_consumer {
public:
    /// @returns out_of_memory or hash_unavailable.
    static result<hash_consumer> make(const gguf::model& m, const hash_options& options) noexcept;

    hash_consumer(hash_consumer&&) noexcept;
    hash_consumer& operator=(hash_consumer&&) noexcept;
    ~hash_consumer() override;

    void schedule(const window& w, std::vector<job>& jobs) override;
    /// The digests, after the walk (once). @returns the first error a job met (out_of_memory).
    result<model_digests> take() noexcept;

private:
    hash_consumer() noexcept;
    struct state;
    std::unique_ptr<state> s_;
};

/// Hash a model in one walk (walk.whole_files is set when options.file_sha256 is).
/// @returns the errors of hash_consumer::make, walk_model_data and take.
result<model_digests> hash_model(const gguf::model& m, const hash_options& options,
                                 walk_options walk = {}) noexcept;

}  // namespace minfer::check
