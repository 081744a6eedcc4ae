#include "common/progress.hpp"

#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

namespace minfer::cli {
namespace {

std::string size_text(std::uint64_t bytes) {
    constexpr double kib = 1024.0;
    const double b = static_cast<double>(bytes);
    if (b >= kib * kib * kib) return fmt::format("{:.1f} GiB", b / (kib * kib * kib));
    if (b >= kib * kib) return fmt::format("{:.1f} MiB", b / (kib * kib));
    if (b >= kib) return fmt::format("{:.1f} KiB", b / kib);
    return fmt::format("{} B", bytes);
}

}  // namespace

progress::progress(std::string label, bool quiet)
    : label_(std::move(label)), enabled_(!quiet && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

std::string progress::line(const std::string& label, std::uint64_t done, std::uint64_t total, double seconds) {
    std::string s = fmt::format("{}  {} / {}", label, size_text(done), size_text(total));
    if (total > 0) s += fmt::format("  {:3d}%", static_cast<int>(static_cast<double>(done) * 100.0 / static_cast<double>(total)));
    if (seconds > 0.2 && done > 0) {
        const double rate = static_cast<double>(done) / seconds;
        s += fmt::format("  {}/s", size_text(static_cast<std::uint64_t>(rate)));
        if (total > done) {
            const auto left = static_cast<std::uint64_t>(static_cast<double>(total - done) / rate);
            s += fmt::format("  {}:{:02d} left", left / 60, static_cast<int>(left % 60));
        }
    }
    return s;
}

void progress::update(std::uint64_t done, std::uint64_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    // \33[K erases what a longer previous line left.
    fmt::print(stderr, "\r{}\33[K", line(label_, done, total, seconds));
    std::fflush(stderr);
    drawn_ = true;
}

std::function<void(std::uint64_t, std::uint64_t)> progress::callback() {
    return [this](std::uint64_t done, std::uint64_t total) { update(done, total); };
}

void progress::finish() {
    if (!drawn_) return;
    std::fputs("\r\33[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
}

}  // namespace minfer::cli
