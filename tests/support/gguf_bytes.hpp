#pragma once
// Test support (header-only): a raw GGUF byte builder that writes whatever it is told — including
// files the validating writer refuses (duplicate keys, bad type tags, overflowing dimensions, lying
// lengths) — plus temp-dir/file helpers, byte patching and an error matcher for GoogleTest.
//
// Usage:
//   gguf_bytes g;
//   g.header(3, /*n_tensors=*/1, /*n_kv=*/1).kv_u32("general.alignment", 32)
//    .tensor_info("w", {32}, tensor_type::f32, 0).pad(32).zeros(128);
//   auto r = file_view::parse(g.span());
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::test {

namespace gg = minfer::gguf;
using bytes = std::vector<std::byte>;

// ---- raw builder ----------------------------------------------------------------------------
class gguf_bytes {
public:
    bytes b;

    // scalars, little-endian (the host is little-endian: file_view.cpp static_asserts it)
    template <class T>
    gguf_bytes& put(T v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        b.insert(b.end(), p, p + sizeof v);
        return *this;
    }
    gguf_bytes& u8(std::uint8_t v) { return put(v); }
    gguf_bytes& i8(std::int8_t v) { return put(v); }
    gguf_bytes& u16(std::uint16_t v) { return put(v); }
    gguf_bytes& i16(std::int16_t v) { return put(v); }
    gguf_bytes& u32(std::uint32_t v) { return put(v); }
    gguf_bytes& i32(std::int32_t v) { return put(v); }
    gguf_bytes& u64(std::uint64_t v) { return put(v); }
    gguf_bytes& i64(std::int64_t v) { return put(v); }
    gguf_bytes& f32(float v) { return put(v); }
    gguf_bytes& f64(double v) { return put(v); }
    gguf_bytes& raw(std::string_view s) {
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        b.insert(b.end(), p, p + s.size());
        return *this;
    }
    gguf_bytes& raw(std::span<const std::byte> s) {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    gguf_bytes& zeros(std::size_t n) {
        b.resize(b.size() + n);
        return *this;
    }
    /// Zero bytes up to the next multiple of `align`.
    gguf_bytes& pad(std::size_t align) {
        while (b.size() % align != 0) b.push_back(std::byte{0});
        return *this;
    }
    /// A GGUF string: u64 length + bytes.
    gguf_bytes& str(std::string_view s) { return u64(s.size()).raw(s); }
    /// A string whose declared length is `declared` but only `content` follows.
    gguf_bytes& str_len(std::uint64_t declared, std::string_view content = {}) { return u64(declared).raw(content); }
    gguf_bytes& type(gg::value_type t) { return u32(static_cast<std::uint32_t>(t)); }

    // ---- header ----
    gguf_bytes& magic() { return raw("GGUF"); }
    gguf_bytes& header(std::uint32_t version, std::int64_t n_tensors, std::int64_t n_kv) {
        return magic().u32(version).i64(n_tensors).i64(n_kv);
    }

    // ---- KV records ----
    /// Key string and value type tag; the caller appends the value.
    gguf_bytes& key(std::string_view k, gg::value_type t) { return str(k).type(t); }
    gguf_bytes& kv_u8(std::string_view k, std::uint8_t v) { return key(k, gg::value_type::u8).u8(v); }
    gguf_bytes& kv_i8(std::string_view k, std::int8_t v) { return key(k, gg::value_type::i8).i8(v); }
    gguf_bytes& kv_u16(std::string_view k, std::uint16_t v) { return key(k, gg::value_type::u16).u16(v); }
    gguf_bytes& kv_i16(std::string_view k, std::int16_t v) { return key(k, gg::value_type::i16).i16(v); }
    gguf_bytes& kv_u32(std::string_view k, std::uint32_t v) { return key(k, gg::value_type::u32).u32(v); }
    gguf_bytes& kv_i32(std::string_view k, std::int32_t v) { return key(k, gg::value_type::i32).i32(v); }
    gguf_bytes& kv_f32(std::string_view k, float v) { return key(k, gg::value_type::f32).f32(v); }
    gguf_bytes& kv_bool(std::string_view k, bool v) { return key(k, gg::value_type::boolean).u8(v ? 1 : 0); }
    gguf_bytes& kv_str(std::string_view k, std::string_view v) { return key(k, gg::value_type::string).str(v); }
    gguf_bytes& kv_u64(std::string_view k, std::uint64_t v) { return key(k, gg::value_type::u64).u64(v); }
    gguf_bytes& kv_i64(std::string_view k, std::int64_t v) { return key(k, gg::value_type::i64).i64(v); }
    gguf_bytes& kv_f64(std::string_view k, double v) { return key(k, gg::value_type::f64).f64(v); }
    /// Array header: key, tag 9, element type, count; the caller appends the elements.
    gguf_bytes& kv_array(std::string_view k, gg::value_type elem, std::uint64_t count) {
        return key(k, gg::value_type::array).type(elem).u64(count);
    }
    template <class T>
    gguf_bytes& kv_array_of(std::string_view k, gg::value_type elem, std::initializer_list<T> values) {
        kv_array(k, elem, values.size());
        for (T v : values) put(v);
        return *this;
    }
    gguf_bytes& kv_strings(std::string_view k, std::initializer_list<std::string_view> values) {
        kv_array(k, gg::value_type::string, values.size());
        for (std::string_view v : values) str(v);
        return *this;
    }

    // ---- tensor info records ----
    /// name, n_dims = ne.size(), ne[…], type id, offset. Any values, valid or not.
    gguf_bytes& tensor_info(std::string_view name, std::initializer_list<std::int64_t> ne, std::uint32_t type_id,
                            std::uint64_t offset) {
        str(name).u32(static_cast<std::uint32_t>(ne.size()));
        for (std::int64_t d : ne) i64(d);
        return u32(type_id).u64(offset);
    }
    gguf_bytes& tensor_info(std::string_view name, std::initializer_list<std::int64_t> ne, gg::tensor_type t,
                            std::uint64_t offset) {
        return tensor_info(name, ne, static_cast<std::uint32_t>(t), offset);
    }

    std::size_t size() const noexcept { return b.size(); }
    std::span<const std::byte> span() const noexcept { return b; }
    gguf_bytes& truncate(std::size_t n) {
        b.resize(n);
        return *this;
    }
};

// ---- patching --------------------------------------------------------------------------------
template <class T>
void patch(bytes& b, std::size_t off, T v) {
    if (off + sizeof v > b.size()) throw std::out_of_range("patch past end");
    std::memcpy(b.data() + off, &v, sizeof v);
}
inline void patch_u32(bytes& b, std::size_t off, std::uint32_t v) { patch(b, off, v); }
inline void patch_u64(bytes& b, std::size_t off, std::uint64_t v) { patch(b, off, v); }
inline void patch_i64(bytes& b, std::size_t off, std::int64_t v) { patch(b, off, v); }
template <class T>
T peek(const bytes& b, std::size_t off) {
    T v{};
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
}
/// Offset of the first occurrence of `needle` in `b` (throws when absent): find a field to patch.
inline std::size_t find_bytes(const bytes& b, std::string_view needle, std::size_t from = 0) {
    const auto* n = reinterpret_cast<const std::byte*>(needle.data());
    for (std::size_t i = from; i + needle.size() <= b.size(); ++i)
        if (std::memcmp(b.data() + i, n, needle.size()) == 0) return i;
    throw std::out_of_range("find_bytes: not found");
}

inline bytes random_bytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    bytes out(n);
    for (auto& x : out) x = static_cast<std::byte>(rng() & 0xFFu);
    return out;
}

// ---- files ------------------------------------------------------------------------------------
/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class temp_dir {
public:
    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "minfer-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::filesystem::path& path() const noexcept { return path_; }
    std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

private:
    std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, std::span<const std::byte> data) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!f) throw std::runtime_error("write_file failed: " + p.string());
}
inline bytes read_file(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("read_file failed: " + p.string());
    std::ostringstream ss;
    ss << f.rdbuf();
    const std::string s = ss.str();
    const auto* d = reinterpret_cast<const std::byte*>(s.data());
    return bytes(d, d + s.size());
}

// ---- error matching ---------------------------------------------------------------------------
/// What an error must look like. code and where always; the rest only when given.
struct want {
    gg::errc code;
    gg::section where;
    std::optional<std::uint64_t> offset{};
    std::optional<std::uint64_t> expected{};
    std::optional<std::uint64_t> found{};
    std::optional<std::string> subject{};
    std::optional<std::int64_t> index{};
    std::optional<std::string> detail{};
};

inline std::string describe(const gg::error& e) {
    std::ostringstream s;
    s << "{code=" << gg::to_string(e.code) << " where=" << gg::to_string(e.where) << " offset=" << e.offset
      << " expected=" << e.expected << " found=" << e.found << " index=" << e.index << " subject='"
      << gg::escape(e.subject) << "' detail='" << e.detail << "' file='" << e.file << "' part=" << e.part << "/"
      << e.n_parts << "}\n  message: " << e.message();
    return s.str();
}

inline ::testing::AssertionResult error_is(const gg::error& e, const want& w) {
    std::ostringstream bad;
    if (e.code != w.code) bad << " code: want " << gg::to_string(w.code) << ";";
    if (e.where != w.where) bad << " section: want " << gg::to_string(w.where) << ";";
    if (w.offset && e.offset != *w.offset) bad << " offset: want " << *w.offset << ";";
    if (w.expected && e.expected != *w.expected) bad << " expected: want " << *w.expected << ";";
    if (w.found && e.found != *w.found) bad << " found: want " << *w.found << ";";
    if (w.subject && e.subject != *w.subject) bad << " subject: want '" << gg::escape(*w.subject) << "';";
    if (w.index && e.index != *w.index) bad << " index: want " << *w.index << ";";
    if (w.detail && e.detail != *w.detail) bad << " detail: want '" << *w.detail << "';";
    const std::string b = bad.str();
    if (b.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "error mismatch:" << b << "\n  got " << describe(e);
}

/// The error of parsing `b`; a default error (code ok) when the parse unexpectedly succeeded, so
/// any error_is() check on it fails with a readable message.
inline gg::error parse_error(std::span<const std::byte> b) {
    auto r = gg::file_view::parse(b);
    if (r) return gg::error{};
    return r.error();
}
inline gg::error parse_error(const gguf_bytes& g) { return parse_error(g.span()); }

/// Assert-style helper for result<T>: the error of a failed result, or a default error.
template <class R>
gg::error error_of(const R& r) {
    if (r.has_value()) return gg::error{};
    return r.error();
}

/// A writer's bytes (the test fails on error).
inline bytes to_bytes(const gg::writer& w) {
    auto r = w.to_bytes();
    EXPECT_TRUE(r.has_value()) << (r.has_value() ? std::string() : r.error().message());
    return r.has_value() ? *r : bytes{};
}

}  // namespace minfer::test
