#pragma once
// Errors as data. Every failure of the library is an `error` value: a stable code, where it happened
// (section, file, part, byte offset), what it was about (the key or tensor name) and expected vs found.
// Text is made only on demand by message(); the library itself never prints.
// docs/ERRORS.md lists every code with an example message and the meaning of expected/found.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "minfer/gguf/text.hpp"

namespace minfer::gguf {

/// Text of at most N bytes kept inline: the subject of an error (a key or a tensor name) is copied
/// here without allocating, so the accessors' failures (key_not_found, type_mismatch, …) can be
/// built inside noexcept functions with no way to fail. Longer text is cut at N bytes (raw bytes,
/// escaped only when shown).
template <std::size_t N>
class fixed_text {
public:
    constexpr fixed_text() noexcept = default;
    fixed_text(std::string_view s) noexcept { assign(s); }  // NOLINT: implicit, like std::string
    fixed_text(const char* s) noexcept : fixed_text(std::string_view(s)) {}
    fixed_text(const std::string& s) noexcept : fixed_text(std::string_view(s)) {}
    fixed_text& operator=(std::string_view s) noexcept { return assign(s); }
    fixed_text& operator=(const char* s) noexcept { return assign(std::string_view(s)); }
    fixed_text& operator=(const std::string& s) noexcept { return assign(std::string_view(s)); }
    fixed_text& assign(std::string_view s) noexcept {
        size_ = s.size() < N ? s.size() : N;
        if (size_ > 0) std::memcpy(buf_, s.data(), size_);
        return *this;
    }

    static constexpr std::size_t capacity() noexcept { return N; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    void clear() noexcept { size_ = 0; }
    const char* data() const noexcept { return buf_; }
    std::string_view view() const noexcept { return {buf_, size_}; }
    operator std::string_view() const noexcept { return view(); }  // NOLINT: reads as a string
    std::string str() const { return std::string(view()); }

    friend bool operator==(const fixed_text& a, std::string_view b) noexcept { return a.view() == b; }
    friend bool operator==(const fixed_text& a, const fixed_text& b) noexcept { return a.view() == b.view(); }
    friend bool operator==(const fixed_text& a, const std::string& b) noexcept { return a.view() == b; }
    friend bool operator==(const fixed_text& a, const char* b) noexcept { return a.view() == b; }
    template <class Os>
    friend auto operator<<(Os& os, const fixed_text& t) -> decltype(os << std::string_view()) {
        return os << t.view();
    }

private:
    char buf_[N]{};
    std::size_t size_ = 0;
};

/// Bytes of a key or tensor name kept in an error's subject.
inline constexpr std::size_t max_subject_bytes = 256;

/// Stable error codes, 16 bits: the high byte is the domain (the library that owns the code), the low
/// byte the code within it. This enum lists the loader's own codes (domain 0) and the few that several
/// libraries return without depending on one another; every other library declares its codes in its
/// own header as constants of this type (minfer/gguf_write/errors.hpp: gguf::write_codes::journal_present,
/// …), names and describes them in its own errors.cpp, and registers them (register_error_domain), so a
/// library adds a code without touching this header. Domains: 0 loader, 1 gguf_write, 2 quant, 3 check,
/// 4 remote, 5 estimate, 6 toolbox (see `domains`). Numbers never change meaning; gaps below are codes
/// that moved to their library's header (their old numbers are not reused).
enum class errc : std::uint16_t {
    ok = 0,
    // environment
    io_error,       ///< open/stat/mmap/read/write failed; sys_errno holds errno
    out_of_memory,  ///< an allocation failed (std::bad_alloc caught at the API boundary)
    // header
    truncated,            ///< the file ends inside a fixed-size field; expected = bytes needed, found = bytes left
    bad_magic,            ///< the first four bytes are not "GGUF"; found = the four bytes (little-endian u32)
    bad_version,          ///< version 0
    byte_swapped,         ///< version with low 16 bits zero: written on a host of the other endianness
    version_unsupported,  ///< GGUF v1, no longer supported
    version_too_new,      ///< version > 3; expected = 3
    negative_count,       ///< n_tensors or n_kv is negative (signed 64-bit on disk)
    count_too_large,      ///< n_tensors or n_kv cannot fit in the remaining bytes; expected = max possible
    // metadata
    empty_key,             ///< a KV key of length 0
    duplicate_key,         ///< the same key twice; expected = index of the first, found = index of the second
    bad_value_type,        ///< a value (or array element) type tag outside 0..12; found = the tag
    nested_array,          ///< an array whose elements are arrays
    string_too_long,       ///< a string length above the 1 GiB cap; expected = cap, found = length
    string_exceeds_file,   ///< a string length larger than the bytes left; expected = bytes left, found = length
    array_too_long,        ///< an array count above the 1 Gi elements cap; expected = cap, found = count
    array_exceeds_file,    ///< an array that cannot fit in the bytes left; expected = bytes left, found = count
    bad_bool,              ///< a bool byte other than 0 or 1; found = the byte
    alignment_wrong_type,  ///< general.alignment is not a u32 scalar; found = its value_type
    bad_alignment,         ///< general.alignment is 0 or not a power of two; found = the value
    // tensor info
    bad_name_length,      ///< tensor name empty or 64+ bytes; expected = 63, found = length
    duplicate_tensor,     ///< the same tensor name twice; expected = first index, found = second index
    bad_n_dims,           ///< n_dims > 4; expected = 4, found = n_dims
    bad_dim,              ///< a negative dimension; expected = dimension index, found = value (as u64 bits)
    shape_overflow,       ///< the element count does not fit in int64
    bad_tensor_type,      ///< a tensor type id outside the ggml type table; found = the id
    removed_tensor_type,  ///< a type ggml removed (Q4_2, Q4_3, Q4_0_4_4, …); found = the id
    not_block_multiple,   ///< ne[0] not a multiple of the type's block size; expected = block size, found = ne[0]
    size_overflow,        ///< the byte size does not fit in 64 bits
    // data layout
    offset_mismatch,     ///< a tensor's stored offset is not the running padded sum; expected/found = offsets
    data_size_overflow,  ///< the padded data section size overflows 64 bits
    data_truncated,      ///< the file ends before the tensor data does; expected = bytes needed, found = file size
    // multi-part
    split_not_first,              ///< a later part was given as the entry; expected = 0, found = its index from the name
    split_no_mismatch,            ///< a part's split.no differs from its position; expected/found = indices
    split_count_mismatch,         ///< split.count disagrees with the file name or part 1
    split_part_missing,           ///< a part named by the set cannot be opened; subject = its path
    split_tensor_count_mismatch,  ///< split.tensors.count != the tensors in all parts
    split_duplicate_tensor,       ///< one tensor name in two parts; expected/found = the two parts (1-based)
    split_bad_key,                ///< a split.* key has a non-integer type or an out-of-range value
    // accessor misuse (returned by getters, never by open)
    key_not_found,       ///< no such metadata key
    type_mismatch,       ///< the key holds another type; expected/found = value_type
    tensor_not_found,    ///< no such tensor
    index_out_of_range,  ///< array index past the end; expected = size, found = index
    // metadata and tensor info (added after the first release of the list)
    nul_in_name,  ///< a key or tensor name holding a NUL byte (C readers such as llama.cpp would see a
                  ///< different, shorter name); found = the NUL's position in the name
    // accessor misuse (added with the converting getters)
    value_out_of_range,  ///< a number does not fit the type asked for (kv::as, copy_to); found = the value's
                         ///< bits (or, for copy_to, the item's index in `item`), expected = the type's maximum
    // multi-part (added later)
    split_arch_mismatch,  ///< a later part's general.architecture differs from part 1's; subject = the key
    split_bad_name,       ///< split.count > 1 but the entry is not named <prefix>-00001-of-<N>.gguf; expected = N
    // shared by several libraries that do not depend on one another (never returned by open)
    bad_value_text = 49,        ///< a value given as text does not parse as its type; subject = the key, detail = why
                                ///< (the writers, quant's type plan, estimate, remote's URLs, the frontends)
    buffer_size_mismatch = 56,  ///< an input or output buffer has the wrong size for the values asked for; expected
                                ///< = the size needed, found = the size given, detail = which buffer ("input
                                ///< bytes", …) (quant, gguf_write's writer)
    // reading a file's head from a byte source (remote files; file_view::parse_head, fetch_head)
    head_incomplete = 60,        ///< parse_head only: the head ends before the parse is decided; expected = the head
                                 ///< length needed to go on (a lower bound), found = the head's length
    fetch_budget_exceeded = 61,  ///< the head the parse needs is larger than the fetch budget; expected = the
                                 ///< budget, found = the bytes needed at least
    http_status = 62,  ///< a server answered with an unexpected HTTP status; found = the status, detail = why (the
                       ///< loader's split opener reads a 404 as a missing part)
    transfer_failed = 65,  ///< the transfer failed: connection, timeout, a body shorter than announced, too many
                           ///< redirects; detail = the transport's reason, found = its error number
    // estimates and quant's type plan (neither depends on the other)
    bad_hyperparameter = 66,  ///< an architecture key llama.cpp cannot use (0 heads, KV heads that do not divide
                              ///< the heads, a per-layer array of the wrong length, …); subject = the key, detail = why
    // consumers of tensor bytes (check, compare, core, the writers): the verified-root rule
    model_incomplete = 67,  ///< a model opened from heads only (a remote model) given to a function that needs its
                            ///< tensor bytes; expected = the file's size, found = the bytes held, file = the part
    // inputs the user names (read_capped: a chat template file, standard input, an imatrix)
    input_too_large = 69,  ///< a file or standard input larger than its cap; expected = the cap, found = its size
                           ///< when known, else cap + 1; file = the input, detail = what it is read as ("a chat
                           ///< template")
};

/// The domain numbers (the high byte of an errc). A library's codes are `errc{domain << 8 | n}`, n >= 1.
namespace domains {
inline constexpr std::uint8_t loader = 0;
inline constexpr std::uint8_t gguf_write = 1;
inline constexpr std::uint8_t quant = 2;
inline constexpr std::uint8_t check = 3;
inline constexpr std::uint8_t remote = 4;
inline constexpr std::uint8_t estimate = 5;
inline constexpr std::uint8_t toolbox = 6;
}  // namespace domains

/// The library a code belongs to (its high byte) and its number within it (its low byte).
constexpr std::uint8_t domain_of(errc code) noexcept {
    return static_cast<std::uint8_t>(static_cast<std::uint16_t>(code) >> 8);
}
constexpr std::uint8_t number_in_domain(errc code) noexcept {
    return static_cast<std::uint8_t>(static_cast<std::uint16_t>(code) & 0xFFu);
}
/// The code `number` of `domain`: how a library header spells its constants.
constexpr errc make_code(std::uint8_t domain, std::uint8_t number) noexcept {
    return static_cast<errc>(static_cast<std::uint16_t>((domain << 8) | number));
}

/// An out_of_memory error saying what was being done when the text can be stored, and only the
/// code when it cannot: building it never throws, so a catch (std::bad_alloc) handler of a noexcept
/// function can return it (a detail assigned there by hand could throw again: std::terminate).
struct error;
error out_of_memory_error(std::string_view what = {}) noexcept;

/// The loader's last code (tests walk 1..last_code, skipping the numbers that moved to a library).
inline constexpr errc last_code = errc::input_too_large;

/// A library's codes as the loader sees them: its names and its descriptions. A library defines one
/// (with static storage duration) in its errors.cpp and registers it from its errors.hpp, so that any
/// program naming one of its codes has it registered before main.
struct error_domain {
    std::uint8_t id;               ///< the high byte of the library's codes (see `domains`)
    std::string_view library;      ///< "remote", "gguf_write", …
    /// The snake-case name of code number `code` of the domain; empty for a number it does not have.
    std::string_view (*name)(std::uint8_t code) noexcept;
    /// error::description() for the domain's codes; path_said: message() has said `file` already.
    std::string (*describe)(const error& e, bool path_said);
};

/// Registers a library's codes (a fixed table of 256 atomic pointers: no allocation, no lock, never
/// fails; registering again replaces). `domain` must outlive every use of the codes. Domain 0 is the
/// loader's own and is ignored.
void register_error_domain(const error_domain& domain) noexcept;
/// The registered domain `id`, or nullptr.
const error_domain* find_error_domain(std::uint8_t id) noexcept;

/// The region of a GGUF file an error belongs to.
enum class section : std::uint8_t { file, header, metadata, tensor_info, data, split, access };

/// Snake-case id of a code ("offset_mismatch"), stable for tests, scripts and JSON; a library's code is
/// named by its registered domain; "unknown" for a number no one names.
std::string_view to_string(errc code) noexcept;
/// "header", "metadata", "tensor_info", …
std::string_view to_string(section where) noexcept;

struct error {
    errc code = errc::ok;
    section where = section::file;
    std::uint64_t offset = 0;    ///< absolute byte offset of the offending field in its file
    std::uint64_t expected = 0;  ///< meaning depends on code (see errc and docs/ERRORS.md)
    std::uint64_t found = 0;     ///< meaning depends on code
    std::int64_t index = -1;     ///< KV or tensor ordinal within its file, -1 when not applicable
    std::uint32_t part = 0;      ///< 1-based part of a split set, 0 for a single file
    std::uint32_t n_parts = 0;   ///< number of parts in the set, 0 for a single file
    int sys_errno = 0;           ///< errno for io_error and split_part_missing
    std::int64_t item = -1;      ///< the array item a failure is about (a string of a string array), -1 when none
    std::array<std::int64_t, 4> shape{};  ///< tensor shape, for tensor_info errors
    /// The key or tensor name the failure is about (raw bytes, at most 256 kept; escaped when
    /// printed). Never a path: the path is `file`.
    fixed_text<max_subject_bytes> subject;
    std::string file;     ///< the path of the file (of the part, in a split set), set by the openers
    std::string detail;   ///< extra context some codes carry (e.g. the expected file name of a part);
                          ///< never set by the accessors, whose errors allocate nothing

    /// The seed's wording for the failure, without location: "tensor 'x' has offset 96, expected 64".
    [[nodiscard]] std::string description() const;
    /// Full message: "<file> (part 2 of 3): tensor_info at byte 1234: <description> [offset_mismatch]".
    [[nodiscard]] std::string message() const;

private:
    std::string string_context() const;
    // path_said: inside message(), which has named the file already (a path is said once).
    std::string describe(bool path_said) const;
};

}  // namespace minfer::gguf
