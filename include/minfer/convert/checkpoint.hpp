#pragma once
// checkpoint: the weights of a Hugging Face checkpoint directory, every shard opened and verified, as
// one list of tensors.
//
// Which files, as convert_hf_to_gguf.py finds them (conversion/base.py, ModelBase.index_tensors and
// get_model_part_names):
//   - with model.safetensors.index.json: the shards its weight_map names (tensor → file name), sorted
//     by name; every tensor of the map must be in the shard it names, and every tensor of a shard must
//     be in the map, under that shard (the reference compares the two sets of names; this reader also
//     checks the shard each tensor is said to be in, so a tensor in two shards is refused instead of
//     taken from whichever comes last);
//   - without it: every file of the directory whose name starts with "model" and ends with
//     ".safetensors", sorted by name (model.safetensors, or model-00001-of-00003.safetensors …); a
//     tensor in two of them is refused (the reference would keep the last one silently).
// Shard names from an index are bare file names in the directory: one with '/', '\', NUL, or that is
// "." or "..", is refused (path traversal), so is a shard that does not exist or is not a regular
// file (a symbolic link to one is followed, as in the Hugging Face cache). PyTorch pickles
// (pytorch_model*.bin) are never read.
//
// Order: the shards in that order, and within a shard its tensors by name (the order the reference
// reads them in: safetensors' Python binding sorts the names of a file).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/safetensors.hpp"
#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// The index above this is refused (the largest real ones, of 1T-parameter models, are a few MB).
inline constexpr std::uint64_t checkpoint_index_max_bytes = 100'000'000;

/// The index's file name, and the prefix and suffix of shards found without it.
inline constexpr std::string_view checkpoint_index_name = "model.safetensors.index.json";

struct checkpoint_tensor {
    const tensor_entry* entry = nullptr;  ///< in shards()[shard].tensors()
    std::uint32_t shard = 0;
    std::string_view name() const noexcept { return entry->name; }
};

class checkpoint {
public:
    /// Find, open and verify the weights of `directory`. @returns codes::no_weights, codes::bad_checkpoint_index,
    /// codes::bad_safetensors (a shard), io_error (file = what could not be read), out_of_memory.
    static gguf::result<checkpoint> open(const std::filesystem::path& directory,
                                         gguf::load_mode mode = gguf::load_mode::map) noexcept;

    checkpoint(checkpoint&&) noexcept = default;
    checkpoint& operator=(checkpoint&&) noexcept = default;

    const std::filesystem::path& directory() const noexcept { return directory_; }
    /// Whether the shards came from model.safetensors.index.json.
    bool indexed() const noexcept { return indexed_; }

    /// The shards, in the reference's order (sorted by file name).
    std::span<const safetensors_file> shards() const& noexcept MINFER_LIFETIMEBOUND { return shards_; }
    /// Every tensor: shard by shard, by name within a shard.
    std::span<const checkpoint_tensor> tensors() const& noexcept MINFER_LIFETIMEBOUND { return tensors_; }
    /// The tensor called `name`, or nullptr.
    const checkpoint_tensor* find(std::string_view name) const noexcept MINFER_LIFETIMEBOUND;

    /// The bytes of a tensor of this checkpoint: a view into its shard's mapping.
    std::span<const std::byte> tensor_data(const checkpoint_tensor& t) const& noexcept MINFER_LIFETIMEBOUND;
    std::span<const std::byte> tensor_data(const checkpoint_tensor& t) const&& = delete;

    /// codes::unsupported_dtype for the first tensor (in tensors() order) the converter cannot read.
    gguf::result<void> check_convertible() const noexcept;

private:
    checkpoint() = default;
    friend class checkpoint_loader;

    std::filesystem::path directory_;
    bool indexed_ = false;
    std::vector<safetensors_file> shards_;
    std::vector<checkpoint_tensor> tensors_;
    std::vector<std::uint32_t> by_name_;  // indices into tensors_
};

/// The shard file names the index at `index_path` (a model.safetensors.index.json) names, sorted by name
/// (the order checkpoint::open opens them), the index read and checked as checkpoint::open reads it (bare
/// file names only). For a reader that must fetch the shards before the checkpoint is opened
/// (toolbox::convert of a URL). @returns codes::bad_checkpoint_index, io_error, out_of_memory.
gguf::result<std::vector<std::string>> checkpoint_shard_names(const std::filesystem::path& index_path) noexcept;

}  // namespace minfer::convert
