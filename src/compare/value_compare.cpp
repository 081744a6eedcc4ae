#include "minfer/compare/value_compare.hpp"

#include <cmath>

namespace minfer::compare {

void value_compare::add(std::span<const float> a, std::span<const float> b) noexcept {
    // Per-chunk partial sums, added to the totals once: the totals then grow by few large terms,
    // not by millions of small ones.
    double d2 = 0.0, dot = 0.0, a2 = 0.0, b2 = 0.0;
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) {
        const float x = a[i];
        const float y = b[i];
        if (!std::isfinite(x) || !std::isfinite(y)) {
            const bool same = (std::isnan(x) && std::isnan(y)) || (std::isinf(x) && x == y);
            if (!same && non_finite_mismatches_++ == 0) first_mismatch_ = non_finite_pair{count_ + i, x, y};
            continue;
        }
        const double dx = x;
        const double dy = y;
        const double d = dx - dy;
        if (std::fabs(d) > max_abs_diff_) max_abs_diff_ = std::fabs(d);
        d2 += d * d;
        dot += dx * dy;
        a2 += dx * dx;
        b2 += dy * dy;
        ++compared_;
    }
    count_ += n;
    sum_d2_ += d2;
    dot_ += dot;
    sum_a2_ += a2;
    sum_b2_ += b2;
}

double value_compare::rmse() const noexcept {
    return compared_ == 0 ? 0.0 : std::sqrt(sum_d2_ / static_cast<double>(compared_));
}

std::optional<double> value_compare::cosine() const noexcept {
    if (sum_a2_ == 0.0 || sum_b2_ == 0.0) return std::nullopt;
    return dot_ / (std::sqrt(sum_a2_) * std::sqrt(sum_b2_));
}

std::optional<double> value_compare::relative_error() const noexcept {
    if (sum_b2_ == 0.0) {
        if (sum_d2_ == 0.0) return 0.0;
        return std::nullopt;
    }
    return std::sqrt(sum_d2_) / std::sqrt(sum_b2_);
}

}  // namespace minfer::compare
