#pragma once
// The steps of an edit that the CLI (`minfer edit`) and the Python module (toolbox.edit) take the
// same way: refuse a model an interrupted in-place edit left a journal beside, make room with
// `reserve`, plan the in-place rewrite of part 1. The frontends keep their option checks and their
// words (a flag there, a keyword argument here); what happens to the file is decided here, once.
#include <cstdint>
#include <filesystem>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/metadata_edit.hpp"

namespace minfer::toolbox {

/// The most room `reserve` may ask for (1 GiB): a padding key is a metadata value, read whole by loaders.
inline constexpr std::uint64_t max_reserve = std::uint64_t{1} << 30;

/// journal_present (the journal's path as file) when an undo journal lies beside `file`: only
/// recovery (`edit --recover`, edit_recover) may touch such a model.
gguf::result<void> refuse_journal(const std::filesystem::path& file);

/// Append to `plan` the padding key (gguf::in_place_padding_key) holding `reserve` zero bytes (a u8
/// array), which a later in-place edit can grow into. Nothing when `reserve` is 0. Needs reserve <=
/// max_reserve.
void add_reserve(gguf::metadata_edit_plan& plan, std::uint64_t reserve);

/// The in-place edit of part 1 with `plan`'s changes (its own tensors only: the head of one file is
/// rewritten); no_room_in_place when the new head does not fit before the tensor data.
gguf::result<gguf::in_place_edit> plan_in_place_edit(const gguf::model& m, const gguf::metadata_edit_plan& plan);

}  // namespace minfer::toolbox
