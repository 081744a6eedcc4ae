#pragma once
// The writing library's error codes (edit, split, merge, in-place edits, outputs): gguf::write_codes,
// in namespace minfer::gguf with the rest of the writing library's headers (writer, atomic_file, …).
// Constants of gguf::errc in domain gguf::domains::gguf_write (the high byte), so that adding one changes this
// header only: src/gguf_write/errors.cpp names and describes them, and the inline variable below registers
// them with the loader in every program that includes this header (docs/ERRORS.md lists them).
#include "minfer/gguf/error.hpp"

namespace minfer::gguf {

namespace write_codes {
// changing files (edit, split, merge; never returned by open)
/// a special token's text is not in the vocabulary, or its id is not below the vocabulary size; expected =
/// vocabulary size, found = the id (text: 0)
inline constexpr gguf::errc token_not_found = gguf::make_code(gguf::domains::gguf_write, 1);
/// an in-place edit's new header and tables do not fit before the data section; expected = bytes available
/// (the data offset), found = bytes needed
inline constexpr gguf::errc no_room_in_place = gguf::make_code(gguf::domains::gguf_write, 2);
/// an undo journal of an interrupted in-place edit lies beside the file; file = the journal
inline constexpr gguf::errc journal_present = gguf::make_code(gguf::domains::gguf_write, 3);
/// an undo journal that does not belong to this file or is damaged; file = the journal
inline constexpr gguf::errc journal_invalid = gguf::make_code(gguf::domains::gguf_write, 4);
/// a split would need more parts than split.count (u16) can number; expected = 65535
inline constexpr gguf::errc too_many_parts = gguf::make_code(gguf::domains::gguf_write, 5);
/// an output names a directory, FIFO, device, socket (or a link to one, or a dangling link): never
/// replaced, even with force; file = the path, found = st_mode & S_IFMT (output_path.hpp, atomic_file)
inline constexpr gguf::errc output_not_regular = gguf::make_code(gguf::domains::gguf_write, 6);
}  // namespace write_codes

/// This library's codes as the loader's to_string and error::description see them.
const gguf::error_domain& write_errors_domain() noexcept;

namespace detail {
// Registered by every TU that includes this header (every TU that can name a code), before main: one
// atomic store each, with no static-library link order to get right. Internal linkage on purpose: an
// inline variable's guard is one symbol per process (STB_GNU_UNIQUE), so a second Python extension
// module holding its own copy of the loader's table would skip its registration.
[[maybe_unused]] static const bool write_error_domain_registered =
    (gguf::register_error_domain(write_errors_domain()), true);
}  // namespace detail

}  // namespace minfer::gguf
