#pragma once
// general.file_type: llama.cpp's llama_ftype, the quantization a model was made with as a whole.
#include <cstdint>
#include <string>

namespace minfer::cli {

/// "MOSTLY_Q4_K_M (Q4_K - Medium)" for 15: the enum name without its LLAMA_FTYPE_ prefix and the name
/// llama.cpp prints; "(guessed)" is added when the 1024 flag is set; "unknown" outside the table.
std::string file_type_name(std::int64_t ftype);

}  // namespace minfer::cli
