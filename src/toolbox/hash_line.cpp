#include "minfer/toolbox/hash_line.hpp"

namespace minfer::toolbox {

std::string hash_line(check::hash_kind kind, std::string_view hex, std::string_view name, std::string_view status) {
    std::string s(check::to_string(kind));
    if (s.size() < 8) s.append(8 - s.size(), ' ');
    s.append("  ").append(hex).append("  ").append(name);
    if (!status.empty()) s.append("  -  ").append(status);
    return s;
}

}  // namespace minfer::toolbox
