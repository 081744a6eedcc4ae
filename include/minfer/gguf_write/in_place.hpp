#pragma once
// in_place: rewrite only the bytes before the data section of a model file (its header, metadata
// and tensor table), leaving the tensor data where it is — an edit of a 40 GB model's chat template
// that costs milliseconds whatever the model's size.
//
// The data section keeps its offset D. The new head must end its tensor table at some T' with
// align(T') = D. When the new records are shorter, the slack is filled by one padding key
// (`minfer.padding`, an array of u8 zeros sized to land T' exactly on D; it replaces any earlier
// one); when they are longer than D allows, the edit is refused with no_room_in_place, naming the
// bytes missing.
//
// Crash safety by an undo journal beside the file (`<file>.minfer-undo`): before the first byte of
// the model changes, the journal (the old head, the new head, the file's size, a checksum of the
// heads) is written atomically and fsynced; then the new head is written and fsynced; then the
// journal is removed. Killed at any instant, the file is the old model, the new model, or — while a
// journal exists — a state that recover_in_place() (CLI: `minfer edit --recover FILE`) turns back
// into one of them. Every function refuses to touch a model while a journal lies beside it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::gguf {

/// The key that absorbs the slack of an in-place edit.
inline constexpr std::string_view in_place_padding_key = "minfer.padding";

/// `<file>.minfer-undo`.
std::filesystem::path undo_journal_path(const std::filesystem::path& file);

/// A planned in-place edit of one file.
struct in_place_edit {
    std::filesystem::path file;
    std::vector<std::byte> old_head;  ///< the bytes [0, D) as verified
    std::vector<std::byte> new_head;  ///< exactly D bytes
    std::uint64_t file_size = 0;
    std::uint64_t padding_bytes = 0;  ///< the size of the padding key's array (0: no padding key)
};

/// Plan writing `w`'s head over part `part` (0-based) of `m`. `w` must hold that part's tensors, in
/// order, with their shapes and types (rewrite() of the part's own tensors gives that). @returns
/// no_room_in_place (expected = D, found = bytes needed), journal_present, the writer's plan
/// errors, or offset_mismatch when the new tensor table would move a tensor.
result<in_place_edit> plan_in_place(const model& m, std::uint32_t part, const writer& w) noexcept;

/// Carry out a planned edit: journal, write, fsync, remove the journal. The edit rewrites the bytes
/// that `planned_from` (the model it was planned from) maps and points into: afterwards that object
/// would read garbage names and values. So it is consumed: taken by rvalue, closed (unmapped) before
/// the first byte changes, and left empty (model's default state: no metadata, no tensors); there is
/// no overload that leaves it open. Reopen the file to read the edited model. @returns
/// bad_value_text (detail says why) when `planned_from` has no part at edit.file (another model: it
/// is left untouched then); io_error, journal_present, or io_error with sys_errno ESTALE when the
/// file's head or size no longer match the plan (changed since it was opened).
result<void> apply_in_place(const in_place_edit& edit, model&& planned_from) noexcept;
result<void> apply_in_place(const in_place_edit& edit, const model& planned_from) = delete;

/// What recover_in_place found and did.
enum class recovery : std::uint8_t {
    nothing_to_do,  ///< no journal
    rolled_back,    ///< the head was neither old nor new (or was old): the old head is back
    completed,      ///< the head was already the new one: the journal was just removed
};

/// Resolve an interrupted in-place edit of `file`. @returns journal_invalid (damaged, or made for
/// another file), io_error.
result<recovery> recover_in_place(const std::filesystem::path& file) noexcept;

/// Remove `file`'s undo journal without using it (CLI: `minfer edit --discard-journal FILE`): the
/// way out when recover_in_place answers journal_invalid. The model is left as it is, so the caller
/// should have checked it first (`minfer verify`). @returns whether there was a journal, or
/// io_error (the model cannot be opened or locked, the journal cannot be removed).
result<bool> discard_journal(const std::filesystem::path& file) noexcept;

}  // namespace minfer::gguf
