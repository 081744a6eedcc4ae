#pragma once
// Internal: a Hugging Face checkpoint given by URL (`minfer convert URL`: http(s)://…/ or
// hf://OWNER/REPO[@REVISION]). minfer::convert reads directories only and knows nothing of HTTP; this
// makes one it can read, a spool directory beside the output, named after the repository (the
// reference's metadata heuristics read the directory's name), removed as soon as the checkpoint is
// planned (detach: the shards stay open) and in any case when this object goes:
//   1. open(): the small files fetched whole, each under the cap its reader has (config.json, the
//      index, the tokenizer files, README.md, …; a 404 means absent, any other failure is an error;
//      one larger than its cap is left as a sparse file of its size, so the reader refuses it as it
//      refuses the local one); the shards (the index's, or model.safetensors) as sparse files of their
//      full size (Content-Range's total) holding only the 8-byte length and the JSON header, so
//      checkpoint::open verifies them exactly as local files;
//   2. start_tensors(planned): the tensor bytes the plan takes, checked against what --max-fetch leaves
//      (fetch_budget_exceeded before anything is written); later fetches draw on a budget of exactly
//      that many bytes;
//   3. fetch(ranges) before a tensor's bytes are read (its inputs' ranges, adjacent ones merged, at
//      most 16 MiB a request, written in place into the sparse shards), release(ranges) after
//      (FALLOC_FL_PUNCH_HOLE), so the spool holds a tensor's inputs at most, and every byte of the
//      checkpoint that is needed is fetched once.
// Without minfer::remote in the build (no libcurl headers), open() refuses every URL by name.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::toolbox::detail {

/// Bytes [offset, offset + size) of the shard called `shard` (its file name).
struct shard_range {
    std::string shard;
    std::uint64_t offset = 0, size = 0;
};

class remote_checkpoint {
public:
    explicit remote_checkpoint(remote_settings settings);
    ~remote_checkpoint();  ///< the spool removed, whatever happened
    remote_checkpoint(const remote_checkpoint&) = delete;
    remote_checkpoint& operator=(const remote_checkpoint&) = delete;

    /// Whether this build reads URLs at all.
    static bool available() noexcept;
    /// Resolve `location` (remote::resolve_directory), make the spool in `parent` and fill it (step 1).
    /// @returns the checkpoint directory to read; unsupported_config (no remote support in this build),
    /// bad_value_text (the URL), io_error (the spool), bad_checkpoint_index (the index), and the
    /// fetches' errors (http_status, transfer_failed, bad_content_range, range_ignored,
    /// fetch_budget_exceeded, library_unavailable, out_of_memory) with file = the URL.
    gguf::result<std::filesystem::path> open(const std::string& location, const std::filesystem::path& parent);
    /// Once the checkpoint is read (the plan holds the small files' contents and maps the shards):
    /// the spool's directory removed at once, its shards kept open (mapped by the checkpoint, written
    /// and punched through the descriptors held here), so that a process killed while the tensors are
    /// fetched leaves nothing behind. Best effort (a failure leaves the removal to the destructor).
    void detach() noexcept;
    /// Step 2. @returns fetch_budget_exceeded when what was fetched plus `planned_bytes` passes --max-fetch.
    gguf::result<void> start_tensors(std::uint64_t planned_bytes);
    /// Step 3: the ranges fetched into their shards. @returns the fetches' errors (file = the URL),
    /// io_error (writing the spool; file = the spool's file).
    gguf::result<void> fetch(std::span<const shard_range> ranges);
    /// The ranges' bytes given back (a hole punched); a file system without holes keeps them.
    void release(std::span<const shard_range> ranges) noexcept;
    /// An error of a reader of the spool: a spool path in `file` (and the spool named in the detail)
    /// replaced by the URL it came from.
    void relocate(gguf::error& e) const;
    fetch_totals totals() const;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace minfer::toolbox::detail
