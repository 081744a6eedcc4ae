// PROVISIONAL
#include "minfer/convert/model_metadata.hpp"
namespace minfer::convert {
gguf::result<std::vector<vocab_key>> general_metadata(const std::filesystem::path& dir, const hf_config& config,
                                                      const parameter_counts&, const metadata_options& options) noexcept {
    std::vector<vocab_key> k;
    k.push_back({"general.architecture", std::string(gguf_name(config.arch))});
    k.push_back({"general.type", std::string("model")});
    k.push_back({"general.name", options.model_name.value_or(dir.filename().string())});
    return k;
}
}  // namespace minfer::convert
