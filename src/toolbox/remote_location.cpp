#include <cctype>

#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::toolbox {

bool names_remote_model(std::string_view location) noexcept {
    auto starts = [&](std::string_view scheme) {
        if (location.size() < scheme.size()) return false;
        for (std::size_t i = 0; i < scheme.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(location[i])) != scheme[i]) return false;
        return true;
    };
    return starts("http://") || starts("https://") || starts("hf://");
}

}  // namespace minfer::toolbox
