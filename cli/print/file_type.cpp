#include "file_type.hpp"

#include <array>
#include <string_view>

namespace minfer::cli {
namespace {

struct ftype_entry {
    std::int64_t id;
    std::string_view name;     ///< llama.h's enum llama_ftype, without LLAMA_FTYPE_
    std::string_view display;  ///< what llama.cpp prints for it (llama_model_ftype_name)
};

// From llama.cpp include/llama.h (enum llama_ftype) and src/llama-model-loader.cpp
// (llama_model_ftype_name). Ids 5 and 6 were never in GGUF files; 33..35 were removed.
constexpr std::array<ftype_entry, 39> table{{
    {0, "ALL_F32", "all F32"},
    {1, "MOSTLY_F16", "F16"},
    {2, "MOSTLY_Q4_0", "Q4_0"},
    {3, "MOSTLY_Q4_1", "Q4_1"},
    {4, "MOSTLY_Q4_1_SOME_F16", "Q4_1, some F16"},
    {7, "MOSTLY_Q8_0", "Q8_0"},
    {8, "MOSTLY_Q5_0", "Q5_0"},
    {9, "MOSTLY_Q5_1", "Q5_1"},
    {10, "MOSTLY_Q2_K", "Q2_K - Medium"},
    {11, "MOSTLY_Q3_K_S", "Q3_K - Small"},
    {12, "MOSTLY_Q3_K_M", "Q3_K - Medium"},
    {13, "MOSTLY_Q3_K_L", "Q3_K - Large"},
    {14, "MOSTLY_Q4_K_S", "Q4_K - Small"},
    {15, "MOSTLY_Q4_K_M", "Q4_K - Medium"},
    {16, "MOSTLY_Q5_K_S", "Q5_K - Small"},
    {17, "MOSTLY_Q5_K_M", "Q5_K - Medium"},
    {18, "MOSTLY_Q6_K", "Q6_K"},
    {19, "MOSTLY_IQ2_XXS", "IQ2_XXS - 2.0625 bpw"},
    {20, "MOSTLY_IQ2_XS", "IQ2_XS - 2.3125 bpw"},
    {21, "MOSTLY_Q2_K_S", "Q2_K - Small"},
    {22, "MOSTLY_IQ3_XS", "IQ3_XS - 3.3 bpw"},
    {23, "MOSTLY_IQ3_XXS", "IQ3_XXS - 3.0625 bpw"},
    {24, "MOSTLY_IQ1_S", "IQ1_S - 1.5625 bpw"},
    {25, "MOSTLY_IQ4_NL", "IQ4_NL - 4.5 bpw"},
    {26, "MOSTLY_IQ3_S", "IQ3_S - 3.4375 bpw"},
    {27, "MOSTLY_IQ3_M", "IQ3_S mix - 3.66 bpw"},
    {28, "MOSTLY_IQ2_S", "IQ2_S - 2.5 bpw"},
    {29, "MOSTLY_IQ2_M", "IQ2_M - 2.7 bpw"},
    {30, "MOSTLY_IQ4_XS", "IQ4_XS - 4.25 bpw"},
    {31, "MOSTLY_IQ1_M", "IQ1_M - 1.75 bpw"},
    {32, "MOSTLY_BF16", "BF16"},
    {33, "MOSTLY_Q4_0_4_4", "Q4_0_4_4, removed"},
    {34, "MOSTLY_Q4_0_4_8", "Q4_0_4_8, removed"},
    {35, "MOSTLY_Q4_0_8_8", "Q4_0_8_8, removed"},
    {36, "MOSTLY_TQ1_0", "TQ1_0 - 1.69 bpw ternary"},
    {37, "MOSTLY_TQ2_0", "TQ2_0 - 2.06 bpw ternary"},
    {38, "MOSTLY_MXFP4_MOE", "MXFP4 MoE"},
    {39, "MOSTLY_NVFP4", "NVFP4"},
    {40, "MOSTLY_Q1_0", "Q1_0"},
}};

constexpr std::int64_t guessed_flag = 1024;  // LLAMA_FTYPE_GUESSED: not stored by converters, but harmless

}  // namespace

std::string file_type_name(std::int64_t ftype) {
    const bool guessed = ftype >= guessed_flag && (ftype & guessed_flag) != 0;
    const std::int64_t id = guessed ? (ftype & ~guessed_flag) : ftype;
    for (const ftype_entry& e : table) {
        if (e.id == id) {
            std::string s(e.name);
            s += " (";
            s += e.display;
            s += guessed ? ", guessed)" : ")";
            return s;
        }
    }
    return "unknown";
}

}  // namespace minfer::cli
