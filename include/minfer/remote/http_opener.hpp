#pragma once
// A gguf::source_opener for URLs: the parts of a split set are the entry's siblings (its last path
// segment replaced), their heads fetched in parallel threads under one shared budget.
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "minfer/gguf/byte_source.hpp"
#include "minfer/remote/fetch_options.hpp"
#include "minfer/remote/http_source.hpp"

namespace minfer::remote {

class http_opener final : public gguf::source_opener {
public:
    /// Allocates nothing (so it cannot fail): the options are moved in.
    explicit http_opener(fetch_options options) noexcept;
    std::string file_name(const std::string& location) const override;
    std::string sibling(const std::string& location, const std::string& name) const override;
    gguf::result<std::unique_ptr<gguf::byte_source>> open(const std::string& location) noexcept override;
    /// A range_reader of `location` (a file of `size` bytes), under this opener's budget, deadline
    /// and statistics (a new entry in stats()). @returns open_range_reader's errors.
    gguf::result<std::unique_ptr<range_reader>> open_ranges(const std::string& location, std::uint64_t size) noexcept;
    /// Heads start at fetch_options::first_read (for the entry and every part).
    gguf::head_options head(const gguf::limits& caps) const override;
    std::vector<gguf::result<gguf::fetched_head>> fetch_heads(std::span<const std::string> locations,
                                                              const gguf::head_options& options) noexcept override;

    /// What was fetched so far, one entry per file opened. @returns out_of_memory when the copy
    /// cannot be made.
    gguf::result<fetch_stats> stats() const noexcept;
    /// Body bytes kept and requests made so far, over every file opened (what stats() sums, without
    /// a copy).
    std::uint64_t bytes_received() const noexcept;
    std::uint64_t requests() const noexcept;
    const fetch_options& options() const noexcept { return options_; }

private:
    part_stats* new_part(const std::string& url);

    fetch_options options_;
    fetch_budget budget_;
    mutable std::mutex mutex_;
    // stable addresses (each source writes its own); a list, not a deque, because an empty list
    // allocates nothing and the constructor stays noexcept
    std::list<part_stats> parts_;
};

}  // namespace minfer::remote
