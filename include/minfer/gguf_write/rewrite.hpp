#pragma once
// rewrite: the one engine behind edit, split and merge. A model plus a list of metadata changes
// plus a selection of its tensors becomes a writer (plan.hpp lays it out, writer.hpp streams it):
// the model's metadata records in file order with the changes applied, then the selected tensors,
// each a kernel-copied range of the model's own file (model_source.hpp). Tensor infos and bytes are
// reused exactly; only metadata changes. Changes apply in order:
//   set     an existing key keeps its position and takes the new type and value; a new key goes last
//   erase   the key goes (absent: nothing happens, so `erase` of split.* is safe on any file)
//   erase_prefix  every key starting with the prefix goes (a new chat template drops every
//           tokenizer.chat_template* key, as gguf_new_metadata does)
// Every check of the loader's rules happens in writer::make_plan(), before any byte is written.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::gguf {

/// One change to a model's metadata.
struct metadata_change {
    enum class op : std::uint8_t { set, erase, erase_prefix };
    op what = op::set;
    std::string key;  ///< the key, or the prefix for erase_prefix
    value_type type = value_type::u8;
    std::vector<std::byte> value;  ///< set: the bytes stored after the type tag (writer::set_encoded)

    static metadata_change erase(std::string key);
    static metadata_change erase_prefix(std::string prefix);
    static metadata_change set_encoded(std::string key, value_type type, std::vector<std::byte> value);
    static metadata_change set_u16(std::string key, std::uint16_t v);
    static metadata_change set_i32(std::string key, std::int32_t v);
    static metadata_change set_u32(std::string key, std::uint32_t v);
    static metadata_change set_string(std::string key, std::string_view v);
};

/// A writer holding `m`'s metadata (part 1's records, in order) with `changes` applied, and the
/// tensors `tensors` (handles of `m`, in the order given) as sources from `src`, which must have been
/// opened on `m` and outlive the writer's write(). @returns out_of_memory only: every rule is checked
/// when the writer plans.
result<writer> rewrite(const model& m, const model_source& src, std::span<const metadata_change> changes,
                       std::span<const tensor_ref> tensors) noexcept;

}  // namespace minfer::gguf
