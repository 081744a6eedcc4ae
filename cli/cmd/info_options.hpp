#pragma once
// What `minfer info` was asked to do (filled by CLI11 in cmd/info.cpp, read by the printers).
#include <string>

namespace minfer::cli {

struct info_options {
    std::string path;
    std::string key;         ///< --key: print this one value raw, nothing else
    bool has_key = false;
    bool full = false;       ///< every array item, whole strings, the chat template as text
    bool json = false;       ///< one JSON document instead of text
    bool no_mmap = false;    ///< load_mode::read instead of mapping
    bool no_arrays = false;  ///< arrays as type and count only
    bool no_tensors = false; ///< no tensor table (totals stay)
};

}  // namespace minfer::cli
