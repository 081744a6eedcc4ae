#pragma once
// Buffered stdout: text is formatted into memory and written in 1 MiB chunks, so printing millions of
// items costs one write(2) per MiB, and memory stays bounded however much is printed.
#include <cstddef>
#include <cstdio>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "minfer/toolbox/json_writer.hpp"

namespace minfer::cli {

// A text_sink so that toolbox::json_writer writes into it; final, so that the commands' own calls
// (through an out_buffer&) are direct, not virtual.
class out_buffer final : public toolbox::text_sink {
public:
    explicit out_buffer(std::FILE* sink = stdout) noexcept : sink_(sink) {}
    out_buffer(const out_buffer&) = delete;
    out_buffer& operator=(const out_buffer&) = delete;
    ~out_buffer() { flush(); }

    template <class... Args>
    void print(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(fmt::appender(buf_), f, std::forward<Args>(args)...);
        if (buf_.size() >= flush_at) flush();
    }
    void write(std::string_view s) override {
        buf_.append(s.data(), s.data() + s.size());
        if (buf_.size() >= flush_at) flush();
    }
    void put(char c) override {
        buf_.push_back(c);
        if (buf_.size() >= flush_at) flush();
    }
    /// Write what is buffered, then `s` straight to the sink (no copy into the buffer): for large
    /// binary output (tensor --dump -). Returns false once any write has failed.
    bool write_through(std::string_view s) noexcept {
        if (!flush()) return false;
        if (!s.empty() && std::fwrite(s.data(), 1, s.size(), sink_) != s.size()) ok_ = false;
        return ok_;
    }
    /// Write what is buffered. Returns false once any write has failed.
    bool flush() noexcept override;
    bool ok() const noexcept { return ok_; }

private:
    static constexpr std::size_t flush_at = 1u << 20;
    std::FILE* sink_;
    fmt::memory_buffer buf_;
    bool ok_ = true;
};

}  // namespace minfer::cli
