// The URL opener: sources for the entry and the parts, the parts' heads fetched in parallel.
#include "minfer/remote/http_opener.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "minfer/remote/url.hpp"

namespace minfer::remote {

namespace {

// A location not started because an earlier one failed. Runs on the fetching threads, where an
// exception would be std::terminate: without memory for the text it is out_of_memory.
gguf::error not_fetched(const std::string& location) noexcept {
    try {
        gguf::error e;
        e.code = gguf::errc::io_error;
        e.file = location;
        e.detail = "not fetched: an earlier part of the set failed";
        return e;
    } catch (...) {
        return gguf::out_of_memory_error();
    }
}

}  // namespace

http_opener::http_opener(fetch_options options) noexcept : options_(std::move(options)), budget_(options_.max_fetch) {
    options_.deadline = options_.deadline_from_now();  // one deadline for the entry and every part
    global_init();  // before any thread starts a transfer
}

std::string http_opener::file_name(const std::string& location) const { return remote::file_name(location); }

std::string http_opener::sibling(const std::string& location, const std::string& name) const {
    return remote::sibling(location, name);
}

part_stats* http_opener::new_part(const std::string& url) {
    std::lock_guard<std::mutex> lock(mutex_);
    parts_.emplace_back();
    parts_.back().url = url;
    return &parts_.back();
}

gguf::result<std::unique_ptr<gguf::byte_source>> http_opener::open(const std::string& location) noexcept {
    part_stats* stats = nullptr;
    try {
        stats = new_part(location);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("opening the remote file"));
    }
    return open_http_source(location, options_, budget_, *stats);
}

gguf::result<std::unique_ptr<range_reader>> http_opener::open_ranges(const std::string& location, std::uint64_t size) noexcept {
    part_stats* stats = nullptr;
    try {
        stats = new_part(location);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("opening the remote file"));
    }
    return open_range_reader(location, size, options_, budget_, *stats);
}

gguf::head_options http_opener::head(const gguf::limits& caps) const {
    gguf::head_options o;
    o.caps = caps;
    // The first range never asks more than the budget (a budget of 100K reads a 14K head in one
    // range), and a head needing more than the budget is refused naming what it needs, not the
    // first range's size.
    o.first_read = std::min(options_.first_read, options_.max_fetch);
    o.max_read = options_.max_fetch;
    o.max_growth = options_.max_head_growth;
    return o;
}

std::vector<gguf::result<gguf::fetched_head>> http_opener::fetch_heads(std::span<const std::string> locations,
                                                                       const gguf::head_options& options) noexcept {
    std::vector<gguf::result<gguf::fetched_head>> out;
    try {
        gguf::head_options ho = options;
        ho.first_read = std::min(options_.first_read, options_.max_fetch);
        ho.max_read = std::min(ho.max_read, options_.max_fetch);
        ho.max_growth = options_.max_head_growth;
        std::vector<std::optional<gguf::result<gguf::fetched_head>>> slots(locations.size());
        std::atomic<std::size_t> next{0};
        // Set by the first failure: no later location is started (a part 1 claiming 65,535 parts
        // with no part 2 costs about one request per thread, not 65,534). Every location started
        // before it was taken in order, so the first error model::open meets is a real one.
        std::atomic<bool> failed{false};
        auto work = [&] {
            for (;;) {
                const std::size_t i = next.fetch_add(1);
                if (i >= locations.size()) return;
                if (failed.load()) {
                    slots[i].emplace(gguf::unexpected(not_fetched(locations[i])));
                    continue;
                }
                auto src = open(locations[i]);
                if (!src)
                    slots[i].emplace(gguf::unexpected(std::move(src).error()));
                else
                    slots[i].emplace(gguf::fetch_head(**src, ho));
                if (!slots[i]->has_value()) failed.store(true);
            }
        };
        // A few transfers at a time: enough to hide each request's latency, not a flood of connections.
        const std::size_t n_threads = std::min<std::size_t>(locations.size(), 8);
        std::vector<std::thread> threads;
        threads.reserve(n_threads);
        try {
            for (std::size_t k = 0; k < n_threads; ++k) threads.emplace_back(work);
        } catch (...) {
            // A thread that cannot start (std::system_error: EAGAIN, or std::bad_alloc for its
            // state): fewer threads than wished, the ones started (or this one) take the rest.
            // Never let it leave this block: the threads started are joinable, and destroying
            // them unjoined while unwinding would be std::terminate.
        }
        if (threads.empty()) work();
        for (std::thread& t : threads) t.join();
        out.reserve(locations.size());
        for (auto& s : slots) out.push_back(std::move(*s));
    } catch (const std::bad_alloc&) {
        out.clear();
        try {  // room for one result was given back by clear(); if not, the caller sees no parts
            out.emplace_back(gguf::unexpected(gguf::out_of_memory_error("fetching the parts")));
        } catch (...) {
        }
    }
    return out;
}

gguf::result<fetch_stats> http_opener::stats() const noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        fetch_stats s;
        s.parts.assign(parts_.begin(), parts_.end());
        return s;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("copying the fetch statistics"));
    }
}

// The totals are read under the lock (a source may be writing its part's counts); mutex::lock
// throws only on a misused mutex, never on a lack of resources that this code could cause.
std::uint64_t http_opener::bytes_received() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t n = 0;
    for (const part_stats& p : parts_) n += p.bytes_received;
    return n;
}

std::uint64_t http_opener::requests() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t n = 0;
    for (const part_stats& p : parts_) n += p.requests;
    return n;
}

}  // namespace minfer::remote
