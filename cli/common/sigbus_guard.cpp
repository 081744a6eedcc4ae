#include "sigbus_guard.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "exit_codes.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::cli {
namespace {

// The preformatted message; the handler reads it, so it is written only while no mapping is read.
char message[8192];
std::atomic<std::size_t> message_len{0};

constexpr std::string_view generic =
    "Error: a mapped file could not be read (SIGBUS): it was truncated or changed while minfer read it, "
    "or its disk or network mount failed; --no-mmap reads it into memory first [io_error]\n";

void append(std::size_t& n, std::string_view s) noexcept {
    const std::size_t room = sizeof message - 1 - n;
    const std::size_t k = s.size() < room ? s.size() : room;
    std::memcpy(message + n, s.data(), k);
    n += k;
}

void write_all(const char* p, std::size_t n) noexcept {
    while (n > 0) {
        const ssize_t w = ::write(STDERR_FILENO, p, n);
        if (w <= 0) return;  // nothing better to do inside a signal handler
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

extern "C" void on_sigbus(int) {
    const std::size_t n = message_len.load(std::memory_order_relaxed);
    if (n > 0) {
        write_all(message, n);
    } else {
        write_all(generic.data(), generic.size());
    }
    _exit(exit_io);
}

}  // namespace

void install_sigbus_guard() noexcept {
    struct sigaction sa {};
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGBUS, &sa, nullptr);
}

void sigbus_guard_file(std::string_view path, std::string_view what) noexcept {
    try {
        message_len.store(0, std::memory_order_relaxed);
        std::size_t n = 0;
        append(n, "Error: ");
        append(n, gguf::escape(path));
        if (!what.empty()) {
            append(n, " ");
            append(n, what);
        }
        append(n, ": the mapped file could not be read (SIGBUS): it was truncated or changed while minfer "
                  "read it, or its disk or network mount failed; --no-mmap reads it into memory first "
                  "[io_error]\n");
        message_len.store(n, std::memory_order_release);
    } catch (...) {
        // Out of memory while escaping the path: the handler falls back to the generic message.
    }
}

void sigbus_guard_files(std::string_view model, std::string_view other, std::string_view other_what) noexcept {
    try {
        message_len.store(0, std::memory_order_relaxed);
        std::size_t n = 0;
        append(n, "Error: a mapped file could not be read (SIGBUS): the model ");
        append(n, gguf::escape(model));
        append(n, " (or one of its split parts)");
        if (!other.empty()) {
            append(n, " or ");
            append(n, other_what);
            append(n, " ");
            append(n, gguf::escape(other));
        }
        append(n, " was truncated or changed while minfer read it, or its disk or network mount failed [io_error]\n");
        message_len.store(n, std::memory_order_release);
    } catch (...) {
        // Out of memory while escaping the path: the handler falls back to the generic message.
    }
}

}  // namespace minfer::cli
