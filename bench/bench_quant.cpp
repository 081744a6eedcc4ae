// minfer-bench-quant: dequantization speed, ours against ggml's to_float, single-threaded, in one
// run on one buffer, with the f32 store bandwidth of the same buffer measured in that run as the
// ceiling (a kernel cannot write its floats faster than plain stores can).
//
//   minfer-bench-quant [--values N] [--reps K] [--types a,b,c] [--markdown] [--check]
//                      [--parallel-values N] [--cache-values N]
//
// For every convertible type it makes N values of data (ggml_quantize_chunk of normal random floats
// when llama.cpp's library is there, random bytes with sane scales otherwise), checks FIRST that our
// f32 bits equal ggml's to_float (a NaN equals any NaN; any other difference aborts), then times,
// best of K: ggml's to_float, ours with the active kernels, ours with the scalar kernels, and plain
// f32 stores over the same buffer, taking turns (so that all see the same contention). The
// target of a type is min(2 x ggml, 0.7 x store bandwidth) (0.7 x bandwidth where ggml has no
// to_float). A second table times ggml and ours on a slice small enough to stay in L2 (the
// kernels' own speed, which the memory hides in the first). Then dequantize_parallel with 1 and 2
// threads on a larger tensor for a few types.
//
// --check: no timing; random blocks (with NaN/Inf/subnormal/zero scales) through the scalar and
// the best supported SIMD kernels, reporting the first value that differs (a development aid; the
// unit tests and the fuzzer are the real guard).
//
// MINFER_LLAMA_LIB names libggml-base.so (scripts/llama-ref.sh); without it the ggml columns say
// "absent" and only our kernels are compared and timed.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"

namespace {

namespace q = minfer::quant;
using minfer::gguf::tensor_type;
using minfer::llama_ref::llama_lib;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "minfer-bench-quant: %s\n", what.c_str());
    std::exit(1);
}

// A 64-byte aligned buffer (a kernel's best case, and the same for every contender).
template <class T>
struct buffer {
    T* p = nullptr;
    std::size_t n = 0;
    explicit buffer(std::size_t count) : n(count) {
        const std::size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
        p = static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
        if (p == nullptr) die("out of memory");
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() { std::free(p); }
    std::span<T> span() { return {p, n}; }
    std::span<std::byte> bytes() { return {reinterpret_cast<std::byte*>(p), n * sizeof(T)}; }
};

struct type_row {
    tensor_type type;
    // Byte offsets of the f16 scales inside one block (-1 ends), for data made without ggml and
    // for --check's special scales.
    int f16_at[3];
};

// Every convertible type, in the table's order. Rows whose type ggml has no to_float for show no
// ggml column.
constexpr type_row all_types[] = {
    {tensor_type::f16, {-1, -1, -1}},     {tensor_type::bf16, {-1, -1, -1}},   {tensor_type::q4_0, {0, -1, -1}},
    {tensor_type::q4_1, {0, 2, -1}},      {tensor_type::q5_0, {0, -1, -1}},    {tensor_type::q5_1, {0, 2, -1}},
    {tensor_type::q8_0, {0, -1, -1}},     {tensor_type::q2_k, {80, 82, -1}},   {tensor_type::q3_k, {108, -1, -1}},
    {tensor_type::q4_k, {0, 2, -1}},      {tensor_type::q5_k, {0, 2, -1}},     {tensor_type::q6_k, {208, -1, -1}},
    {tensor_type::q8_k, {-1, -1, -1}},    {tensor_type::iq2_xxs, {0, -1, -1}}, {tensor_type::iq2_xs, {0, -1, -1}},
    {tensor_type::iq2_s, {0, -1, -1}},    {tensor_type::iq3_xxs, {0, -1, -1}}, {tensor_type::iq3_s, {0, -1, -1}},
    {tensor_type::iq1_s, {0, -1, -1}},    {tensor_type::iq1_m, {-1, -1, -1}},  {tensor_type::iq4_nl, {0, -1, -1}},
    {tensor_type::iq4_xs, {0, -1, -1}},   {tensor_type::tq1_0, {52, -1, -1}},  {tensor_type::tq2_0, {64, -1, -1}},
    {tensor_type::mxfp4, {-1, -1, -1}},   {tensor_type::nvfp4, {-1, -1, -1}},  {tensor_type::q1_0, {0, -1, -1}},
    {tensor_type::q2_0, {0, -1, -1}},     {tensor_type::f32, {-1, -1, -1}},    {tensor_type::f64, {-1, -1, -1}},
    {tensor_type::i8, {-1, -1, -1}},      {tensor_type::i16, {-1, -1, -1}},    {tensor_type::i32, {-1, -1, -1}},
};

std::uint32_t id(tensor_type t) { return static_cast<std::uint32_t>(t); }
std::string name(tensor_type t) { return std::string(minfer::gguf::to_string(t)); }
bool is_plain(tensor_type t) {
    return t == tensor_type::f32 || t == tensor_type::f64 || t == tensor_type::i8 || t == tensor_type::i16 ||
           t == tensor_type::i32;
}

// A finite f16 of magnitude below 2 (exponent field at most 15): a sane scale.
std::uint16_t sane_f16(std::mt19937_64& rng) { return static_cast<std::uint16_t>(rng() & 0xBFFF); }

void put16(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, 2); }

// Values of types ggml cannot make (or any type without ggml): random bytes, scales made sane.
void fill_own(const type_row& row, std::span<std::byte> out, std::mt19937_64& rng) {
    const tensor_type t = row.type;
    const auto* tr = minfer::gguf::traits(t);
    std::size_t i = 0;
    for (; i + 8 <= out.size(); i += 8) {
        const std::uint64_t v = rng();
        std::memcpy(out.data() + i, &v, 8);
    }
    for (; i < out.size(); ++i) out[i] = static_cast<std::byte>(rng());
    std::normal_distribution<float> normal(0.0f, 1.0f);
    if (t == tensor_type::f32) {
        for (std::size_t k = 0; k < out.size() / 4; ++k) {
            const float v = normal(rng);
            std::memcpy(out.data() + k * 4, &v, 4);
        }
    } else if (t == tensor_type::f64) {
        for (std::size_t k = 0; k < out.size() / 8; ++k) {
            const double v = normal(rng);
            std::memcpy(out.data() + k * 8, &v, 8);
        }
    } else if (t == tensor_type::f16 || t == tensor_type::bf16) {
        for (std::size_t k = 0; k < out.size() / 2; ++k) put16(out.data() + k * 2, sane_f16(rng));
    } else if (t == tensor_type::q8_k) {
        for (std::size_t b = 0; b < out.size() / tr->block_bytes; ++b) {
            const float d = normal(rng) * 0.01f;
            std::memcpy(out.data() + b * tr->block_bytes, &d, 4);
        }
    } else {
        for (std::size_t b = 0; b < out.size() / tr->block_bytes; ++b)
            for (int at : row.f16_at)
                if (at >= 0) put16(out.data() + b * tr->block_bytes + static_cast<std::size_t>(at), sane_f16(rng));
    }
}

// N values of `type` made by ggml from normal random floats: one chunk quantized (the iq formats
// quantize slowly), repeated to the full size.
bool fill_ggml(const llama_lib* lib, tensor_type t, std::span<std::byte> out, std::size_t n_values) {
    if (lib == nullptr || is_plain(t) || t == tensor_type::q8_k) return false;
    // An older library may not know the type (its quantizer would abort): our own data then.
    const auto* tt = lib->type_traits(id(t));
    if (tt == nullptr || tt->to_float == nullptr) return false;
    constexpr std::size_t per_row = 4096;
    const std::size_t chunk = std::min<std::size_t>(n_values, std::size_t{1} << 19);
    std::vector<float> src(chunk);
    std::mt19937_64 rng(0x5eed + id(t));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : src) v = normal(rng);
    const std::vector<float> imatrix(per_row, 1.0f);
    const std::uint64_t chunk_bytes = q::bytes_for(t, chunk);
    std::vector<std::byte> qbuf(chunk_bytes);
    const std::size_t wrote = lib->api().ggml_quantize_chunk(static_cast<int>(id(t)), src.data(), qbuf.data(), 0,
                                                             static_cast<std::int64_t>(chunk / per_row),
                                                             static_cast<std::int64_t>(per_row), imatrix.data());
    if (wrote != chunk_bytes)
        die(name(t) + ": ggml_quantize_chunk wrote " + std::to_string(wrote) + " bytes, expected " +
            std::to_string(chunk_bytes));
    for (std::size_t off = 0; off < out.size(); off += chunk_bytes)
        std::memcpy(out.data() + off, qbuf.data(), std::min<std::size_t>(chunk_bytes, out.size() - off));
    return true;
}

bool same_value(float a, float b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    std::uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

std::uint32_t bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    return x;
}

// The first index where `a` and `b` differ, or n.
std::size_t first_difference(const float* a, const float* b, std::size_t n) {
    // Bitwise first (fast), then NaN-tolerant at the differences.
    for (std::size_t i = 0; i < n; ++i)
        if (bits(a[i]) != bits(b[i]) && !same_value(a[i], b[i])) return i;
    return n;
}

void expect_equal(const std::string& what, tensor_type t, const float* want, const float* got, std::size_t n,
                  std::span<const std::byte> src) {
    const std::size_t i = first_difference(want, got, n);
    if (i == n) return;
    const auto* tr = minfer::gguf::traits(t);
    const std::size_t block = i / tr->block_elems;
    std::string hex;
    for (std::size_t k = 0; k < tr->block_bytes && k < 64; ++k) {
        char b[4];
        std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(src[block * tr->block_bytes + k]));
        hex += b;
    }
    char msg[512];
    std::snprintf(msg, sizeof msg, "%s: %s differs at value %zu (block %zu, element %zu): want %a (0x%08x), got %a (0x%08x)",
                  name(t).c_str(), what.c_str(), i, block, i % tr->block_elems, static_cast<double>(want[i]),
                  bits(want[i]), static_cast<double>(got[i]), bits(got[i]));
    die(std::string(msg).append("\n  block bytes: ").append(hex));
}

// The best time of each function over `reps` rounds, the functions taking turns within a round
// (in a rotating order): on a shared machine every contender then sees the same spells of
// contention, and the ratios between them hold even when the absolute rates drift.
std::vector<double> best_interleaved(int reps, const std::vector<std::function<void()>>& fs) {
    std::vector<double> best(fs.size(), 1e30);
    for (int r = 0; r < reps; ++r)
        for (std::size_t i = 0; i < fs.size(); ++i) {
            const std::size_t k = (i + static_cast<std::size_t>(r)) % fs.size();
            const auto t0 = clock_type::now();
            fs[k]();
            best[k] = std::min(best[k], std::chrono::duration<double>(clock_type::now() - t0).count());
        }
    return best;
}

template <class F>
double best_seconds(int reps, F&& f) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = clock_type::now();
        f();
        const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
        best = std::min(best, s);
    }
    return best;
}

// Plain 32-byte stores of a constant over the buffer: what the fastest kernel could do.
__attribute__((target("avx"))) void store_loop(float* out, std::size_t n) {
    const __m256 v = _mm256_set1_ps(1.5f);
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm256_storeu_ps(out + i, v);
        _mm256_storeu_ps(out + i + 8, v);
        _mm256_storeu_ps(out + i + 16, v);
        _mm256_storeu_ps(out + i + 24, v);
    }
    for (; i < n; ++i) out[i] = 1.5f;
}

void run_kernel(q::isa which, tensor_type t, std::span<const std::byte> src, std::span<float> dst) {
    if (auto r = q::dequantize_with(which, t, src, dst); !r)
        die(name(t) + ": dequantize_with(" + std::string(q::to_string(which)) + ") failed: " + r.error().detail);
}

struct options {
    std::size_t values = std::size_t{16} << 20;
    std::size_t parallel_values = std::size_t{64} << 20;
    std::size_t cache_values = std::size_t{32} << 10;
    int reps = 5;
    std::vector<std::string> types;
    bool markdown = false;
    bool check = false;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--values") o.values = std::stoull(value());
        else if (a == "--parallel-values") o.parallel_values = std::stoull(value());
        else if (a == "--cache-values") o.cache_values = std::stoull(value());
        else if (a == "--reps") o.reps = std::max(1, std::stoi(value()));
        else if (a == "--markdown") o.markdown = true;
        else if (a == "--check") o.check = true;
        else if (a == "--types") {
            const std::string list = value();
            std::size_t p = 0;
            while (p <= list.size()) {
                const std::size_t c = std::min(list.find(',', p), list.size());
                if (c > p) {
                    o.types.push_back(list.substr(p, c - p));
                    if (!minfer::gguf::tensor_type_from_name(o.types.back())) die("--types: unknown type " + o.types.back());
                }
                p = c + 1;
            }
        } else if (a == "--help" || a == "-h") {
            std::puts("minfer-bench-quant [--values N] [--reps K] [--types a,b,c] [--markdown] [--check] "
                      "[--parallel-values N] [--cache-values N]");
            std::exit(0);
        } else die("unknown option " + a);
    }
    // Whole rows of ggml_quantize_chunk (4096 values), which are whole blocks of every type.
    o.values = std::max<std::size_t>(4096, o.values / 4096 * 4096);
    o.parallel_values = std::max<std::size_t>(4096, o.parallel_values / 4096 * 4096);
    o.cache_values = std::min(o.values, std::max<std::size_t>(4096, o.cache_values / 4096 * 4096));
    return o;
}

bool wanted(const options& o, tensor_type t) {
    if (o.types.empty()) return true;
    for (const std::string& s : o.types)
        if (minfer::gguf::tensor_type_from_name(s) == t) return true;
    return false;
}

// --check: scalar against the best SIMD kernels on random blocks with special scales.
int check_mode(const options& o) {
    // Whatever MINFER_QUANT_ISA says: the best SIMD set this build and CPU have.
    q::isa simd = q::isa::scalar;
    for (q::isa i : {q::isa::avx2, q::isa::avx512, q::isa::neon})
        if (q::isa_supported(i)) simd = i;
    if (simd == q::isa::scalar) {
        std::puts("--check: no SIMD kernels in this build or on this CPU, nothing to compare");
        return 0;
    }
    static constexpr std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff,
                                                 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe00, 0x7fff, 0x3c00, 0xbc00};
    std::mt19937_64 rng(42);
    int failures = 0;
    for (const type_row& row : all_types) {
        const tensor_type t = row.type;
        if (!wanted(o, t) || !q::can_dequantize(t)) continue;
        const auto* tr = minfer::gguf::traits(t);
        const std::size_t blocks = std::max<std::size_t>(1, (std::size_t{1} << 16) / tr->block_elems);
        std::vector<std::byte> src(blocks * tr->block_bytes);
        for (std::byte& b : src) b = static_cast<std::byte>(rng());
        // Every other block: a special pattern in each f16 scale (random bytes cover the rest).
        for (std::size_t b = 0; b < blocks; b += 2)
            for (int at : row.f16_at)
                if (at >= 0)
                    put16(src.data() + b * tr->block_bytes + static_cast<std::size_t>(at),
                          specials[(b / 2 + static_cast<std::size_t>(at)) % std::size(specials)]);
        if (t == tensor_type::f16 || t == tensor_type::bf16)
            for (std::size_t k = 0; k < std::size(specials); ++k) put16(src.data() + k * 2, specials[k]);
        std::vector<float> a(blocks * tr->block_elems), b(blocks * tr->block_elems);
        // Short runs first (the plain types' tails after their 8- or 16-value steps), at an
        // unaligned offset, then the whole buffer.
        if (tr->block_elems == 1)
            for (std::size_t len = 1; len <= 40 && len + 3 <= blocks; ++len) {
                const std::span<const std::byte> part(src.data() + 3 * tr->block_bytes, len * tr->block_bytes);
                std::vector<float> pa(len), pb(len);
                run_kernel(q::isa::scalar, t, part, pa);
                run_kernel(simd, t, part, pb);
                if (first_difference(pa.data(), pb.data(), len) != len) {
                    std::printf("%-8s MISMATCH on a run of %zu values\n", name(t).c_str(), len);
                    ++failures;
                }
            }
        run_kernel(q::isa::scalar, t, src, a);
        run_kernel(simd, t, src, b);
        std::size_t nan_payload = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (bits(a[i]) != bits(b[i]) && std::isnan(a[i]) && std::isnan(b[i])) ++nan_payload;
        const std::size_t i = first_difference(a.data(), b.data(), a.size());
        if (i == a.size()) {
            std::printf("%-8s ok (%zu values%s)\n", name(t).c_str(), a.size(),
                        nan_payload != 0 ? (", " + std::to_string(nan_payload) + " NaN payloads differ").c_str() : "");
            continue;
        }
        ++failures;
        const std::size_t blk = i / tr->block_elems;
        std::string hex;
        for (std::size_t k = 0; k < tr->block_bytes && k < 80; ++k) {
            char h[4];
            std::snprintf(h, sizeof h, "%02x", static_cast<unsigned>(src[blk * tr->block_bytes + k]));
            hex += h;
        }
        std::printf("%-8s MISMATCH at value %zu (block %zu, element %zu): scalar %a (0x%08x), %s %a (0x%08x)\n"
                    "         block: %s\n",
                    name(t).c_str(), i, blk, i % tr->block_elems, static_cast<double>(a[i]), bits(a[i]),
                    std::string(q::to_string(simd)).c_str(), static_cast<double>(b[i]), bits(b[i]), hex.c_str());
    }
    return failures == 0 ? 0 : 1;
}

struct result_row {
    std::string type;
    double ggml = -1, ours = -1, scalar = -1;  // G values/s; -1: absent
    double ggml_hot = -1, ours_hot = -1;        // the same on a slice that stays in L2
    double bandwidth = -1;                      // f32 stores, timed in turn with the kernels
};

std::string fmt(double v, const char* f = "%.2f") {
    if (v < 0) return "-";
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    if (o.check) return check_mode(o);

    std::string why;
    const llama_lib* lib = llama_lib::require(minfer::llama_ref::part::type_traits | minfer::llama_ref::part::quantize_chunk, why);
    const q::isa active = q::active_isa();
    const std::string active_name(q::to_string(active));
    const std::size_t n = o.values;
    const double gvals = static_cast<double>(n) * 1e-9;

    std::printf("minfer-bench-quant: %zu values (%zu MiB of f32 out), best of %d, single thread; kernels: %s\n",
                n, n * 4 >> 20, o.reps, active_name.c_str());
    if (lib == nullptr) std::printf("ggml: absent (%s); ggml columns empty, data made by us\n", why.c_str());
    else std::printf("ggml: %s\n", lib->path().c_str());

    buffer<float> out(n), ref(n);
    std::memset(out.p, 0, n * 4);  // fault the pages in before any timing
    std::memset(ref.p, 0, n * 4);
    const double store_s = best_seconds(o.reps, [&] { store_loop(out.p, n); });
    const double memset_s = best_seconds(o.reps, [&] { std::memset(out.p, 0, n * 4); });
    const double bw = gvals / store_s;
    std::printf("f32 store bandwidth: %.2f G values/s (%.1f GB/s) with 32-byte stores; memset %.2f G values/s (%.1f GB/s)\n",
                bw, bw * 4, gvals / memset_s, gvals / memset_s * 4);

    std::vector<result_row> rows;
    for (const type_row& row : all_types) {
        const tensor_type t = row.type;
        if (!wanted(o, t)) continue;
        if (!q::can_dequantize(t)) {
            std::fprintf(stderr, "%s: not convertible in this build (no scalar kernel yet?), skipped\n", name(t).c_str());
            continue;
        }
        buffer<std::byte> src(q::bytes_for(t, n));
        std::mt19937_64 rng(0xda7a + id(t));
        if (!fill_ggml(lib, t, src.span(), n)) fill_own(row, src.span(), rng);
        minfer::llama_ref::row_dequantize to_float = nullptr;
        if (lib != nullptr && !is_plain(t)) {
            const auto* tt = lib->type_traits(id(t));
            if (tt != nullptr) to_float = tt->to_float;
        }
        // The bit check, before any timing: ours (active and scalar) against ggml, or each other.
        run_kernel(active, t, src.span(), out.span());
        if (to_float != nullptr) {
            to_float(src.p, ref.p, static_cast<std::int64_t>(n));
            expect_equal(active_name + " kernels against ggml's to_float", t, ref.p, out.p, n, src.span());
            run_kernel(q::isa::scalar, t, src.span(), out.span());
            expect_equal("scalar kernels against ggml's to_float", t, ref.p, out.p, n, src.span());
        } else {
            run_kernel(q::isa::scalar, t, src.span(), ref.span());
            expect_equal(active_name + " kernels against the scalar ones", t, ref.p, out.p, n, src.span());
        }
        result_row r;
        r.type = name(t);
        const std::span<const std::byte> in = src.span();
        // Each contender in turn with the others and with the store loop (see best_interleaved).
        std::vector<std::function<void()>> fs = {
            [&] { run_kernel(active, t, in, out.span()); },
            [&] { run_kernel(q::isa::scalar, t, in, out.span()); },
            [&] { store_loop(out.p, n); },
        };
        if (to_float != nullptr) fs.push_back([&] { to_float(src.p, out.p, static_cast<std::int64_t>(n)); });
        const std::vector<double> best = best_interleaved(o.reps, fs);
        r.ours = gvals / best[0];
        r.scalar = gvals / best[1];
        r.bandwidth = gvals / best[2];
        if (to_float != nullptr) r.ggml = gvals / best[3];
        // In cache: the first cache_values values converted over and over (the compute, not the memory).
        const std::size_t hot = o.cache_values, loops = std::max<std::size_t>(1, n / hot);
        const std::span<const std::byte> hot_in = in.first(q::bytes_for(t, hot));
        const double hot_g = static_cast<double>(hot * loops) * 1e-9;
        std::vector<std::function<void()>> hs = {[&] {
            for (std::size_t k = 0; k < loops; ++k) run_kernel(active, t, hot_in, out.span().first(hot));
        }};
        if (to_float != nullptr)
            hs.push_back([&] {
                for (std::size_t k = 0; k < loops; ++k) to_float(src.p, out.p, static_cast<std::int64_t>(hot));
            });
        const std::vector<double> hot_best = best_interleaved(o.reps, hs);
        r.ours_hot = hot_g / hot_best[0];
        if (to_float != nullptr) r.ggml_hot = hot_g / hot_best[1];
        rows.push_back(r);
        std::fprintf(stderr, "  %-8s ggml %s  %s %s  scalar %s\n", r.type.c_str(), fmt(r.ggml).c_str(),
                     active_name.c_str(), fmt(r.ours).c_str(), fmt(r.scalar).c_str());
    }

    // The table. Bandwidth, fraction and target use the store loop timed in turn with the row's kernels.
    int missed = 0;
    const std::string active_col = active_name + " G/s";
    if (o.markdown) {
        std::printf("\n| type | ggml G/s | %s | scalar G/s | ours/ggml | bandwidth G/s | ours/bandwidth | target G/s | result |\n",
                    active_col.c_str());
        std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    } else {
        std::printf("\n%-8s %9s %9s %10s %9s %9s %8s %10s  %s\n", "type", "ggml G/s", active_col.c_str(), "scalar G/s",
                    "ours/ggml", "bw G/s", "ours/bw", "target G/s", "result");
    }
    for (const result_row& r : rows) {
        const double rbw = r.bandwidth;
        const double target = r.ggml > 0 ? std::min(2 * r.ggml, 0.7 * rbw) : 0.7 * rbw;
        const bool pass = r.ours >= target;
        if (!pass) ++missed;
        const std::string ratio = r.ggml > 0 ? fmt(r.ours / r.ggml, "%.2fx") : "-";
        const std::string frac = fmt(r.ours / rbw, "%.2f");
        if (o.markdown)
            std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.type.c_str(), fmt(r.ggml).c_str(),
                        fmt(r.ours).c_str(), fmt(r.scalar).c_str(), ratio.c_str(), fmt(rbw).c_str(), frac.c_str(),
                        fmt(target).c_str(), pass ? "PASS" : "MISS");
        else
            std::printf("%-8s %9s %9s %10s %9s %9s %8s %10s  %s\n", r.type.c_str(), fmt(r.ggml).c_str(),
                        fmt(r.ours).c_str(), fmt(r.scalar).c_str(), ratio.c_str(), fmt(rbw).c_str(), frac.c_str(),
                        fmt(target).c_str(), pass ? "PASS" : "MISS");
    }
    std::printf("\nbandwidth: f32 32-byte stores over the output, timed in turn with each row's kernels (alone at the "
                "start: %.2f G f32/s; memset %.2f G f32/s); target = min(2 x ggml, 0.7 x bandwidth); %d of %zu missed\n",
                bw, gvals / memset_s, missed, rows.size());

    // In cache.
    if (o.markdown)
        std::printf("\nIn cache (%zu values, %zu KiB out, converted over and over):\n\n| type | ggml G/s | %s | ours/ggml |\n|---|---:|---:|---:|\n",
                    o.cache_values, o.cache_values * 4 >> 10, active_col.c_str());
    else
        std::printf("\nin cache (%zu values, %zu KiB out, converted over and over):\n%-8s %9s %9s %9s\n", o.cache_values,
                    o.cache_values * 4 >> 10, "type", "ggml G/s", active_col.c_str(), "ours/ggml");
    for (const result_row& r : rows) {
        const std::string ratio = r.ggml_hot > 0 ? fmt(r.ours_hot / r.ggml_hot, "%.2fx") : "-";
        if (o.markdown)
            std::printf("| %s | %s | %s | %s |\n", r.type.c_str(), fmt(r.ggml_hot).c_str(), fmt(r.ours_hot).c_str(), ratio.c_str());
        else
            std::printf("%-8s %9s %9s %9s\n", r.type.c_str(), fmt(r.ggml_hot).c_str(), fmt(r.ours_hot).c_str(), ratio.c_str());
    }

    // Two threads against one on a larger tensor.
    const tensor_type scaling[] = {tensor_type::q4_0, tensor_type::q4_k, tensor_type::q8_0, tensor_type::iq2_xxs,
                                   tensor_type::f16};
    bool header = false;
    const std::size_t pn = o.parallel_values;
    std::unique_ptr<buffer<float>> pout;
    for (tensor_type t : scaling) {
        if (!wanted(o, t) || !q::can_dequantize(t)) continue;
        if (!header) {
            pout = std::make_unique<buffer<float>>(pn);
            std::memset(pout->p, 0, pn * 4);
            if (o.markdown) std::printf("\n| type | 1 thread G/s | 2 threads G/s | ratio |\n|---|---:|---:|---:|\n");
            else std::printf("\ndequantize_parallel, %zu values (%zu MiB out):\n%-8s %12s %13s %6s\n", pn, pn * 4 >> 20,
                             "type", "1 thread G/s", "2 threads G/s", "ratio");
            header = true;
        }
        buffer<std::byte> src(q::bytes_for(t, pn));
        std::mt19937_64 rng(0xbeef + id(t));
        const type_row* row = nullptr;
        for (const type_row& r : all_types)
            if (r.type == t) row = &r;
        if (!fill_ggml(lib, t, src.span(), pn)) fill_own(*row, src.span(), rng);
        auto par = [&](unsigned threads) {
            return [&, threads] {
                if (auto r = q::dequantize_parallel(t, src.span(), pout->span(), threads); !r)
                    die(name(t) + ": dequantize_parallel failed");
            };
        };
        // One and two threads in turn, best of each: the memory of this shared machine varies
        // from second to second, and both should see the same moments. Twice the repetitions of
        // the single-thread tables, for the same reason.
        const std::vector<double> best = best_interleaved(2 * o.reps, {par(1), par(2)});
        const double one = static_cast<double>(pn) * 1e-9 / best[0], two = static_cast<double>(pn) * 1e-9 / best[1];
        if (o.markdown) std::printf("| %s | %.2f | %.2f | %.2fx |\n", name(t).c_str(), one, two, two / one);
        else std::printf("%-8s %12.2f %13.2f %5.2fx\n", name(t).c_str(), one, two, two / one);
    }
    return 0;
}
