// The per-tensor figures of `minfer report` (report_values.hpp).
#include "report_values.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minfer::toolbox::detail {

void value_histogram::cover(double lo, double hi) {
    if (counts_.empty()) {
        // The smallest power of two w with 64 bins of it from floor(lo / w) * w past hi.
        const double span = hi - lo;
        const double mag = std::max(std::fabs(lo), std::fabs(hi));
        double w = span > 0 ? std::exp2(std::ceil(std::log2(span / bins))) : (mag > 0 ? std::exp2(std::floor(std::log2(mag)) - 10) : 0x1p-24);
        if (!(w > 0) || !std::isfinite(w)) w = 0x1p-24;
        while (std::floor(lo / w) * w + static_cast<double>(bins) * w <= hi) w *= 2;
        width_ = w;
        lo_ = std::floor(lo / w) * w;
        counts_.assign(bins, 0);
        return;
    }
    while (lo < lo_ || hi >= lo_ + static_cast<double>(bins) * width_) {
        // Double the width: bin i goes to (i + shift) / 2, where the new start is the old one or one
        // old bin before it (the start stays a multiple of the width).
        const double w2 = width_ * 2;
        const double new_lo = std::floor(lo_ / w2) * w2;
        const std::size_t shift = new_lo < lo_ ? 1 : 0;
        std::vector<std::uint64_t> merged(bins, 0);
        for (std::size_t i = 0; i < bins; ++i) merged[(i + shift) / 2] += counts_[i];
        counts_.swap(merged);
        lo_ = new_lo;
        width_ = w2;
        if (!std::isfinite(width_)) break;  // cannot happen for f32 values; never loop forever
    }
}

void value_histogram::add(std::span<const float> values) noexcept {
    // One pass for the chunk's range (v - v is 0 only for a finite v), then the counting: the values
    // are at or above the start, so truncation is the floor (no libm call), and four sets of counters
    // take consecutive values so that a run of one bin does not wait on its own increments.
    float mn = std::numeric_limits<float>::infinity(), mx = -std::numeric_limits<float>::infinity();
    bool all_finite = true;
    for (float v : values) {
        const bool finite = v - v == 0.0f;
        all_finite = all_finite && finite;
        if (finite) {
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
    }
    if (!(mn <= mx)) return;  // no finite value
    try {
        cover(mn, mx);
    } catch (...) {
        return;  // 64 counters could not be allocated: the histogram stays as it was
    }
    const double lo = lo_, inv = 1.0 / width_;
    auto bin = [&](float v) {
        const auto k = static_cast<std::size_t>((static_cast<double>(v) - lo) * inv);
        return k < bins ? k : bins - 1;
    };
    std::uint64_t c[4][bins] = {};
    std::size_t i = 0;
    const std::size_t n = values.size();
    if (all_finite) {
        for (; i + 4 <= n; i += 4) {
            ++c[0][bin(values[i])];
            ++c[1][bin(values[i + 1])];
            ++c[2][bin(values[i + 2])];
            ++c[3][bin(values[i + 3])];
        }
    }
    for (; i < n; ++i)
        if (values[i] - values[i] == 0.0f) ++c[0][bin(values[i])];
    for (std::size_t k = 0; k < bins; ++k) counts_[k] += c[0][k] + c[1][k] + c[2][k] + c[3][k];
}

void tensor_error::add(std::span<const float> a, std::span<const float> b, std::uint64_t first) noexcept {
    vc_.add(b, a);  // value_compare's reference is its second argument
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const float x = a[i], y = b[i];
        if (!std::isfinite(x) || !std::isfinite(y)) continue;
        const double d = static_cast<double>(y) - static_cast<double>(x);
        const double d2 = d * d;
        sum_d2_ += d2;
        sum_a2_ += static_cast<double>(x) * static_cast<double>(x);
        const double ad = std::fabs(d);
        if (!any_ || ad > max_abs_) {
            max_abs_ = ad;
            max_index_ = first + i;
            any_ = true;
        }
        if (!weights_.empty()) {
            const std::uint64_t flat = first + i;
            const std::uint64_t w_at = flat / per_matrix_ * n_per_row_ + flat % n_per_row_;
            if (w_at < weights_.size()) {
                const double w = weights_[static_cast<std::size_t>(w_at)];
                wsum_d2_ += w * d2;
                wsum_ += w;
            }
        }
    }
}

std::optional<double> tensor_error::nmse() const noexcept {
    if (!(sum_a2_ > 0)) return std::nullopt;
    return sum_d2_ / sum_a2_;
}

std::optional<double> tensor_error::weighted_rmse() const noexcept {
    if (weights_.empty() || !(wsum_ > 0)) return std::nullopt;
    return std::sqrt(wsum_d2_ / wsum_);
}

}  // namespace minfer::toolbox::detail
