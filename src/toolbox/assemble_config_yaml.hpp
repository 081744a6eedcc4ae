#pragma once
// Internal to the assembly config reader: untrusted YAML text into a bounded tree (a vector of nodes,
// no recursion to build or free it), through yaml-cpp's event parser. The caps, and why each, are in
// include/minfer/toolbox/assemble_config.hpp. Only this file's .cpp includes yaml-cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/error.hpp"

namespace minfer::toolbox::config_yaml {

struct node {
    enum class kind : std::uint8_t { null, scalar, sequence, map };
    kind type = kind::null;
    /// A scalar written in quotes or as a block scalar (| >): always a string in PyYAML's reading.
    /// A plain scalar is resolved by its text (see resolve()).
    bool quoted = false;
    std::uint64_t offset = 0;             ///< the node's first byte in the text
    std::string text;                     ///< a scalar's value
    std::vector<std::uint32_t> children;  ///< a sequence's items; a map's key, value, key, value, ...
};

struct document {
    std::vector<node> nodes;
    std::uint32_t root = 0;
    [[nodiscard]] const node& at(std::uint32_t i) const noexcept { return nodes[i]; }
};

/// What a refusal says: the caller turns it into a gguf::error with the config's file.
struct failure {
    gguf::errc code = gguf::errc::ok;
    std::uint64_t offset = 0;
    std::string subject;  ///< the key path where the parse was
    std::string detail;
    std::uint64_t expected = 0;
    std::uint64_t found = 0;
};

/// Parse one YAML document. On success `out` is the tree; otherwise `why` says what was refused.
/// Throws std::bad_alloc only.
bool parse(std::string_view text, document& out, failure& why);

/// What PyYAML's implicit resolver (YAML 1.1, yaml/resolver.py) makes of a plain scalar.
enum class plain_kind : std::uint8_t { null, boolean, integer, floating, timestamp, string };
plain_kind resolve(std::string_view plain) noexcept;
/// PyYAML's boolean words: true/false, yes/no, on/off (lower, Capitalised, UPPER).
bool bool_word(std::string_view plain, bool& value) noexcept;

}  // namespace minfer::toolbox::config_yaml
