#pragma once
// The download checks' error codes (hashes and manifests; never returned by open).
// Constants of gguf::errc in domain gguf::domains::check (the high byte), so that adding one changes this
// header only: src/check/errors.cpp names and describes them, and the inline variable below registers
// them with the loader in every program that includes this header (docs/ERRORS.md lists them).
#include "minfer/gguf/error.hpp"

namespace minfer::check {

namespace codes {
/// the hash library refused to start a digest (OpenSSL's provider missing, …); subject = the hash
/// ("sha256"), detail = the library's reason
inline constexpr gguf::errc hash_unavailable = gguf::make_code(gguf::domains::check, 1);
/// a hash manifest larger than the cap; expected = cap, found = its size; file = the manifest
inline constexpr gguf::errc manifest_too_large = gguf::make_code(gguf::domains::check, 2);
/// a manifest line of a known hash type whose hash is not that type's lowercase hex, or which has no name;
/// index = the line (1-based), subject = the type, detail = why
inline constexpr gguf::errc manifest_bad_line = gguf::make_code(gguf::domains::check, 3);
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

}  // namespace minfer::check
