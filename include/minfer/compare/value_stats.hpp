#pragma once
// compare::value_stats: summary statistics of a tensor's values, fed chunk by chunk (a bounded buffer of dequantized
// values), so a tensor of any size is summarised in one pass with constant memory.
//
// Numerics: each chunk is summed in double and its squared deviations are taken from the chunk's
// own mean (two passes over the chunk, which is in cache); chunks are then combined with Chan et
// al.'s pairwise update of (count, mean, M2). This avoids both the cancellation of sum(x^2) -
// n*mean^2 and the per-value division of Welford's update.
#include <cstdint>
#include <limits>
#include <span>

namespace minfer::compare {

class value_stats {
public:
    /// Add values whose flat (ggml element order) index starts at `first_index`.
    void add(std::span<const float> values, std::uint64_t first_index) noexcept;

    std::uint64_t count() const noexcept { return count_; }    ///< every value added
    std::uint64_t finite() const noexcept { return finite_; }  ///< of which finite: min..stddev are over these
    std::uint64_t zeros() const noexcept { return zeros_; }    ///< +0 and -0
    std::uint64_t nans() const noexcept { return nans_; }
    std::uint64_t infs() const noexcept { return infs_; }      ///< +inf and -inf
    /// Flat index of the first NaN; meaningful when nans() > 0.
    std::uint64_t first_nan() const noexcept { return first_nan_; }
    /// Over the finite values; meaningful when finite() > 0.
    float min() const noexcept { return min_; }
    float max() const noexcept { return max_; }
    float max_abs() const noexcept { return max_abs_; }
    double mean() const noexcept { return mean_; }
    /// Population standard deviation (divides by the count, as numpy's std() does).
    double stddev() const noexcept;

private:
    std::uint64_t count_ = 0, finite_ = 0, zeros_ = 0, nans_ = 0, infs_ = 0;
    std::uint64_t first_nan_ = 0;
    float min_ = std::numeric_limits<float>::infinity();
    float max_ = -std::numeric_limits<float>::infinity();
    float max_abs_ = 0.0f;
    double mean_ = 0.0;
    double m2_ = 0.0;  // sum of squared deviations from the mean
};

}  // namespace minfer::compare
