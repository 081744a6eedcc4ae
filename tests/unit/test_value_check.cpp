// minfer::check's value checks (value_check.hpp): NaN and Inf planted by hand in every float type
// and in every scale field of every quantized type that has one, at the first, a middle and the
// last element or block; values mode; all-zero warnings; clean random data; determinism over
// thread counts and window cuts (blocks straddling windows); the examples cap.
//
// Expected values never come from the code under test: the block layouts (offset of each scale
// field) are written out below from docs/QUANT.md, the planted bits are literals, and the expected
// findings are the planted positions. The walk is driven by a small walker of the test's own
// (any window size, blocks cut anywhere, jobs on N threads), and by minfer's walker when it is built.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gguf_bytes.hpp"
#include "minfer/check/value_check.hpp"

namespace {

namespace check = minfer::check;
namespace gg = minfer::gguf;
using minfer::test::bytes;
using minfer::test::temp_dir;
using tt = gg::tensor_type;

struct tspec {
    std::string name;
    tt type;
    std::int64_t ne0;
    bytes data;
};

// A single-file model with these tensors (alignment 32), opened.
gg::model make_model(const temp_dir& dir, const std::vector<tspec>& ts, const std::string& file = "m.gguf") {
    minfer::test::gguf_bytes g;
    g.header(3, static_cast<std::int64_t>(ts.size()), 0);
    std::uint64_t off = 0;
    for (const auto& t : ts) {
        g.tensor_info(t.name, {t.ne0}, t.type, off);
        off += (t.data.size() + 31) / 32 * 32;
    }
    g.pad(32);
    for (const auto& t : ts) g.raw(std::span<const std::byte>(t.data)).pad(32);
    minfer::test::write_file(dir / file, g.span());
    auto m = gg::model::open(dir / file);
    if (!m) ADD_FAILURE() << m.error().message();
    return std::move(m).value();
}

// The test's walker: windows of `window` bytes at multiples of `window` of the file, the tensors'
// pieces in each, the consumer's jobs spread over `threads` threads.
std::vector<check::tensor_verdict> walk(const gg::model& m, const check::value_check_options& o,
                                        std::uint64_t window = 65536, unsigned threads = 1) {
    auto c = check::value_consumer::make(m, o);
    EXPECT_TRUE(c);
    const gg::model_part& part = m.parts()[0];
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& t : m.tensors()) {
        const std::uint64_t a = part.view.data_offset() + t.info->offset;
        lo = std::min(lo, a);
        hi = std::max(hi, a + t.info->n_bytes);
    }
    std::uint64_t k = 0;
    for (std::uint64_t w0 = lo / window * window; lo < hi && w0 < hi; w0 += window) {
        std::vector<check::tensor_piece> pieces;
        for (std::uint32_t i = 0; i < m.tensors().size(); ++i) {
            const auto& t = m.tensors()[i];
            const std::uint64_t a = part.view.data_offset() + t.info->offset, n = t.info->n_bytes;
            const std::uint64_t s = std::max(a, w0), e = std::min(a + n, w0 + window);
            if (s >= e) continue;
            check::tensor_piece p;
            p.tensor = i;
            p.offset = s - a;
            p.bytes = m.tensor_data(t).subspan(s - a, e - s);
            p.first = s == a;
            p.last = e == a + n;
            pieces.push_back(p);
        }
        check::window w;
        w.index = k++;
        w.tensors = pieces;
        std::vector<check::job> jobs;
        c->schedule(w, jobs);
        if (threads == 1) {
            for (auto& j : jobs) j();
            continue;
        }
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (std::size_t j = t; j < jobs.size(); j += threads) jobs[j]();
            });
        for (auto& th : pool) th.join();
    }
    auto r = c->take();
    EXPECT_TRUE(r);
    return std::move(r).value();
}

std::uint32_t rnd32(std::mt19937& g) { return static_cast<std::uint32_t>(g()); }

template <class T>
void put(bytes& b, std::size_t off, T v) {
    std::memcpy(b.data() + off, &v, sizeof v);
}

// ---- float types -------------------------------------------------------------------------------

struct float_type {
    tt type;
    std::size_t size;
    std::uint64_t nan, pinf, ninf;  // planted bits
    std::uint64_t exp;              // exponent mask (to keep random data finite)
};
const float_type float_types[] = {
    {tt::f32, 4, 0x7fc00001, 0x7f800000, 0xff800000, 0x7f800000},
    {tt::f16, 2, 0x7e01, 0x7c00, 0xfc00, 0x7c00},
    {tt::bf16, 2, 0x7fc1, 0x7f80, 0xff80, 0x7f80},
    {tt::f64, 8, 0x7ff8000000000001ull, 0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff0000000000000ull},
};

void put_bits(bytes& b, std::size_t off, std::size_t size, std::uint64_t v) { std::memcpy(b.data() + off, &v, size); }

// n random finite elements (exponent never all ones; never all zero).
bytes finite_elements(const float_type& f, std::size_t n, std::uint32_t seed) {
    std::mt19937 g(seed);
    bytes b(n * f.size);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t v = (std::uint64_t{rnd32(g)} << 32) | rnd32(g);
        if (f.size < 8) v &= (std::uint64_t{1} << (8 * f.size)) - 1;
        if ((v & f.exp) == f.exp) v &= ~(f.exp & (~f.exp + 1));  // clear the exponent's lowest bit
        put_bits(b, i * f.size, f.size, v);
    }
    return b;
}

TEST(ValueCheck, FloatTypesNanInfAtFirstMiddleLast) {
    temp_dir dir;
    for (const auto& f : float_types) {
        const std::size_t n = 4099;  // odd: the last element is in the reduction's tail
        const std::size_t at[3] = {0, n / 2, n - 1};
        const std::uint64_t planted[3] = {f.nan, f.pinf, f.ninf};
        for (int kind = 0; kind < 3; ++kind) {
            bytes data = finite_elements(f, n, 7u + static_cast<std::uint32_t>(kind));
            for (std::size_t p : at) put_bits(data, p * f.size, f.size, planted[kind]);
            auto m = make_model(dir, {{"w", f.type, static_cast<std::int64_t>(n), data}});
            const auto v = walk(m, {});
            SCOPED_TRACE(std::string(gg::to_string(f.type)) + " kind " + std::to_string(kind));
            ASSERT_EQ(v.size(), 1u);
            EXPECT_EQ(v[0].scope, check::check_scope::elements);
            EXPECT_EQ(v[0].nan, kind == 0 ? 3u : 0u);
            EXPECT_EQ(v[0].inf, kind == 0 ? 0u : 3u);
            EXPECT_EQ(v[0].findings(), 3u);
            EXPECT_FALSE(v[0].all_zero);
            EXPECT_EQ(v[0].bytes_checked, n * f.size);
            ASSERT_EQ(v[0].examples.size(), 3u);
            for (int i = 0; i < 3; ++i) {
                const auto& x = v[0].examples[static_cast<std::size_t>(i)];
                EXPECT_EQ(x.index, at[i]);
                EXPECT_EQ(x.place, check::finding_place::element);
                EXPECT_EQ(x.bits, planted[kind]);
                EXPECT_EQ(x.bit_width, 8 * f.size);
                EXPECT_EQ(x.kind, kind == 0 ? check::value_kind::nan : check::value_kind::inf);
                if (kind == 0) {
                    EXPECT_TRUE(std::isnan(x.value));
                } else {
                    EXPECT_EQ(x.value, kind == 1 ? INFINITY : -INFINITY);
                }
            }
        }
    }
}

// ---- quantized types: the scale fields, from docs/QUANT.md ------------------------------------

enum class enc { f16, f32, e8m0, ue4m3, iq1m };
struct qfield {
    const char* name;
    std::size_t off;
    enc e;
};
struct qtype {
    tt type;
    std::int64_t values;  // per block
    std::size_t bytes;    // per block
    std::vector<qfield> fields;
};
const std::vector<qtype>& qtypes() {
    static const std::vector<qtype> v = {
        {tt::q4_0, 32, 18, {{"d", 0, enc::f16}}},
        {tt::q4_1, 32, 20, {{"d", 0, enc::f16}, {"m", 2, enc::f16}}},
        {tt::q5_0, 32, 22, {{"d", 0, enc::f16}}},
        {tt::q5_1, 32, 24, {{"d", 0, enc::f16}, {"m", 2, enc::f16}}},
        {tt::q8_0, 32, 34, {{"d", 0, enc::f16}}},
        {tt::q8_1, 32, 36, {{"d", 0, enc::f16}, {"s", 2, enc::f16}}},
        {tt::q2_k, 256, 84, {{"d", 80, enc::f16}, {"dmin", 82, enc::f16}}},
        {tt::q3_k, 256, 110, {{"d", 108, enc::f16}}},
        {tt::q4_k, 256, 144, {{"d", 0, enc::f16}, {"dmin", 2, enc::f16}}},
        {tt::q5_k, 256, 176, {{"d", 0, enc::f16}, {"dmin", 2, enc::f16}}},
        {tt::q6_k, 256, 210, {{"d", 208, enc::f16}}},
        {tt::q8_k, 256, 292, {{"d", 0, enc::f32}}},
        {tt::iq2_xxs, 256, 66, {{"d", 0, enc::f16}}},
        {tt::iq2_xs, 256, 74, {{"d", 0, enc::f16}}},
        {tt::iq3_xxs, 256, 98, {{"d", 0, enc::f16}}},
        {tt::iq1_s, 256, 50, {{"d", 0, enc::f16}}},
        {tt::iq4_nl, 32, 18, {{"d", 0, enc::f16}}},
        {tt::iq3_s, 256, 110, {{"d", 0, enc::f16}}},
        {tt::iq2_s, 256, 82, {{"d", 0, enc::f16}}},
        {tt::iq4_xs, 256, 136, {{"d", 0, enc::f16}}},
        {tt::iq1_m, 256, 56, {{"d", 48, enc::iq1m}}},
        {tt::tq1_0, 256, 54, {{"d", 52, enc::f16}}},
        {tt::tq2_0, 256, 66, {{"d", 64, enc::f16}}},
        {tt::mxfp4, 32, 17, {{"e", 0, enc::e8m0}}},
        {tt::nvfp4, 64, 36, {{"d[0]", 0, enc::ue4m3}, {"d[1]", 1, enc::ue4m3}, {"d[2]", 2, enc::ue4m3}, {"d[3]", 3, enc::ue4m3}}},
        {tt::q1_0, 128, 18, {{"d", 0, enc::f16}}},
        {tt::q2_0, 64, 18, {{"d", 0, enc::f16}}},
    };
    return v;
}

// iq1_m's f16 scale lives in the top nibbles of sc[0..3] (u16 each), lowest nibble in sc[0].
void put_iq1m(bytes& b, std::size_t off, std::uint16_t h) {
    for (int i = 0; i < 4; ++i) {
        std::uint16_t sc;
        std::memcpy(&sc, b.data() + off + 2 * i, 2);
        sc = static_cast<std::uint16_t>((sc & 0x0fff) | (((h >> (4 * i)) & 0xf) << 12));
        std::memcpy(b.data() + off + 2 * i, &sc, 2);
    }
}

// Write a field's value: f16 bits, f32 bits, or a byte.
void put_field(bytes& b, std::size_t block_off, const qfield& f, std::uint32_t v) {
    switch (f.e) {
        case enc::f16: put(b, block_off + f.off, static_cast<std::uint16_t>(v)); break;
        case enc::f32: put(b, block_off + f.off, v); break;
        case enc::e8m0:
        case enc::ue4m3: put(b, block_off + f.off, static_cast<std::uint8_t>(v)); break;
        case enc::iq1m: put_iq1m(b, block_off + f.off, static_cast<std::uint16_t>(v)); break;
    }
}

// n random blocks whose scale fields are finite and non-zero (small: values stay far from Inf).
bytes finite_blocks(const qtype& q, std::size_t n, std::uint32_t seed) {
    std::mt19937 g(seed);
    bytes b(n * q.bytes);
    for (auto& x : b) x = static_cast<std::byte>(g() & 0xff);
    for (std::size_t i = 0; i < n; ++i)
        for (const auto& f : q.fields) {
            std::uint32_t v = 0;
            switch (f.e) {
                case enc::f16:
                case enc::iq1m: v = (rnd32(g) & 0x3bff) | 0x0400; break;  // exponent 1..14: finite, not zero
                case enc::f32: v = (rnd32(g) & 0x3fffffff) | 0x00800000; break;
                case enc::e8m0: v = 100 + rnd32(g) % 40; break;
                case enc::ue4m3: v = 1 + rnd32(g) % 0x7e; break;
            }
            put_field(b, i * q.bytes, f, v);
        }
    return b;
}

std::uint32_t nan_of(enc e) {
    switch (e) {
        case enc::f32: return 0x7fc00000;
        case enc::e8m0: return 0xff;
        default: return 0x7e00;
    }
}
std::uint32_t inf_of(enc e) { return e == enc::f32 ? 0xff800000u : 0xfc00u; }  // -Inf

TEST(ValueCheck, EveryScaleFieldOfEveryQuantizedType) {
    temp_dir dir;
    // Every type with a scale field is in the table (the library's list has no other).
    std::size_t with_fields = 0;
    for (std::uint32_t id = 0; id < gg::tensor_type_count; ++id)
        if (!check::scale_fields(static_cast<tt>(id)).empty()) ++with_fields;
    EXPECT_EQ(with_fields, qtypes().size());

    for (const auto& q : qtypes()) {
        if (q.type == tt::nvfp4) continue;  // no NaN or Inf: below
        const std::size_t n = 101;
        const std::size_t at[3] = {0, 50, n - 1};
        for (const auto& f : q.fields) {
            for (int kind = 0; kind < 2; ++kind) {
                if (kind == 1 && f.e == enc::e8m0) continue;  // E8M0 has no Inf
                bytes data = finite_blocks(q, n, 11);
                const std::uint32_t bits = kind == 0 ? nan_of(f.e) : inf_of(f.e);
                for (std::size_t b : at) put_field(data, b * q.bytes, f, bits);
                auto m = make_model(dir, {{"q", q.type, static_cast<std::int64_t>(n) * q.values, data}});
                SCOPED_TRACE(std::string(gg::to_string(q.type)) + " " + f.name + (kind == 0 ? " nan" : " inf"));
                const auto v = walk(m, {});
                ASSERT_EQ(v.size(), 1u);
                EXPECT_EQ(v[0].scope, check::check_scope::scales);
                EXPECT_EQ(v[0].blocks_poisoned, 3u);
                EXPECT_EQ(v[0].nan, kind == 0 ? 3u : 0u);
                EXPECT_EQ(v[0].inf, kind == 1 ? 3u : 0u);
                EXPECT_EQ(v[0].findings(), 3u);
                EXPECT_EQ(v[0].bytes_checked, n * q.bytes);
                ASSERT_EQ(v[0].examples.size(), 3u);
                for (int i = 0; i < 3; ++i) {
                    const auto& x = v[0].examples[static_cast<std::size_t>(i)];
                    EXPECT_EQ(x.place, check::finding_place::scale);
                    EXPECT_EQ(x.index, at[i]);
                    EXPECT_EQ(x.field, f.name);
                    EXPECT_EQ(x.bits, bits);
                    if (kind == 0) {
                        EXPECT_TRUE(std::isnan(x.value));
                    } else {
                        EXPECT_EQ(x.value, -INFINITY);
                    }
                }
            }
        }
        if (q.fields.size() == 2) {  // both fields of one block bad: one finding, two bad fields
            bytes data = finite_blocks(q, 4, 3);
            put_field(data, 2 * q.bytes, q.fields[0], 0x7c00);
            put_field(data, 2 * q.bytes, q.fields[1], 0x7e00);
            auto m = make_model(dir, {{"q", q.type, 4 * q.values, data}});
            const auto v = walk(m, {});
            EXPECT_EQ(v[0].blocks_poisoned, 1u);
            EXPECT_EQ(v[0].inf, 1u);
            EXPECT_EQ(v[0].nan, 1u);
            ASSERT_EQ(v[0].examples.size(), 1u);
            EXPECT_EQ(v[0].examples[0].field, q.fields[0].name);  // the first in byte order
            EXPECT_EQ(v[0].examples[0].index, 2u);
        }
    }
}

TEST(ValueCheck, Nvfp4ScalesHaveNoNanOrInf) {
    temp_dir dir;
    const qtype& q = *std::find_if(qtypes().begin(), qtypes().end(), [](const qtype& t) { return t.type == tt::nvfp4; });
    bytes data = finite_blocks(q, 8, 5);
    for (std::size_t b = 0; b < 8; ++b) put(data, b * q.bytes, std::uint32_t{0xff7f80ffu});  // bytes 0xff, 0x80, 0x7f, 0xff
    auto m = make_model(dir, {{"q", tt::nvfp4, 8 * 64, data}});
    const auto v = walk(m, {});
    EXPECT_EQ(v[0].findings(), 0u);
    EXPECT_FALSE(v[0].all_zero);  // 0xff is 240
}

TEST(ValueCheck, IntegerTypesAreNotChecked) {
    temp_dir dir;
    bytes data(64, std::byte{0xff});
    auto m = make_model(dir, {{"i", tt::i32, 16, data}, {"z", tt::i8, 64, bytes(64)}});
    for (bool values : {false, true}) {
        check::value_check_options o;
        o.values = values;
        const auto v = walk(m, o);
        for (const auto& x : v) {
            EXPECT_EQ(x.scope, check::check_scope::none);
            EXPECT_FALSE(x.values_checked);
            EXPECT_FALSE(x.all_zero);
            EXPECT_EQ(x.findings(), 0u);
        }
    }
}

// ---- values mode ------------------------------------------------------------------------------

TEST(ValueCheck, ValuesModeFindsWhatScalesCannot) {
    temp_dir dir;
    // mxfp4: e = 254 is a finite scale (2^126 once halved), but code 7 (F = 12) gives 12·2^126 > FLT_MAX:
    // +Inf; code 15 (F = -12): -Inf. Block 3, values 5 (code 7, low nibble of qs[5]) and 16 + 2
    // (code 15, high nibble of qs[2]).
    const qtype& mx = *std::find_if(qtypes().begin(), qtypes().end(), [](const qtype& t) { return t.type == tt::mxfp4; });
    bytes a = finite_blocks(mx, 6, 9);
    for (std::size_t b = 0; b < 6; ++b)
        for (std::size_t i = 0; i < 16; ++i) put(a, b * 17 + 1 + i, std::uint8_t{0x11});  // every value F[1]·E: 1·E
    put(a, 3 * 17, std::uint8_t{254});
    put(a, 3 * 17 + 1 + 5, std::uint8_t{0x17});
    put(a, 3 * 17 + 1 + 2, std::uint8_t{0xf1});
    put(a, 5 * 17, std::uint8_t{255});  // NaN scale: a scale finding, its values not reported again
    // f64: 1e300 is finite but not an f32: +Inf once converted; a stored NaN is reported once.
    bytes d(8 * 8);
    for (std::size_t i = 0; i < 8; ++i) put(d, i * 8, 0.5 * static_cast<double>(i + 1));
    put(d, 2 * 8, 1e300);
    put(d, 6 * 8, std::uint64_t{0x7ff8000000000000ull});
    // q4_0 with a NaN d: one scale finding, no value findings.
    const qtype& q4 = qtypes()[0];
    bytes q = finite_blocks(q4, 4, 2);
    put(q, 1 * 18, std::uint16_t{0x7e00});
    auto m = make_model(dir, {{"mx", tt::mxfp4, 6 * 32, a}, {"f", tt::f64, 8, d}, {"q", tt::q4_0, 4 * 32, q}});

    const auto plain = walk(m, {});
    EXPECT_EQ(plain[0].findings(), 1u);  // the NaN E8M0 only
    EXPECT_EQ(plain[1].findings(), 1u);  // the stored NaN only
    EXPECT_EQ(plain[2].findings(), 1u);
    for (const auto& x : plain) EXPECT_FALSE(x.values_checked);

    check::value_check_options o;
    o.values = true;
    const auto v = walk(m, o);
    EXPECT_TRUE(v[0].values_checked);
    EXPECT_EQ(v[0].blocks_poisoned, 1u);
    EXPECT_EQ(v[0].value_inf, 2u);
    EXPECT_EQ(v[0].value_nan, 0u);
    ASSERT_EQ(v[0].value_examples.size(), 2u);
    EXPECT_EQ(v[0].value_examples[0].index, 3u * 32 + 5);
    EXPECT_EQ(v[0].value_examples[0].value, INFINITY);
    EXPECT_EQ(v[0].value_examples[0].bits, 0x7f800000u);
    EXPECT_EQ(v[0].value_examples[1].index, 3u * 32 + 16 + 2);
    EXPECT_EQ(v[0].value_examples[1].value, -INFINITY);
    EXPECT_EQ(v[0].value_examples[1].place, check::finding_place::value);
    EXPECT_EQ(v[0].findings(), 3u);

    EXPECT_TRUE(v[1].values_checked);
    EXPECT_EQ(v[1].nan, 1u);
    EXPECT_EQ(v[1].value_inf, 1u);
    EXPECT_EQ(v[1].value_nan, 0u);
    ASSERT_EQ(v[1].value_examples.size(), 1u);
    EXPECT_EQ(v[1].value_examples[0].index, 2u);

    EXPECT_EQ(v[2].blocks_poisoned, 1u);
    EXPECT_EQ(v[2].value_nan + v[2].value_inf, 0u);
}

TEST(ValueCheck, ValuesModeSkipsExactFloatTypes) {
    temp_dir dir;
    bytes f(16 * 4);
    put(f, 4, std::uint32_t{0x7f800000});
    auto m = make_model(dir, {{"f", tt::f32, 16, f}, {"h", tt::f16, 32, bytes(64)}});
    check::value_check_options o;
    o.values = true;
    const auto v = walk(m, o);
    EXPECT_FALSE(v[0].values_checked);
    EXPECT_EQ(v[0].inf, 1u);
    EXPECT_EQ(v[0].findings(), 1u);
    EXPECT_FALSE(v[1].values_checked);
    EXPECT_TRUE(v[1].all_zero);
}

// ---- all-zero ---------------------------------------------------------------------------------

TEST(ValueCheck, AllZeroWarnings) {
    temp_dir dir;
    bytes f32z(32 * 4);
    for (std::size_t i = 0; i < 32; i += 3) put(f32z, i * 4, std::uint32_t{0x80000000});  // -0 counts as 0
    bytes f32d = f32z;
    put(f32d, 31 * 4, std::uint32_t{1});  // the smallest subnormal is not zero
    const qtype& q4 = qtypes()[0];
    bytes q40 = finite_blocks(q4, 3, 1);
    for (std::size_t b = 0; b < 3; ++b) put(q40, b * 18, static_cast<std::uint16_t>(b == 1 ? 0x8000 : 0));
    const qtype& q41 = qtypes()[1];
    bytes q41m = finite_blocks(q41, 3, 1);
    for (std::size_t b = 0; b < 3; ++b) put(q41m, b * 20, std::uint16_t{0});  // d = 0, m not: values m
    const qtype& q6 = *std::find_if(qtypes().begin(), qtypes().end(), [](const qtype& t) { return t.type == tt::q6_k; });
    bytes q6z = finite_blocks(q6, 2, 4);  // d != 0 but every 8-bit sub-scale 0: all values 0
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 16; ++i) put(q6z, b * 210 + 192 + i, std::uint8_t{0});
    const qtype& mx = *std::find_if(qtypes().begin(), qtypes().end(), [](const qtype& t) { return t.type == tt::mxfp4; });
    bytes mxz = finite_blocks(mx, 2, 4);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 16; ++i) put(mxz, b * 17 + 1 + i, static_cast<std::uint8_t>(i % 2 == 0 ? 0x80 : 0x08));  // codes 0 and 8: ±0
    auto m = make_model(dir, {{"z", tt::f32, 32, f32z},
                              {"d", tt::f32, 32, f32d},
                              {"q40", tt::q4_0, 96, q40},
                              {"q41", tt::q4_1, 96, q41m},
                              {"q6", tt::q6_k, 512, q6z},
                              {"mx", tt::mxfp4, 64, mxz},
                              {"bf", tt::bf16, 8, bytes(16)},
                              {"f64", tt::f64, 2, bytes(16)}});
    const auto v = walk(m, {});
    EXPECT_TRUE(v[0].all_zero);
    EXPECT_FALSE(v[1].all_zero);
    EXPECT_TRUE(v[2].all_zero);
    EXPECT_FALSE(v[3].all_zero);
    EXPECT_FALSE(v[4].all_zero);  // by its scale d, not zero
    EXPECT_FALSE(v[5].zero_checked);  // E8M0 has no zero: only values mode can tell
    EXPECT_FALSE(v[5].all_zero);
    EXPECT_TRUE(v[6].all_zero);
    EXPECT_TRUE(v[7].all_zero);
    for (const auto& x : v) EXPECT_EQ(x.findings(), 0u);

    check::value_check_options o;
    o.values = true;
    const auto w = walk(m, o);
    EXPECT_TRUE(w[2].all_zero);
    EXPECT_FALSE(w[3].all_zero);
    EXPECT_TRUE(w[4].all_zero);  // every value 0
    EXPECT_TRUE(w[5].zero_checked);
    EXPECT_TRUE(w[5].all_zero);
}

// ---- clean data -------------------------------------------------------------------------------

TEST(ValueCheck, CleanRandomDataGivesNothing) {
    temp_dir dir;
    std::vector<tspec> ts;
    std::uint32_t seed = 100;
    for (const auto& f : float_types) ts.push_back({std::string("f").append(std::to_string(ts.size())), f.type, 777, finite_elements(f, 777, ++seed)});
    // f64: within f32's range (random exponents would overflow f32, which values mode reports)
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> u(-1e30, 1e30);
    for (std::size_t i = 0; i < 777; ++i) put(ts[3].data, i * 8, u(g));
    for (const auto& q : qtypes()) ts.push_back({std::string("q").append(std::to_string(ts.size())), q.type, 37 * q.values, finite_blocks(q, 37, ++seed)});
    auto m = make_model(dir, ts);
    for (bool values : {false, true}) {
        check::value_check_options o;
        o.values = values;
        const auto v = walk(m, o, 4096, 2);
        ASSERT_EQ(v.size(), ts.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            SCOPED_TRACE(std::string(gg::to_string(ts[i].type)) + (values ? " values" : ""));
            EXPECT_EQ(v[i].findings(), 0u);
            EXPECT_EQ(v[i].nan + v[i].inf, 0u);
            EXPECT_TRUE(v[i].examples.empty());
            EXPECT_TRUE(v[i].value_examples.empty());
            EXPECT_FALSE(v[i].all_zero);
            EXPECT_EQ(v[i].bytes_checked, ts[i].data.size());
            EXPECT_EQ(v[i].values_checked, values && ts[i].type != tt::f32 && ts[i].type != tt::f16 &&
                                               ts[i].type != tt::bf16 && ts[i].type != tt::q8_1);
        }
    }
}

// ---- determinism, windows, cap ----------------------------------------------------------------

struct planted_model {
    std::vector<tspec> ts;
    std::vector<std::vector<std::uint64_t>> where;  // per tensor: planted indices (elements or blocks), ascending
};

// Tensors of ~200-600 KiB with findings spread over them (blocks of 18, 110, 292 bytes: they straddle
// any window cut), and a float tensor.
planted_model many_findings() {
    planted_model p;
    std::mt19937 g(42);
    auto pick = [&](std::size_t n, std::size_t k) {
        std::vector<std::uint64_t> at;
        while (at.size() < k) {
            const std::uint64_t i = g() % n;
            if (std::find(at.begin(), at.end(), i) == at.end()) at.push_back(i);
        }
        std::sort(at.begin(), at.end());
        return at;
    };
    for (tt type : {tt::q4_0, tt::q3_k, tt::q8_k, tt::mxfp4}) {
        const qtype& q = *std::find_if(qtypes().begin(), qtypes().end(), [&](const qtype& t) { return t.type == type; });
        const std::size_t n = 300000 / q.bytes;
        bytes data = finite_blocks(q, n, static_cast<std::uint32_t>(n));
        const auto at = pick(n, 40);
        for (std::uint64_t b : at) put_field(data, b * q.bytes, q.fields[0], nan_of(q.fields[0].e));
        p.ts.push_back({std::string(gg::to_string(type)), type, static_cast<std::int64_t>(n) * q.values, data});
        p.where.push_back(at);
    }
    const std::size_t n = 150001;
    bytes f = finite_elements(float_types[0], n, 5);
    const auto at = pick(n, 64);
    for (std::uint64_t i : at) put(f, i * 4, std::uint32_t{0x7f800000});
    p.ts.push_back({"f32", tt::f32, static_cast<std::int64_t>(n), f});
    p.where.push_back(at);
    return p;
}

TEST(ValueCheck, DeterministicOverThreadsAndWindows) {
    temp_dir dir;
    const planted_model p = many_findings();
    auto m = make_model(dir, p.ts);
    check::value_check_options o;
    o.max_examples = 25;
    for (std::uint64_t window : {std::uint64_t{65536}, std::uint64_t{65536 * 3}, std::uint64_t{1000},
                                 std::uint64_t{4097}, std::uint64_t{1} << 24}) {
        for (unsigned threads : {1u, 2u, 3u}) {
            if (window < 65536 && threads != 1) continue;  // 300-1200 windows: threads cost (ASan)
            SCOPED_TRACE("window " + std::to_string(window) + " threads " + std::to_string(threads));
            const auto v = walk(m, o, window, threads);
            ASSERT_EQ(v.size(), p.ts.size());
            for (std::size_t t = 0; t < v.size(); ++t) {
                EXPECT_EQ(v[t].findings(), p.where[t].size());
                EXPECT_EQ(v[t].bytes_checked, p.ts[t].data.size());
                ASSERT_EQ(v[t].examples.size(), 25u);
                for (std::size_t i = 0; i < 25; ++i) EXPECT_EQ(v[t].examples[i].index, p.where[t][i]);
            }
        }
    }
}

// The same through minfer's walker (check_values): 64 KiB windows, 1-3 threads, and --values.
TEST(ValueCheck, ThroughTheWalker) {
    temp_dir dir;
    const planted_model p = many_findings();
    auto m = make_model(dir, p.ts);
    for (bool values : {false, true}) {
        for (unsigned threads : {1u, 2u, 3u}) {
            SCOPED_TRACE("threads " + std::to_string(threads) + (values ? " values" : ""));
            check::value_check_options o;
            o.values = values;
            o.max_examples = 25;
            check::walk_options w;
            w.window_bytes = 65536;
            w.threads = threads;
            auto v = check::check_values(m, o, w);
            ASSERT_TRUE(v) << v.error().message();
            ASSERT_EQ(v->size(), p.ts.size());
            for (std::size_t t = 0; t < v->size(); ++t) {
                const auto& x = (*v)[t];
                EXPECT_EQ(x.findings(), p.where[t].size());  // values in poisoned blocks are not counted again
                EXPECT_EQ(x.bytes_checked, p.ts[t].data.size());
                ASSERT_EQ(x.examples.size(), 25u);
                for (std::size_t i = 0; i < 25; ++i) EXPECT_EQ(x.examples[i].index, p.where[t][i]);
            }
        }
    }
}

TEST(ValueCheck, ExamplesCap) {
    temp_dir dir;
    const planted_model p = many_findings();
    auto m = make_model(dir, p.ts);
    for (std::size_t cap : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
        check::value_check_options o;
        o.max_examples = cap;
        const auto v = walk(m, o, 65536, 2);
        for (std::size_t t = 0; t < v.size(); ++t) {
            EXPECT_EQ(v[t].findings(), p.where[t].size());
            EXPECT_EQ(v[t].examples.size(), std::min(cap, p.where[t].size()));
        }
    }
}

TEST(ValueCheck, TakeOnce) {
    temp_dir dir;
    auto m = make_model(dir, {{"f", tt::f32, 4, bytes(16)}});
    auto c = check::value_consumer::make(m, {});
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->take());
    auto again = c->take();
    ASSERT_FALSE(again);
}

TEST(ValueCheck, Names) {
    EXPECT_EQ(check::to_string(check::value_kind::nan), "nan");
    EXPECT_EQ(check::to_string(check::value_kind::inf), "inf");
    EXPECT_EQ(check::to_string(check::finding_place::scale), "scale");
    EXPECT_EQ(check::to_string(check::check_scope::elements), "elements");
    EXPECT_EQ(check::scope_of(tt::i64), check::check_scope::none);
    EXPECT_EQ(check::scope_of(tt::bf16), check::check_scope::elements);
    EXPECT_EQ(check::scope_of(tt::q8_1), check::check_scope::scales);
    EXPECT_EQ(check::scope_of(tt::q4_2), check::check_scope::none);
}

}  // namespace
