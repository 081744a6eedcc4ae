#pragma once
// How remote files are fetched (budget, chunk size, timeouts, retries, credentials), and what was
// fetched (bytes and requests per part).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace minfer::remote {

struct fetch_options {
    /// The most body bytes fetched for one model, over all its parts (parallel fetches share it).
    std::uint64_t max_fetch = 64ull * 1024 * 1024;
    /// The first range asked of each file (never more than max_fetch); later ranges grow the head
    /// at least twofold.
    std::uint64_t first_read = 256 * 1024;
    /// The most one later range may add to a head (0: it doubles). gguf::head_options::max_growth.
    std::uint64_t max_head_growth = 0;
    /// The most seconds the whole open may take: every request of every part, retries and their
    /// waits included (--timeout). Not per request: a server that trickles a byte a second, or
    /// never answers, ends the open within it, however many requests and retries it takes.
    double timeout_s = 60;
    /// When that time is up. Left at the epoch, the opener (or a source opened alone) sets it to
    /// now + timeout_s when it is made; every source of an opener shares its deadline. Each request
    /// may take the time left, no request starts after it, a retry is made only before it.
    std::chrono::steady_clock::time_point deadline{};
    long connect_timeout_s = 10;  ///< to set up a connection (capped by the time left)
    long stall_timeout_s = 20;    ///< per request: a body slower than 1 byte/s for this long ends it
    int retries = 2;              ///< further attempts after a transient failure (connection, timeout, 5xx, 429)
    long retry_backoff_ms = 200;  ///< the wait before retry k is k times this (cut short by the deadline)
    long max_redirects = 10;      ///< more is transfer_failed
    std::string bearer_token;     ///< sent as "Authorization: Bearer …" (empty: none); never shown in errors
    std::string user_agent;       ///< empty: "minfer/<version>"

    /// `deadline`, or now + timeout_s if it is unset (what a new opener or lone source uses).
    std::chrono::steady_clock::time_point deadline_from_now() const noexcept {
        if (deadline != std::chrono::steady_clock::time_point{}) return deadline;
        // at most ~31 years: far enough to be no deadline, near enough not to overflow the clock
        const double s = timeout_s > 0 && timeout_s < 1e9 ? timeout_s : 1e9;
        return std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
    }
};

/// What was fetched for one file.
struct part_stats {
    std::string url;
    std::uint64_t bytes_received = 0;  ///< body bytes libcurl handed over and were kept (a cut 200 body too)
    std::uint32_t requests = 0;        ///< HTTP requests made (retries count, redirects do not)
};

struct fetch_stats {
    std::vector<part_stats> parts;  ///< one per file opened, in the order opened
    std::uint64_t bytes_received() const noexcept {
        std::uint64_t n = 0;
        for (const part_stats& p : parts) n += p.bytes_received;
        return n;
    }
    std::uint64_t requests() const noexcept {
        std::uint64_t n = 0;
        for (const part_stats& p : parts) n += p.requests;
        return n;
    }
};

}  // namespace minfer::remote
