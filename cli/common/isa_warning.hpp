#pragma once
// The commands that read values say so on stderr when MINFER_QUANT_ISA was not followed as written (a
// typo, or a set this CPU lacks): the library only records why.
#include <cstdio>
#include <string_view>

#include "minfer/quant/isa.hpp"

namespace minfer::cli {

inline void warn_about_isa_choice() {
    const std::string_view note = quant::isa_env_note();
    if (!note.empty()) std::fprintf(stderr, "Warning: %.*s\n", static_cast<int>(note.size()), note.data());
}

}  // namespace minfer::cli
