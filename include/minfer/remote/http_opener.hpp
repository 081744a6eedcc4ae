#pragma once
// A gguf::source_opener for URLs: the parts of a split set are the entry's siblings (its last path
// segment replaced), their heads fetched in parallel threads under one shared budget.
#include <deque>
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
    explicit http_opener(fetch_options options);
    std::string file_name(const std::string& location) const override;
    std::string sibling(const std::string& location, const std::string& name) const override;
    gguf::result<std::unique_ptr<gguf::byte_source>> open(const std::string& location) noexcept override;
    /// Heads start at fetch_options::first_read (for the entry and every part).
    gguf::head_options head(const gguf::limits& caps) const override;
    std::vector<gguf::result<gguf::fetched_head>> fetch_heads(std::span<const std::string> locations,
                                                              const gguf::head_options& options) noexcept override;

    /// What was fetched so far, one entry per file opened.
    fetch_stats stats() const;
    const fetch_options& options() const noexcept { return options_; }

private:
    part_stats* new_part(const std::string& url);

    fetch_options options_;
    fetch_budget budget_;
    mutable std::mutex mutex_;
    std::deque<part_stats> parts_;  // stable addresses: each source writes its own
};

}  // namespace minfer::remote
