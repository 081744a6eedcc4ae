#pragma once
// A gguf::byte_source over HTTP range requests (libcurl): the file's size from the first answer's
// Content-Range, then the head grown by further ranges, each checked against what was asked; and a
// range_reader for any range of a file once its head is verified (the tensors a command takes).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "minfer/gguf/byte_source.hpp"
#include "minfer/remote/fetch_options.hpp"

namespace minfer::remote {

/// Bytes a model's fetches may still take, shared by the sources of its parts (and their threads).
class fetch_budget {
public:
    explicit fetch_budget(std::uint64_t max) noexcept : max_(max) {}
    /// Take n bytes of the budget; false (nothing taken) when fewer are left.
    bool reserve(std::uint64_t n) noexcept;
    /// Give back n reserved bytes that were not received.
    void release(std::uint64_t n) noexcept { used_.fetch_sub(n); }
    std::uint64_t max() const noexcept { return max_; }
    std::uint64_t used() const noexcept { return used_.load(); }
    std::uint64_t left() const noexcept { return max_ - std::min(max_, used_.load()); }

private:
    std::uint64_t max_;
    std::atomic<std::uint64_t> used_{0};
};

/// Open `url` (http or https, already resolved): ask its first range (options.first_read bytes, or
/// what the budget leaves) and learn its size. `budget` and `stats` must outlive the source; stats
/// is written by this source only. @returns http_status, range_ignored, bad_content_range,
/// transfer_failed, fetch_budget_exceeded, out_of_memory; every error's file is the url.
gguf::result<std::unique_ptr<gguf::byte_source>> open_http_source(const std::string& url, const fetch_options& options,
                                                                  fetch_budget& budget, part_stats& stats) noexcept;

/// Any byte range of a remote file whose size is known (its verified head said it): the tensors a
/// command takes from a remote model. One connection's requests, one at a time; not thread-safe.
class range_reader {
public:
    virtual ~range_reader() = default;
    /// The file's size as given when opened; every answer's Content-Range must give the same.
    virtual std::uint64_t size() const noexcept = 0;
    /// Bytes [offset, offset + dest.size()) into dest, in one range request (retried as the
    /// options allow). @returns index_out_of_range past the end, http_status, range_ignored,
    /// bad_content_range (also: the server gives another size: the file changed), transfer_failed,
    /// fetch_budget_exceeded, out_of_memory; every error's file is the url.
    virtual gguf::result<void> read(std::uint64_t offset, std::span<std::byte> dest) noexcept = 0;
};

/// A range_reader of `url` (http or https, already resolved), a file of `size` bytes. No request is
/// made until the first read. @returns library_unavailable (no libcurl), transfer_failed, out_of_memory.
gguf::result<std::unique_ptr<range_reader>> open_range_reader(const std::string& url, std::uint64_t size,
                                                              const fetch_options& options, fetch_budget& budget,
                                                              part_stats& stats) noexcept;

/// curl_global_init, once per process (the opener calls it before starting threads).
void global_init() noexcept;

}  // namespace minfer::remote
