// The merge arithmetic of `minfer assemble`: mergekit's linear, slerp, task_arithmetic and ties on
// one tensor, streamed in blocks. The formulas, their mergekit sources and where minfer chooses or
// differs are in merge_math.hpp.
#include "merge_math.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "minfer/toolbox/errors.hpp"

namespace minfer::toolbox::merge_math {

namespace {

std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string decimal(std::uint64_t v) { return std::to_string(v); }

std::string tensor_words(std::string_view name) {
    return name.empty() ? std::string("the tensor") : std::string("tensor '") + std::string(name) + "'";
}

std::string_view method_name(method m) noexcept {
    switch (m) {
        case method::linear: return "linear";
        case method::slerp: return "slerp";
        case method::task_arithmetic: return "task_arithmetic";
        case method::ties: return "ties";
    }
    return "?";
}

/// A parameter that cannot be used: bad_value_text, subject = the parameter, detail = why.
gguf::unexpected bad_parameter(std::string_view parameter, std::string detail) {
    gguf::error e;
    e.code = gguf::errc::bad_value_text;
    e.subject = parameter;
    e.detail = std::move(detail);
    return gguf::unexpected(std::move(e));
}

/// Sources a method cannot merge: sources_incompatible, subject = the tensor.
gguf::unexpected incompatible(std::string_view tensor, std::string detail) {
    gguf::error e;
    e.code = codes::sources_incompatible;
    e.subject = tensor;
    e.detail = std::move(detail);
    return gguf::unexpected(std::move(e));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// magnitude_selection

magnitude_selection::magnitude_selection(std::uint64_t n, std::uint64_t k, bool l1) : l1_(l1), need_(k) {
    if (k == 0) {  // nothing kept (the merger refuses k = 0 before; kept total for a standalone use)
        level_ = done;
        keep_from_ = std::numeric_limits<std::uint32_t>::max();  // above every 31-bit key
        return;
    }
    if (k >= n) {  // everything kept: no pass
        level_ = done;
        keep_from_ = 0;
        return;
    }
    counts_.assign(std::size_t{shifts[0].mask} + 1, 0);
    if (l1_) sums_.assign(std::size_t{shifts[0].mask} + 1, 0.0);
}

void magnitude_selection::finish_pass() noexcept {
    if (level_ == done) return;
    ++passes_;
    const level_shifts sh = shifts[level_];
    // From the largest bucket down, the one holding the need_-th largest key with this prefix; the
    // buckets above it are kept whole.
    std::uint64_t above = 0;
    std::uint32_t b = sh.mask;
    while (above + counts_[b] < need_ && b > 0) {
        above += counts_[b];
        if (l1_) kept_l1_ += sums_[b];
        --b;
    }
    need_ -= std::min(need_, above);
    const std::uint32_t chosen = (prefix_ << (sh.filter - sh.bucket)) | b;  // the key's bits above sh.bucket
    if (need_ >= counts_[b]) {  // the bucket is kept whole: every key >= its first is kept
        keep_from_ = chosen << sh.bucket;
        if (l1_) kept_l1_ += sums_[b];
        tie_key_ = 0;
        ties_kept_ = 0;
        level_ = done;
    } else if (sh.bucket == 0) {  // the last level: `chosen` is the k-th key; keep the first need_ of it
        tie_key_ = chosen;
        ties_kept_ = need_;
        keep_from_ = chosen + 1;  // chosen <= 0x7FFFFFFF: no overflow
        if (l1_)
            kept_l1_ += static_cast<double>(need_) * static_cast<double>(std::fabs(__builtin_bit_cast(float, chosen)));
        level_ = done;
    } else {
        prefix_ = chosen;
        ++level_;
        std::fill(counts_.begin(), counts_.end(), std::uint64_t{0});
        std::fill(sums_.begin(), sums_.end(), 0.0);
        return;
    }
    counts_ = std::vector<std::uint64_t>();  // resolved: the histogram's memory goes back
    sums_ = std::vector<double>();
}

// ---------------------------------------------------------------------------------------------------
// merger

gguf::result<merger> merger::create(const tensor_merge& m) noexcept {
    try {
        merger g;
        g.how_ = m.how;
        g.base_ = m.base;
        g.t_ = m.t;
        g.normalize_ = m.normalize;
        g.lambda_ = m.lambda;
        g.n_ = m.n_values;
        g.name_ = m.name;
        const std::size_t n_models = m.models.size();
        const std::string what = std::string(method_name(m.how)) + " of " + tensor_words(m.name);
        if (n_models == 0) return incompatible(m.name, what + ": no source model");
        g.models_.resize(n_models);
        for (std::size_t i = 0; i < n_models; ++i) g.models_[i].p = m.models[i];

        auto check_weights = [&](bool skip_base) -> gguf::result<void> {
            for (std::size_t i = 0; i < n_models; ++i) {
                if (skip_base && i == m.base) continue;
                if (!std::isfinite(m.models[i].weight))
                    return bad_parameter("weight", what + ", model " + decimal(i) + ": the weight " +
                                                       num(m.models[i].weight) + " is not a finite number");
            }
            return {};
        };

        switch (m.how) {
            case method::linear: {
                if (auto r = check_weights(false); !r) return gguf::unexpected(std::move(r).error());
                for (const model_parameters& p : m.models) g.weight_sum_ += p.weight;
                if (m.normalize && g.weight_sum_ == 0.0)
                    return bad_parameter("weight", what + ": the weights sum to 0 and normalize divides by their sum");
                g.phase_ = phase::output;
                break;
            }
            case method::slerp: {
                if (n_models > 2)
                    return incompatible(m.name, what + ": slerp merges exactly two models, " + decimal(n_models) + " given");
                if (!std::isfinite(m.t)) return bad_parameter("t", what + ": t = " + num(m.t) + " is not a finite number");
                if (n_models == 2 && m.base >= 2)
                    return incompatible(m.name, what + ": the base model (" + decimal(m.base) + ") is not one of the two sources");
                g.phase_ = n_models == 2 ? phase::statistics : phase::output;
                break;
            }
            case method::task_arithmetic:
            case method::ties: {
                if (m.base >= n_models)
                    return incompatible(m.name, what + ": the base model (" + decimal(m.base) + ") is not one of the " +
                                                    decimal(n_models) + " sources");
                if (auto r = check_weights(true); !r) return gguf::unexpected(std::move(r).error());
                if (!std::isfinite(m.lambda))
                    return bad_parameter("lambda", what + ": lambda = " + num(m.lambda) + " is not a finite number");
                g.phase_ = phase::output;
                if (m.how == method::task_arithmetic) {
                    for (std::size_t i = 0; i < n_models; ++i)
                        if (i != m.base) g.weight_sum_ += m.models[i].weight;
                    if (std::fabs(g.weight_sum_) < task_arithmetic_divisor_eps) g.weight_sum_ = 1.0;
                    break;
                }
                for (std::size_t i = 0; i < n_models; ++i) {
                    if (i == m.base) continue;
                    const double density = m.models[i].density;
                    if (!(density > 0.0 && density <= 1.0))
                        return bad_parameter("density", what + ", model " + decimal(i) + ": the density " + num(density) +
                                                            " is outside (0, 1]");
                    if (density >= 1.0) continue;  // magnitude(): the delta as it is
                    // Python's int(density * numel): the double product, truncated.
                    const auto k = static_cast<std::uint64_t>(density * static_cast<double>(m.n_values));
                    if (k == 0)
                        return bad_parameter("density", what + ", model " + decimal(i) + ": the density " + num(density) +
                                                            " keeps int(density * " + decimal(m.n_values) +
                                                            ") = 0 values (mergekit asserts k > 0)");
                    if (k >= m.n_values) continue;  // every value kept; rescale's factor is then exactly 1
                    g.models_[i].sel.emplace_back(m.n_values, k, m.rescale);
                    g.models_[i].keeps_all = false;
                    g.phase_ = phase::statistics;
                }
                g.scratch_.assign(n_models, 0.0);
                break;
            }
        }
        if (g.phase_ == phase::statistics && g.n_ == 0) g.finish_statistics_pass();
        return g;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("preparing a merge"));
    } catch (const std::length_error&) {
        return gguf::unexpected(gguf::out_of_memory_error("preparing a merge"));
    }
}

bool merger::reads(std::size_t model) const noexcept {
    if (model >= models_.size()) return false;
    switch (phase_) {
        case phase::finished: return false;
        case phase::output: return true;
        case phase::statistics:
            if (how_ == method::slerp) return true;
            // ties: the base, and the models whose selection is unresolved
            return model == base_ || (!models_[model].sel.empty() && !models_[model].sel.front().resolved());
    }
    return false;
}

const magnitude_selection* merger::selection(std::size_t model) const noexcept {
    if (model >= models_.size() || models_[model].sel.empty()) return nullptr;
    return &models_[model].sel.front();
}

gguf::error merger::error_for(gguf::errc code) const {
    gguf::error e;
    e.code = code;
    e.subject = name_.view();
    return e;
}

gguf::result<void> merger::check_block(std::span<const std::span<const float>> inputs, std::size_t len,
                                       bool output) const noexcept {
    try {
        if (inputs.size() != models_.size()) {
            gguf::error e = error_for(gguf::errc::buffer_size_mismatch);
            e.expected = models_.size();
            e.found = inputs.size();
            e.detail = std::string("source blocks of ") + tensor_words(name_.view()) + " (one per model)";
            return gguf::unexpected(std::move(e));
        }
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (!reads(i) || inputs[i].size() == len) continue;
            gguf::error e = error_for(gguf::errc::buffer_size_mismatch);
            e.expected = len;
            e.found = inputs[i].size();
            e.detail = std::string("values of model ") + decimal(i) + " in a block of " + tensor_words(name_.view()) +
                       (output ? " (as many as the output block)" : " (as many as the first model read)");
            return gguf::unexpected(std::move(e));
        }
        if (len > n_ - pos_) {
            gguf::error e = error_for(gguf::errc::index_out_of_range);
            e.expected = n_;
            e.found = pos_ + len;
            e.detail = std::string("a block past the end of ") + tensor_words(name_.view());
            return gguf::unexpected(std::move(e));
        }
        return {};
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error());
    }
}

gguf::result<void> merger::observe(std::span<const std::span<const float>> inputs) noexcept {
    if (phase_ != phase::statistics) {
        gguf::error e = error_for(gguf::errc::index_out_of_range);
        e.expected = passes_done_;
        e.found = passes_done_ + 1;
        try {
            e.detail = "no statistics pass is due (the output pass comes next, or the merge is over)";
        } catch (...) {  // the code says enough
        }
        return gguf::unexpected(std::move(e));
    }
    std::size_t len = 0;
    for (std::size_t i = 0; i < inputs.size() && i < models_.size(); ++i)
        if (reads(i)) {
            len = inputs[i].size();
            break;
        }
    if (auto r = check_block(inputs, len, false); !r) return r;

    if (how_ == method::slerp) {
        const float* v0 = inputs[base_].data();
        const float* v1 = inputs[1 - base_].data();
        for (std::size_t j = 0; j < len; ++j) {
            const double a = v0[j], b = v1[j];
            aa_.add(a * a);  // exact: a product of two f32 fits a double
            bb_.add(b * b);
            ab_.add(a * b);
        }
    } else {  // ties: the selections still unresolved
        const float* base = inputs[base_].data();
        for (std::size_t i = 0; i < models_.size(); ++i) {
            if (i == base_ || models_[i].sel.empty() || models_[i].sel.front().resolved()) continue;
            magnitude_selection& sel = models_[i].sel.front();
            const float* x = inputs[i].data();
            for (std::size_t j = 0; j < len; ++j) sel.count(x[j] - base[j]);  // f32(x - b), as mergekit's delta
        }
    }
    pos_ += len;
    if (pos_ == n_) finish_statistics_pass();
    return {};
}

void merger::finish_statistics_pass() noexcept {
    ++passes_done_;
    pos_ = 0;
    if (how_ == method::slerp) {
        // slerp.py normalize(): divide by the norm only when it is above eps.
        const double n0 = std::sqrt(aa_.value()), n1 = std::sqrt(bb_.value());
        const double s0 = n0 > slerp_norm_eps ? n0 : 1.0;
        const double s1 = n1 > slerp_norm_eps ? n1 : 1.0;
        const double dot = ab_.value() / s0 / s1;
        if (std::fabs(dot) > slerp_dot_threshold) {  // lerp
            lerped_ = true;
            c0_ = 1.0 - t_;
            c1_ = t_;
        } else {
            const double theta_0 = std::acos(dot);
            const double sin_theta_0 = std::sin(theta_0);
            const double theta_t = theta_0 * t_;
            c0_ = std::sin(theta_0 - theta_t) / sin_theta_0;
            c1_ = std::sin(theta_t) / sin_theta_0;
        }
        phase_ = phase::output;
        return;
    }
    bool all = true;
    for (model_state& ms : models_) {
        if (ms.sel.empty()) continue;
        magnitude_selection& sel = ms.sel.front();
        sel.finish_pass();
        if (!sel.resolved()) {
            all = false;
            continue;
        }
        ms.scaled = false;
        ms.scale = 1.0;
        if (!sel.computes_l1()) continue;
        // rescaled_masked_tensor (l1): masked * (before / after) unless either is below eps.
        const double before = sel.l1_all(), after = sel.l1_kept();
        if (!(before < rescale_eps || after < rescale_eps)) {
            ms.scaled = true;
            ms.scale = before / after;
        }
    }
    if (all) phase_ = phase::output;
}

gguf::result<void> merger::merge(std::span<const std::span<const float>> inputs, std::span<float> out) noexcept {
    if (phase_ != phase::output) {
        gguf::error e = error_for(gguf::errc::index_out_of_range);
        e.expected = passes_done_;
        e.found = passes_done_ + 1;
        try {
            e.detail = phase_ == phase::statistics ? "a statistics pass is due before the output pass"
                                                   : "the output pass is over";
        } catch (...) {
        }
        return gguf::unexpected(std::move(e));
    }
    const std::size_t len = out.size();
    if (auto r = check_block(inputs, len, true); !r) return r;
    float* o = out.data();
    const std::size_t n_models = models_.size();

    switch (how_) {
        case method::linear: {
            for (std::size_t j = 0; j < len; ++j) {
                double acc = 0.0;
                for (std::size_t i = 0; i < n_models; ++i) acc += models_[i].p.weight * static_cast<double>(inputs[i][j]);
                if (normalize_) acc /= weight_sum_;
                o[j] = static_cast<float>(acc);
            }
            break;
        }
        case method::slerp: {
            if (n_models == 1) {
                std::copy(inputs[0].begin(), inputs[0].end(), o);
                break;
            }
            const float* v0 = inputs[base_].data();
            const float* v1 = inputs[1 - base_].data();
            for (std::size_t j = 0; j < len; ++j)
                o[j] = static_cast<float>(c0_ * static_cast<double>(v0[j]) + c1_ * static_cast<double>(v1[j]));
            break;
        }
        case method::task_arithmetic: {
            const float* base = inputs[base_].data();
            for (std::size_t j = 0; j < len; ++j) {
                const float b = base[j];
                double mixed = 0.0;
                for (std::size_t i = 0; i < n_models; ++i) {
                    if (i == base_) continue;
                    const float d = inputs[i][j] - b;  // f32(x - b)
                    mixed += models_[i].p.weight * static_cast<double>(d);
                }
                if (normalize_) mixed /= weight_sum_;
                if (lambda_ != 1.0) mixed *= lambda_;
                o[j] = static_cast<float>(static_cast<double>(b) + mixed);
            }
            break;
        }
        case method::ties: {
            const float* base = inputs[base_].data();
            double* wd = scratch_.data();
            for (std::size_t j = 0; j < len; ++j) {
                const float b = base[j];
                double sign_weight = 0.0;
                for (std::size_t i = 0; i < n_models; ++i) {
                    if (i == base_) continue;
                    model_state& ms = models_[i];
                    const float d = inputs[i][j] - b;  // f32(x - b)
                    double s = d;
                    if (!ms.keeps_all) {
                        if (!ms.sel.front().keep(d)) s *= 0.0;  // tensor * mask
                        if (ms.scaled) s *= ms.scale;
                    }
                    wd[i] = ms.p.weight * s;
                    sign_weight += wd[i];
                }
                // get_mask("sum"): the majority sign is that of the sum, + for 0; a zero never matches.
                const int majority = sign_weight >= 0.0 ? 1 : -1;
                double mixed = 0.0, divisor = 0.0;
                for (std::size_t i = 0; i < n_models; ++i) {
                    if (i == base_) continue;
                    const int sign = wd[i] > 0.0 ? 1 : (wd[i] < 0.0 ? -1 : 0);
                    if (sign != majority) continue;
                    mixed += wd[i];
                    divisor += models_[i].p.weight;
                }
                if (divisor == 0.0) divisor = 1.0;
                if (normalize_) mixed /= divisor;
                if (lambda_ != 1.0) mixed *= lambda_;
                o[j] = static_cast<float>(static_cast<double>(b) + mixed);
            }
            break;
        }
    }
    pos_ += len;
    if (pos_ == n_) {
        ++passes_done_;
        phase_ = phase::finished;
    }
    return {};
}

gguf::result<void> merge_in_memory(const tensor_merge& m, std::span<const std::span<const float>> inputs,
                                   std::span<float> out) noexcept {
    auto g = merger::create(m);
    if (!g) return gguf::unexpected(std::move(g).error());
    // Every span whole (a shorter one would make no progress: the passes would never end).
    if (out.size() != m.n_values) {
        gguf::error e;
        e.code = gguf::errc::buffer_size_mismatch;
        e.subject = m.name;
        e.expected = m.n_values;
        e.found = out.size();
        return gguf::unexpected(std::move(e));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].size() != m.n_values) {
            gguf::error e;
            e.code = gguf::errc::buffer_size_mismatch;
            e.subject = m.name;
            e.expected = m.n_values;
            e.found = inputs[i].size();
            try {
                e.detail = std::string("values of model ") + decimal(i);
            } catch (...) {
            }
            return gguf::unexpected(std::move(e));
        }
    while (g->needs_statistics())
        if (auto r = g->observe(inputs); !r) return r;
    return g->merge(inputs, out);
}

}  // namespace minfer::toolbox::merge_math
