#pragma once
// Close names for a name that does not exist ("did you mean …"), so a typo in a tensor name gets an
// answer instead of a dead end: candidates within a small edit distance, or that contain the name
// asked for (a fragment such as "attn_q" finds the tensors that have it).
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace minfer::cli {

/// Levenshtein distance (insert, delete, substitute: 1 each), ASCII case folded. Stops counting at
/// `limit` + 1 (returns limit + 1 for anything farther), so long unrelated names cost little.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit);

/// Up to `max` candidates close to `wanted`, closest first (ties by name): those within an edit
/// distance of max(2, |wanted| / 3), and those containing `wanted` (case folded). Empty when none is.
std::vector<std::string_view> close_names(std::string_view wanted, std::span<const std::string_view> candidates,
                                          std::size_t max = 5);

}  // namespace minfer::cli
