// The merge arithmetic of `minfer assemble` (src/toolbox/merge_math.*) against an independent
// reference: tests/tools/mergekit_reference.py, a numpy translation of mergekit's own code in float64
// (never of minfer's). The cases are written to a temporary directory (inputs as f32, parameters as
// text), the script runs once over all of them, and each case's output is compared with it:
//   - values: |minfer - reference| <= one f32 ulp of the reference + 1e-12 * the case's scale (minfer
//     rounds a double computation to f32 once; the reference keeps float64);
//   - exactly: which elements ties' magnitude pruning keeps (per model, the reference's stable argsort,
//     the tie-break merge_math.hpp documents), and which branch slerp takes (lerp or not).
// Without python3 or numpy the reference test skips loudly, and fails when CI=true or
// MINFER_REQUIRE_REFERENCE is set (as .ci/run sets it); MINFER_TEST_PYTHON3 names another interpreter.
// Then, without the reference: the output is bit-identical whatever the block size; the edge cases
// (slerp of colinear, opposite and zero tensors, t = 0 and 1; ties where the signs cancel, density 1,
// one element kept; linear with equal weights; task_arithmetic with lambda); the magnitude selection
// against a sort; and the refusals.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_probe.hpp"  // this test's one TU: replaces operator new to count the merger's allocations
#include "merge_math.hpp"
#include "minfer/toolbox/errors.hpp"

namespace fs = std::filesystem;
namespace mm = minfer::toolbox::merge_math;
using minfer::gguf::errc;

#ifndef MINFER_PYTHON3
#define MINFER_PYTHON3 "/usr/bin/python3"
#endif
#ifndef MINFER_MERGEKIT_REFERENCE
#error "MINFER_MERGEKIT_REFERENCE (the path of tests/tools/mergekit_reference.py) must be defined"
#endif

namespace {

// ---- inputs ------------------------------------------------------------------------------------------

struct rng {
    std::uint64_t s;
    explicit rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    std::uint64_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545F4914F6CDD1Dull;
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    double normal() {  // Box-Muller
        const double u = 1.0 - uniform(), v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

std::vector<float> normal_values(rng& r, std::size_t n, double scale) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(r.normal() * scale);
    return v;
}

// base + noise: a fine-tuned model's values
std::vector<float> around(rng& r, const std::vector<float>& base, double scale) {
    std::vector<float> v(base.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<double>(base[i]) + r.normal() * scale);
    return v;
}

struct merge_case {
    std::string name;
    mm::tensor_merge tm;  // tm.name is set when it runs (the case's name)
    std::vector<std::vector<float>> x;
    std::size_t row = 1;  // values per row (blocks are whole rows)
};

mm::tensor_merge make(mm::method how, std::vector<mm::model_parameters> models, std::size_t n) {
    mm::tensor_merge tm;
    tm.how = how;
    tm.models = std::move(models);
    tm.normalize = mm::default_normalize(how);
    tm.n_values = n;
    return tm;
}

// The cases compared with the reference: random tensors of several shapes and edge cases.
std::vector<merge_case> build_cases() {
    std::vector<merge_case> cases;
    rng r(2026);
    const std::vector<std::pair<std::size_t, std::size_t>> shapes{{16, 8}, {33, 5}, {1, 1}, {7, 1}, {5, 301}, {64, 40}};
    for (std::size_t si = 0; si < shapes.size(); ++si) {
        const auto [ne0, ne1] = shapes[si];
        const std::size_t n = ne0 * ne1;
        const std::string shape = std::to_string(ne0) + "x" + std::to_string(ne1);
        {  // linear: 2 to 4 models, one weight negative, normalize or not
            const std::size_t m = 2 + si % 3;
            std::vector<mm::model_parameters> p;
            std::vector<std::vector<float>> x;
            for (std::size_t i = 0; i < m; ++i) {
                p.push_back({i == 1 ? -0.25 : 0.2 + r.uniform(), 1.0});
                x.push_back(normal_values(r, n, 0.05 + 0.1 * static_cast<double>(i)));
            }
            for (bool norm : {true, false}) {
                merge_case c{std::string("linear_") + shape + (norm ? "_norm" : "_sum"), make(mm::method::linear, p, n), x, ne0};
                c.tm.normalize = norm;
                cases.push_back(c);
            }
        }
        {  // slerp: uncorrelated tensors (dot near 0) and close ones (dot near 1, below the threshold)
            const auto v0 = normal_values(r, n, 0.02);
            const auto far = normal_values(r, n, 0.03);
            const auto near = around(r, v0, 0.006);
            const double ts[] = {0.3, 0.75, 0.5};
            for (std::size_t base : {0u, 1u}) {
                merge_case c{std::string("slerp_far_") + shape + "_base" + std::to_string(base), make(mm::method::slerp, {{}, {}}, n),
                             base == 0 ? std::vector<std::vector<float>>{v0, far} : std::vector<std::vector<float>>{far, v0}, ne0};
                c.tm.base = base;
                c.tm.t = ts[(si + base) % 3];
                cases.push_back(c);
            }
            merge_case c{std::string("slerp_near_") + shape, make(mm::method::slerp, {{}, {}}, n), {v0, near}, ne0};
            c.tm.t = 0.4;
            cases.push_back(c);
        }
        {  // task_arithmetic: base 1 of 3, normalize or not, lambda
            const auto base = normal_values(r, n, 0.05);
            std::vector<std::vector<float>> x{around(r, base, 0.01), base, around(r, base, 0.02)};
            std::vector<mm::model_parameters> p{{0.7, 1.0}, {1.0, 1.0}, {0.45, 1.0}};
            for (int v = 0; v < 2; ++v) {
                merge_case c{std::string("task_arithmetic_") + shape + (v == 0 ? "" : "_norm_lambda"), make(mm::method::task_arithmetic, p, n),
                             x, ne0};
                c.tm.base = 1;
                if (v == 1) {
                    c.tm.normalize = true;
                    c.tm.lambda = 0.8;
                }
                cases.push_back(c);
            }
        }
        {  // ties: base 0 of 3 or 4, densities, normalize, rescale, lambda
            const auto base = normal_values(r, n, 0.05);
            const std::size_t m = 3 + si % 2;
            std::vector<std::vector<float>> x{base};
            std::vector<mm::model_parameters> p{{1.0, 1.0}};
            const double densities[] = {0.2, 0.5, 0.9, 1.0};
            for (std::size_t i = 1; i < m; ++i) {
                x.push_back(around(r, base, 0.01 * static_cast<double>(i)));
                p.push_back({i == 3 ? -0.3 : 0.3 + 0.4 * r.uniform(), densities[(si + i) % 4]});
            }
            for (int v = 0; v < 3; ++v) {
                merge_case c{std::string("ties_") + shape + (v == 0 ? "" : v == 1 ? "_rescale" : "_sum_lambda"), make(mm::method::ties, p, n), x,
                             ne0};
                if (v == 1) c.tm.rescale = true;
                if (v == 2) {
                    c.tm.normalize = false;
                    c.tm.lambda = 1.3;
                }
                // a density that keeps nothing of a 1-value tensor: 1 is the only density there
                if (n == 1)
                    for (auto& q : c.tm.models) q.density = 1.0;
                cases.push_back(c);
            }
        }
    }

    // ---- edge cases ----
    const std::size_t ne0 = 24, ne1 = 6, n = ne0 * ne1;
    const auto v = normal_values(r, n, 0.04);
    const auto w = normal_values(r, n, 0.04);
    auto scaled = [](const std::vector<float>& a, float f) {
        std::vector<float> o(a);
        for (float& q : o) q *= f;
        return o;
    };
    const std::vector<float> zeros(n, 0.0f);
    auto slerp_case = [&](std::string name, std::vector<float> a, std::vector<float> b, double t) {
        merge_case c{std::move(name), make(mm::method::slerp, {{}, {}}, n), {std::move(a), std::move(b)}, ne0};
        c.tm.t = t;
        cases.push_back(c);
    };
    slerp_case("edge_slerp_colinear", v, scaled(v, 2.5f), 0.35);
    slerp_case("edge_slerp_opposite", v, scaled(v, -1.0f), 0.35);
    slerp_case("edge_slerp_zero_base", zeros, w, 0.35);
    slerp_case("edge_slerp_zero_both", zeros, zeros, 0.35);
    slerp_case("edge_slerp_t0", v, w, 0.0);
    slerp_case("edge_slerp_t1", v, w, 1.0);
    slerp_case("edge_slerp_t0_colinear", v, scaled(v, 3.0f), 0.0);
    slerp_case("edge_slerp_t1_colinear", v, scaled(v, 3.0f), 1.0);
    slerp_case("edge_slerp_extrapolate", v, w, 1.25);
    {
        merge_case c{"edge_slerp_one_model", make(mm::method::slerp, {{}}, n), {v}, ne0};
        c.tm.t = 0.5;
        cases.push_back(c);
    }
    {  // linear: equal weights, normalize: the mean; identical models: the model
        merge_case c{"edge_linear_equal_weights", make(mm::method::linear, {{0.3, 1}, {0.3, 1}, {0.3, 1}}, n), {v, w, scaled(v, -0.5f)},
                     ne0};
        cases.push_back(c);
        merge_case d{"edge_linear_identical", make(mm::method::linear, {{0.2, 1}, {0.5, 1}, {0.3, 1}}, n), {v, v, v}, ne0};
        cases.push_back(d);
    }
    {  // task_arithmetic: lambda; weights summing to almost 0 (the divisor becomes 1)
        merge_case c{"edge_task_arithmetic_lambda", make(mm::method::task_arithmetic, {{1, 1}, {0.6, 1}, {0.9, 1}}, n),
                     {v, around(r, v, 0.01), around(r, v, 0.01)}, ne0};
        c.tm.lambda = 0.5;
        cases.push_back(c);
        c.name = "edge_task_arithmetic_lambda_norm";
        c.tm.normalize = true;
        c.tm.lambda = 2.0;
        cases.push_back(c);
        merge_case d{"edge_task_arithmetic_tiny_divisor", make(mm::method::task_arithmetic, {{1, 1}, {0.5, 1}, {-0.5 + 1e-9, 1}}, n),
                     {v, around(r, v, 0.01), around(r, v, 0.01)}, ne0};
        d.tm.normalize = true;
        cases.push_back(d);
    }
    {  // ties where every sign cancels: deltas +q and -q with equal weights (S = 0: the majority is +)
        std::vector<float> plus(n), minus(n), ibase(n), iplus(n), iminus(n);
        for (std::size_t i = 0; i < n; ++i) {
            plus[i] = static_cast<float>(0.125 * static_cast<double>(1 + i % 7));
            minus[i] = -plus[i];
            ibase[i] = static_cast<float>(static_cast<int>(i % 11) - 5);  // integers: x - b is exact
            iplus[i] = ibase[i] + 1.0f;
            iminus[i] = ibase[i] - 1.0f;
        }
        merge_case c{"edge_ties_signs_cancel", make(mm::method::ties, {{1, 1}, {0.5, 1}, {0.5, 1}}, n), {zeros, plus, minus}, ne0};
        cases.push_back(c);
        merge_case d{"edge_ties_signs_cancel_base", make(mm::method::ties, {{1, 1}, {0.4, 1}, {0.4, 1}}, n), {ibase, iplus, iminus}, ne0};
        cases.push_back(d);
        merge_case e{"edge_ties_signs_cancel_sparse", make(mm::method::ties, {{1, 1}, {0.5, 0.5}, {0.5, 0.5}}, n), {zeros, plus, minus},
                     ne0};
        cases.push_back(e);
    }
    {  // ties: density 1 everywhere; a density keeping exactly one value; equal magnitudes at the threshold
        const auto base = normal_values(r, n, 0.05);
        std::vector<std::vector<float>> x{base, around(r, base, 0.01), around(r, base, 0.02)};
        merge_case c{"edge_ties_density_1", make(mm::method::ties, {{1, 1}, {0.5, 1}, {0.5, 1}}, n), x, ne0};
        cases.push_back(c);
        const double one = 1.5 / static_cast<double>(n);  // int(one * n) = 1
        merge_case d{"edge_ties_one_kept", make(mm::method::ties, {{1, 1}, {0.5, one}, {0.5, one}}, n), x, ne0};
        cases.push_back(d);
        d.name = "edge_ties_one_kept_rescale";
        d.tm.rescale = true;
        cases.push_back(d);
        // deltas on a grid of 0.25 in [-2, 2] from a zero base: many equal magnitudes at the k-th
        std::vector<float> g1(n), g2(n);
        for (std::size_t i = 0; i < n; ++i) {
            g1[i] = static_cast<float>(0.25 * static_cast<double>(static_cast<int>(r.below(17)) - 8));
            g2[i] = static_cast<float>(0.25 * static_cast<double>(static_cast<int>(r.below(9)) - 4));
        }
        merge_case e{"edge_ties_equal_magnitudes", make(mm::method::ties, {{1, 1}, {0.7, 0.3}, {0.5, 0.55}}, n), {zeros, g1, g2}, ne0};
        cases.push_back(e);
        e.name = "edge_ties_equal_magnitudes_rescale";
        e.tm.rescale = true;
        cases.push_back(e);
        merge_case f{"edge_ties_zero_deltas", make(mm::method::ties, {{1, 1}, {0.5, 0.4}, {0.5, 0.6}}, n), {base, base, base}, ne0};
        f.tm.rescale = true;
        cases.push_back(f);
        merge_case h{"edge_ties_only_base", make(mm::method::ties, {{1, 1}}, n), {base}, ne0};
        cases.push_back(h);
    }
    {  // a larger tensor: the selection's three passes over mostly distinct magnitudes
        const std::size_t big0 = 512, big1 = 512, nb = big0 * big1;
        const auto base = normal_values(r, nb, 0.05);
        merge_case c{"ties_512x512", make(mm::method::ties, {{1, 1}, {0.6, 0.1}, {0.4, 0.37}}, nb),
                     {base, around(r, base, 0.01), around(r, base, 0.02)}, big0};
        c.tm.rescale = true;
        cases.push_back(c);
    }
    return cases;
}

const std::vector<merge_case>& cases() {
    static const std::vector<merge_case> c = build_cases();
    return c;
}

const merge_case& find_case(const std::string& name) {
    for (const merge_case& c : cases())
        if (c.name == name) return c;
    throw std::runtime_error(std::string("no case ") + name);
}

// ---- running a merge in blocks -----------------------------------------------------------------------

struct run_result {
    std::vector<float> out;
    std::optional<mm::merger> m;
    unsigned statistics_passes = 0;
    std::string error;
};

// The merge of c in blocks of rows_per_block rows (0: the whole tensor); models the current pass does
// not read get an empty span (so reading one would fail loudly).
run_result run(const merge_case& c, std::size_t rows_per_block) {
    run_result res;
    mm::tensor_merge tm = c.tm;
    tm.name = c.name;
    auto g = mm::merger::create(tm);
    if (!g) {
        res.error = g.error().message();
        return res;
    }
    mm::merger m = std::move(*g);
    const std::size_t n = static_cast<std::size_t>(tm.n_values);
    const std::size_t step = rows_per_block == 0 ? std::max<std::size_t>(n, 1) : rows_per_block * c.row;
    std::vector<std::span<const float>> spans(c.x.size());
    while (m.needs_statistics()) {
        for (std::size_t at = 0; at < n; at += step) {
            const std::size_t len = std::min(step, n - at);
            for (std::size_t i = 0; i < spans.size(); ++i)
                spans[i] = m.reads(i) ? std::span<const float>(c.x[i]).subspan(at, len) : std::span<const float>();
            if (auto ok = m.observe(spans); !ok) {
                res.error = ok.error().message();
                return res;
            }
        }
        if (++res.statistics_passes > 3) {
            res.error = "more than 3 statistics passes";
            return res;
        }
    }
    res.out.assign(n, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t at = 0; at < n; at += step) {
        const std::size_t len = std::min(step, n - at);
        for (std::size_t i = 0; i < spans.size(); ++i) spans[i] = std::span<const float>(c.x[i]).subspan(at, len);
        if (auto ok = m.merge(spans, std::span<float>(res.out).subspan(at, len)); !ok) {
            res.error = ok.error().message();
            return res;
        }
    }
    if (!m.finished()) res.error = "the output pass did not finish";
    res.m.emplace(std::move(m));
    return res;
}

// Which values of model i the selection keeps, from its documented state (keys >= keep_from; the
// first ties_kept keys equal to tie_key); all of them for a model without a selection.
std::vector<std::uint8_t> kept_by(const merge_case& c, const mm::merger& m, std::size_t model) {
    const std::size_t n = static_cast<std::size_t>(c.tm.n_values);
    std::vector<std::uint8_t> kept(n, 1);
    const mm::magnitude_selection* s = m.selection(model);
    if (s == nullptr) return kept;
    std::uint64_t seen = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const float d = c.x[model][j] - c.x[c.tm.base][j];
        const std::uint32_t key = mm::magnitude_key(d);
        kept[j] = key >= s->keep_from() || (key == s->tie_key() && seen++ < s->ties_kept()) ? 1 : 0;
    }
    return kept;
}

// ---- the reference -----------------------------------------------------------------------------------

// CI=true, or MINFER_REQUIRE_REFERENCE set and not "0" (as .ci/run sets it, the rule of the llama.cpp
// reference tests): a reference that cannot run is a failure, not a skip.
bool reference_required() {
    const char* ci = std::getenv("CI");
    const char* req = std::getenv("MINFER_REQUIRE_REFERENCE");
    return (ci != nullptr && std::string_view(ci) == "true") ||
           (req != nullptr && *req != '\0' && std::string_view(req) != "0");
}

struct reference_case {
    std::vector<double> out;
    std::vector<std::uint8_t> kept;  // ties: models x n
    std::map<std::string, std::string> info;  // "lerp" -> "0"/"1", "k 1" -> "K"
};

struct reference_run {
    bool available = false;
    std::string why;  // when not available
    std::map<std::string, reference_case> cases;
};

std::string g17(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

const char* method_text(mm::method m) {
    switch (m) {
        case mm::method::linear: return "linear";
        case mm::method::slerp: return "slerp";
        case mm::method::task_arithmetic: return "task_arithmetic";
        case mm::method::ties: return "ties";
    }
    return "?";
}

template <class T>
std::vector<T> read_all(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
}

reference_run run_reference() {
    reference_run rr;
    // MINFER_TEST_PYTHON3 overrides the interpreter CMake found (to check the skip and the CI failure).
    const char* env_python = std::getenv("MINFER_TEST_PYTHON3");
    const std::string python = env_python != nullptr ? env_python : MINFER_PYTHON3;
    if (python.empty() || python.find("NOTFOUND") != std::string::npos || ::access(python.c_str(), X_OK) != 0) {
        rr.why = std::string("python3 not found (") + python + ")";
        return rr;
    }
    const fs::path dir = fs::temp_directory_path() / (std::string("minfer-merge-math-") + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const merge_case& c : cases()) {
        const fs::path d = dir / c.name;
        fs::create_directories(d);
        std::ofstream t(d / "case.txt");
        t << "method " << method_text(c.tm.how) << "\n"
          << "n_values " << c.tm.n_values << "\n"
          << "models " << c.tm.models.size() << "\n"
          << "base " << c.tm.base << "\n"
          << "t " << g17(c.tm.t) << "\n"
          << "normalize " << (c.tm.normalize ? 1 : 0) << "\n"
          << "rescale " << (c.tm.rescale ? 1 : 0) << "\n"
          << "int8_mask " << (c.tm.int8_mask ? 1 : 0) << "\n"
          << "lambda " << g17(c.tm.lambda) << "\n"
          << "weights";
        for (const auto& p : c.tm.models) t << " " << g17(p.weight);
        t << "\ndensities";
        for (const auto& p : c.tm.models) t << " " << g17(p.density);
        t << "\n";
        std::ofstream in(d / "inputs.f32", std::ios::binary);
        for (const auto& x : c.x) in.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
    }
    const fs::path log = dir / "reference.log";
    const std::string cmd = std::string("'") + python + "' '" + std::string(MINFER_MERGEKIT_REFERENCE) + "' '" + dir.string() + "' >'" +
                            log.string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    std::ifstream lf(log);
    const std::string log_text((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
    const int rc = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (rc == 77) {
        rr.why = std::string("numpy is missing: ") + log_text;
        fs::remove_all(dir);
        return rr;
    }
    if (rc != 0) {
        rr.why = std::string("FAILED (not a missing tool): the reference exited with ") + std::to_string(rc) + ": " + log_text;
        rr.available = false;
        fs::remove_all(dir);
        return rr;
    }
    for (const merge_case& c : cases()) {
        const fs::path d = dir / c.name;
        reference_case rc_;
        rc_.out = read_all<double>(d / "out.f64");
        if (c.tm.how == mm::method::ties) rc_.kept = read_all<std::uint8_t>(d / "kept.u8");
        std::ifstream info(d / "info.txt");
        for (std::string line; std::getline(info, line);) {
            std::istringstream ls(line);
            std::string key, a, b;
            ls >> key >> a >> b;
            if (key == "k") rc_.info[std::string("k ") + a] = b;
            else rc_.info[key] = a;
        }
        rr.cases[c.name] = std::move(rc_);
    }
    fs::remove_all(dir);
    rr.available = true;
    return rr;
}

const reference_run& reference() {
    static const reference_run r = run_reference();
    return r;
}

// Skips loudly on a developer's machine without python3/numpy; fails in CI (CI=true or
// MINFER_REQUIRE_REFERENCE) or when the reference itself failed.
#define MINFER_NEED_REFERENCE()                                                                      \
    do {                                                                                             \
        const reference_run& ref_ = reference();                                                     \
        if (!ref_.available) {                                                                       \
            if (reference_required() || ref_.why.rfind("FAILED", 0) == 0) FAIL() << "mergekit reference: " << ref_.why; \
            GTEST_SKIP() << "SKIPPED: the mergekit reference cannot run: " << ref_.why;              \
        }                                                                                            \
    } while (0)

double ulp32(double v) {
    const float f = static_cast<float>(std::fabs(v));
    if (!std::isfinite(f)) return std::numeric_limits<double>::infinity();
    return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - static_cast<double>(f);
}

// ---- agreement with the reference ----------------------------------------------------------------------

void check_against_reference(const merge_case& c, const reference_case& ref) {
    const run_result got = run(c, 0);
    ASSERT_TRUE(got.error.empty()) << got.error;
    const std::size_t n = static_cast<std::size_t>(c.tm.n_values);
    ASSERT_EQ(ref.out.size(), n);

    double scale = 0.0;
    for (const auto& x : c.x)
        for (float q : x) scale = std::max(scale, std::fabs(static_cast<double>(q)));
    std::size_t equal = 0, bad = 0;
    double worst_ulps = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
        const double want = ref.out[j], have = got.out[j];
        if (static_cast<float>(want) == got.out[j]) ++equal;
        const double diff = std::fabs(have - want);
        const double tol = ulp32(want) + 1e-12 * scale;
        worst_ulps = std::max(worst_ulps, diff / ulp32(want));
        if (!(diff <= tol) && bad++ < 5)
            ADD_FAILURE() << "value " << j << ": minfer " << g17(have) << ", reference " << g17(want) << " (diff " << g17(diff)
                          << ", tolerance " << g17(tol) << ")";
    }
    EXPECT_EQ(bad, 0u) << bad << " of " << n << " values beyond the tolerance";
    std::cout << "[ reference ] " << c.name << ": " << n << " values, " << equal << " equal to f32(reference), worst "
              << g17(worst_ulps) << " f32 ulps; passes " << got.statistics_passes << "+1\n";

    if (c.tm.how == mm::method::slerp && c.tm.models.size() == 2) {
        ASSERT_TRUE(ref.info.count("lerp"));
        EXPECT_EQ(got.m->slerp_lerped(), ref.info.at("lerp") == "1") << "slerp's branch";
    }
    if (c.tm.how == mm::method::ties) {
        ASSERT_EQ(ref.kept.size(), n * c.x.size());
        for (std::size_t i = 0; i < c.x.size(); ++i) {
            const std::vector<std::uint8_t> kept = kept_by(c, *got.m, i);
            const std::size_t n_kept = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), 1));
            std::size_t differ = 0;
            for (std::size_t j = 0; j < n; ++j) differ += kept[j] != ref.kept[i * n + j] ? 1u : 0u;
            EXPECT_EQ(differ, 0u) << "model " << i << ": " << differ << " values kept by one and not the other";
            if (auto k = ref.info.find(std::string("k ") + std::to_string(i)); k != ref.info.end()) {
                EXPECT_EQ(std::to_string(n_kept), k->second) << "model " << i << "'s k";
            }
        }
    }
}

// One test for every case: the reference (a python3 process) runs once per test process.
TEST(MergeMathReference, EveryCaseMatchesMergekit) {
    MINFER_NEED_REFERENCE();
    for (const merge_case& c : cases()) {
        SCOPED_TRACE(c.name);
        check_against_reference(c, reference().cases.at(c.name));
    }
}

// ---- streaming invariance -------------------------------------------------------------------------------

TEST(MergeMath, OutputIsBitIdenticalWhateverTheBlockSize) {
    for (const merge_case& c : cases()) {
        SCOPED_TRACE(c.name);
        const run_result whole = run(c, 0);
        ASSERT_TRUE(whole.error.empty()) << whole.error;
        const std::size_t rows = static_cast<std::size_t>(c.tm.n_values) / c.row;
        for (std::size_t block : {std::size_t{1}, std::size_t{3}, std::size_t{7}, rows > 1 ? rows - 1 : 1}) {
            if (c.tm.n_values > 100000 && block != 1) continue;  // the large tensor: one row at a time is enough
            const run_result part = run(c, block);
            ASSERT_TRUE(part.error.empty()) << part.error;
            ASSERT_EQ(part.out.size(), whole.out.size());
            EXPECT_EQ(std::memcmp(part.out.data(), whole.out.data(), whole.out.size() * sizeof(float)), 0)
                << "blocks of " << block << " rows";
            EXPECT_EQ(part.statistics_passes, whole.statistics_passes);
        }
    }
}

TEST(MergeMath, MergeInMemoryIsTheStreamedMerge) {
    const merge_case& c = find_case("ties_64x40_rescale");
    std::vector<std::span<const float>> spans;
    for (const auto& x : c.x) spans.emplace_back(x);
    std::vector<float> out(static_cast<std::size_t>(c.tm.n_values));
    ASSERT_TRUE(mm::merge_in_memory(c.tm, spans, out));
    const run_result rows = run(c, 1);
    ASSERT_TRUE(rows.error.empty()) << rows.error;
    EXPECT_EQ(std::memcmp(out.data(), rows.out.data(), out.size() * sizeof(float)), 0);
}

// Memory: what create() allocates does not depend on the tensor's size (a 2048-bucket histogram of
// counts and one of sums per sparsified model, and O(1) per model), and the passes allocate nothing.
TEST(MergeMath, MemoryDoesNotGrowWithTheTensor) {
    const merge_case& big = find_case("ties_512x512");  // rescale on: the histograms of sums too
    merge_case small = big;
    const std::size_t small_n = 64 * big.row;
    for (auto& x : small.x) x.resize(small_n);
    small.tm.n_values = small_n;
    auto measure = [](const merge_case& c, std::size_t& at_create, std::size_t& in_passes, std::size_t& largest) {
        const std::size_t n = static_cast<std::size_t>(c.tm.n_values);
        std::vector<std::span<const float>> spans(c.x.size());
        std::vector<float> out(n);
        mm::tensor_merge tm = c.tm;
        tm.name = "blk.0.ffn_up.weight";
        std::optional<mm::merger> m;
        {
            minfer::test::alloc_probe probe;
            auto g = mm::merger::create(tm);
            ASSERT_TRUE(g);
            m.emplace(std::move(*g));
            at_create = probe.total();
            largest = probe.largest();
        }
        minfer::test::alloc_probe probe;
        while (m->needs_statistics())
            for (std::size_t at = 0; at < n; at += c.row) {
                for (std::size_t i = 0; i < spans.size(); ++i)
                    spans[i] = m->reads(i) ? std::span<const float>(c.x[i]).subspan(at, c.row) : std::span<const float>();
                ASSERT_TRUE(m->observe(spans));
            }
        for (std::size_t at = 0; at < n; at += c.row) {
            for (std::size_t i = 0; i < spans.size(); ++i) spans[i] = std::span<const float>(c.x[i]).subspan(at, c.row);
            ASSERT_TRUE(m->merge(spans, std::span<float>(out).subspan(at, c.row)));
        }
        in_passes = probe.total();
    };
    std::size_t big_create = 0, big_passes = 0, big_largest = 0, small_create = 0, small_passes = 0, small_largest = 0;
    measure(big, big_create, big_passes, big_largest);
    measure(small, small_create, small_passes, small_largest);
    EXPECT_EQ(big_create, small_create);
    EXPECT_EQ(big_passes, 0u);
    EXPECT_EQ(small_passes, 0u);
    EXPECT_LE(big_largest, 2048u * 8u);
    EXPECT_LE(big_create, 2u * 2048u * 16u + 2048u) << "two sparsified models: their histograms and a little more";
    std::cout << "[ memory    ] create: " << big_create << " bytes for " << big.tm.n_values << " values, " << small_create
              << " for " << small.tm.n_values << "; the passes: " << big_passes << " bytes\n";
}

// ---- edge cases, by their own definitions ------------------------------------------------------------

TEST(MergeMath, SlerpAtT0AndT1IsExactlyTheEndpoints) {
    for (const char* name : {"edge_slerp_t0", "edge_slerp_t0_colinear", "edge_slerp_t1", "edge_slerp_t1_colinear"}) {
        SCOPED_TRACE(name);
        const merge_case& c = find_case(name);
        const run_result r = run(c, 2);
        ASSERT_TRUE(r.error.empty()) << r.error;
        const auto& want = c.tm.t == 0.0 ? c.x[0] : c.x[1];
        for (std::size_t j = 0; j < want.size(); ++j) ASSERT_EQ(r.out[j], want[j]) << j;
    }
    EXPECT_FALSE(run(find_case("edge_slerp_t0"), 0).m->slerp_lerped());
    EXPECT_TRUE(run(find_case("edge_slerp_t0_colinear"), 0).m->slerp_lerped());
}

TEST(MergeMath, SlerpOfColinearOrOppositeTensorsIsALerp) {
    for (const char* name : {"edge_slerp_colinear", "edge_slerp_opposite"}) {
        SCOPED_TRACE(name);
        const merge_case& c = find_case(name);
        const run_result r = run(c, 1);
        ASSERT_TRUE(r.error.empty()) << r.error;
        EXPECT_TRUE(r.m->slerp_lerped());
        EXPECT_EQ(r.m->slerp_c0(), 1.0 - c.tm.t);
        EXPECT_EQ(r.m->slerp_c1(), c.tm.t);
        for (std::size_t j = 0; j < c.x[0].size(); ++j)
            ASSERT_EQ(r.out[j], static_cast<float>((1.0 - c.tm.t) * c.x[0][j] + c.tm.t * c.x[1][j])) << j;
    }
}

TEST(MergeMath, SlerpOfAZeroTensorUsesItUnnormalised) {
    // ||v0|| = 0 <= eps: v0 is left as is, dot = 0, theta = pi/2: out = cos(t pi/2) v0 + sin(t pi/2) v1.
    const merge_case& c = find_case("edge_slerp_zero_base");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.m->slerp_lerped());
    const double pi = std::acos(-1.0);
    EXPECT_NEAR(r.m->slerp_c1(), std::sin(c.tm.t * pi / 2), 1e-15);
    EXPECT_NEAR(r.m->slerp_c0(), std::cos(c.tm.t * pi / 2), 1e-15);
    const run_result z = run(find_case("edge_slerp_zero_both"), 1);
    ASSERT_TRUE(z.error.empty()) << z.error;
    for (float q : z.out) ASSERT_EQ(q, 0.0f);
}

TEST(MergeMath, SlerpOfOneModelIsThatModel) {
    const merge_case& c = find_case("edge_slerp_one_model");
    const run_result r = run(c, 5);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.statistics_passes, 0u);
    EXPECT_EQ(r.out, c.x[0]);
}

TEST(MergeMath, LinearWithEqualWeightsIsTheMean) {
    const merge_case& c = find_case("edge_linear_equal_weights");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    for (std::size_t j = 0; j < r.out.size(); ++j) {
        const double mean = (static_cast<double>(c.x[0][j]) + c.x[1][j] + c.x[2][j]) / 3.0;
        ASSERT_LE(std::fabs(r.out[j] - mean), ulp32(mean) + 1e-15) << j;
    }
    const merge_case& same = find_case("edge_linear_identical");
    const run_result s = run(same, 1);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.out, same.x[0]);
}

TEST(MergeMath, TaskArithmeticAppliesLambdaAfterTheDivisor) {
    const merge_case& c = find_case("edge_task_arithmetic_lambda_norm");  // weights 0.6, 0.9, lambda 2
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    for (std::size_t j = 0; j < r.out.size(); ++j) {
        const double b = c.x[0][j];
        const double d1 = static_cast<float>(c.x[1][j] - c.x[0][j]), d2 = static_cast<float>(c.x[2][j] - c.x[0][j]);
        const double want = b + (0.6 * d1 + 0.9 * d2) / 1.5 * 2.0;
        ASSERT_LE(std::fabs(r.out[j] - want), ulp32(want)) << j;
    }
    // weights summing to 1e-9 (< 1e-8): the divisor is 1, so normalize changes nothing
    const merge_case& t = find_case("edge_task_arithmetic_tiny_divisor");
    merge_case plain = t;
    plain.tm.normalize = false;
    EXPECT_EQ(run(t, 1).out, run(plain, 1).out);
}

TEST(MergeMath, TiesWhereTheSignsCancelTakesThePositiveSide) {
    // deltas +q and -q, equal weights: S = 0, the majority is +, only +q counts (divisor = its weight).
    const merge_case& c = find_case("edge_ties_signs_cancel");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.out, c.x[1]);
    const merge_case& d = find_case("edge_ties_signs_cancel_base");
    const run_result s = run(d, 1);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.out, d.x[1]);
    // without normalize: b + w * q
    merge_case e = c;
    e.tm.normalize = false;
    const run_result u = run(e, 1);
    for (std::size_t j = 0; j < u.out.size(); ++j) ASSERT_EQ(u.out[j], 0.5f * c.x[1][j]) << j;
}

TEST(MergeMath, TiesAtDensityOneSelectsNothing) {
    const merge_case& c = find_case("edge_ties_density_1");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.statistics_passes, 0u);
    for (std::size_t i = 0; i < c.x.size(); ++i) EXPECT_EQ(r.m->selection(i), nullptr);
}

TEST(MergeMath, TiesCanKeepExactlyOneValue) {
    const merge_case& c = find_case("edge_ties_one_kept");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    for (std::size_t i = 1; i < 3; ++i) {
        const auto kept = kept_by(c, *r.m, i);
        ASSERT_EQ(std::count(kept.begin(), kept.end(), 1), 1) << "model " << i;
        // the first value of the largest |delta|
        std::size_t best = 0;
        float best_mag = -1.0f;
        for (std::size_t j = 0; j < kept.size(); ++j) {
            const float mag = std::fabs(c.x[i][j] - c.x[0][j]);
            if (mag > best_mag) {
                best_mag = mag;
                best = j;
            }
        }
        EXPECT_EQ(kept[best], 1) << "model " << i;
    }
}

TEST(MergeMath, TiesBreaksTiesAtTheThresholdInIndexOrder) {
    const merge_case& c = find_case("edge_ties_equal_magnitudes");
    const run_result r = run(c, 1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const std::size_t n = static_cast<std::size_t>(c.tm.n_values);
    for (std::size_t i = 1; i < 3; ++i) {
        const mm::magnitude_selection* s = r.m->selection(i);
        ASSERT_NE(s, nullptr);
        EXPECT_GT(s->ties_kept(), 0u) << "the case must cut through equal magnitudes";
        const auto kept = kept_by(c, *r.m, i);
        const auto k = static_cast<std::size_t>(c.tm.models[i].density * static_cast<double>(n));
        EXPECT_EQ(static_cast<std::size_t>(std::count(kept.begin(), kept.end(), 1)), k);
        // every kept magnitude >= every dropped one, and of the threshold's, the kept come first
        float min_kept = INFINITY, max_dropped = -1.0f;
        std::size_t last_kept_tie = 0, first_dropped_tie = n;
        const float threshold = __builtin_bit_cast(float, s->tie_key());
        for (std::size_t j = 0; j < n; ++j) {
            const float mag = std::fabs(c.x[i][j]);
            if (kept[j]) min_kept = std::min(min_kept, mag);
            else max_dropped = std::max(max_dropped, mag);
            if (mag == threshold) {
                if (kept[j]) last_kept_tie = j;
                else first_dropped_tie = std::min(first_dropped_tie, j);
            }
        }
        EXPECT_GE(min_kept, max_dropped);
        EXPECT_LT(last_kept_tie, first_dropped_tie);
    }
}

TEST(MergeMath, TiesOfOnlyTheBaseIsTheBase) {
    const merge_case& c = find_case("edge_ties_only_base");
    EXPECT_EQ(run(c, 1).out, c.x[0]);
}

TEST(MergeMath, EmptyTensor) {
    mm::tensor_merge tm = make(mm::method::linear, {{1, 1}, {1, 1}}, 0);
    auto m = mm::merger::create(tm);
    ASSERT_TRUE(m);
    std::vector<std::span<const float>> spans(2);
    ASSERT_TRUE(m->merge(spans, {}));
    EXPECT_TRUE(m->finished());
    tm.how = mm::method::slerp;
    auto s = mm::merger::create(tm);
    ASSERT_TRUE(s);
    EXPECT_FALSE(s->needs_statistics());
}

// ---- the selection against a sort ---------------------------------------------------------------------

TEST(MagnitudeSelection, KeepsTheSameValuesAsAStableSort) {
    rng r(7);
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 1 + r.below(round < 100 ? 50 : 5000);
        std::vector<float> d(n);
        const int kind = round % 5;
        for (float& q : d) {
            switch (kind) {
                case 0: q = static_cast<float>(r.normal()); break;                                     // distinct
                case 1: q = static_cast<float>(static_cast<int>(r.below(7)) - 3); break;               // few values
                case 2: q = r.below(2) ? 0.0f : -0.0f; break;                                           // all zero
                case 3: q = static_cast<float>(r.normal() * 1e-30 * (r.below(2) ? 1e30 : 1)); break;  // spread
                default: q = std::ldexp(1.0f + static_cast<float>(r.below(4)) * 0x1p-23f, static_cast<int>(r.below(3)));  // near keys
            }
        }
        if (round % 17 == 0) d[r.below(n)] = INFINITY;
        const std::uint64_t k = 1 + r.below(n);
        // the oracle: indices by magnitude descending, equal magnitudes in index order
        std::vector<std::size_t> idx(n);
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return std::fabs(d[a]) > std::fabs(d[b]); });
        std::vector<std::uint8_t> want(n, 0);
        for (std::size_t i = 0; i < k; ++i) want[idx[i]] = 1;
        double kept_l1 = 0.0, all_l1 = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
            all_l1 += std::fabs(static_cast<double>(d[j]));
            if (want[j]) kept_l1 += std::fabs(static_cast<double>(d[j]));
        }

        mm::magnitude_selection s(n, k, true);
        unsigned passes = 0;
        while (!s.resolved()) {
            for (float q : d) s.count(q);
            s.finish_pass();
            ASSERT_LE(++passes, 3u);
        }
        std::size_t differ = 0;
        for (std::size_t j = 0; j < n; ++j) differ += s.keep(d[j]) != (want[j] == 1) ? 1u : 0u;
        ASSERT_EQ(differ, 0u) << "round " << round << ", n " << n << ", k " << k;
        if (k < n && std::isfinite(all_l1)) {
            EXPECT_NEAR(s.l1_all(), all_l1, 1e-9 * all_l1) << round;
            EXPECT_NEAR(s.l1_kept(), kept_l1, 1e-9 * kept_l1) << round;
        }
    }
}

TEST(MagnitudeSelection, StopsEarlyWhenABucketIsKeptWhole) {
    // 4 values of 1.0 and 4 of 2.0 (keys of different top 11 bits): k = 4 is decided by the first pass.
    std::vector<float> d{1, 2, 1, 2, 1, 2, 1, 2};
    mm::magnitude_selection s(d.size(), 4, false);
    for (float q : d) s.count(q);
    s.finish_pass();
    EXPECT_TRUE(s.resolved());
    EXPECT_EQ(s.ties_kept(), 0u);
    for (float q : d) EXPECT_EQ(s.keep(q), q == 2.0f);
}

// ---- refusals --------------------------------------------------------------------------------------------

TEST(MergeMath, RefusesWhatCannotBeMerged) {
    auto code_of = [](const mm::tensor_merge& tm) {
        auto m = mm::merger::create(tm);
        return m ? errc::ok : m.error().code;
    };
    auto subject_of = [](const mm::tensor_merge& tm) {
        auto m = mm::merger::create(tm);
        return m ? std::string() : m.error().subject.str();
    };
    const std::size_t n = 100;
    // linear: weights summing to 0 with normalize (mergekit would divide by 0); fine without
    mm::tensor_merge lin = make(mm::method::linear, {{0.5, 1}, {-0.5, 1}}, n);
    EXPECT_EQ(code_of(lin), errc::bad_value_text);
    EXPECT_EQ(subject_of(lin), "weight");
    EXPECT_NE(mm::merger::create(lin).error().message().find("sum to 0"), std::string::npos);
    lin.normalize = false;
    EXPECT_EQ(code_of(lin), errc::ok);
    lin.models[0].weight = NAN;
    EXPECT_EQ(code_of(lin), errc::bad_value_text);
    EXPECT_EQ(code_of(make(mm::method::linear, {}, n)), minfer::toolbox::codes::sources_incompatible);

    // ties: density outside (0, 1], or keeping no value; the base's density is not looked at
    for (double density : {0.0, -0.1, 1.5, static_cast<double>(NAN), 0.5 / static_cast<double>(n)}) {
        mm::tensor_merge t = make(mm::method::ties, {{1, 1}, {0.5, density}}, n);
        EXPECT_EQ(code_of(t), errc::bad_value_text) << density;
        EXPECT_EQ(subject_of(t), "density") << density;
        t.models = {{1, density}, {0.5, 1.0}};
        EXPECT_EQ(code_of(t), errc::ok) << density;
        t.how = mm::method::task_arithmetic;  // no sparsification: density is not used
        t.models = {{1, 1}, {0.5, density}};
        EXPECT_EQ(code_of(t), errc::ok) << density;
    }
    EXPECT_EQ(code_of(make(mm::method::ties, {{1, 1}, {0.5, 1.0 / static_cast<double>(n)}}, n)), errc::ok);  // k = 1
    mm::tensor_merge tb = make(mm::method::ties, {{1, 1}, {0.5, 1}}, n);
    tb.base = 2;
    EXPECT_EQ(code_of(tb), minfer::toolbox::codes::sources_incompatible);
    tb.base = 0;
    tb.lambda = INFINITY;
    EXPECT_EQ(code_of(tb), errc::bad_value_text);
    EXPECT_EQ(subject_of(tb), "lambda");

    // slerp: two models (one is copied), a finite t, the base one of them
    mm::tensor_merge s = make(mm::method::slerp, {{}, {}, {}}, n);
    EXPECT_EQ(code_of(s), minfer::toolbox::codes::sources_incompatible);
    s.models.pop_back();
    s.t = NAN;
    EXPECT_EQ(code_of(s), errc::bad_value_text);
    EXPECT_EQ(subject_of(s), "t");
    s.t = INFINITY;
    EXPECT_EQ(code_of(s), errc::bad_value_text);
    s.t = -0.5;  // mergekit computes any t (an extrapolation)
    EXPECT_EQ(code_of(s), errc::ok);
    s.base = 2;
    EXPECT_EQ(code_of(s), minfer::toolbox::codes::sources_incompatible);
}

TEST(MergeMath, RefusesBlocksThatDoNotFit) {
    const std::size_t n = 10;
    std::vector<float> a(n, 1.0f), b(n, 2.0f), out(n);
    mm::tensor_merge tm = make(mm::method::linear, {{1, 1}, {1, 1}}, n);
    tm.name = "blk.0.attn_q.weight";
    auto m = mm::merger::create(tm);
    ASSERT_TRUE(m);
    // one span per model
    std::vector<std::span<const float>> one{std::span<const float>(a)};
    EXPECT_EQ(m->merge(one, out).error().code, errc::buffer_size_mismatch);
    // lengths that differ
    std::vector<std::span<const float>> uneven{std::span<const float>(a).first(4), std::span<const float>(b).first(5)};
    auto e = m->merge(uneven, std::span<float>(out).first(4));
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code, errc::buffer_size_mismatch);
    EXPECT_EQ(e.error().subject, "blk.0.attn_q.weight");
    // past the end
    std::vector<std::span<const float>> first{std::span<const float>(a).first(8), std::span<const float>(b).first(8)};
    ASSERT_TRUE(m->merge(first, std::span<float>(out).first(8)));
    EXPECT_EQ(m->merge(first, std::span<float>(out).first(8)).error().code, errc::index_out_of_range);
    EXPECT_EQ(m->position(), 8u);  // a refused block changes nothing
    std::vector<std::span<const float>> rest{std::span<const float>(a).last(2), std::span<const float>(b).last(2)};
    ASSERT_TRUE(m->merge(rest, std::span<float>(out).last(2)));
    EXPECT_TRUE(m->finished());
    EXPECT_EQ(out, std::vector<float>(n, 1.5f));
    // a statistics pass when none is due, the output pass before the statistics
    EXPECT_EQ(m->observe(rest).error().code, errc::index_out_of_range);
    mm::tensor_merge sl = make(mm::method::slerp, {{}, {}}, n);
    auto s = mm::merger::create(sl);
    ASSERT_TRUE(s);
    std::vector<std::span<const float>> whole{std::span<const float>(a), std::span<const float>(b)};
    EXPECT_EQ(s->merge(whole, out).error().code, errc::index_out_of_range);
    ASSERT_TRUE(s->observe(whole));
    EXPECT_FALSE(s->needs_statistics());
    ASSERT_TRUE(s->merge(whole, out));
    // merge_in_memory: spans shorter than the tensor
    EXPECT_EQ(mm::merge_in_memory(sl, first, out).error().code, errc::buffer_size_mismatch);
}

}  // namespace
