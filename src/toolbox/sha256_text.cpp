#include "minfer/toolbox/sha256_text.hpp"

#include <cctype>

namespace minfer::toolbox {

std::optional<check::digest> parse_sha256(std::string_view text, std::string* why) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto d = check::parse_digest(check::hash_kind::sha256, lower, why);
    // The parser's words are for manifests ("not a lowercase hexadecimal digit"); here case is free.
    if (!d && why != nullptr)
        if (const auto at = why->find("lowercase "); at != std::string::npos) why->erase(at, 10);
    return d;
}

}  // namespace minfer::toolbox
