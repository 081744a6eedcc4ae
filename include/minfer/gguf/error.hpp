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

/// Stable error codes. Numbers may grow at the end; existing ones never change meaning.
enum class errc : std::uint8_t {
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
    // changing files (edit, split, merge: the writing library's codes, never returned by open)
    bad_value_text,    ///< a value given as text does not parse as its type; subject = the key, detail = why
    token_not_found,   ///< a special token's text is not in the vocabulary, or its id is not below the
                       ///< vocabulary size; expected = vocabulary size, found = the id (text: 0)
    no_room_in_place,  ///< an in-place edit's new header and tables do not fit before the data section;
                       ///< expected = bytes available (the data offset), found = bytes needed
    journal_present,   ///< an undo journal of an interrupted in-place edit lies beside the file; file = the journal
    journal_invalid,   ///< an undo journal that does not belong to this file or is damaged; file = the journal
    too_many_parts,    ///< a split would need more parts than split.count (u16) can number; expected = 65535
    // values (minfer::quant: converting tensor bytes to numbers)
    type_not_convertible,  ///< the type has no conversion to f32 (q8_1, i64, removed or unknown ids); found = the
                           ///< type id, subject = the tensor when known
    buffer_size_mismatch,  ///< an input or output buffer has the wrong size for the values asked for; expected =
                           ///< the size needed, found = the size given, detail = which buffer ("input bytes", …)
    // download checks (minfer::check: hashes and manifests; never returned by open)
    hash_unavailable,    ///< the hash library refused to start a digest (OpenSSL's provider missing, …); subject =
                         ///< the hash ("sha256"), detail = the library's reason
    manifest_too_large,  ///< a hash manifest larger than the cap; expected = cap, found = its size; file = the manifest
    manifest_bad_line,   ///< a manifest line of a known hash type whose hash is not that type's lowercase hex, or
                         ///< which has no name; index = the line (1-based), subject = the type, detail = why
    // reading a file's head from a byte source (remote files; file_view::parse_head, fetch_head)
    head_incomplete,        ///< parse_head only: the head ends before the parse is decided; expected = the head
                            ///< length needed to go on (a lower bound), found = the head's length
    fetch_budget_exceeded,  ///< the head the parse needs is larger than the fetch budget; expected = the budget,
                            ///< found = the bytes needed at least
    http_status,            ///< a server answered with an unexpected HTTP status; found = the status, detail = why
    range_ignored,          ///< a server answered a range request with the whole body (a 200), cut off at the
                            ///< range asked; detail = what came (another range is bad_content_range)
    bad_content_range,      ///< a 206 answer whose Content-Range is missing, malformed or disagrees with the file's
                            ///< size or the body; detail = the header as received (escaped)
    transfer_failed,        ///< the transfer failed: connection, timeout, a body shorter than announced, too many
                            ///< redirects; detail = the transport's reason, found = its error number
    // estimates (minfer::estimate: what llama.cpp allocates; never returned by open)
    bad_hyperparameter,  ///< an architecture key llama.cpp cannot use (0 heads, KV heads that do not divide the
                         ///< heads, a per-layer array of the wrong length, …); subject = the key, detail = why
    // consumers of tensor bytes (check, compare, core, the writers): the verified-root rule
    model_incomplete,  ///< a model opened from heads only (a remote model) given to a function that needs its
                       ///< tensor bytes; expected = the file's size, found = the bytes held, file = the part
    // outputs (every write of the toolbox, gguf_write's output_path.hpp)
    output_not_regular,  ///< an output names a directory, FIFO, device, socket (or a link to one, or a dangling
                         ///< link): never replaced, even with force; file = the path, found = st_mode & S_IFMT
    // inputs the user names (read_capped: a chat template file, standard input)
    input_too_large,  ///< a file or standard input larger than its cap; expected = the cap, found = its size when
                      ///< known, else cap + 1; file = the input, detail = what it is read as ("a chat template")
    // quantizing (minfer::quant's quantize_rows; appended here so that no earlier code is renumbered)
    type_not_quantizable,  ///< quantize_rows: the type has no quantizer (q8_1, q8_K, integers, removed or unknown
                           ///< ids, or a family not built); found = the type id
    importance_required,   ///< quantize_rows: the type needs importance weights (iq2_xxs, iq2_xs, iq1_s) and none
                           ///< were given; found = the type id
    quantize_failed,       ///< quantize_rows: an input on which ggml's quantizer would assert (a codebook search
                           ///< that finds no point); index = the row, found = the type id
    // quantizing a model (minfer::quant's importance reader, toolbox::quantize)
    bad_imatrix,           ///< an importance-matrix file that is malformed (a negative count or length, an
                           ///< entry without its counts, a wrong type or shape, a non-finite weight); file = it,
                           ///< offset = where, subject = the entry, detail = why
    imatrix_mismatch,      ///< an importance entry whose size is not the tensor's (ne[0] x matrices); subject = the
                           ///< tensor, expected = the tensor's count, found = the entry's
    requantize_refused,    ///< quantizing a tensor that is already quantized, without allow_requantize (its values
                           ///< would pass through a lossy format twice); subject = the tensor, found = its type id
    non_finite_weight,     ///< quantizing a tensor holding a NaN or an infinity (llama-quantize's row validation
                           ///< fails on it after the fact); subject = the tensor, index = the value's position
};

/// An out_of_memory error saying what was being done when the text can be stored, and only the
/// code when it cannot: building it never throws, so a catch (std::bad_alloc) handler of a noexcept
/// function can return it (a detail assigned there by hand could throw again: std::terminate).
struct error;
error out_of_memory_error(std::string_view what = {}) noexcept;

/// The last code of the list (update it when appending a code; tests walk 1..last_code).
inline constexpr errc last_code = errc::non_finite_weight;

/// The region of a GGUF file an error belongs to.
enum class section : std::uint8_t { file, header, metadata, tensor_info, data, split, access };

/// Snake-case id of a code ("offset_mismatch"), stable for tests, scripts and JSON.
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
