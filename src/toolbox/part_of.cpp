#include "minfer/toolbox/part_of.hpp"

#include <sys/stat.h>

namespace minfer::toolbox {

std::optional<std::size_t> part_of(const gguf::model& m, const std::filesystem::path& path) {
    struct stat target {};
    if (::stat(path.c_str(), &target) != 0) return std::nullopt;
    for (std::size_t i = 0; i < m.parts().size(); ++i) {
        struct stat st {};
        if (::stat(m.parts()[i].path.c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino)
            return i;
    }
    return std::nullopt;
}

}  // namespace minfer::toolbox
