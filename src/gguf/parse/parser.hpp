#pragma once
// Internal: the verifier behind file_view::parse. One pass over [0, data_offset) in four stages, one
// file each, in file order:
//   header.cpp        magic, version, n_tensors and n_kv bounded by what the file can hold
//   metadata.cpp      the KV records (keys, type tags, strings, arrays, bools, general.alignment)
//   tensor_table.cpp  the tensor records (names, dims, types, shapes)
//   layout.cpp        offsets as the running padded sum, every tensor inside the file
// The format's rules themselves (what a key, a name, an alignment, a shape must be) live in
// rules.hpp, shared with the writer; this class only reads bytes and reports where a rule failed.
// Every failure goes through fail(), which records code, section, offset and subject.
#include <cstdint>
#include <string>
#include <string_view>

#include "byte_cursor.hpp"
#include "../insert_window.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/rules.hpp"

namespace minfer::gguf {

namespace detail {
// The smallest records, used to bound counts before anything is allocated.
inline constexpr std::uint64_t min_kv_bytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8
inline constexpr std::uint64_t min_tensor_bytes = 8 + 1 + 4 + 4 + 8;  // name length, 1-byte name, n_dims, type, offset
// Room reserved up front for records: a count the file merely declares (bounded by the file size,
// but a multi-GB file still allows hundreds of millions) must not size an allocation. Up to this
// many are reserved as declared; a larger table is first counted (record_count.hpp) and sized for
// the records that are really there.
inline constexpr std::uint64_t initial_records = 4096;

template <class Count>
std::size_t records_to_reserve(std::uint64_t declared, Count&& count) noexcept {
    return static_cast<std::size_t>(declared <= initial_records ? declared : count());
}
}  // namespace detail

class parser {
public:
    parser(std::span<const std::byte> bytes, const limits& caps) noexcept : cur_(bytes), caps_(caps) {
        view_.bytes_ = bytes;
        view_.file_size_ = bytes.size();
    }
    // A head of a file of file_size bytes (file_view::parse_head).
    parser(std::span<const std::byte> head, std::uint64_t file_size, const limits& caps) noexcept
        : cur_(head, file_size), caps_(caps) {
        view_.bytes_ = head;
        view_.file_size_ = cur_.file_size();
    }

    result<file_view> run() {
        if (!header() || !metadata() || !tensor_table() || !layout()) return unexpected(std::move(err_));
        return std::move(view_);
    }

private:
    // The stages (one file each).
    bool header();
    bool metadata();
    bool tensor_table();
    bool layout();

    // metadata.cpp
    bool kv_records();
    bool type_tag(value_type& t, const char* what);
    bool value(kv& e);
    bool string_array(kv& e, std::uint64_t at);
    bool fixed(kv& e, std::uint64_t n);
    bool alignment(const kv& e);
    // tensor_table.cpp
    bool tensor_records();
    [[gnu::cold, gnu::noinline]] bool bad_shape(const verdict& v, std::uint32_t type_id, const shape_facts& facts,
                                                std::uint64_t dims_at, std::uint64_t type_at);

    // A repeated name found by an insert window: the failure of the record that repeats it.
    bool duplicate(const detail::insert_window::duplicate& d, errc code, section where);
    // The names of records already parsed, for the indexes' comparisons.
    auto key_of() {
        return [this](std::uint32_t k) { return view_.kvs_[k].key; };
    }
    auto tensor_name_of() {
        return [this](std::uint32_t k) { return view_.tensors_[k].name; };
    }

    // ---- the one failure path (parse.cpp) ---------------------------------------------------
    // Cold and out of line, so the checks on the hot path stay a compare and a branch.
    [[gnu::cold, gnu::noinline]] bool fail(errc code, section where, std::uint64_t offset, std::uint64_t expected = 0,
                                           std::uint64_t found = 0);
    // A rule's verdict at `offset`.
    [[gnu::cold, gnu::noinline]] bool fail(const verdict& v, section where, std::uint64_t offset) {
        return fail(v.code, where, offset, v.expected, v.found);
    }
    void subject(std::string_view s) { err_.subject = s; }  // cut at max_subject_bytes, inline
    // The head given to parse_head ends before byte `end`, which the file has: not a verdict, a
    // request for a longer head. (Never taken in a whole-file parse: there the head is the file.)
    [[gnu::cold, gnu::noinline]] bool need_head(std::uint64_t end) {
        err_ = error{};
        return fail(errc::head_incomplete, section::file, cur_.tell(), end, cur_.size());
    }

    // ---- reads: every one bounds-checked by byte_cursor --------------------------------------
    template <class T>
    bool read(T& v, section where, const char* what) {
        if (cur_.read(v)) return true;
        if (cur_.beyond_head(sizeof(T))) return need_head(cur_.tell() + sizeof(T));
        err_.detail = what;
        return fail(errc::truncated, where, cur_.tell(), sizeof(T), cur_.file_remaining());
    }

    // u64 length + bytes; the view points into the file. `what` names the string for errors.
    bool read_string(std::string_view& out, section where, const char* what) {
        const std::uint64_t at = cur_.tell();
        std::uint64_t n = 0;
        if (!read(n, where, what)) return false;
        if (n > caps_.max_string_bytes) {
            err_.detail = what;
            return fail(errc::string_too_long, where, at, caps_.max_string_bytes, n);
        }
        if (!cur_.has(n)) {
            if (cur_.beyond_head(n)) return need_head(cur_.tell() + n);
            err_.detail = what;
            return fail(errc::string_exceeds_file, where, at, cur_.file_remaining(), n);
        }
        out = std::string_view(reinterpret_cast<const char*>(cur_.here()), static_cast<std::size_t>(n));
        cur_.skip(n);
        return true;
    }

    detail::byte_cursor cur_;
    limits caps_;
    std::string_view about_;  // the key or tensor the current checks are about (subject of a failure)
    file_view view_;
    detail::insert_window keys_{view_.kv_index_};
    detail::insert_window names_{view_.tensor_index_};
    error err_;
    std::uint64_t n_kv_ = 0;
    std::uint64_t n_tensors_ = 0;
};

}  // namespace minfer::gguf
