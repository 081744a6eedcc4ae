// `minfer info`: open the model (or list a directory) and hand it to a printer; shared helpers.
#include "info.hpp"

#include <system_error>

#include <fmt/format.h>

#include "minfer/gguf/error.hpp"

namespace minfer::cli {
namespace {

bool is_directory(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_directory(std::filesystem::path(path), ec);
}

}  // namespace

bool out_buffer::flush() noexcept {
    if (buf_.size() > 0 && ok_) {
        if (std::fwrite(buf_.data(), 1, buf_.size(), sink_) != buf_.size()) ok_ = false;
    }
    buf_.clear();
    if (ok_ && std::fflush(sink_) != 0) ok_ = false;
    return ok_;
}

totals gather_totals(const gguf::model& m) noexcept {
    totals t;
    for (const gguf::tensor_ref& r : m.tensors()) {
        ++t.n_tensors;
        t.n_parameters += r.info->n_elements;
        t.n_bytes += r.info->n_bytes;
    }
    return t;
}

int exit_code_for(const gguf::error& e) noexcept {
    switch (e.code) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory: return exit_io;
        default: return exit_parse;
    }
}

int report_error(const gguf::error& e) {
    const int code = exit_code_for(e);
    if (code == exit_parse) {
        fmt::print(stderr, "Error: failed to parse GGUF: {}\n", e.message());
    } else {
        fmt::print(stderr, "Error: {}\n", e.message());
    }
    std::fflush(stderr);
    return code;
}

std::string quoted(std::string_view s, std::size_t limit) {
    std::string_view shown = s;
    const bool cut = limit > 0 && s.size() > limit;
    if (cut) {
        std::size_t n = limit;
        // Back off to the start of a UTF-8 sequence (at most 3 continuation bytes).
        for (int k = 0; k < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
        shown = s.substr(0, n);
    }
    std::string out = '"' + gguf::escape(shown, '"');
    out += '"';
    if (cut) out += fmt::format("… ({} bytes)", s.size());
    return out;
}

std::string json_string(std::string_view s, bool* changed) {
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) break;
        i += n;
    }
    if (changed != nullptr) *changed = i < s.size();
    if (i == s.size()) return std::string(s);
    std::string out(s.substr(0, i));
    while (i < s.size()) {
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) {
            out += fmt::format("\\x{:02X}", static_cast<unsigned char>(s[i]));
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string float_text(float v) { return fmt::format("{}", v); }
std::string float_text(double v) { return fmt::format("{}", v); }

int run_info(const info_options& opt) {
    out_buffer out;
    if (is_directory(opt.path)) return list_directory(std::filesystem::path(opt.path), opt, out);

    if (!opt.json) {
        out.print("Loading model: {}\n", gguf::escape(opt.path));
        out.flush();
    }
    gguf::open_options oo;
    oo.mode = opt.no_mmap ? gguf::load_mode::read : gguf::load_mode::map;
    auto m = gguf::model::open(std::filesystem::path(opt.path), oo);
    if (!m) {
        out.flush();
        return report_error(m.error());
    }
    const int code = opt.json ? print_json(*m, opt, out) : print_text(*m, opt, out);
    if (!out.flush()) {
        fmt::print(stderr, "Error: cannot write to standard output\n");
        return exit_io;
    }
    return code;
}

}  // namespace minfer::cli
