#pragma once
// The converter's one way of reading a whole small input file (config.json, tokenizer.json,
// tokenizer.model, the model card, the tokenizer's side files): gguf::read_capped with the
// converter's error for a file above its cap. Internal to minfer::convert.
#include <cstdint>
#include <filesystem>
#include <string>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert::detail {

enum class when_missing : std::uint8_t {
    io_error,  ///< a missing file stays io_error (ENOENT): the caller decides what absence means
    refuse,    ///< a missing file is `code` too ("the file is missing"): a file the checkpoint needs
};

/// All of `path`, at most `cap` bytes. A larger file is `code` (section file, detail "larger than
/// CAP bytes", expected = cap, found = its size); other failures as gguf::read_capped gives them
/// (io_error with sys_errno, out_of_memory), a missing file as `missing` says. Never throws.
gguf::result<std::string> read_capped_file(const std::filesystem::path& path, std::uint64_t cap, gguf::errc code,
                                           when_missing missing = when_missing::io_error) noexcept;

}  // namespace minfer::convert::detail
