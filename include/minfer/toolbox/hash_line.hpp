#pragma once
// One line of llama-gguf-hash's output, which `minfer hash` and the Python module's hash() reproduce
// byte for byte (so that a saved output is a manifest llama-gguf-hash can --check, and the reverse).
#include <string>
#include <string_view>

#include "minfer/check/digest.hpp"

namespace minfer::toolbox {

/// "%-8s  %s  %s": the kind's name padded to 8, the hex digest, the name (a file, or file:tensor),
/// and in check mode "  -  <status>" after it. No newline. `name` is written as its bytes.
std::string hash_line(check::hash_kind kind, std::string_view hex, std::string_view name, std::string_view status = {});

}  // namespace minfer::toolbox
