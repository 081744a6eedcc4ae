#pragma once
// How remote files are fetched (budget, chunk size, timeouts, retries, credentials), and what was
// fetched (bytes and requests per part).
#include <cstdint>
#include <string>
#include <vector>

namespace minfer::remote {

struct fetch_options {
    /// The most body bytes fetched for one model, over all its parts (parallel fetches share it).
    std::uint64_t max_fetch = 64ull * 1024 * 1024;
    /// The first range asked of each file; later ranges grow the head at least twofold.
    std::uint64_t first_read = 256 * 1024;
    long connect_timeout_s = 10;  ///< to set up a connection
    long stall_timeout_s = 20;    ///< no byte received for this long ends a request
    long total_timeout_s = 120;   ///< the most one request may take
    int retries = 2;              ///< further attempts after a transient failure (connection, timeout, 5xx, 429)
    long retry_backoff_ms = 200;  ///< the wait before retry k is k times this
    long max_redirects = 10;      ///< more is transfer_failed
    std::string bearer_token;     ///< sent as "Authorization: Bearer …" (empty: none); never shown in errors
    std::string user_agent;       ///< empty: "minfer/<version>"
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
