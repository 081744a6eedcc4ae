#pragma once
// progress: one status line on stderr for long copies (edit, split, merge of multi-GB models):
// bytes done of the total, percent, rate and time left, redrawn at most ten times a second with a
// carriage return. Silent when stderr is not a terminal (logs and pipes get no control characters)
// or when the user asked for --quiet. finish() erases the line, so later messages start clean.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace minfer::cli {

class progress {
public:
    /// `label` starts the line ("writing m.gguf"). Enabled only when stderr is a TTY and !quiet.
    progress(std::string label, bool quiet);
    progress(const progress&) = delete;
    progress& operator=(const progress&) = delete;
    ~progress() { finish(); }

    bool enabled() const noexcept { return enabled_; }
    /// Report `done` of `total` bytes. Cheap when nothing is drawn.
    void update(std::uint64_t done, std::uint64_t total);
    /// A callback for gguf::write_options::progress that calls update().
    std::function<void(std::uint64_t, std::uint64_t)> callback();
    /// Erase the line (once).
    void finish();

    /// The line for a state, without the carriage return (for tests): "label  1.2 GiB / 4.0 GiB  30%
    /// 850.0 MiB/s  0:03 left".
    static std::string line(const std::string& label, std::uint64_t done, std::uint64_t total, double seconds);

private:
    std::string label_;
    bool enabled_ = false;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace minfer::cli
