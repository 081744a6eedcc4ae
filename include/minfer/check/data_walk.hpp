#pragma once
// data_walk: one pass over a model's bytes in file order, part after part, window by window, for any
// number of consumers at once (model and tensor hashes, file hashes, value checks). Nothing is
// copied: a window is a span of the part's mapping. For each window the walker asks every consumer
// for jobs (independent pieces of work on that window), runs them on a small pool of threads, waits
// for all of them, then drops the window's pages from the process (MADV_DONTNEED: they stay in the
// page cache), so the resident memory stays about one window whatever the size of the model.
// src/check/data_walk.cpp says why the mapping and not pread (measured).
//
// Order guarantees (what makes one-stream hashes possible): schedule() is called on the walking
// thread, window after window in file order; every job of window k has finished before
// schedule() is called for window k+1. Jobs of one window run concurrently with each other, so two
// jobs must never touch the same state. A window's bytes are to be read only by its jobs.
//
// A file that another process truncates while it is walked raises SIGBUS, as any mapped read does;
// the CLI turns it into an I/O error (cli/common/sigbus_guard.hpp). With load_mode::read the model
// is in memory already and nothing is dropped.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::check {

using gguf::result;

/// The part of one tensor's bytes (ggml_nbytes; padding excluded) that lies in a window.
struct tensor_piece {
    std::uint32_t tensor = 0;          ///< index into model.tensors()
    std::uint64_t offset = 0;          ///< of bytes[0] within the tensor's bytes
    std::span<const std::byte> bytes;  ///< inside the window
    bool first = false;                ///< the piece starts the tensor (offset == 0)
    bool last = false;                 ///< the piece ends the tensor
};

/// A window of one part's file. With walk_options::whole_files the windows cover every byte of every
/// file; without it, only the data section's tensor bytes (from the first tensor's start to the
/// last tensor's end; a part without tensor bytes has no window).
struct window {
    std::uint64_t index = 0;           ///< 0, 1, 2, … over the whole walk
    std::uint32_t part = 0;            ///< 0-based part
    std::uint64_t file_offset = 0;     ///< of bytes[0] in the part's file
    std::span<const std::byte> bytes;  ///< the window
    std::span<const tensor_piece> tensors;  ///< the tensor bytes in this window, in file order
    bool part_first = false;           ///< the first window of its part
    bool part_last = false;            ///< the last window of its part
};

using job = std::function<void()>;

class data_consumer {
public:
    virtual ~data_consumer() = default;
    /// Append this window's work to `jobs` (nothing to do: append nothing). Called on the walking
    /// thread, in window order, never while a job runs. May allocate; a consumer that cannot
    /// continue records its own error and schedules nothing more.
    virtual void schedule(const window& w, std::vector<job>& jobs) = 0;
};

struct walk_options {
    std::size_t window_bytes = std::size_t{16} << 20;  ///< a multiple of 64 KiB (rounded up), at least 64 KiB
    unsigned threads = 0;       ///< job threads; 0: one per hardware thread
    bool whole_files = false;   ///< walk every byte of every part (file hashes), not just tensor bytes
    /// Called on the walking thread after each window: bytes walked so far, bytes to walk in all.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// The bytes walk_model_data visits for these options (the progress total).
std::uint64_t walk_bytes(const gguf::model& m, bool whole_files) noexcept;

/// Walk the model's bytes once for every consumer.
/// @returns out_of_memory (the library's allocations; jobs that throw are caught and reported the
/// same way). Consumers report their own errors.
result<void> walk_model_data(const gguf::model& m, std::span<data_consumer* const> consumers,
                             const walk_options& options = {}) noexcept;

}  // namespace minfer::check
