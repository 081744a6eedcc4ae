// The C API's errors: the capi domain, the thread's last error in fixed buffers (recording never
// allocates past message()), and the C functions that read it (minfer_last_error_*).
#include "capi_errors.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>

namespace minfer::capi {
namespace {

constexpr std::array<std::string_view, 6> capi_names{"invalid_handle",  "null_argument",   "unsupported_param",
                                                     "internal_error", "id_out_of_range", "callback_failed"};

std::string_view capi_name(std::uint8_t code) noexcept {
    return code >= 1 && code <= capi_names.size() ? capi_names[code - 1u] : std::string_view();
}

// subject: the function (callback_failed: the tensor, set by the writer); detail: what (the
// argument, "key" or "tensor", the kind of handle, where in the tensor).
std::string capi_describe(const gguf::error& e, bool /*path_said*/) {
    const std::string fn(e.subject.view());
    const std::string where = fn.empty() ? std::string() : fn + ": ";
    switch (gguf::number_in_domain(e.code)) {
        case 1:
            // detail names a handle other than a context (a writer): the whole phrase is the caller's.
            return where + (e.detail.empty() ? "the context handle is NULL, freed or not one minfer opened" : e.detail);
        case 2: return where + "argument " + e.detail + " is NULL";
        case 3: return where + e.detail;
        case 4: return where + "an unexpected internal error" + (e.detail.empty() ? std::string() : ": " + e.detail);
        case 5:
            return where + e.detail + " id " + std::to_string(static_cast<std::int64_t>(e.found)) +
                   " is out of range (the context has " + std::to_string(e.expected) + ")";
        case 6:
            return "the read callback of tensor '" + gguf::escape(e.subject.view()) + "' returned " +
                   std::to_string(static_cast<std::int64_t>(e.found)) +
                   (e.detail.empty() ? std::string() : " " + e.detail);
        default: return "unknown error";
    }
}

const gguf::error_domain capi_errors{capi_domain, "capi", &capi_name, &capi_describe};
// Registered when the library is loaded: the loader's to_string and message() then name the codes.
[[maybe_unused]] const bool capi_registered = (gguf::register_error_domain(capi_errors), true);

// ---- the thread's last error ----

struct last_error {
    int code = 0;
    std::uint64_t offset = 0;
    std::uint64_t expected = 0;
    std::uint64_t found = 0;
    char name[64] = "ok";
    char domain[16] = "";
    char message[4096] = "";
};
thread_local last_error tl_error;

// `s` into dst[cap], NUL-terminated, cut at a UTF-8 character boundary when it does not fit.
void copy_text(char* dst, std::size_t cap, std::string_view s) noexcept {
    std::size_t n = std::min(cap - 1, s.size());
    if (n < s.size())
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0u) == 0x80u) --n;  // s[n] continues a character
    if (n > 0) std::memcpy(dst, s.data(), n);
    dst[n] = '\0';
}

// The library that owns a code: "loader" for domain 0 (the loader's codes), else its registered
// name ("gguf_write", "quant", "capi", …).
std::string_view domain_name(gguf::errc code) noexcept {
    const std::uint8_t id = gguf::domain_of(code);
    if (id == gguf::domains::loader) return "loader";
    const gguf::error_domain* d = gguf::find_error_domain(id);
    return d == nullptr ? std::string_view("unknown") : d->library;
}

void set_code(last_error& t, gguf::errc code) noexcept {
    t.code = static_cast<int>(code);
    copy_text(t.name, sizeof t.name, gguf::to_string(code));
    copy_text(t.domain, sizeof t.domain, code == gguf::errc::ok ? std::string_view() : domain_name(code));
}

}  // namespace

void record(const gguf::error& e) noexcept {
    last_error& t = tl_error;
    set_code(t, e.code);
    t.offset = e.offset;
    t.expected = e.expected;
    t.found = e.found;
    try {
        copy_text(t.message, sizeof t.message, e.message());
    } catch (...) {  // the message's text could not be allocated: the name says what happened
        copy_text(t.message, sizeof t.message, gguf::to_string(e.code));
    }
}

void record_code(gguf::errc code, const char* fn, std::string_view detail, std::uint64_t expected,
                 std::uint64_t found) noexcept {
    try {
        gguf::error e;
        e.code = code;
        e.where = gguf::section::access;
        e.subject = fn;
        e.detail = detail;
        e.expected = expected;
        e.found = found;
        record(e);
    } catch (...) {
        last_error& t = tl_error;
        set_code(t, code);
        t.offset = 0;
        t.expected = expected;
        t.found = found;
        copy_text(t.message, sizeof t.message, fn);
    }
}

void record_exception(const char* fn) noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        gguf::error e = gguf::out_of_memory_error(fn);
        record(e);
    } catch (...) {
        record_code(internal_error, fn);
    }
}

void record_open_error(gguf::error e, const char* fname) noexcept {
    try {
        if (e.file.empty()) e.file = fname;
    } catch (...) {
    }
    record(e);
}

void copy_last_error(minfer_error& out) noexcept {
    const last_error& t = tl_error;
    out.code = t.code;
    copy_text(out.name, sizeof out.name, t.name);
    copy_text(out.domain, sizeof out.domain, t.domain);
    out.offset = t.offset;
    out.expected = t.expected;
    out.found = t.found;
    copy_text(out.message, sizeof out.message, t.message);
}

void report(minfer_error* err, bool failed) noexcept {
    if (err == nullptr) return;
    if (failed) {
        copy_last_error(*err);
        return;
    }
    *err = minfer_error{};
    copy_text(err->name, sizeof err->name, "ok");
}

}  // namespace minfer::capi

extern "C" {

int minfer_last_error_code(void) noexcept { return minfer::capi::tl_error.code; }
const char* minfer_last_error_name(void) noexcept { return minfer::capi::tl_error.name; }
const char* minfer_last_error_message(void) noexcept { return minfer::capi::tl_error.message; }
uint64_t minfer_last_error_offset(void) noexcept { return minfer::capi::tl_error.offset; }
void minfer_clear_error(void) noexcept { minfer::capi::tl_error = minfer::capi::last_error{}; }

void minfer_last_error(struct minfer_error* out) noexcept {
    // A NULL `out` records nothing: that would overwrite the very error the caller asks for.
    if (out != nullptr) minfer::capi::copy_last_error(*out);
}

const char* minfer_error_name(int code) noexcept {
    // Copied so that it is NUL-terminated whatever the registered table's views are.
    thread_local char name[64];
    if (code == 0) return "ok";
    if (code < 0 || code > 0xFFFF) return nullptr;
    const std::string_view n = minfer::gguf::to_string(static_cast<minfer::gguf::errc>(code));
    if (n == "unknown") return nullptr;
    minfer::capi::copy_text(name, sizeof name, n);
    return name;
}

}  // extern "C"
