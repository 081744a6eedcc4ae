#pragma once
// The arithmetic of `minfer assemble`'s merges: mergekit's linear, slerp, task_arithmetic and ties
// methods on one tensor whose sources have been dequantized exactly to f32, streamed in blocks of
// values (whole rows, in order) in bounded memory: O(1) per model plus, while ties' magnitude
// selection is unresolved, a fixed histogram of 2048 buckets per sparsified model (16 KiB of counts,
// and 16 KiB of sums with rescale); never the tensor.
//
// The reference is mergekit (github.com/arcee-ai/mergekit, read at a6e4028, June 2026). Each formula
// below names its file and function there. Every source value x is an f32; "f32(e)" is e rounded to
// f32 (round to nearest even); everything else is computed in double and rounded to f32 once, at the
// end. tests/tools/mergekit_reference.py is an independent numpy translation of the same code
// (float64), which tests/unit/test_merge_math.cpp compares with this one.
//
// ## linear (mergekit/merge_methods/linear.py, LinearMergeTask.execute)
//     out = f32( sum_i w_i * x_i )                       normalize = false
//     out = f32( (sum_i w_i * x_i) / (sum_i w_i) )       normalize = true (mergekit's default)
// Every model takes part; `base` is not used. mergekit divides by a zero sum (inf/NaN); here a zero
// sum of weights with normalize is refused (bad_value_text, subject "weight").
//
// ## slerp (mergekit/merge_methods/slerp.py, SlerpTask.execute and slerp(); DOT_THRESHOLD = 0.9995,
// eps = 1e-8 are slerp()'s defaults, which SlerpTask never changes)
// Exactly two models, v0 = the base model, v1 = the other (SlerpTask swaps them so that the base is
// v0); one model alone is returned unchanged (SlerpTask: len(tensors) == 1). Over the whole tensor,
// flattened:
//     n0 = ||v0||, n1 = ||v1||                            (np.linalg.norm of the flattened tensor)
//     s0 = n0 if n0 > 1e-8 else 1, s1 likewise           (normalize(): v / ||v|| only when ||v|| > eps)
//     dot = sum_j (v0_j / s0) * (v1_j / s1)              computed here as (sum_j v0_j v1_j) / (s0 s1)
//     |dot| > 0.9995:  c0 = 1 - t, c1 = t                 (lerp: "vectors are ~colinear")
//     otherwise:       theta = arccos(dot), c0 = sin(theta - theta t) / sin(theta), c1 = sin(theta t) / sin(theta)
//     out_j = f32( c0 * v0_j + c1 * v1_j )
// So opposite tensors (dot = -1) are lerped too, and a zero tensor (n = 0 <= eps, left unnormalised,
// dot = 0) gives theta = pi/2: out = cos(t pi/2) v0 + sin(t pi/2) v1. mergekit never checks t (its
// docstring says 0..1; any number is computed, extrapolating): any finite t is accepted, a NaN or
// infinite t is refused (bad_value_text, subject "t"). t = 0 gives v0 and t = 1 gives v1 exactly
// (c0, c1 are then exactly 1 and 0, or 0 and 1). One statistics pass (the three sums).
//
// ## task_arithmetic and ties (mergekit/merge_methods/generalized_task_arithmetic.py, GTATask.execute,
// get_task_vectors, get_mask; mergekit/sparsify.py, magnitude and rescaled_masked_tensor; the two
// methods' definitions in mergekit/merge_methods/registry.py)
// With b = the base model's value and i over the other models, in their order:
//     d_i = f32(x_i - b)                                  (get_task_vectors: delta = x - base, in the
//                                                          tensors' dtype: f32 for minfer's inputs)
// task_arithmetic (no sparsification, no consensus; normalize defaults to false):
//     m = sum_i w_i d_i
//     D = sum_i w_i; D = 1 where |D| < 1e-8               (GTATask: divisor[divisor.abs() < 1e-8] = 1)
//     m = m / D                                           only with normalize
//     m = m * lambda                                      (GTATask: only when lambda != 1; default 1)
//     out = f32(b + m)
// ties (sparsification "magnitude", consensus "sum"; normalize defaults to true, rescale to false):
//   1. magnitude(d_i, density_i) (sparsify.py), per model over the WHOLE tensor (density defaults to 1):
//        density >= 1: s_i = d_i (the tensor is returned as is: no mask, no rescale)
//        else: k = int(density * n) (truncation of the double product, as Python's int()); k = 0 is
//              refused (mergekit: assert k > 0); the k elements of largest |d_i| (as f32: w.float())
//              are kept: mask = 1 there, 0 elsewhere; s_i = d_i * mask
//              with rescale (rescale_norm = l1): B = sum |d_i|, A = sum |s_i|; unless B < 1e-7 or
//              A < 1e-7 (rescaled_masked_tensor's eps), s_i = s_i * (B / A)
//   2. wd_i = w_i * s_i
//   3. get_mask(method = "sum"): S = sum_i wd_i; majority = +1 if S >= 0 else -1;
//      mask_i = (sign(wd_i) == majority)  (sign(0) = 0: a zero or pruned delta never counts)
//   4. m = sum_i wd_i [mask_i];  D = sum_i w_i [mask_i];  D = 1 where D == 0 (exactly: ties' branch)
//   5. m = m / D with normalize;  m = m * lambda;  out = f32(b + m)
// int8_mask only changes the dtype mergekit holds the signs in (-1, 0, 1 are exact in any dtype): it
// has no effect on values, so it is accepted and ignored. With only the base model, out = b
// (GTATask: `if not tvs: return base`). density and rescale matter to ties only (task_arithmetic has
// no sparsification in mergekit, so they are ignored there); a density outside (0, 1] (or NaN) is
// refused for ties (bad_value_text, subject "density"); mergekit would treat a density above 1 as 1.
//
// ## Where mergekit is not deterministic, and what minfer chooses
// magnitude() keeps torch.argsort(|d|, descending=True)[:k]; argsort is not stable, so when several
// elements have the magnitude of the k-th, which of them are kept is unspecified. minfer keeps the
// elements of larger magnitude, and of those equal to the k-th's, the FIRST ones in index order (the
// tensor flattened in GGUF order: ne[0] fastest, which is torch's row-major order of the same matrix).
// tests/tools/mergekit_reference.py makes the same choice with a stable argsort. Magnitudes compare
// as f32 bit patterns with the sign cleared, which orders finite values as numbers (+0 and -0 are one
// key) and puts NaN above infinity (torch's sort puts NaN first in descending order too).
//
// ## Where the result can differ from mergekit's in the last bits
// mergekit computes in its dtype: the config's `dtype` when given (LoadTensor casts each source to it,
// mergekit/io/tasks.py), else the checkpoint's (often bfloat16). For minfer's f32 sources the closest
// is dtype: float32. Then:
//   - the deltas d_i = f32(x_i - b) and the choice of kept elements are the same as mergekit's;
//   - weights, t and lambda are used as doubles (mergekit turns weights into a tensor of its dtype);
//   - sums over models (linear, S, m, D) and the whole-tensor sums (slerp's norms and dot product,
//     rescale's B and A) are in double (slerp's sums and B compensated, Neumaier, in index order; A
//     from the histogram's per-bucket sums); mergekit sums in its dtype. So minfer's value is the
//     formula evaluated in double and rounded to f32 once (the tests find it equal to f32 of the
//     float64 reference for every value), while mergekit's float32 run rounds each operation and
//     lands typically within a few f32 ulps of it; the two can differ by more only near a decision:
//     ties' majority sign when S is within rounding of 0, and slerp's |dot| > 0.9995 when dot is
//     within float32 rounding of the threshold;
//   - slerp's coefficients come from double arccos/sin of the double dot; mergekit evaluates them in
//     numpy float32 (its tensors are converted with .float().numpy()), about 1e-7 relative;
//   - the output is rounded to f32 once; mergekit rounds after every operation.
//
// ## Streaming
// A merger runs over the tensor's values in blocks, in order, once per pass. Passes:
//   linear, task_arithmetic, slerp of one model: the output pass only.
//   slerp: one statistics pass (n0^2, n1^2 and v0.v1), then the output pass.
//   ties with a model whose density < 1 and k < n: 1 to 3 statistics passes of an exact radix
//     selection over the 31-bit keys (11, 10 and 10 bits; each pass histograms, per unresolved model,
//     the keys that share the prefix chosen so far, and stops early when a bucket is kept whole),
//     then the output pass, which keeps key > threshold and, of the keys equal to it, the first r.
// The caller reads the same values again for each pass (exact dequantization: the same numbers).
// Results do not depend on how the values are cut into blocks (the tests check it bit for bit).
//
//     merge_math::tensor_merge tm;
//     tm.how = merge_math::method::ties;
//     tm.models = {{1.0, 1.0}, {0.6, 0.5}, {0.4, 0.3}};   // model 0 is the base: its weight is ignored
//     tm.base = 0;
//     tm.normalize = merge_math::default_normalize(tm.how);
//     tm.n_values = ne0 * ne1;
//     auto m = merge_math::merger::create(tm);              // result<merger>
//     while (m->needs_statistics())                         // 0 to 3 passes
//         for (each block of rows) { spans[i] = model i's values of the block (empty when !m->reads(i));
//                                    if (auto r = m->observe(spans); !r) return r; }
//     for (each block of rows) { if (auto r = m->merge(spans, out_block); !r) return r; write out_block; }
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::toolbox::merge_math {

enum class method : std::uint8_t { linear, slerp, task_arithmetic, ties };

/// mergekit's default of `normalize`: linear true (LinearMerge.parameters), task_arithmetic false, ties
/// true (registry.py's default_normalize); slerp has none (false).
constexpr bool default_normalize(method m) noexcept { return m == method::linear || m == method::ties; }

/// colinearity threshold and norm epsilon of mergekit's slerp() (slerp.py).
inline constexpr double slerp_dot_threshold = 0.9995;
inline constexpr double slerp_norm_eps = 1e-8;
/// task_arithmetic's divisor is replaced by 1 below this magnitude (GTATask.execute).
inline constexpr double task_arithmetic_divisor_eps = 1e-8;
/// rescaled_masked_tensor's eps (sparsify.py): no rescale when either l1 norm is below it.
inline constexpr double rescale_eps = 1e-7;

/// One source's parameters for this tensor (already evaluated for it by the caller: gradients,
/// filters). The base model's are ignored by the methods that use a base.
struct model_parameters {
    double weight = 1.0;   ///< linear, task_arithmetic, ties (required by mergekit, no default)
    double density = 1.0;  ///< ties only: the fraction of |delta| kept (mergekit's default 1)
};

/// One tensor's merge.
struct tensor_merge {
    method how = method::linear;
    std::vector<model_parameters> models;  ///< one per source, in the config's order
    std::size_t base = 0;                  ///< the base model's index: slerp (v0), task_arithmetic, ties
    double t = 0.0;                        ///< slerp
    bool normalize = true;                 ///< linear, task_arithmetic, ties (see default_normalize)
    bool rescale = false;                  ///< ties: l1 rescale of each sparsified delta (mergekit default false)
    bool int8_mask = false;                ///< ties: no effect on values (accepted, ignored)
    double lambda = 1.0;                   ///< task_arithmetic, ties (mergekit default 1)
    std::uint64_t n_values = 0;            ///< the tensor's number of values (every source has as many)
    std::string_view name;                 ///< the tensor's name, for errors only (copied)
};

/// Neumaier's compensated sum: added to in index order, so the result does not depend on blocks.
struct compensated_sum {
    double sum = 0.0;
    double carry = 0.0;
    void add(double v) noexcept {
        const double s = sum + v;
        // The low bits the addition lost, recovered from the operand of larger magnitude.
        carry += std::fabs(sum) >= std::fabs(v) ? (sum - s) + v : (v - s) + sum;
        sum = s;
    }
    double value() const noexcept { return sum + carry; }
};

/// The key |d| of an f32 for the magnitude selection: its bit pattern with the sign cleared. Keys
/// order finite magnitudes as numbers, +0 and -0 are one key, NaN is above infinity.
inline std::uint32_t magnitude_key(float d) noexcept {
    return __builtin_bit_cast(std::uint32_t, d) & 0x7FFFFFFFu;
}

/// mergekit's magnitude pruning of one model's delta (sparsify.py, magnitude), as an exact streaming
/// selection: which k of n values have the largest keys, equal keys at the threshold taken in index
/// order (the first ones). Statistics passes feed every value, in order, to count() and call
/// finish_pass() after the n-th; at most 3 passes (11, 10, 10 bits of the 31-bit key), fewer when a
/// bucket is kept whole. Then the output pass asks keep() of every value, in order. Memory: 2048
/// counts (and 2048 sums with the l1 sums) while unresolved, nothing after.
class magnitude_selection {
public:
    /// Keep k of n values, 1 <= k <= n (k = n needs no pass). l1: also the l1 norms of the values (B)
    /// and of the kept ones (A), for rescale. May throw std::bad_alloc (the merger catches it).
    magnitude_selection(std::uint64_t n, std::uint64_t k, bool l1);

    bool resolved() const noexcept { return level_ == done; }

    /// A statistics pass: the next value of the tensor.
    void count(float d) noexcept {
        const std::uint32_t key = magnitude_key(d);
        if (level_ == 0 && l1_) before_.add(static_cast<double>(std::fabs(d)));
        const auto sh = shifts[level_];
        if ((key >> sh.filter) != prefix_) return;
        const std::uint32_t bucket = (key >> sh.bucket) & sh.mask;
        ++counts_[bucket];
        if (l1_) sums_[bucket] += static_cast<double>(std::fabs(d));
    }
    /// After the n-th count() of a pass: chooses the bucket holding the k-th key.
    void finish_pass() noexcept;

    /// The output pass: whether the next value of the tensor is kept.
    bool keep(float d) noexcept {
        const std::uint32_t key = magnitude_key(d);
        if (key >= keep_from_) return true;
        if (key != tie_key_) return false;
        return ties_seen_++ < ties_kept_;
    }

    /// Keys >= keep_from are all kept; of the keys == tie_key, the first ties_kept (in index order).
    std::uint32_t keep_from() const noexcept { return keep_from_; }
    std::uint32_t tie_key() const noexcept { return tie_key_; }
    std::uint64_t ties_kept() const noexcept { return ties_kept_; }
    /// Whether the l1 sums are computed (and, resolved after at least one pass, known).
    bool computes_l1() const noexcept { return l1_ && passes_ > 0; }
    /// With l1, once resolved: B = sum |d| and A = sum of the kept |d|.
    double l1_all() const noexcept { return before_.value(); }
    double l1_kept() const noexcept { return kept_l1_; }

private:
    struct level_shifts {
        std::uint32_t filter;  // the key's bits above this are the prefix chosen so far
        std::uint32_t bucket;  // the bucket is the key's bits from here up to `filter`
        std::uint32_t mask;
    };
    // 31-bit keys: bits 30..20, then 19..10, then 9..0. Level 0's filter (>> 31) is always 0 = prefix.
    static constexpr std::array<level_shifts, 3> shifts{{{31, 20, 0x7FF}, {20, 10, 0x3FF}, {10, 0, 0x3FF}}};
    static constexpr unsigned done = 3;

    unsigned level_ = 0;
    unsigned passes_ = 0;
    bool l1_ = false;
    std::uint32_t prefix_ = 0;
    std::uint64_t need_ = 0;  // how many of the keys with this prefix are still to be kept
    std::vector<std::uint64_t> counts_;
    std::vector<double> sums_;
    compensated_sum before_;
    double kept_l1_ = 0.0;
    std::uint32_t keep_from_ = 0;
    std::uint32_t tie_key_ = 0;
    std::uint64_t ties_kept_ = 0;
    std::uint64_t ties_seen_ = 0;
};

/// The streaming merge of one tensor (see the top of this header).
class merger {
public:
    /// Checks the description (errors: sources_incompatible for the models a method cannot take or a
    /// base out of range; bad_value_text, subject = the parameter, for a weight, t or lambda not finite,
    /// a density outside (0, 1] or keeping no element, linear's weights summing to 0 with normalize;
    /// out_of_memory) and prepares the passes.
    static gguf::result<merger> create(const tensor_merge& m) noexcept;

    /// True while a statistics pass is due: feed every block of the tensor, in order, to observe().
    bool needs_statistics() const noexcept { return phase_ == phase::statistics; }
    /// True once the output pass has produced the tensor's last value.
    bool finished() const noexcept { return phase_ == phase::finished; }
    /// Passes over the sources done so far (statistics and output).
    unsigned passes_done() const noexcept { return passes_done_; }
    /// Whether the current pass reads model i: the caller may pass an empty span for the others (and
    /// skip dequantizing them).
    bool reads(std::size_t model) const noexcept;

    /// The next block of a statistics pass: inputs[i] = model i's values at [position, position + len),
    /// len the same for every model read (an empty span for a model not read). The pass ends, and
    /// the next begins, after the tensor's last value.
    gguf::result<void> observe(std::span<const std::span<const float>> inputs) noexcept;
    /// The next block of the output pass: out.size() values from every model's span (all are read).
    gguf::result<void> merge(std::span<const std::span<const float>> inputs, std::span<float> out) noexcept;

    /// Where the current pass is: the index of the next value.
    std::uint64_t position() const noexcept { return pos_; }

    /// The coefficients slerp settled on after its statistics pass (v0's, v1's) and whether it lerps.
    double slerp_c0() const noexcept { return c0_; }
    double slerp_c1() const noexcept { return c1_; }
    bool slerp_lerped() const noexcept { return lerped_; }
    /// ties: model i's selection (nullptr when it keeps everything: density 1 or k = n).
    const magnitude_selection* selection(std::size_t model) const noexcept;

private:
    enum class phase : std::uint8_t { statistics, output, finished };
    struct model_state {
        model_parameters p;
        std::vector<magnitude_selection> sel;  // 0 or 1 (ties with density < 1, k < n)
        bool keeps_all = true;                 // ties: no mask at all (density >= 1) or k = n
        double scale = 1.0;                    // ties: rescale's B / A once known, else 1
        bool scaled = false;                   // ties: the rescale applies (mergekit multiplies)
    };

    merger() = default;
    gguf::result<void> check_block(std::span<const std::span<const float>> inputs, std::size_t len,
                                   bool output) const noexcept;
    void finish_statistics_pass() noexcept;
    gguf::error error_for(gguf::errc code) const;

    method how_ = method::linear;
    std::size_t base_ = 0;
    double t_ = 0.0;
    bool normalize_ = false;
    double lambda_ = 1.0;
    std::uint64_t n_ = 0;
    gguf::fixed_text<gguf::max_subject_bytes> name_;
    std::vector<model_state> models_;
    std::vector<double> scratch_;  // ties: one weighted delta per model, per value
    phase phase_ = phase::output;
    unsigned passes_done_ = 0;
    std::uint64_t pos_ = 0;
    // linear: sum of weights; task_arithmetic: its divisor
    double weight_sum_ = 0.0;
    // slerp
    compensated_sum aa_, bb_, ab_;
    double c0_ = 1.0, c1_ = 0.0;
    bool lerped_ = false;
};

/// The whole merge of values held in memory (the tensor as one block): every pass over `inputs`,
/// then the output into `out` (n_values each). For tests and small tensors.
gguf::result<void> merge_in_memory(const tensor_merge& m, std::span<const std::span<const float>> inputs,
                                   std::span<float> out) noexcept;

}  // namespace minfer::toolbox::merge_math
