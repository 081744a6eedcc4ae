// minfer::remote under memory pressure and without threads: opening a model over HTTP returns a
// result (the model, or out_of_memory) for every allocation that fails, and when no thread can be
// started. Never std::terminate: not from an exception leaving libcurl's callbacks (C frames), not
// from a noexcept function whose error text cannot be built, not from a thread that cannot start
// while others run.
//
// The server runs in a child process (forked_server): alloc_fail.hpp counts every allocation of
// this process, and a server thread's failed allocation would be the server's crash, not ours.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alloc_fail.hpp"
#include "curl_library.hpp"
#include "loopback_server.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/url.hpp"

// ---- threads that cannot start -----------------------------------------------------------------
// This executable's pthread_create comes before libc's for every caller (std::thread's constructor
// in libstdc++ too): while threads_left is ≥ 0 it lets that many more threads start, then fails
// with EAGAIN, as the kernel does at RLIMIT_NPROC (which does not bind root, so cannot be used).
namespace {
std::atomic<int> threads_left{-1};  // -1: every thread starts
std::atomic<int> threads_refused{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
    using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto real = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
    int left = threads_left.load();
    while (left >= 0) {
        if (left == 0) {
            ++threads_refused;
            return EAGAIN;
        }
        if (threads_left.compare_exchange_weak(left, left - 1)) break;
    }
    return real(thread, attr, start, arg);
}

// ---- exceptions through libcurl ----------------------------------------------------------------
// libcurl calls the source's callbacks from C. An exception leaving one unwinds through libcurl's
// frames (where x86-64's unwind tables let it, else std::terminate) and leaves the transfer's state
// half-done. minfer::remote calls libcurl through the table it loads on the first URL
// (curl_library.hpp); its curl_easy_perform entry is wrapped here, before the first transfer, to
// count each exception that comes out of the real one.
namespace {
std::atomic<int> exceptions_through_curl{0};
CURLcode (*real_perform)(CURL*) = nullptr;

CURLcode counting_perform(CURL* curl) {
    try {
        return real_perform(curl);
    } catch (...) {
        ++exceptions_through_curl;
        throw;
    }
}

// Every test calls it first (the library is loaded once per process, so wrapping is too).
void count_exceptions_through_curl() {
    auto lib = minfer::remote::detail::curl_library();
    ASSERT_TRUE(lib) << lib.error().message();
    if ((*lib)->easy_perform != &counting_perform) {
        real_perform = (*lib)->easy_perform;
        (*lib)->easy_perform = &counting_perform;
    }
}
}  // namespace

namespace {

using minfer::test::answer_head;
using minfer::test::connection;
using minfer::test::http_request;
using minfer::test::loopback_server;
using minfer::test::serve_bytes;
using minfer::test::alloc_fail::under_pressure;
namespace remote = minfer::remote;
namespace gguf = minfer::gguf;
using gguf::errc;

// The loopback server in a child process, serving `files` by path ("/name"), 404 for any other.
// The child is forked before any allocation is made to fail, and dies with this object (or with
// this process: PR_SET_PDEATHSIG).
class forked_server {
public:
    explicit forked_server(std::map<std::string, std::string> files) {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::close(fds[0]);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            try {
                loopback_server srv([&files](const http_request& rq, connection& c) {
                    const auto it = files.find(rq.target);
                    if (it == files.end()) {
                        c.send(answer_head("404 Not Found", {"Content-Length: 0"}));
                        return;
                    }
                    serve_bytes(rq, c, it->second);
                });
                const int port = srv.port();
                if (::write(fds[1], &port, sizeof port) != sizeof port) ::_exit(1);
                ::close(fds[1]);
                for (;;) ::pause();
            } catch (...) {
                ::_exit(1);
            }
        }
        ::close(fds[1]);
        const ssize_t n = ::read(fds[0], &port_, sizeof port_);
        ::close(fds[0]);
        if (n != sizeof port_) throw std::runtime_error("the server process did not start");
    }
    ~forked_server() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    forked_server(const forked_server&) = delete;
    forked_server& operator=(const forked_server&) = delete;

    std::string url(const std::string& path) const {
        std::string u = "http://127.0.0.1:";  // appended: see split_path
        u += std::to_string(port_);
        u += path;
        return u;
    }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

std::string as_string(const std::vector<std::byte>& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// A model whose head (about 3 KB: a vocabulary) takes several ranges of 256 bytes, so that every
// range's Content-Range ("bytes 256-767/4000…") is longer than a short string's inline room and
// the header callback allocates.
std::string model_file(const std::string& name) {
    gguf::writer w;
    w.set_string("general.architecture", "llama").set_string("general.name", name);
    std::vector<std::string> vocab;
    for (int i = 0; i < 200; ++i) vocab.push_back(std::string("token").append(std::to_string(i)));
    w.set_strings("tokenizer.ggml.tokens", vocab);
    const std::int64_t ne[] = {16, 4};
    w.add_tensor("w", gguf::tensor_type::f32, ne, std::vector<std::byte>(16 * 4 * 4, std::byte{1}));
    auto b = w.to_bytes();
    if (!b) throw std::runtime_error(b.error().message());
    return as_string(*b);
}

// A split set of `n` parts named as llama-gguf-split names them, one tensor per part, keys as it
// writes them.
// "/m-0000I-of-0000N.gguf", built by appending: GCC 12 at -O3 reports a false -Werror=restrict
// on "literal" + std::string temporaries.
std::string split_path(std::uint32_t index, std::uint32_t count) {
    std::string path = "/";
    path += gguf::split_file_name("m", index, count);
    return path;
}

std::map<std::string, std::string> split_files(std::uint32_t n) {
    std::map<std::string, std::string> files;
    for (std::uint32_t i = 0; i < n; ++i) {
        gguf::writer w;
        if (i == 0) w.set_string("general.architecture", "llama").set_string("general.name", "split");
        // a head of several 256-byte ranges: Content-Range values too long to be kept inline
        w.set_string("part.note", std::string(600, static_cast<char>('a' + i)));
        w.set_u16("split.no", static_cast<std::uint16_t>(i))
            .set_u16("split.count", static_cast<std::uint16_t>(n))
            .set_i32("split.tensors.count", static_cast<std::int32_t>(n));
        std::string name(1, 't');
        name += std::to_string(i);
        const std::int64_t ne[] = {8, 2};
        w.add_tensor(name, gguf::tensor_type::f32, ne, std::vector<std::byte>(8 * 2 * 4, std::byte{2}));
        auto b = w.to_bytes();
        if (!b) throw std::runtime_error(b.error().message());
        files[split_path(i, n)] = as_string(*b);
    }
    return files;
}

remote::fetch_options small_ranges() {
    remote::fetch_options o;
    o.first_read = 256;
    o.connect_timeout_s = 5;
    o.stall_timeout_s = 5;
    o.timeout_s = 20;
    o.retries = 0;  // a failure is the allocation's, never a reason to ask again
    return o;
}

// What a frontend does: resolve the text, open the model through an opener, read the statistics.
errc open_remote_once(const std::string& text, std::size_t want_tensors) {
    auto url = remote::resolve(text);
    if (!url) return url.error().code;
    remote::http_opener opener(small_ranges());
    auto m = gguf::model::open(opener, *url);
    if (!m) return m.error().code;
    auto stats = opener.stats();
    if (!stats) return stats.error().code;
    // a success is the whole answer, never a part of it
    if (m->tensors().size() != want_tensors || stats->parts.size() != m->parts().size()) return errc::tensor_not_found;
    return errc::ok;
}

// The same, counting the runs in which an exception came through libcurl (the source caught it
// after libcurl's frames and said out_of_memory: the right code, the wrong way).
int runs_with_exceptions_through_curl = 0;
errc open_remote(const std::string& text, std::size_t want_tensors) {
    count_exceptions_through_curl();
    const int before = exceptions_through_curl.load();
    const errc got = open_remote_once(text, want_tensors);
    if (exceptions_through_curl.load() != before) ++runs_with_exceptions_through_curl;
    return got;
}

// Threads set to fail for the life of the object.
struct threads_refused_from {
    explicit threads_refused_from(int allowed) {
        threads_refused = 0;
        threads_left = allowed;
    }
    ~threads_refused_from() { threads_left = -1; }
    threads_refused_from(const threads_refused_from&) = delete;
    threads_refused_from& operator=(const threads_refused_from&) = delete;
};

TEST(RemoteOutOfMemory, OpeningOneFileGivesTheModelOrOutOfMemory) {
    forked_server srv({{"/one.gguf", model_file("one")}});
    const std::string url = srv.url("/one.gguf");
    ASSERT_EQ(open_remote(url, 1), errc::ok) << "without pressure";
    runs_with_exceptions_through_curl = 0;
    under_pressure("model::open(http_opener, one file)", [&] { return open_remote(url, 1); });
    EXPECT_EQ(runs_with_exceptions_through_curl, 0) << "runs in which an exception left a libcurl callback";
}

TEST(RemoteOutOfMemory, OpeningASplitSetGivesTheModelOrOutOfMemory) {
    // three parts: the two later ones fetched by two threads (their state allocated, too)
    forked_server srv(split_files(3));
    const std::string entry = srv.url(split_path(0, 3));
    ASSERT_EQ(open_remote(entry, 3), errc::ok) << "without pressure";
    runs_with_exceptions_through_curl = 0;
    under_pressure("model::open(http_opener, split set)", [&] { return open_remote(entry, 3); });
    EXPECT_EQ(runs_with_exceptions_through_curl, 0) << "runs in which an exception left a libcurl callback";
}

TEST(RemoteOutOfMemory, OneThreadFetchingThePartsGivesTheModelOrOutOfMemory) {
    // One thread takes parts 2, 3 and 4 in turn: when part 2 fails (out_of_memory), parts 3 and 4
    // are marked "not fetched" on that thread, and building that error may fail too.
    forked_server srv(split_files(4));
    const std::string entry = srv.url(split_path(0, 4));
    const threads_refused_from refuse(1);
    runs_with_exceptions_through_curl = 0;
    under_pressure("model::open(http_opener, split set, one thread)", [&] { return open_remote(entry, 4); });
    EXPECT_EQ(runs_with_exceptions_through_curl, 0) << "runs in which an exception left a libcurl callback";
}

TEST(RemoteOutOfMemory, AnErrorAnswerUnderPressureIsItsErrorOrOutOfMemory) {
    // The error paths build text (a 404's reason, the part that is missing): each allocation of
    // theirs may fail too. The outcome is the error, or out_of_memory.
    std::map<std::string, std::string> files = split_files(3);
    files.erase(split_path(2, 3));  // part 3 answers 404
    forked_server srv(files);
    const std::string missing = srv.url("/absent.gguf");
    ASSERT_EQ(open_remote(missing, 0), errc::http_status) << "without pressure";
    under_pressure("model::open(http_opener, 404)", [&] { return open_remote(missing, 0); }, errc::http_status);
    const std::string entry = srv.url(split_path(0, 3));
    ASSERT_EQ(open_remote(entry, 3), errc::split_part_missing) << "without pressure";
    under_pressure("model::open(http_opener, a part missing)", [&] { return open_remote(entry, 3); },
                   errc::split_part_missing);
}

TEST(RemoteThreads, NoThreadCanStartAndThePartsAreFetchedHere) {
    minfer::test::alloc_fail::current_call = "model::open(http_opener) with threads refused";  // for a std::terminate
    forked_server srv(split_files(4));
    const std::string entry = srv.url(split_path(0, 4));
    for (int allowed : {0, 1, 2}) {
        std::string trace = "threads allowed: ";  // appended: see split_path
        trace += std::to_string(allowed);
        SCOPED_TRACE(trace);
        remote::http_opener opener(small_ranges());
        gguf::result<gguf::model> m = gguf::unexpected(gguf::error{});
        {
            const threads_refused_from refuse(allowed);
            m = gguf::model::open(opener, entry);
        }
        // three later parts, three threads wished: the first refused one ends the starting
        EXPECT_EQ(threads_refused.load(), 1) << "the hook did not see the opener's threads";
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->parts().size(), 4u);
        ASSERT_EQ(m->tensors().size(), 4u);
        for (std::uint32_t i = 0; i < 4; ++i) {
            std::string name = "t";  // appended, not "t" + ...: see split_path
            name += std::to_string(i);
            EXPECT_TRUE(m->find_tensor(name)) << i;
        }
    }
}

}  // namespace
