#pragma once
// The HTTP byte source's error codes. The loader keeps http_status, transfer_failed and
// fetch_budget_exceeded: its byte-source reader returns them and its split opener reads a 404.
// Constants of gguf::errc in domain gguf::domains::remote (the high byte), so that adding one changes this
// header only: src/remote/errors.cpp names and describes them, and the inline variable below registers
// them with the loader in every program that includes this header (docs/ERRORS.md lists them).
#include "minfer/gguf/error.hpp"

namespace minfer::remote {

namespace codes {
/// a server answered a range request with the whole body (a 200), cut off at the range asked; detail = what
/// came (another range is bad_content_range)
inline constexpr gguf::errc range_ignored = gguf::make_code(gguf::domains::remote, 1);
/// a 206 answer whose Content-Range is missing, malformed or disagrees with the file's size or the body;
/// detail = the header as received (escaped)
inline constexpr gguf::errc bad_content_range = gguf::make_code(gguf::domains::remote, 2);
/// libcurl (loaded on the first URL, not at start-up) could not be loaded or lacks a function;
/// subject = "libcurl", detail = the dynamic linker's message
inline constexpr gguf::errc library_unavailable = gguf::make_code(gguf::domains::remote, 3);
}  // namespace codes

/// This library's codes as the loader's to_string and error::description see them.
const gguf::error_domain& errors_domain() noexcept;

namespace detail {
// Registered by every TU that includes this header (every TU that can name a code), before main: one
// atomic store each, with no static-library link order to get right. Internal linkage on purpose: an
// inline variable's guard is one symbol per process (STB_GNU_UNIQUE), so a second Python extension
// module holding its own copy of the loader's table would skip its registration.
[[maybe_unused]] static const bool error_domain_registered =
    (gguf::register_error_domain(errors_domain()), true);
}  // namespace detail

}  // namespace minfer::remote
