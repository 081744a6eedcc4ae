#pragma once
// Internal: the per-tensor figures of `minfer report`, each fed chunk by chunk in one pass.
//   value_histogram: 64 bins over the finite values without knowing their range first. The bins
//     have a power-of-two width and start at a multiple of it; a value outside them doubles the
//     width (pairs of bins merged, exactly) until it fits. So one pass, exact counts, and the bins
//     end within 2x of the tightest power-of-two covering of [min, max].
//   tensor_error: B against the reference A: compare::value_compare's RMSE, cosine and relative
//     error (the measures `minfer diff --values` prints), plus NMSE = sum (a-b)^2 / sum a^2, where
//     max |a-b| is (its flat index), and with importance weights w (one per column of each matrix,
//     as llama-quantize reads an imatrix entry) the weighted RMSE sqrt(sum w (a-b)^2 / sum w).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "minfer/compare/value_compare.hpp"

namespace minfer::toolbox::detail {

class value_histogram {
public:
    static constexpr std::size_t bins = 64;
    /// Add the finite values of `values` (NaN and infinities are counted elsewhere).
    void add(std::span<const float> values) noexcept;
    bool empty() const noexcept { return counts_.empty(); }
    double lo() const noexcept { return lo_; }
    double width() const noexcept { return width_; }
    /// The bins (empty before any finite value).
    const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }

private:
    void cover(double lo, double hi);
    double lo_ = 0, width_ = 0;
    std::vector<std::uint64_t> counts_;
};

class tensor_error {
public:
    /// n_per_row: ne[0]; rows_per_matrix: ne[1]; weights: n_per_row × matrices values, or empty.
    tensor_error(std::uint64_t n_per_row, std::uint64_t rows_per_matrix, std::span<const float> weights) noexcept
        : n_per_row_(n_per_row ? n_per_row : 1), per_matrix_((n_per_row ? n_per_row : 1) * (rows_per_matrix ? rows_per_matrix : 1)),
          weights_(weights) {}
    /// Reference values a and compared values b at flat indices [first, first + a.size()).
    void add(std::span<const float> a, std::span<const float> b, std::uint64_t first) noexcept;

    const compare::value_compare& measures() const noexcept { return vc_; }  ///< rmse, cosine, relative (|b-a|/|a|)
    std::optional<double> nmse() const noexcept;
    double max_abs() const noexcept { return max_abs_; }
    std::uint64_t max_abs_index() const noexcept { return max_index_; }
    std::optional<double> weighted_rmse() const noexcept;

private:
    std::uint64_t n_per_row_, per_matrix_;
    std::span<const float> weights_;
    compare::value_compare vc_;
    double sum_d2_ = 0, sum_a2_ = 0, max_abs_ = 0, wsum_d2_ = 0, wsum_ = 0;
    std::uint64_t max_index_ = 0;
    bool any_ = false;
};

}  // namespace minfer::toolbox::detail
