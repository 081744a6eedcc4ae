#pragma once
// A small HTTP/1.1 server on 127.0.0.1 (port 0: the kernel picks one) for the remote tests: one
// thread accepts, one thread per connection runs the test's handler, which answers correctly or
// misbehaves on purpose (wrong headers, short or endless bodies, stalls, redirects, delays). Every
// answer closes its connection. Independent of minfer::remote: plain POSIX sockets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace minfer::test {

struct http_request {
    std::string method, target;   // target: the path and query as sent
    bool has_range = false;
    std::uint64_t first = 0;      // bytes=first-last
    std::optional<std::uint64_t> last;
    std::string range_header, authorization, user_agent;
};

class connection {
public:
    explicit connection(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping) {}
    /// Send all of s; false once the peer is gone.
    bool send(std::string_view s) {
        while (!s.empty()) {
            const ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
            if (n <= 0) return false;
            s.remove_prefix(static_cast<std::size_t>(n));
            sent_ += static_cast<std::uint64_t>(n);
        }
        return true;
    }
    /// Keep the connection open, sending nothing, until the client closes it or the server stops.
    void hold() {
        while (!stopping_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) > 0) {
                char b[256];
                if (::recv(fd_, b, sizeof b, 0) <= 0) return;
            }
        }
    }
    bool stopping() const { return stopping_; }
    std::uint64_t sent() const { return sent_; }

private:
    int fd_;
    const std::atomic<bool>& stopping_;
    std::uint64_t sent_ = 0;
};

using http_handler = std::function<void(const http_request&, connection&)>;

/// "HTTP/1.1 <status>\r\n" + headers + "Connection: close\r\n\r\n".
inline std::string answer_head(const std::string& status, const std::vector<std::string>& headers) {
    std::string s = "HTTP/1.1 " + status + "\r\n";
    for (const std::string& h : headers) s += h + "\r\n";
    s += "Connection: close\r\n\r\n";
    return s;
}

/// Answer as a correct server does: 206 with the range (cut at the end of the file), 416 with
/// "bytes */SIZE" past the end, 200 with the whole file without a Range header.
inline void serve_bytes(const http_request& rq, connection& c, std::string_view file) {
    const std::uint64_t size = file.size();
    if (!rq.has_range) {
        c.send(answer_head("200 OK", {"Content-Length: " + std::to_string(size)}));
        c.send(file);
        return;
    }
    if (rq.first >= size) {
        c.send(answer_head("416 Range Not Satisfiable", {"Content-Range: bytes */" + std::to_string(size), "Content-Length: 0"}));
        return;
    }
    const std::uint64_t last = std::min<std::uint64_t>(rq.last.value_or(size - 1), size - 1);
    c.send(answer_head("206 Partial Content",
                       {"Content-Range: bytes " + std::to_string(rq.first) + "-" + std::to_string(last) + "/" + std::to_string(size),
                        "Content-Length: " + std::to_string(last - rq.first + 1)}));
    c.send(file.substr(rq.first, last - rq.first + 1));
}

class loopback_server {
public:
    explicit loopback_server(http_handler h) : handler_(std::move(h)) {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listen_fd_ < 0) throw std::runtime_error("socket failed");
        int one = 1;
        ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 64) != 0)
            throw std::runtime_error("bind/listen failed");
        socklen_t len = sizeof a;
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~loopback_server() { stop(); }
    loopback_server(const loopback_server&) = delete;
    loopback_server& operator=(const loopback_server&) = delete;

    void stop() {
        if (stopping_.exchange(true)) return;
        ::shutdown(listen_fd_, SHUT_RDWR);
        acceptor_.join();
        ::close(listen_fd_);
        std::vector<std::thread> ts;
        {
            std::lock_guard<std::mutex> l(mutex_);
            for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
            ts.swap(threads_);
        }
        for (std::thread& t : ts) t.join();
    }

    int port() const { return port_; }
    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
    int requests() const { return requests_; }
    int max_in_flight() const { return max_in_flight_; }
    /// Bytes written to the sockets, counted when each answer is done: exact after stop().
    std::uint64_t bytes_sent() const { return bytes_sent_; }
    std::vector<http_request> log() const {
        std::lock_guard<std::mutex> l(mutex_);
        return log_;
    }

private:
    void accept_loop() {
        for (;;) {
            pollfd p{listen_fd_, POLLIN, 0};
            const int pr = ::poll(&p, 1, 50);
            if (stopping_) return;
            if (pr <= 0) continue;
            const int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) {
                if (stopping_) return;
                continue;
            }
            std::lock_guard<std::mutex> l(mutex_);
            fds_.push_back(fd);
            threads_.emplace_back([this, fd] { serve(fd); });
        }
    }

    static std::string lower(std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    }

    void serve(int fd) {
        std::string in;
        char buf[4096];
        while (in.find("\r\n\r\n") == std::string::npos && in.size() < 65536) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            in.append(buf, static_cast<std::size_t>(n));
        }
        if (in.find("\r\n\r\n") != std::string::npos) {
            http_request rq;
            std::size_t pos = in.find("\r\n");
            const std::string line = in.substr(0, pos);
            const std::size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
            rq.method = line.substr(0, sp1);
            rq.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
            for (;;) {
                const std::size_t start = pos + 2;
                pos = in.find("\r\n", start);
                if (pos == std::string::npos || pos == start) break;
                const std::string h = in.substr(start, pos - start);
                const std::size_t colon = h.find(':');
                if (colon == std::string::npos) continue;
                const std::string name = lower(h.substr(0, colon));
                std::string value = h.substr(colon + 1);
                while (!value.empty() && value.front() == ' ') value.erase(0, 1);
                if (name == "range") {
                    rq.range_header = value;
                    if (value.rfind("bytes=", 0) == 0) {
                        const std::string spec = value.substr(6);
                        const std::size_t dash = spec.find('-');
                        rq.has_range = dash != std::string::npos && dash > 0;
                        if (rq.has_range) {
                            rq.first = std::stoull(spec.substr(0, dash));
                            if (dash + 1 < spec.size()) rq.last = std::stoull(spec.substr(dash + 1));
                        }
                    }
                } else if (name == "authorization") {
                    rq.authorization = value;
                } else if (name == "user-agent") {
                    rq.user_agent = value;
                }
            }
            {
                std::lock_guard<std::mutex> l(mutex_);
                log_.push_back(rq);
            }
            ++requests_;
            const int now = ++in_flight_;
            int seen = max_in_flight_.load();
            while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
            }
            connection c(fd, stopping_);
            handler_(rq, c);
            --in_flight_;
            bytes_sent_ += c.sent();
        }
        ::shutdown(fd, SHUT_WR);
        std::lock_guard<std::mutex> l(mutex_);
        fds_.erase(std::find(fds_.begin(), fds_.end(), fd));
        ::close(fd);
    }

    http_handler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread acceptor_;
    mutable std::mutex mutex_;
    std::vector<std::thread> threads_;
    std::vector<int> fds_;
    std::vector<http_request> log_;
    std::atomic<int> requests_{0}, in_flight_{0}, max_in_flight_{0};
    std::atomic<std::uint64_t> bytes_sent_{0};
};

}  // namespace minfer::test
