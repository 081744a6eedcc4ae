#pragma once
// How far two tensors' values are apart (a quantization against its source): max |a-b|, RMSE,
// cosine similarity and relative error, fed chunk by chunk like value_stats, in double.
//
// Only pairs where both values are finite enter the sums; a pair where both are NaN, or both the
// same infinity, counts as equal; any other pair with a NaN or an infinity is counted in
// non_finite_mismatches() (and makes the tensors differ).
#include <cstdint>
#include <optional>
#include <span>

namespace minfer::compare {

/// The first pair that is a NaN/Inf mismatch: its position among the pairs added, and both values.
struct non_finite_pair {
    std::uint64_t index = 0;
    float a = 0, b = 0;
};

class value_compare {
public:
    /// Add pairs a[i], b[i] (same length).
    void add(std::span<const float> a, std::span<const float> b) noexcept;

    std::uint64_t count() const noexcept { return count_; }        ///< pairs added
    std::uint64_t compared() const noexcept { return compared_; }  ///< pairs of finite values
    std::uint64_t non_finite_mismatches() const noexcept { return non_finite_mismatches_; }
    /// The first NaN/Inf mismatch (nullopt when there is none): what a report leads with, since
    /// the measures below see only the finite pairs and can read "identical" around it.
    std::optional<non_finite_pair> first_non_finite_mismatch() const noexcept { return first_mismatch_; }
    /// max |a - b| over the finite pairs (0 when none).
    double max_abs_diff() const noexcept { return max_abs_diff_; }
    /// sqrt(mean((a - b)^2)) over the finite pairs (0 when none).
    double rmse() const noexcept;
    /// a.b / (|a| |b|); nullopt when either norm is 0.
    std::optional<double> cosine() const noexcept;
    /// |a - b| / |b| (B is the reference); 0 when both are 0, nullopt when only |b| is.
    std::optional<double> relative_error() const noexcept;

private:
    std::uint64_t count_ = 0, compared_ = 0, non_finite_mismatches_ = 0;
    double max_abs_diff_ = 0.0;
    std::optional<non_finite_pair> first_mismatch_;
    double sum_d2_ = 0.0, dot_ = 0.0, sum_a2_ = 0.0, sum_b2_ = 0.0;
};

}  // namespace minfer::compare
