#pragma once
// A SHA-256 given on the command line (`hash --expect`, `verify --file-sha256`): 64 hex digits in
// either case, as sha256sum prints them (lowercase) or as a web page may show them (uppercase). Both
// commands read it here so they accept the same forms. (A manifest's hashes stay exact lowercase, as
// llama-gguf-hash compares them as strings.)
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "minfer/check/digest.hpp"

namespace minfer::cli {

inline std::optional<check::digest> parse_sha256_arg(std::string_view text, std::string* why) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto d = check::parse_digest(check::hash_kind::sha256, lower, why);
    // The parser's words are for manifests ("not a lowercase hexadecimal digit"); here case is free.
    if (!d && why != nullptr)
        if (const auto at = why->find("lowercase "); at != std::string::npos) why->erase(at, 10);
    return d;
}

/// What the options' messages say a SHA-256 is.
inline constexpr std::string_view sha256_form = "a SHA-256 is 64 hexadecimal digits, either case";

}  // namespace minfer::cli
