#pragma once
// The pieces of `minfer info`: open a model, gather its totals, and print it as text or JSON, or list
// the model files of a directory. All parsing is the library's; this layer only formats.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "minfer/gguf/model.hpp"

namespace minfer::cli {

/// Process exit codes (documented in `minfer --help` and docs/CLI.md).
enum exit_code : int {
    exit_ok = 0,     ///< success
    exit_parse = 1,  ///< the file is not a valid GGUF model (any parse, layout or split-consistency error)
    exit_usage = 2,  ///< bad command line, or a directory was given (nothing chosen)
    exit_io = 3,     ///< the file (or a part) cannot be opened or read, or memory ran out; writing stdout failed
};

/// What `minfer info` was asked to do.
struct info_options {
    std::string path;
    bool full = false;     ///< every array item and whole strings
    bool json = false;     ///< one JSON document instead of text
    bool no_mmap = false;  ///< load_mode::read instead of mapping
};

/// Buffered stdout: text is formatted into a memory buffer and written in large chunks.
class out_buffer {
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
    void write(std::string_view s) {
        buf_.append(s.data(), s.data() + s.size());
        if (buf_.size() >= flush_at) flush();
    }
    /// Write what is buffered. Returns false once any write has failed.
    bool flush() noexcept;
    bool ok() const noexcept { return ok_; }

private:
    static constexpr std::size_t flush_at = 1u << 20;
    std::FILE* sink_;
    fmt::memory_buffer buf_;
    bool ok_ = true;
};

/// Totals over every tensor of every part.
struct totals {
    std::uint64_t n_tensors = 0;
    std::uint64_t n_parameters = 0;  ///< sum of n_elements
    std::uint64_t n_bytes = 0;       ///< sum of n_bytes (unpadded)
    /// bytes * 8 / parameters; negative when there are no parameters.
    double bits_per_weight() const noexcept {
        return n_parameters == 0 ? -1.0 : static_cast<double>(n_bytes) * 8.0 / static_cast<double>(n_parameters);
    }
};
totals gather_totals(const gguf::model& m) noexcept;

/// The exit code an open error maps to: exit_io for io_error, split_part_missing and out_of_memory,
/// exit_parse for everything else.
int exit_code_for(const gguf::error& e) noexcept;

/// Print an open error to stderr ("Error: failed to parse GGUF: …" or "Error: …") and return its exit code.
int report_error(const gguf::error& e);

/// `s` quoted with double quotes for text output: gguf::escape (control characters and invalid UTF-8
/// become \xNN) plus \" for the quote; `'` is left bare. With `limit` > 0, strings longer than `limit`
/// bytes are cut at a UTF-8 boundary and followed by "… (N bytes)".
std::string quoted(std::string_view s, std::size_t limit = 0);

/// `s` as valid UTF-8 for JSON: valid sequences kept byte for byte, every invalid byte replaced by the
/// four characters \xNN. Returns true in `changed` when something was replaced.
std::string json_string(std::string_view s, bool* changed = nullptr);

/// Shortest text that reads back as the same float/double ("1e-05", "0.1", "nan", "inf").
std::string float_text(float v);
std::string float_text(double v);

/// Call f(T{}) with the C++ type of a fixed-size value type (u8…f64, bool). Returns false for string
/// and array, which have no fixed type.
template <class F>
bool visit_fixed(gguf::value_type t, F&& f) {
    using vt = gguf::value_type;
    switch (t) {
        case vt::u8: f(std::uint8_t{}); return true;
        case vt::i8: f(std::int8_t{}); return true;
        case vt::u16: f(std::uint16_t{}); return true;
        case vt::i16: f(std::int16_t{}); return true;
        case vt::u32: f(std::uint32_t{}); return true;
        case vt::i32: f(std::int32_t{}); return true;
        case vt::f32: f(float{}); return true;
        case vt::boolean: f(bool{}); return true;
        case vt::u64: f(std::uint64_t{}); return true;
        case vt::i64: f(std::int64_t{}); return true;
        case vt::f64: f(double{}); return true;
        case vt::string:
        case vt::array: return false;
    }
    return false;
}

/// Text and JSON printers. They return an exit code (exit_io when stdout could not be written).
int print_text(const gguf::model& m, const info_options& opt, out_buffer& out);
int print_json(const gguf::model& m, const info_options& opt, out_buffer& out);

/// `minfer info <directory>`: list the .gguf files (a split set as one entry). Returns exit_usage.
int list_directory(const std::filesystem::path& dir, const info_options& opt, out_buffer& out);

/// The whole `minfer info` command.
int run_info(const info_options& opt);

}  // namespace minfer::cli
