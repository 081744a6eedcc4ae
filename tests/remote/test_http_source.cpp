// minfer::remote's HTTP byte source and opener against the loopback server: correct ranges, every
// kind of misbehaviour the brief lists, retries, redirects, timeouts, the budget, parallel parts.
// Expected values come from the server's own bookkeeping and from hand-made bytes, never from the
// code under test.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <cstdint>
#include <string>
#include <thread>

#include "loopback_server.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf/byte_source.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/http_source.hpp"
#include "minfer/remote/errors.hpp"

namespace {

using namespace std::chrono_literals;
using minfer::gguf::errc;
using minfer::test::answer_head;
using minfer::test::connection;
using minfer::test::http_request;
using minfer::test::loopback_server;
using minfer::test::serve_bytes;
namespace remote = minfer::remote;
namespace gguf = minfer::gguf;

// 1000 bytes whose value is their index mod 251: any misplaced byte shows.
std::string blob(std::size_t n = 1000) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 251);
    return s;
}

remote::fetch_options quick_options() {
    remote::fetch_options o;
    o.first_read = 256;
    o.connect_timeout_s = 2;
    o.stall_timeout_s = 1;
    o.timeout_s = 4;
    o.retries = 0;
    o.retry_backoff_ms = 50;
    return o;
}

struct opened {
    remote::fetch_budget budget;
    remote::part_stats stats;
    gguf::result<std::unique_ptr<gguf::byte_source>> src;
    opened(const std::string& url, const remote::fetch_options& o)
        : budget(o.max_fetch), src(remote::open_http_source(url, o, budget, stats)) {}
};

std::string as_text(std::span<const std::byte> s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

TEST(HttpSource, ServesRangesIntoOneGrowingPrefix) {
    const std::string file = blob();
    loopback_server srv([&](const http_request& rq, connection& c) { serve_bytes(rq, c, file); });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_TRUE(o.src) << o.src.error().message();
    auto& src = **o.src;
    EXPECT_EQ(src.size(), 1000u);
    EXPECT_FALSE(src.whole());
    auto p = src.prefix(100);
    ASSERT_TRUE(p);
    EXPECT_EQ(as_text(*p), file.substr(0, 100));
    p = src.prefix(700);
    ASSERT_TRUE(p);
    EXPECT_EQ(as_text(*p), file.substr(0, 700));
    EXPECT_EQ(o.stats.requests, 2u);
    EXPECT_EQ(o.stats.bytes_received, 700u);
    const auto log = srv.log();
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0].range_header, "bytes=0-255");
    EXPECT_EQ(log[1].range_header, "bytes=256-699");
    EXPECT_EQ(log[0].user_agent.rfind("minfer/", 0), 0u) << log[0].user_agent;
    EXPECT_TRUE(log[0].authorization.empty());
    auto f = src.take();
    EXPECT_EQ(f.size(), 700u);
}

TEST(HttpSource, AFileShorterThanTheFirstRangeIsReadWhole) {
    const std::string file = blob(100);
    loopback_server srv([&](const http_request& rq, connection& c) { serve_bytes(rq, c, file); });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_TRUE(o.src) << o.src.error().message();
    EXPECT_EQ((*o.src)->size(), 100u);
    auto p = (*o.src)->prefix(100);
    ASSERT_TRUE(p);
    EXPECT_EQ(as_text(*p), file);
    EXPECT_EQ(o.stats.requests, 1u);
}

TEST(HttpSource, AnEmptyFileFailsItsParseLikeALocalEmptyFile) {
    loopback_server srv([&](const http_request& rq, connection& c) { serve_bytes(rq, c, ""); });
    remote::http_opener opener(quick_options());
    auto m = gguf::model::open(opener, srv.url("/empty.gguf"));
    ASSERT_FALSE(m);
    auto buf = gguf::make_buffer_source({});
    ASSERT_TRUE(buf);
    auto local = gguf::fetch_head(**buf, {});
    ASSERT_FALSE(local);
    EXPECT_EQ(m.error().code, local.error().code) << m.error().message();
    EXPECT_EQ(m.error().file, srv.url("/empty.gguf"));
}

TEST(HttpSource, A200ToARangeIsRangeIgnored) {
    const std::string file = blob();
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("200 OK", {"Content-Length: 1000"}));
        c.send(file);
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, minfer::remote::codes::range_ignored);
    EXPECT_LE(o.stats.bytes_received, 256u);
}

TEST(HttpSource, AnEndless200BodyIsCutAtTheBudget) {
    std::atomic<std::uint64_t> sent{0};
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("200 OK", {}));  // no length: the body ends when the connection does
        const std::string chunk(65536, 'x');
        while (!c.stopping() && c.send(chunk)) {
        }
        sent = c.sent();
    });
    auto opt = quick_options();
    opt.first_read = 1 << 20;
    opt.max_fetch = 100000;
    const auto t0 = std::chrono::steady_clock::now();
    opened o(srv.url("/m.gguf"), opt);
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, minfer::remote::codes::range_ignored);
    EXPECT_LE(o.stats.bytes_received, opt.max_fetch);
    EXPECT_GT(o.stats.bytes_received, 0u);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    srv.stop();
    std::printf("endless 200: kept %llu bytes (budget %llu); the server got %llu bytes out before the cut\n",
                static_cast<unsigned long long>(o.stats.bytes_received), static_cast<unsigned long long>(opt.max_fetch),
                static_cast<unsigned long long>(sent.load()));
}

// A server whose first answer is right and whose later answers carry `cr` as Content-Range.
void expect_bad_later_range(const std::string& cr, errc want) {
    const std::string file = blob();
    loopback_server srv([&](const http_request& rq, connection& c) {
        if (rq.first == 0) return serve_bytes(rq, c, file);
        const std::uint64_t n = rq.last.value() - rq.first + 1;
        std::vector<std::string> h{"Content-Length: " + std::to_string(n)};
        if (!cr.empty()) h.push_back("Content-Range: " + cr);
        c.send(answer_head("206 Partial Content", h));
        c.send(file.substr(rq.first, n));
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_TRUE(o.src) << o.src.error().message();
    auto p = (*o.src)->prefix(500);
    ASSERT_FALSE(p) << cr;
    EXPECT_EQ(p.error().code, want) << p.error().message();
    EXPECT_EQ(p.error().file, srv.url("/m.gguf"));
}

TEST(HttpSource, AWrongContentRangeIsRefused) {
    expect_bad_later_range("bytes 0-243/1000", minfer::remote::codes::bad_content_range);    // another range
    expect_bad_later_range("bytes 256-499/2000", minfer::remote::codes::bad_content_range);  // another total
    expect_bad_later_range("bytes 256-499/*", minfer::remote::codes::bad_content_range);     // malformed (no total)
    expect_bad_later_range("octets 256-499/1000", minfer::remote::codes::bad_content_range);
    expect_bad_later_range("", minfer::remote::codes::bad_content_range);                    // missing
}

TEST(HttpSource, ContentRangeDetailIsEscaped) {
    const std::string file = blob();
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes \x1b[31m", "Content-Length: 256"}));
        c.send(file.substr(0, 256));
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, minfer::remote::codes::bad_content_range);
    EXPECT_EQ(o.src.error().detail.find('\x1b'), std::string::npos) << o.src.error().detail;
}

TEST(HttpSource, ABodyLongerThanItsContentRangeIsRefused) {
    const std::string file = blob();
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes 0-255/1000", "Content-Length: 512"}));
        c.send(file.substr(0, 512));
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, minfer::remote::codes::bad_content_range);
    EXPECT_LE(o.stats.bytes_received, 256u);
}

TEST(HttpSource, AShortBodyIsTransferFailed) {
    const std::string file = blob();
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes 0-255/1000", "Content-Length: 256"}));
        c.send(file.substr(0, 100));  // then the connection closes
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::transfer_failed) << o.src.error().message();
}

TEST(HttpSource, ABodyThatStallsEndsAtTheStallTimeout) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes 0-255/1000", "Content-Length: 256"}));
        c.hold();  // nothing more, the socket kept open
    });
    const auto t0 = std::chrono::steady_clock::now();
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::transfer_failed) << o.src.error().message();
    EXPECT_EQ(o.src.error().found, 28u);  // CURLE_OPERATION_TIMEDOUT
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
}

TEST(HttpSource, ASlowServerEndsAtTheTotalTimeout) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes 0-255/1000", "Content-Length: 256"}));
        for (int i = 0; i < 256 && !c.stopping(); ++i) {  // a byte every 100 ms: never a stall, always too slow
            if (!c.send("x")) return;
            std::this_thread::sleep_for(100ms);
        }
    });
    auto opt = quick_options();
    opt.timeout_s = 1;
    const auto t0 = std::chrono::steady_clock::now();
    opened o(srv.url("/m.gguf"), opt);
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::transfer_failed);
    EXPECT_EQ(o.src.error().found, 28u);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
}

TEST(HttpSource, ARedirectLoopIsTransferFailed) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("302 Found", {"Location: /loop.gguf", "Content-Length: 0"}));
    });
    opened o(srv.url("/loop.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::transfer_failed);
    EXPECT_EQ(o.src.error().found, 47u);  // CURLE_TOO_MANY_REDIRECTS
    EXPECT_EQ(srv.requests(), 11);        // the first and 10 redirects
}

TEST(HttpSource, ARedirectChainThatEndsWellIsFollowed) {
    const std::string file = blob();
    std::string base;
    loopback_server srv([&](const http_request& rq, connection& c) {
        if (rq.target == "/a/m.gguf")
            c.send(answer_head("301 Moved Permanently", {"Location: ../b/m.gguf", "Content-Length: 0"}));  // relative
        else if (rq.target == "/b/m.gguf")
            c.send(answer_head("302 Found", {"Location: " + base + "/c/m.gguf", "Content-Length: 0"}));  // absolute
        else if (rq.target == "/c/m.gguf")
            serve_bytes(rq, c, file);
        else
            c.send(answer_head("404 Not Found", {"Content-Length: 0"}));
    });
    base = srv.url("");
    opened o(srv.url("/a/m.gguf"), quick_options());
    ASSERT_TRUE(o.src) << o.src.error().message();
    EXPECT_EQ((*o.src)->size(), 1000u);
    EXPECT_EQ(srv.requests(), 3);
}

TEST(HttpSource, StatusesAreHttpStatusAndOnlyTransientOnesAreRetried) {
    for (const auto& [status_line, code] : std::vector<std::pair<std::string, std::uint64_t>>{
             {"404 Not Found", 404}, {"403 Forbidden", 403}, {"410 Gone", 410}}) {
        const std::string status = status_line;  // a lambda cannot capture a structured binding (C++20 clang)
        loopback_server srv([&](const http_request&, connection& c) {
            c.send(answer_head(status, {"Content-Length: 9"}));
            c.send("not here!");
        });
        auto opt = quick_options();
        opt.retries = 2;
        opened o(srv.url("/m.gguf"), opt);
        ASSERT_FALSE(o.src);
        EXPECT_EQ(o.src.error().code, errc::http_status);
        EXPECT_EQ(o.src.error().found, code);
        EXPECT_EQ(srv.requests(), 1) << status << ": a 4xx is never retried";
    }
}

TEST(HttpSource, A416OfANonEmptyFileIsHttpStatus) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("416 Range Not Satisfiable", {"Content-Range: bytes */1000", "Content-Length: 0"}));
    });
    opened o(srv.url("/m.gguf"), quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::http_status);
    EXPECT_EQ(o.src.error().found, 416u);
}

TEST(HttpSource, A500ThenA206IsRetried) {
    const std::string file = blob();
    std::atomic<int> n{0};
    loopback_server srv([&](const http_request& rq, connection& c) {
        if (n++ == 0) {
            c.send(answer_head("500 Internal Server Error", {"Content-Length: 4"}));
            c.send("oops");
            return;
        }
        serve_bytes(rq, c, file);
    });
    auto opt = quick_options();
    opt.retries = 2;
    opened o(srv.url("/m.gguf"), opt);
    ASSERT_TRUE(o.src) << o.src.error().message();
    EXPECT_EQ(srv.requests(), 2);
    EXPECT_EQ(o.stats.requests, 2u);
}

TEST(HttpSource, RetriesAreBounded) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("503 Service Unavailable", {"Content-Length: 0"}));
    });
    auto opt = quick_options();
    opt.retries = 2;
    opened o(srv.url("/m.gguf"), opt);
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::http_status);
    EXPECT_EQ(o.src.error().found, 503u);
    EXPECT_EQ(srv.requests(), 3);
}

TEST(HttpSource, AConnectionRefusedIsTransferFailed) {
    int port = 0;
    {
        loopback_server srv([](const http_request&, connection&) {});
        port = srv.port();
    }
    opened o("http://127.0.0.1:" + std::to_string(port) + "/m.gguf", quick_options());
    ASSERT_FALSE(o.src);
    EXPECT_EQ(o.src.error().code, errc::transfer_failed);
    EXPECT_EQ(o.src.error().found, 7u);  // CURLE_COULDNT_CONNECT
}

TEST(HttpSource, TheBearerTokenIsSentAndNeverShown) {
    loopback_server srv([&](const http_request&, connection& c) {
        c.send(answer_head("401 Unauthorized", {"Content-Length: 0"}));
    });
    auto opt = quick_options();
    opt.bearer_token = "hf_secret123";
    opened o(srv.url("/m.gguf"), opt);
    ASSERT_FALSE(o.src);
    EXPECT_EQ(srv.log().at(0).authorization, "Bearer hf_secret123");
    EXPECT_EQ(o.src.error().message().find("hf_secret123"), std::string::npos);
}

TEST(HttpSource, TheBearerTokenDoesNotFollowARedirectToAnotherHost) {
    const std::string file = blob();
    int port = 0;
    loopback_server srv([&](const http_request& rq, connection& c) {
        if (rq.target == "/a.gguf")  // the same server under another host name
            c.send(answer_head("302 Found", {"Location: http://localhost:" + std::to_string(port) + "/b.gguf", "Content-Length: 0"}));
        else
            serve_bytes(rq, c, file);
    });
    port = srv.port();
    auto opt = quick_options();
    opt.bearer_token = "hf_secret123";
    opened o(srv.url("/a.gguf"), opt);
    ASSERT_TRUE(o.src) << o.src.error().message();
    const auto log = srv.log();
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0].authorization, "Bearer hf_secret123");
    EXPECT_EQ(log[1].authorization, "") << "sent on to another host";
}

// A GGUF file of one string key of `value_len` bytes and no tensors: its head is the whole file.
std::string one_key_gguf(std::size_t value_len) {
    std::string s;
    auto u32 = [&](std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); };
    s += "GGUF";
    u32(3);
    u64(0);  // tensors
    u64(1);  // keys
    u64(12);
    s += "general.name";
    u32(8);  // string
    u64(value_len);
    s += std::string(value_len, 'n');
    return s;
}

TEST(HttpOpener, AHeadLargerThanTheBudgetIsFetchBudgetExceeded) {
    const std::string file = one_key_gguf(100000);
    loopback_server srv([&](const http_request& rq, connection& c) { serve_bytes(rq, c, file); });
    auto opt = quick_options();
    opt.first_read = 4096;
    opt.max_fetch = 50000;
    remote::http_opener opener(opt);
    auto m = gguf::model::open(opener, srv.url("/big.gguf"));
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, errc::fetch_budget_exceeded) << m.error().message();
    EXPECT_EQ(m.error().expected, 50000u);
    EXPECT_LE(opener.bytes_received(), 50000u);
    srv.stop();  // every connection's thread joined: its bytes counted
    EXPECT_LE(srv.bytes_sent(), 50000u + 4096u);  // bodies plus headers, all under the budget
}

TEST(HttpOpener, AModelWithinTheBudgetOpensFromItsHead) {
    const std::string file = one_key_gguf(100000);
    loopback_server srv([&](const http_request& rq, connection& c) { serve_bytes(rq, c, file); });
    auto opt = quick_options();
    opt.first_read = 4096;
    remote::http_opener opener(opt);
    auto m = gguf::model::open(opener, srv.url("/big.gguf"));
    ASSERT_TRUE(m) << m.error().message();
    auto name = m->metadata().get<std::string_view>("general.name");
    ASSERT_TRUE(name);
    EXPECT_EQ(name->size(), 100000u);
    EXPECT_EQ(opener.bytes_received(), file.size());
}

#if defined(__SANITIZE_ADDRESS__)
#define MINFER_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINFER_TEST_ASAN 1
#endif
#endif

// RLIMIT_AS set to the process's size plus `extra` for the life of the object (nothing under ASan).
class address_space_cap {
public:
    explicit address_space_cap(std::uint64_t extra) {
#ifndef MINFER_TEST_ASAN
        std::ifstream status("/proc/self/status");
        std::string line;
        std::uint64_t vm_kib = 0;
        while (std::getline(status, line))
            if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
        if (vm_kib == 0 || getrlimit(RLIMIT_AS, &old_) != 0) return;
        rlimit r = old_;
        r.rlim_cur = vm_kib * 1024 + extra;
        active_ = setrlimit(RLIMIT_AS, &r) == 0;
#else
        (void)extra;
#endif
    }
    ~address_space_cap() {
        if (active_) setrlimit(RLIMIT_AS, &old_);
    }
    address_space_cap(const address_space_cap&) = delete;
    address_space_cap& operator=(const address_space_cap&) = delete;

private:
    rlimit old_{};
    bool active_ = false;
};

TEST(HttpOpener, AHugeClaimedHeadIsRefusedBeforeItIsAllocated) {
    // An array of 10^9 u64 (8 GB, under the parse's caps) in a file the server says is 16 GB long:
    // the head needs more than the budget, which must be said before a buffer of that size is asked
    // for (else: out_of_memory, or an allocation ASan refuses).
    std::string file;
    auto u32 = [&](std::uint32_t v) { file.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { file.append(reinterpret_cast<const char*>(&v), 8); };
    file += "GGUF";
    u32(3);
    u64(0);
    u64(1);
    u64(5);
    file += "x.arr";
    u32(9);   // array
    u32(10);  // of u64
    const std::uint64_t len = 1'000'000'000;
    u64(len);
    const std::uint64_t total = 16'000'000'000;
    loopback_server srv([&](const http_request& rq, connection& c) {
        const std::uint64_t last = std::min<std::uint64_t>(rq.last.value(), total - 1);
        const std::uint64_t n = last - rq.first + 1;
        c.send(answer_head("206 Partial Content", {"Content-Range: bytes " + std::to_string(rq.first) + "-" +
                                                       std::to_string(last) + "/" + std::to_string(total),
                                                   "Content-Length: " + std::to_string(n)}));
        std::string body = rq.first < file.size() ? file.substr(rq.first, n) : std::string();
        body.resize(n, 'n');
        c.send(body);
    });
    auto opt = quick_options();
    opt.first_read = 4096;
    opt.max_fetch = 1 << 20;
    remote::http_opener opener(opt);
    // The address space capped at what the process has plus 1 GiB, so an 8 GB buffer cannot be had
    // (not under ASan, whose shadow memory needs terabytes of address space).
    const address_space_cap cap(1ull << 30);
    auto m = gguf::model::open(opener, srv.url("/huge.gguf"));
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, errc::fetch_budget_exceeded) << m.error().message();
    EXPECT_GE(m.error().found, 8 * len);
    EXPECT_LE(opener.bytes_received(), opt.max_fetch);
}

}  // namespace
