#include "minfer/compare/value_stats.hpp"

#include <cmath>

namespace minfer::compare {

void value_stats::add(std::span<const float> values, std::uint64_t first_index) noexcept {
    std::uint64_t n = 0;
    double sum = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const float x = values[i];
        if (std::isnan(x)) {
            if (nans_ == 0) first_nan_ = first_index + i;
            ++nans_;
            continue;
        }
        if (std::isinf(x)) {
            ++infs_;
            continue;
        }
        if (x == 0.0f) ++zeros_;
        if (x < min_) min_ = x;
        if (x > max_) max_ = x;
        const float a = std::fabs(x);
        if (a > max_abs_) max_abs_ = a;
        sum += static_cast<double>(x);
        ++n;
    }
    count_ += values.size();
    if (n == 0) return;
    const double chunk_mean = sum / static_cast<double>(n);
    double m2 = 0.0;
    for (const float x : values) {
        if (!std::isfinite(x)) continue;
        const double d = static_cast<double>(x) - chunk_mean;
        m2 += d * d;
    }
    // Chan, Golub, LeVeque: combine (finite_, mean_, m2_) with the chunk's (n, chunk_mean, m2).
    const double na = static_cast<double>(finite_);
    const double nb = static_cast<double>(n);
    const double total = na + nb;
    const double delta = chunk_mean - mean_;
    mean_ += delta * (nb / total);
    m2_ += m2 + delta * delta * (na * nb / total);
    finite_ += n;
}

double value_stats::stddev() const noexcept {
    return finite_ == 0 ? 0.0 : std::sqrt(m2_ / static_cast<double>(finite_));
}

}  // namespace minfer::compare
