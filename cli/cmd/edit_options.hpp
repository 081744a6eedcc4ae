#pragma once
// What `minfer edit` was asked to do (filled by CLI11 in cmd/edit.cpp). The changes themselves are
// read back from the parse order, so they apply in the order they were given.
#include <string>
#include <vector>

namespace minfer::cli {

struct edit_options {
    std::string path;     ///< the model (a file, or part 1 of a split set)
    std::string output;   ///< -o: the new file
    std::string recover;  ///< --recover FILE
    std::string discard_journal;  ///< --discard-journal FILE
    std::string reserve;  ///< --reserve SIZE: room for later in-place edits (-o only)
    bool dry_run = false;
    bool force = false;
    bool in_place = false;
    bool quiet = false;
    bool allow_type_change = false;  ///< --allow-type-change: a key may get a type other than the one it must keep
    // Storage CLI11 fills; edit.cpp walks them in command-line order.
    std::vector<std::string> sets, deletes, special_tokens;
    std::string name, description, chat_template, chat_template_file;
};

}  // namespace minfer::cli
