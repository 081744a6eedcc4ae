#pragma once
// Sizes and counts given as text (the CLI's split --split-max-size, edit --reserve, --max-fetch; the
// Python module's max_size, reserve, max_fetch as str): one syntax everywhere, exact integer
// arithmetic, and a message that says what is wrong.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minfer::toolbox {

/// A whole number (digits only: no sign, no space, no suffix); nullopt when not one or above 2^64-1.
std::optional<std::uint64_t> parse_count(std::string_view s);

/// SIZE: a number, optionally with a fraction, then a unit: none (bytes; no fraction), K M G T
/// (10^3 .. 10^12, as llama-gguf-split's M and G) or KiB MiB GiB TiB (2^10 .. 2^40), rounded down.
/// At least 1 byte. @returns the bytes, or nullopt with `why` saying what is wrong.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string& why);

}  // namespace minfer::toolbox
