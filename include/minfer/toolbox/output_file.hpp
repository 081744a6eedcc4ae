#pragma once
// One file a model-writing command wrote (or, in a dry run, would write): prune's and assemble's
// reports list their outputs as these.
#include <cstdint>
#include <filesystem>

namespace minfer::toolbox {

struct output_file {
    std::filesystem::path path;
    std::uint64_t file_size = 0;  ///< exact: header, metadata, tensor table, padding and data
    std::uint32_t tensor_count = 0;
};

}  // namespace minfer::toolbox
