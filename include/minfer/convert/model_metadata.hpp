#pragma once
// PROVISIONAL (replaced by the convert-meta branch): the general.* keys.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {
struct parameter_counts {
    std::uint64_t total = 0, shared = 0, expert = 0;
    std::uint32_t expert_count = 0;
};
struct metadata_options {
    std::optional<std::string> model_name;
};
gguf::result<std::vector<vocab_key>> general_metadata(const std::filesystem::path& model_dir, const hf_config& config,
                                                      const parameter_counts& counts, const metadata_options& options) noexcept;
}  // namespace minfer::convert
