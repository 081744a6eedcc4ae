// The HTTP byte source: libcurl easy transfers of byte ranges into one growing buffer, every answer
// checked against what was asked (status, Content-Range, body length), under a shared budget.
#include "minfer/remote/http_source.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "curl_library.hpp"

#include "minfer/gguf/text.hpp"
#include "minfer/remote/content_range.hpp"
#include "minfer/remote/errors.hpp"

#ifndef MINFER_VERSION
#define MINFER_VERSION "unknown"
#endif

namespace minfer::remote {

bool fetch_budget::reserve(std::uint64_t n) noexcept {
    std::uint64_t used = used_.load();
    do {
        if (used > max_ || n > max_ - used) return false;
    } while (!used_.compare_exchange_weak(used, used + n));
    return true;
}

void global_init() noexcept {
    (void)detail::curl_library();  // a failure is remembered and returned by the first transfer's open
}

namespace {

using gguf::errc;
using gguf::error;

std::string num(std::uint64_t v) { return std::to_string(v); }

// "the 60 s deadline (--timeout)": what a message names when the command's time is up.
std::string deadline_text(double seconds) {
    char b[64];
    if (seconds == std::floor(seconds) && seconds < 1e15)
        std::snprintf(b, sizeof b, "%.0f", seconds);
    else
        std::snprintf(b, sizeof b, "%g", seconds);
    return std::string("the ") + b + " s deadline (--timeout)";
}

error make_error(errc code, const std::string& url, std::string detail, std::uint64_t found = 0) {
    error e;
    e.code = code;
    e.file = url;
    e.detail = std::move(detail);
    e.found = found;
    return e;
}

// out_of_memory naming the url when there is room for it: built inside catch handlers of noexcept
// functions, so it never throws (make_error could: std::terminate).
error oom(const std::string& url, std::string_view what) noexcept {
    error e = gguf::out_of_memory_error(what);
    try {
        e.file = url;
    } catch (...) {  // the code and what was done say enough
    }
    return e;
}

std::string in_quotes(std::string_view raw) {
    std::string s("'");
    s += gguf::escape(raw);
    s += '\'';
    return s;
}

bool ieq_prefix(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

// One attempt of one range request: what the callbacks saw.
struct transfer {
    CURL* curl = nullptr;
    const detail::curl_functions* api = nullptr;
    const std::string* url = nullptr;
    std::uint64_t first = 0, last = 0;  // the range asked, inclusive
    bool first_request = false;
    std::uint64_t known_total = 0;      // the size learned before (later requests)
    std::byte* dest = nullptr;          // room for last - first + 1 bytes
    part_stats* stats = nullptr;

    // from the headers of the final answer
    std::string reason;  // the status line's reason phrase
    std::string content_range;
    bool has_content_range = false;

    // decided at the first body byte (or after the transfer when there is no body)
    bool checked = false;
    long status = 0;
    std::uint64_t accept = 0;  // body bytes to keep
    std::uint64_t total = 0;   // the file's size from Content-Range
    std::uint64_t received = 0;
    bool ranged = false;       // a 206 whose body must be exactly `accept` bytes
    std::optional<error> failure;
    // A callback could not allocate (a header's text, an error's): it stopped the transfer, and
    // attempt() reports out_of_memory. A flag, not an error, because building one may fail again.
    bool out_of_memory = false;
};

std::uint64_t asked_len(const transfer& t) { return t.last - t.first + 1; }

std::string range_text(const transfer& t) { return "bytes=" + num(t.first) + "-" + num(t.last); }

// Decide what to make of the answer once its status and headers are known. false: stop the transfer.
bool check_answer(transfer& t) {
    t.checked = true;
    t.api->easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &t.status);
    const std::string& url = *t.url;
    if (t.status == 206) {
        if (!t.has_content_range) {
            t.failure = make_error(remote::codes::bad_content_range, url, "a 206 answer without Content-Range to " + range_text(t));
            return false;
        }
        const auto cr = parse_content_range(t.content_range);
        if (!cr || cr->unsatisfied) {
            t.failure = make_error(remote::codes::bad_content_range, url,
                                   in_quotes(t.content_range) + " is not 'bytes FIRST-LAST/TOTAL' (asked " + range_text(t) + ")");
            return false;
        }
        if (!t.first_request && cr->total != t.known_total) {
            t.failure = make_error(remote::codes::bad_content_range, url,
                                   in_quotes(t.content_range) + " gives the file's size as " + num(cr->total) +
                                       ", an earlier answer gave " + num(t.known_total));
            return false;
        }
        const std::uint64_t want_last = std::min(t.last, cr->total - 1);
        if (cr->first != t.first || cr->last != want_last) {
            t.failure = make_error(remote::codes::bad_content_range, url,
                                   in_quotes(t.content_range) + " is not the range asked (" + range_text(t) + ")");
            return false;
        }
        t.total = cr->total;
        t.accept = cr->last - cr->first + 1;
        t.ranged = true;
        return true;
    }
    if (t.status == 200) {
        t.failure = make_error(remote::codes::range_ignored, url, "it answered 200 with the whole body to " + range_text(t));
        t.accept = asked_len(t);  // kept up to the range asked, never more: then the transfer is cut off
        return true;
    }
    std::string detail = t.reason;
    if (t.has_content_range) detail += (detail.empty() ? "" : "; ") + std::string("Content-Range ") + in_quotes(t.content_range);
    t.failure = make_error(errc::http_status, url, detail, static_cast<std::uint64_t>(t.status));
    return false;
}

// libcurl's callbacks are called from C: an exception must never leave them. It would unwind
// through libcurl's frames: std::terminate where they have no unwind tables, and where they have
// (x86-64 builds), a transfer abandoned midway, its state never cleaned up. Each callback catches,
// marks the transfer, and returns a count other than the one given, which makes libcurl abort it
// (CURLE_WRITE_ERROR); attempt() then says out_of_memory.
void read_header(transfer& t, std::string_view line) {
    if (ieq_prefix(line, "http/")) {  // a new answer (after a redirect or a 100): forget the last one's
        t.has_content_range = false;
        t.content_range.clear();
        const std::size_t sp1 = line.find(' ');
        const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
        t.reason = sp2 == std::string_view::npos ? std::string() : gguf::escape(trim(line.substr(sp2 + 1)), '"');
    } else if (ieq_prefix(line, "content-range:")) {
        t.content_range = std::string(trim(line.substr(14)));
        t.has_content_range = true;
    }
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) noexcept {
    auto& t = *static_cast<transfer*>(user);
    const std::size_t len = size * n;
    try {
        read_header(t, std::string_view(data, len));
    } catch (...) {  // only std::bad_alloc can come here
        t.out_of_memory = true;
        return len == 0 ? 1 : 0;
    }
    return len;
}

std::size_t read_body(transfer& t, char* data, std::size_t len) {
    if (!t.checked && !check_answer(t)) return 0;
    if (t.status != 206 && t.status != 200) return 0;
    const std::uint64_t room = t.accept - t.received;
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(room, len));
    if (take > 0) std::memcpy(t.dest + t.received, data, take);
    t.received += take;
    t.stats->bytes_received += take;
    if (take < len) {
        if (t.ranged)
            t.failure = make_error(remote::codes::bad_content_range, *t.url,
                                   "the body is longer than the " + num(t.accept) + " bytes of Content-Range " +
                                       in_quotes(t.content_range));
        return 0;  // stop reading: a 200 is cut off here
    }
    return len;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) noexcept {
    auto& t = *static_cast<transfer*>(user);
    const std::size_t len = size * n;
    try {
        return read_body(t, data, len);
    } catch (...) {  // building an error's text: std::bad_alloc
        t.out_of_memory = true;
        return len == 0 ? 1 : 0;
    }
}

bool transient_curl(CURLcode c) noexcept {
    switch (c) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING: return true;
        default: return false;
    }
}

// One remote file's range requests on one libcurl handle: each answer checked against what was
// asked (and, after the first, against the file's size learned before), retried while the deadline
// and the retry count allow, every byte counted against the shared budget. The head source below
// and range_reader both fetch through it.
class range_client {
public:
    range_client(const detail::curl_functions& api, std::string url, const fetch_options& options, fetch_budget& budget,
                 part_stats& stats)
        : api_(&api), url_(std::move(url)), options_(options), budget_(budget), stats_(stats) {
        options_.deadline = options_.deadline_from_now();  // the opener's, or now + timeout_s when alone
    }
    ~range_client() {
        if (curl_) api_->easy_cleanup(curl_);
    }
    range_client(const range_client&) = delete;
    range_client& operator=(const range_client&) = delete;

    const std::string& url() const noexcept { return url_; }
    fetch_budget& budget() const noexcept { return budget_; }
    std::uint64_t first_read() const noexcept { return options_.first_read; }

    gguf::result<void> start() {
        curl_ = api_->easy_init();
        if (!curl_) return gguf::unexpected(make_error(errc::transfer_failed, url_, "libcurl could not start a transfer"));
        return {};
    }

    error over_budget(std::uint64_t need) const {
        error e = make_error(errc::fetch_budget_exceeded, url_, {});
        e.expected = budget_.max();
        e.found = budget_.used() + need;
        return e;
    }

    // Bytes [first, last] into dest (room for last - first + 1). The first request of a file learns
    // its size (total; the answer may be shorter at the end of the file); a later one must find the
    // same size (known_total). @returns the bytes received.
    gguf::result<std::uint64_t> fetch(std::uint64_t first, std::uint64_t last, std::byte* dest, bool first_request,
                                      std::uint64_t known_total, std::uint64_t& total) {
        const std::uint64_t len = last - first + 1;
        for (int k = 0;; ++k) {
            const long long left = left_ms();
            if (left <= 0)  // a request never starts after the deadline (a later part, a retry)
                return gguf::unexpected(make_error(errc::transfer_failed, url_,
                                                   "not started: " + deadline_text(options_.timeout_s) + " has passed"));
            if (!budget_.reserve(len)) return gguf::unexpected(over_budget(len));
            transfer t;
            t.curl = curl_;
            t.api = api_;
            t.url = &url_;
            t.first = first;
            t.last = last;
            t.first_request = first_request;
            t.known_total = known_total;
            t.dest = dest;
            t.stats = &stats_;
            bool retry = false;
            auto r = attempt(t, retry, left);
            budget_.release(len - std::min(len, t.received));
            if (r) {
                total = t.total;
                return t.received;
            }
            if (!retry || k >= options_.retries) return gguf::unexpected(std::move(r).error());
            // the wait before the retry, and the retry itself, only while time is left
            const long long wait = std::min<long long>(options_.retry_backoff_ms * (k + 1), std::max(0LL, left_ms()));
            std::this_thread::sleep_for(std::chrono::milliseconds(wait));
            if (left_ms() <= 0) {
                error e = std::move(r).error();
                e.detail += std::string(e.detail.empty() ? "" : "; ") + "no time left to retry within " + deadline_text(options_.timeout_s);
                return gguf::unexpected(std::move(e));
            }
        }
    }

private:
    // Milliseconds until the deadline (≤ 0: it has passed).
    long long left_ms() const noexcept {
        return std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline - std::chrono::steady_clock::now()).count();
    }

    void setup(transfer& t, const std::string& range, long long left) {
        api_->easy_reset(curl_);
        api_->easy_setopt(curl_, CURLOPT_URL, url_.c_str());
        api_->easy_setopt(curl_, CURLOPT_RANGE, range.c_str());
        api_->easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);
        api_->easy_setopt(curl_, CURLOPT_MAXREDIRS, options_.max_redirects);
        api_->easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
        api_->easy_setopt(curl_, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        // The request may take what is left of the command's time, and no more: the deadline holds
        // over all requests and retries. The stall limit below still ends a dead transfer sooner.
        const long left_l = static_cast<long>(std::clamp<long long>(left, 1, 0x7fffffff));
        api_->easy_setopt(curl_, CURLOPT_TIMEOUT_MS, left_l);
        api_->easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS,
                         std::min<long>(left_l, static_cast<long>(std::min<long long>(options_.connect_timeout_s, 2000000) * 1000)));
        api_->easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, 1L);
        api_->easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_s);
        api_->easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
        api_->easy_setopt(curl_, CURLOPT_ACCEPT_ENCODING, nullptr);  // no compression: ranges of the file's bytes
        const std::string agent = options_.user_agent.empty() ? std::string("minfer/") + MINFER_VERSION : options_.user_agent;
        api_->easy_setopt(curl_, CURLOPT_USERAGENT, agent.c_str());
        if (!options_.bearer_token.empty()) {
            // libcurl sends it to the first host only, never to the host a redirect leads to
            api_->easy_setopt(curl_, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
            api_->easy_setopt(curl_, CURLOPT_XOAUTH2_BEARER, options_.bearer_token.c_str());
        }
        api_->easy_setopt(curl_, CURLOPT_HEADERFUNCTION, on_header);
        api_->easy_setopt(curl_, CURLOPT_HEADERDATA, &t);
        api_->easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
        api_->easy_setopt(curl_, CURLOPT_WRITEDATA, &t);
        api_->easy_setopt(curl_, CURLOPT_ERRORBUFFER, errbuf_);
    }

    // One attempt: the outcome, and whether it is worth another attempt.
    gguf::result<void> attempt(transfer& t, bool& retry, long long left) {
        retry = false;
        errbuf_[0] = '\0';
        const std::string range = std::to_string(t.first) + "-" + std::to_string(t.last);
        setup(t, range, left);
        ++stats_.requests;
        const CURLcode rc = api_->easy_perform(curl_);
        if (t.out_of_memory) return gguf::unexpected(oom(url_, "receiving an answer"));
        if (t.failure) {
            const std::uint64_t st = t.failure->found;
            retry = t.failure->code == errc::http_status && (st >= 500 || st == 429);
            return gguf::unexpected(std::move(*t.failure));
        }
        if (rc != CURLE_OK) {
            std::string why = errbuf_[0] != '\0' ? std::string(errbuf_) : std::string(api_->easy_strerror(rc));
            if (rc == CURLE_TOO_MANY_REDIRECTS) why += " (a redirect loop, or more than the limit)";
            // curl's timer is the deadline's (CURLOPT_TIMEOUT_MS = the time left): the command's time
            // is up, not a stall worth another attempt. A little slack for the clocks' granularity.
            if (rc == CURLE_OPERATION_TIMEDOUT && left_ms() <= 50)
                return gguf::unexpected(make_error(errc::transfer_failed, url_,
                                                   "no complete answer within " + deadline_text(options_.timeout_s) + " (" +
                                                       gguf::escape(why, '"') + ")",
                                                   static_cast<std::uint64_t>(rc)));
            retry = transient_curl(rc);
            return gguf::unexpected(make_error(errc::transfer_failed, url_, gguf::escape(why, '"'), static_cast<std::uint64_t>(rc)));
        }
        if (!t.checked) {  // no body at all
            long status = 0;
            api_->easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
            if (t.first_request && status == 416 && t.has_content_range) {
                const auto cr = parse_content_range(t.content_range);
                if (cr && cr->unsatisfied && cr->total == 0) {  // an empty file: no byte to range over
                    t.status = 416;
                    t.total = 0;
                    return {};
                }
            }
            if (t.first_request && status == 200) {  // 200 with an empty body: an empty file, too
                t.status = 200;
                t.total = 0;
                return {};
            }
            check_answer(t);
            if (t.failure) {
                const std::uint64_t st = t.failure->found;
                retry = t.failure->code == errc::http_status && (st >= 500 || st == 429);
                return gguf::unexpected(std::move(*t.failure));
            }
        }
        if (t.status == 206 && t.received != t.accept)
            return gguf::unexpected(make_error(errc::transfer_failed, url_,
                                               "the body ended after " + num(t.received) + " of the " + num(t.accept) +
                                                   " bytes of Content-Range " + in_quotes(t.content_range)));
        return {};
    }

    const detail::curl_functions* api_;
    std::string url_;
    fetch_options options_;
    fetch_budget& budget_;
    part_stats& stats_;
    CURL* curl_ = nullptr;
    char errbuf_[CURL_ERROR_SIZE] = {};
};

// The head of a file: a prefix grown by further ranges into one buffer.
class http_source final : public gguf::byte_source {
public:
    http_source(const detail::curl_functions& api, std::string url, const fetch_options& options, fetch_budget& budget,
                part_stats& stats)
        : client_(api, std::move(url), options, budget, stats) {}

    gguf::result<void> start() {
        if (auto r = client_.start(); !r) return r;
        if (client_.budget().left() == 0) return gguf::unexpected(client_.over_budget(1));
        const std::uint64_t len = std::max<std::uint64_t>(1, std::min(client_.first_read(), client_.budget().left()));
        return grow(0, len - 1, true);
    }

    std::uint64_t size() const noexcept override { return size_; }

    gguf::result<std::span<const std::byte>> prefix(std::uint64_t n) noexcept override {
        if (n > size_) n = size_;
        if (n > have_) {
            try {
                auto r = grow(have_, n - 1, false);
                if (!r) return gguf::unexpected(std::move(r).error());
            } catch (const std::bad_alloc&) {
                return gguf::unexpected(oom(client_.url(), "holding the file's head"));
            }
        }
        return std::span<const std::byte>(buf_.get(), static_cast<std::size_t>(n));
    }

    gguf::mapped_file take() noexcept override {
        const std::size_t n = have_;
        have_ = 0;
        cap_ = 0;
        return gguf::mapped_file::adopt(std::move(buf_), n);
    }

    bool whole() const noexcept override { return false; }

private:
    void ensure_room(std::uint64_t n) {
        if (n <= cap_) return;
        if (n > SIZE_MAX) throw std::bad_alloc();
        std::unique_ptr<std::byte[]> bigger(new std::byte[static_cast<std::size_t>(n)]);
        if (have_ > 0) std::memcpy(bigger.get(), buf_.get(), have_);
        buf_ = std::move(bigger);
        cap_ = n;
    }

    gguf::result<void> grow(std::uint64_t first, std::uint64_t last, bool first_request) {
        const std::uint64_t len = last - first + 1;
        // the budget before the buffer: a head a server claims to be huge is refused, not allocated
        if (len > client_.budget().left()) return gguf::unexpected(client_.over_budget(len));
        ensure_room(have_ + len);
        std::uint64_t total = 0;
        auto got = client_.fetch(first, last, buf_.get() + have_, first_request, size_, total);
        if (!got) return gguf::unexpected(std::move(got).error());
        if (first_request) size_ = total;
        have_ += *got;
        return {};
    }

    range_client client_;
    std::unique_ptr<std::byte[]> buf_;
    std::uint64_t have_ = 0, cap_ = 0, size_ = 0;
};

// Any range of a file whose size is known (from its verified head): straight into the caller's buffer.
class http_range_reader final : public range_reader {
public:
    http_range_reader(const detail::curl_functions& api, std::string url, std::uint64_t size, const fetch_options& options,
                      fetch_budget& budget, part_stats& stats)
        : client_(api, std::move(url), options, budget, stats), size_(size) {}

    gguf::result<void> start() { return client_.start(); }

    std::uint64_t size() const noexcept override { return size_; }

    gguf::result<void> read(std::uint64_t offset, std::span<std::byte> dest) noexcept override {
        try {
            if (dest.empty()) return {};
            if (offset > size_ || dest.size() > size_ - offset) {
                error e = make_error(errc::index_out_of_range, client_.url(),
                                     "bytes " + num(offset) + "+" + num(dest.size()) + " asked of a file of " + num(size_));
                return gguf::unexpected(std::move(e));
            }
            std::uint64_t total = 0;
            auto got = client_.fetch(offset, offset + dest.size() - 1, dest.data(), false, size_, total);
            if (!got) return gguf::unexpected(std::move(got).error());
            if (*got != dest.size())  // a 206 is checked to be the range asked; this is the belt to those braces
                return gguf::unexpected(make_error(errc::transfer_failed, client_.url(),
                                                   "received " + num(*got) + " of the " + num(dest.size()) + " bytes asked"));
            return {};
        } catch (const std::bad_alloc&) {
            return gguf::unexpected(oom(client_.url(), "reading a range of the file"));
        }
    }

private:
    range_client client_;
    std::uint64_t size_;
};

// libcurl's table, or why it cannot be loaded, naming the url.
gguf::result<const detail::curl_functions*> curl_for(const std::string& url) {
    auto api = detail::curl_library();
    if (!api) {
        gguf::error e = std::move(api).error();
        e.file = url;
        return gguf::unexpected(std::move(e));
    }
    return *api;
}

}  // namespace

gguf::result<std::unique_ptr<gguf::byte_source>> open_http_source(const std::string& url, const fetch_options& options,
                                                                  fetch_budget& budget, part_stats& stats) noexcept {
    try {
        auto api = curl_for(url);
        if (!api) return gguf::unexpected(std::move(api).error());
        auto src = std::make_unique<http_source>(**api, url, options, budget, stats);
        auto r = src->start();
        if (!r) return gguf::unexpected(std::move(r).error());
        return std::unique_ptr<gguf::byte_source>(std::move(src));
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(oom(url, "opening the remote file"));
    }
}

gguf::result<std::unique_ptr<range_reader>> open_range_reader(const std::string& url, std::uint64_t size,
                                                              const fetch_options& options, fetch_budget& budget,
                                                              part_stats& stats) noexcept {
    try {
        auto api = curl_for(url);
        if (!api) return gguf::unexpected(std::move(api).error());
        auto reader = std::make_unique<http_range_reader>(**api, url, size, options, budget, stats);
        if (auto r = reader->start(); !r) return gguf::unexpected(std::move(r).error());
        return std::unique_ptr<range_reader>(std::move(reader));
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(oom(url, "opening the remote file"));
    }
}

}  // namespace minfer::remote
