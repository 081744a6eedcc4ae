#pragma once
// gguf-py's SpecialVocab (gguf/vocab.py) for a checkpoint without tokenizer.json, as
// TextModel._set_vocab_sentencepiece uses it (no merges): special token ids from config.json,
// add_bos/add_eos/add_sep from tokenizer_config.json, the chat template from tokenizer_config.json,
// chat_template.jinja (+ additional_chat_templates/) or chat_template.json. The rules and the order of
// the keys are in minfer/convert/spm_vocab.hpp (step 3). Internal to minfer::convert; throws
// convert_failure and std::bad_alloc.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "tokenizer_files.hpp"

namespace minfer::convert::detail {

struct special_vocab_input {
    const std::filesystem::path& directory;
    const hf_config& config;
    const std::optional<json_file>& tokenizer_config;  ///< tokenizer_config.json, when it is a file
    std::uint32_t n_vocab;                             ///< ids at or above it are dropped
};

/// SpecialVocab(...).add_to_gguf(): append (or overwrite in place) its keys.
void add_special_vocab(const special_vocab_input& in, std::vector<vocab_key>& keys, std::vector<std::string>& warnings);

}  // namespace minfer::convert::detail
