#pragma once
// model: the handle the load stage hands to every later stage. It owns the mapping of every part
// (RAII; move-only), the verified view of each, and one merged tensor index. Part 1's metadata is
// the model's metadata. Every view it returns lives as long as the model; view accessors are
// deleted on rvalues so a view of a temporary model does not compile.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

class source_opener;

struct open_options {
    load_mode mode = load_mode::map;
    limits caps{};  ///< the parse caps, for every part
};

/// One file of a model.
struct model_part {
    std::filesystem::path path;  ///< as opened: a path, or a URL for a remote model
    mapped_file file;            ///< the bytes held: the whole file, or a remote file's head
    file_view view;              ///< view.file_size() is the whole file's size either way

    /// Bytes after the padded end of the data section (for a file without tensors: after the
    /// tensor table); 0 when the file ends at that point or inside the last tensor's padding.
    /// Information, not an error: llama.cpp loads such files too.
    std::uint64_t trailing_bytes() const noexcept;
};

/// A tensor of the merged index: its info and the part (0-based) whose file holds it.
struct tensor_ref {
    const tensor_info* info;
    std::uint32_t part;
};

class model {
public:
    /// Open a model. The file decides, not its name (as in llama.cpp's loader): a file whose
    /// split.count is absent, 0 or 1 is a single model whatever it is called; a file with
    /// split.count N > 1 must have split.no 0 (else split_not_first) and be named
    /// <prefix>-00001-of-<N>.gguf (else split_bad_name / split_count_mismatch); parts 2..N are then
    /// found beside it by that name, opened, mapped, verified and checked (split.count, split.no,
    /// general.architecture, split.tensors.count, no tensor in two parts).
    /// @returns the first error found, with file (the part's own path) and, once the set is known,
    /// part set: io_error, split_* codes, or any parse error of file_view::parse. Only a part that
    /// does not exist (ENOENT) is split_part_missing; any other failure to read it is io_error.
    static result<model> open(const std::filesystem::path& path, const open_options& options = {}) noexcept;
    /// The same over any source_opener (byte_source.hpp): the entry at `entry_location`, the
    /// parts of a set at opener.sibling(entry, part name). open(path) is this with a file_opener.
    /// A remote opener gives heads only: each part's view is then not complete() and tensor_data()
    /// is empty for tensors outside the head. options.mode is the file_opener's; a caller's opener
    /// decides for itself.
    static result<model> open(source_opener& opener, const std::string& entry_location,
                              const open_options& options = {}) noexcept;

    /// An empty model: no parts, no tensors, no metadata (every accessor answers "absent"). What a
    /// moved-from model is, and what apply_in_place leaves of the model an edit was planned from.
    model() noexcept = default;
    model(model&&) noexcept = default;
    model& operator=(model&&) noexcept = default;
    model(const model&) = delete;
    model& operator=(const model&) = delete;

    /// The parts, in order; parts()[0] is the entry.
    std::span<const model_part> parts() const& noexcept MINFER_LIFETIMEBOUND { return parts_; }
    std::span<const model_part> parts() const&& = delete;
    /// Part 1's view: the model's metadata and format facts (an empty view for an empty model).
    const file_view& metadata() const& noexcept MINFER_LIFETIMEBOUND {
        return parts_.empty() ? empty_view() : parts_.front().view;
    }
    const file_view& metadata() const&& = delete;
    /// The path the model was opened with (part 1's; empty for an empty model).
    const std::filesystem::path& path() const& noexcept MINFER_LIFETIMEBOUND {
        return parts_.empty() ? empty_path() : parts_.front().path;
    }
    const std::filesystem::path& path() const&& = delete;
    /// Sum of the sizes of all part files (each part's file_size(): the whole file, also for a head).
    std::uint64_t file_bytes() const noexcept;
    /// Whether every part's bytes are held whole. A model opened from heads (a remote opener) is
    /// not: its tensor_data() is empty past the head. Every library function that reads tensor
    /// bytes checks this and refuses an incomplete model with model_incomplete (require_complete).
    bool complete() const noexcept;
    /// ok, or model_incomplete naming the first part whose bytes are not all held.
    result<void> require_complete() const noexcept;

    /// A metadata entry of part 1; nullptr when absent.
    const kv* find(std::string_view key) const& noexcept MINFER_LIFETIMEBOUND { return metadata().find(key); }
    const kv* find(std::string_view key) const&& = delete;
    /// A metadata value as T. @returns key_not_found or type_mismatch (never aborts).
    template <class T>
    result<T> get(std::string_view key) const& noexcept { return metadata().get<T>(key); }
    template <class T>
    result<T> get(std::string_view key) const&& = delete;
    /// A number of any stored width as T, range-checked (file_view::get_as).
    template <class T>
    result<T> get_as(std::string_view key) const& noexcept { return metadata().get_as<T>(key); }
    template <class T>
    result<T> get_as(std::string_view key) const&& = delete;
    /// `fallback` when absent, else as get_as / get (file_view::get_or).
    template <class T>
    result<T> get_or(std::string_view key, T fallback) const& noexcept { return metadata().get_or<T>(key, fallback); }
    /// Deleted on a temporary model as every accessor that can return a view (get_or<std::string_view>
    /// would point into the mapping of a model destroyed at the end of the statement).
    template <class T>
    result<T> get_or(std::string_view key, T fallback) const&& = delete;
    /// Part 1's entries whose key starts with `prefix`, in file order.
    kv_prefix_range with_prefix(std::string_view prefix) const& noexcept MINFER_LIFETIMEBOUND {
        return metadata().with_prefix(prefix);
    }
    kv_prefix_range with_prefix(std::string_view prefix) const&& = delete;

    /// Every tensor of every part, part by part in file order.
    std::span<const tensor_ref> tensors() const& noexcept MINFER_LIFETIMEBOUND { return tensors_; }
    std::span<const tensor_ref> tensors() const&& = delete;
    /// O(1) lookup in the merged index; nullptr when absent.
    const tensor_ref* find_tensor(std::string_view name) const& noexcept MINFER_LIFETIMEBOUND;
    const tensor_ref* find_tensor(std::string_view name) const&& = delete;
    /// The bytes of a tensor, inside its part's mapping. `t` must come from this model; a handle
    /// of another model (or one altered by hand) gets an empty span, never a read out of bounds.
    std::span<const std::byte> tensor_data(const tensor_ref& t) const& noexcept MINFER_LIFETIMEBOUND {
        if (t.part >= parts_.size() || t.info == nullptr) return {};
        return parts_[t.part].view.tensor_data(*t.info);  // checks that the info is that part's
    }
    std::span<const std::byte> tensor_data(const tensor_ref& t) const&& = delete;

private:
    static const file_view& empty_view() noexcept;
    static const std::filesystem::path& empty_path() noexcept;

    std::vector<model_part> parts_;
    std::vector<tensor_ref> tensors_;
    detail::name_index tensor_index_;
};

}  // namespace minfer::gguf
