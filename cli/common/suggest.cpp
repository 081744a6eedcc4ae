#include "common/suggest.hpp"

#include <algorithm>
#include <utility>

namespace minfer::cli {
namespace {

char fold(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool contains_folded(std::string_view hay, std::string_view needle) {
    if (needle.empty() || needle.size() > hay.size()) return false;
    return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                       [](char x, char y) { return fold(x) == fold(y); }) != hay.end();
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
    const std::size_t far = limit + 1;
    const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
    if (gap > limit) return far;  // at least |len a - len b| edits
    // One row of the dynamic programme; a row whose minimum passes the limit ends the search.
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        std::size_t row_min = row[0];
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            const std::size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            row[j] = std::min({up + 1, row[j - 1] + 1, diag + cost});
            diag = up;
            row_min = std::min(row_min, row[j]);
        }
        if (row_min > limit) return far;
    }
    return std::min(row[b.size()], far);
}

std::vector<std::string_view> close_names(std::string_view wanted, std::span<const std::string_view> candidates,
                                          std::size_t max) {
    const std::size_t limit = std::max<std::size_t>(2, wanted.size() / 3);
    std::vector<std::pair<std::size_t, std::string_view>> found;
    for (std::string_view c : candidates) {
        std::size_t d = edit_distance(wanted, c, limit);
        if (d > limit) {
            if (!contains_folded(c, wanted)) continue;
            d = c.size() - wanted.size();  // a fragment: the fewer extra characters, the closer
        }
        found.emplace_back(d, c);
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.second == y.second; }),
                found.end());
    std::vector<std::string_view> names;
    for (std::size_t i = 0; i < found.size() && i < max; ++i) names.push_back(found[i].second);
    return names;
}

}  // namespace minfer::cli
