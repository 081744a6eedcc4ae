// value_check: NaN/Inf/all-zero checks of tensor values during the data walk (value_check.hpp).
//
// Shape of the work. schedule() runs on the walking thread: it first folds the results of the
// previous window's jobs into the per-tensor verdicts (in file order, which is block order within a
// tensor), then cuts this window's tensor pieces into segments of whole blocks (a block that
// straddles windows is completed from the carried bytes and becomes a segment of its own, holding
// a copy), and groups consecutive segments into jobs of about job_bytes. A job writes only into its
// own segments. The scans are branch-free reductions over 8-byte words (SWAR: an all-ones exponent
// plus one carries into the lane's sign bit) with a slow path that locates findings only in a run
// where the reduction saw one.
#include "minfer/check/value_check.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <deque>
#include <limits>
#include <new>
#include <utility>

#include "minfer/quant/dequantize.hpp"

namespace minfer::check {

using gguf::tensor_type;

std::string_view to_string(value_kind k) noexcept { return k == value_kind::nan ? "nan" : "inf"; }

std::string_view to_string(finding_place p) noexcept {
    switch (p) {
        case finding_place::element: return "element";
        case finding_place::scale: return "scale";
        case finding_place::value: return "value";
    }
    return "element";
}

std::string_view to_string(check_scope s) noexcept {
    switch (s) {
        case check_scope::none: return "none";
        case check_scope::elements: return "elements";
        case check_scope::scales: return "scales";
    }
    return "none";
}

namespace {

using enc = scale_encoding;

constexpr scale_field f_d0{"d", 0, enc::f16};
constexpr std::array<scale_field, 1> sf_d0{f_d0};
constexpr std::array<scale_field, 2> sf_d_m{f_d0, scale_field{"m", 2, enc::f16}};
constexpr std::array<scale_field, 2> sf_d_s{f_d0, scale_field{"s", 2, enc::f16}};
constexpr std::array<scale_field, 2> sf_d_dmin0{f_d0, scale_field{"dmin", 2, enc::f16}};
constexpr std::array<scale_field, 2> sf_q2_k{scale_field{"d", 80, enc::f16}, scale_field{"dmin", 82, enc::f16}};
constexpr std::array<scale_field, 1> sf_q3_k{scale_field{"d", 108, enc::f16}};
constexpr std::array<scale_field, 1> sf_q6_k{scale_field{"d", 208, enc::f16}};
constexpr std::array<scale_field, 1> sf_q8_k{scale_field{"d", 0, enc::f32}};
constexpr std::array<scale_field, 1> sf_iq1_m{scale_field{"d", 48, enc::iq1m_f16}};
constexpr std::array<scale_field, 1> sf_tq1_0{scale_field{"d", 52, enc::f16}};
constexpr std::array<scale_field, 1> sf_tq2_0{scale_field{"d", 64, enc::f16}};
constexpr std::array<scale_field, 1> sf_mxfp4{scale_field{"e", 0, enc::e8m0}};
constexpr std::array<scale_field, 4> sf_nvfp4{scale_field{"d[0]", 0, enc::ue4m3}, scale_field{"d[1]", 1, enc::ue4m3},
                                              scale_field{"d[2]", 2, enc::ue4m3}, scale_field{"d[3]", 3, enc::ue4m3}};

constexpr std::uint64_t run_bytes = 4096;     // the fast reduction's run; findings are located per run
constexpr std::uint64_t job_bytes = std::uint64_t{1} << 20;  // segments grouped into jobs of about this
constexpr std::size_t value_buffer_values = 65536;          // values mode: 256 KiB of f32 per thread

std::uint16_t load16(const std::byte* p) noexcept {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
std::uint32_t load32(const std::byte* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
std::uint64_t load64(const std::byte* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// An f16's value for a finding's report, converted by minfer::quant (findings only: never a hot path).
double half_value(std::uint16_t h) noexcept {
    float out = 0;
    (void)quant::dequantize(tensor_type::f16, std::as_bytes(std::span(&h, 1)), std::span(&out, 1));
    return static_cast<double>(out);
}

double float_value(std::uint32_t b) noexcept { return static_cast<double>(std::bit_cast<float>(b)); }

// The lane constants of an IEEE format packed in a 64-bit word: exponent mask, its lowest bit, the
// lane's sign bit, and everything but the sign. (w & exp) + low sets `top` exactly in the lanes
// whose exponent is all ones (NaN or Inf), without carrying into the next lane.
struct lanes {
    std::uint64_t exp, low, top, abs;
};
constexpr std::uint64_t rep16(std::uint64_t x) { return x * 0x0001000100010001ull; }
constexpr std::uint64_t rep32(std::uint64_t x) { return x * 0x0000000100000001ull; }
constexpr lanes lanes_f16{rep16(0x7c00), rep16(0x0400), rep16(0x8000), rep16(0x7fff)};
constexpr lanes lanes_bf16{rep16(0x7f80), rep16(0x0080), rep16(0x8000), rep16(0x7fff)};
constexpr lanes lanes_f32{rep32(0x7f800000), rep32(0x00800000), rep32(0x80000000), rep32(0x7fffffff)};
constexpr lanes lanes_f64{0x7ff0000000000000ull, 0x0010000000000000ull, 0x8000000000000000ull, 0x7fffffffffffffffull};

// One element format: its size, lane constants, and how to read one element.
struct element_format {
    std::uint32_t size;  // bytes: 2, 4, 8
    lanes l;
    std::uint64_t mantissa;  // the element's mantissa mask
};
constexpr element_format fmt_f16{2, lanes_f16, 0x3ff};
constexpr element_format fmt_bf16{2, lanes_bf16, 0x7f};
constexpr element_format fmt_f32{4, lanes_f32, 0x7fffff};
constexpr element_format fmt_f64{8, lanes_f64, 0xfffffffffffffull};

std::uint64_t element_bits(const element_format& f, const std::byte* p) noexcept {
    switch (f.size) {
        case 2: return load16(p);
        case 4: return load32(p);
        default: return load64(p);
    }
}

// Bits of one element whose exponent is all ones?
bool element_bad(const element_format& f, std::uint64_t bits) noexcept {
    const std::uint64_t exp = f.l.exp & (f.size == 8 ? ~0ull : (std::uint64_t{1} << (8 * f.size)) - 1);
    return (bits & exp) == exp;
}

// The fast reduction over n bytes (a multiple of the element size): `bad` when some element's
// exponent is all ones, `nonzero` when some element is not ±0.
struct run_flags {
    bool bad = false;
    bool nonzero = false;
};
run_flags reduce(const element_format& f, const std::byte* p, std::uint64_t n) noexcept {
    const lanes l = f.l;
    std::uint64_t a0 = 0, a1 = 0, z0 = 0, z1 = 0;
    std::uint64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const std::uint64_t w0 = load64(p + i), w1 = load64(p + i + 8);
        a0 |= (w0 & l.exp) + l.low;
        a1 |= (w1 & l.exp) + l.low;
        z0 |= w0 & l.abs;
        z1 |= w1 & l.abs;
    }
    run_flags r;
    r.bad = ((a0 | a1) & l.top) != 0;
    r.nonzero = (z0 | z1) != 0;
    const std::uint64_t e_abs = f.size == 8 ? l.abs : l.abs & ((std::uint64_t{1} << (8 * f.size)) - 1);
    for (; i < n; i += f.size) {  // the tail: fewer than 16 bytes
        const std::uint64_t b = element_bits(f, p + i);
        r.bad = r.bad || element_bad(f, b);
        r.nonzero = r.nonzero || (b & e_abs) != 0;
    }
    return r;
}

double element_value(const element_format& f, std::uint64_t bits) noexcept {
    if (&f == &fmt_f16) return half_value(static_cast<std::uint16_t>(bits));
    if (&f == &fmt_bf16) return float_value(static_cast<std::uint32_t>(bits) << 16);
    if (&f == &fmt_f32) return float_value(static_cast<std::uint32_t>(bits));
    return std::bit_cast<double>(bits);
}

const element_format* element_format_of(tensor_type t) noexcept {
    switch (t) {
        case tensor_type::f16: return &fmt_f16;
        case tensor_type::bf16: return &fmt_bf16;
        case tensor_type::f32: return &fmt_f32;
        case tensor_type::f64: return &fmt_f64;
        default: return nullptr;
    }
}

// One scale field of one block, decoded.
struct field_read {
    std::uint64_t bits = 0;
    std::uint32_t width = 16;
    bool bad = false;   // NaN or Inf
    bool nan = false;
    bool zero = false;  // its value is ±0
    double value = 0;
};

field_read read_field(const scale_field& f, const std::byte* block) noexcept {
    field_read r;
    const std::byte* p = block + f.offset;
    switch (f.encoding) {
        case enc::f16:
        case enc::iq1m_f16: {
            std::uint16_t h;
            if (f.encoding == enc::f16) {
                h = load16(p);
            } else {  // iq1_m: the top nibbles of sc[0..3], low nibble first
                const std::uint16_t s0 = load16(p), s1 = load16(p + 2), s2 = load16(p + 4), s3 = load16(p + 6);
                h = static_cast<std::uint16_t>((s0 >> 12) | ((s1 >> 8) & 0x00f0) | ((s2 >> 4) & 0x0f00) | (s3 & 0xf000));
            }
            r.bits = h;
            r.width = 16;
            r.bad = (h & 0x7c00) == 0x7c00;
            r.nan = r.bad && (h & 0x3ff) != 0;
            r.zero = (h & 0x7fff) == 0;
            if (r.bad) r.value = half_value(h);
            break;
        }
        case enc::f32: {
            const std::uint32_t b = load32(p);
            r.bits = b;
            r.width = 32;
            r.bad = (b & 0x7f800000u) == 0x7f800000u;
            r.nan = r.bad && (b & 0x7fffffu) != 0;
            r.zero = (b & 0x7fffffffu) == 0;
            if (r.bad) r.value = float_value(b);
            break;
        }
        case enc::e8m0: {
            const auto e = static_cast<std::uint8_t>(*p);
            r.bits = e;
            r.width = 8;
            r.bad = e == 0xff;  // NaN in the OCP MX format (ggml reads it as 2^128)
            r.nan = r.bad;
            r.zero = false;     // E8M0 has no zero
            if (r.bad) r.value = std::numeric_limits<double>::quiet_NaN();
            break;
        }
        case enc::ue4m3: {
            const auto x = static_cast<std::uint8_t>(*p);
            r.bits = x;
            r.width = 8;
            // As ggml reads it (docs/QUANT.md): 0x7f is 0, bit 7 ignored otherwise (0x80 is 0, 0xff
            // is 240); never NaN or Inf.
            r.zero = x == 0x7f || (x & 0x7f) == 0;
            break;
        }
    }
    return r;
}

// Everything a job needs about its tensor (copied per tensor once, read-only during the walk).
struct tensor_ctx {
    std::uint32_t index = 0;
    tensor_type type = tensor_type::f32;
    std::uint32_t block_bytes = 1;
    std::uint32_t block_elems = 1;
    check_scope scope = check_scope::none;
    const element_format* elem = nullptr;
    std::span<const scale_field> fields;
    bool fields_all_f16 = false;  // the fast reduction applies to every field
    bool values = false;          // values mode converts this tensor
};

// A job's results for one segment.
struct partial {
    std::uint64_t nan = 0, inf = 0, poisoned = 0, value_nan = 0, value_inf = 0;
    bool nonzero = false;        // the stored-bytes zero test saw a nonzero
    bool value_nonzero = false;  // values mode saw a nonzero value
    bool oom = false;
    std::vector<value_finding> examples, value_examples;
};

struct segment {
    const tensor_ctx* t = nullptr;
    std::uint64_t first_block = 0;
    std::span<const std::byte> bytes;  // whole blocks
    std::vector<std::byte> own;        // a carried block's copy (bytes points into it)
    partial out;
};

void keep(std::vector<value_finding>& v, std::size_t cap, const value_finding& f) {
    if (v.size() < cap) v.push_back(f);
}

// The stored elements of a float tensor: `n` bytes from element `first`.
void scan_elements(const tensor_ctx& t, std::uint64_t first, const std::byte* p, std::uint64_t n, std::size_t cap,
                   partial& out) {
    const element_format& f = *t.elem;
    for (std::uint64_t off = 0; off < n; off += run_bytes) {
        const std::uint64_t len = std::min(run_bytes, n - off);
        const run_flags r = reduce(f, p + off, len);
        out.nonzero = out.nonzero || r.nonzero;
        if (!r.bad) continue;
        for (std::uint64_t i = 0; i < len; i += f.size) {
            const std::uint64_t b = element_bits(f, p + off + i);
            if (!element_bad(f, b)) continue;
            const bool nan = (b & f.mantissa) != 0;
            (nan ? out.nan : out.inf) += 1;
            value_finding x;
            x.tensor = t.index;
            x.kind = nan ? value_kind::nan : value_kind::inf;
            x.place = finding_place::element;
            x.index = first + (off + i) / f.size;
            x.value = element_value(f, b);
            x.bits = b;
            x.bit_width = 8 * f.size;
            keep(out.examples, cap, x);
        }
    }
}

// Whether a block has a NaN/Inf scale field, or (element types) is itself NaN/Inf.
bool block_stored_bad(const tensor_ctx& t, const std::byte* block) noexcept {
    if (t.scope == check_scope::elements) return element_bad(*t.elem, element_bits(*t.elem, block));
    for (const scale_field& f : t.fields)
        if (read_field(f, block).bad) return true;
    return false;
}

// The scale fields of `n_blocks` blocks from block `first`.
void scan_scales(const tensor_ctx& t, std::uint64_t first, const std::byte* p, std::uint64_t n_blocks,
                 std::size_t cap, partial& out) {
    const std::uint64_t bb = t.block_bytes;
    const std::uint64_t run_blocks = std::max<std::uint64_t>(1, run_bytes / bb);
    for (std::uint64_t b0 = 0; b0 < n_blocks; b0 += run_blocks) {
        const std::uint64_t nb = std::min(run_blocks, n_blocks - b0);
        const std::byte* q = p + b0 * bb;
        if (t.fields_all_f16) {  // the fast reduction: f16 fields only
            std::uint32_t acc = 0, nz = 0;
            for (const scale_field& f : t.fields)
                for (std::uint64_t b = 0; b < nb; ++b) {
                    const std::uint32_t h = load16(q + b * bb + f.offset);
                    acc |= (h & 0x7c00u) + 0x0400u;
                    nz |= h & 0x7fffu;
                }
            out.nonzero = out.nonzero || nz != 0;
            if ((acc & 0x8000u) == 0) continue;
        }
        for (std::uint64_t b = 0; b < nb; ++b) {
            bool poisoned = false;
            for (const scale_field& f : t.fields) {
                const field_read r = read_field(f, q + b * bb);
                out.nonzero = out.nonzero || !r.zero;
                if (!r.bad) continue;
                (r.nan ? out.nan : out.inf) += 1;
                if (!poisoned) {
                    value_finding x;
                    x.tensor = t.index;
                    x.kind = r.nan ? value_kind::nan : value_kind::inf;
                    x.place = finding_place::scale;
                    x.field = f.name;
                    x.index = first + b0 + b;
                    x.value = r.value;
                    x.bits = r.bits;
                    x.bit_width = r.width;
                    keep(out.examples, cap, x);
                }
                poisoned = true;
            }
            out.poisoned += poisoned ? 1 : 0;
        }
    }
}

// Values mode: convert the blocks in batches through a per-thread buffer and check each value.
void scan_values(const tensor_ctx& t, std::uint64_t first, const std::byte* p, std::uint64_t n_blocks,
                 std::size_t cap, partial& out) {
    thread_local std::vector<float> buffer;
    const std::uint64_t batch_blocks = std::max<std::uint64_t>(1, value_buffer_values / t.block_elems);
    if (buffer.size() < batch_blocks * t.block_elems) buffer.resize(batch_blocks * t.block_elems);
    for (std::uint64_t b0 = 0; b0 < n_blocks; b0 += batch_blocks) {
        const std::uint64_t nb = std::min(batch_blocks, n_blocks - b0);
        const std::span<float> dst(buffer.data(), nb * t.block_elems);
        const std::span<const std::byte> src(p + b0 * t.block_bytes, nb * t.block_bytes);
        if (!quant::dequantize(t.type, src, dst)) continue;  // sizes are right by construction
        const auto* vp = reinterpret_cast<const std::byte*>(dst.data());
        for (std::uint64_t off = 0; off < dst.size_bytes(); off += run_bytes) {
            const std::uint64_t len = std::min<std::uint64_t>(run_bytes, dst.size_bytes() - off);
            const run_flags r = reduce(fmt_f32, vp + off, len);
            out.value_nonzero = out.value_nonzero || r.nonzero;
            if (!r.bad) continue;
            for (std::uint64_t i = 0; i < len; i += 4) {
                const std::uint32_t b = load32(vp + off + i);
                if ((b & 0x7f800000u) != 0x7f800000u) continue;
                const std::uint64_t v = (off + i) / 4;  // within the batch
                const std::uint64_t block = v / t.block_elems;
                if (block_stored_bad(t, p + (b0 + block) * t.block_bytes)) continue;  // reported already
                const bool nan = (b & 0x7fffffu) != 0;
                (nan ? out.value_nan : out.value_inf) += 1;
                value_finding x;
                x.tensor = t.index;
                x.kind = nan ? value_kind::nan : value_kind::inf;
                x.place = finding_place::value;
                x.index = (first + b0) * t.block_elems + v;
                x.value = float_value(b);
                x.bits = b;
                x.bit_width = 32;
                keep(out.value_examples, cap, x);
            }
        }
    }
}

void run_segment(segment& s, std::size_t cap) noexcept {
    try {
        const tensor_ctx& t = *s.t;
        const std::uint64_t n_blocks = s.bytes.size() / t.block_bytes;
        if (t.scope == check_scope::elements) scan_elements(t, s.first_block, s.bytes.data(), s.bytes.size(), cap, s.out);
        if (t.scope == check_scope::scales) scan_scales(t, s.first_block, s.bytes.data(), n_blocks, cap, s.out);
        if (t.values) scan_values(t, s.first_block, s.bytes.data(), n_blocks, cap, s.out);
    } catch (const std::bad_alloc&) {
        s.out.oom = true;
    }
}

}  // namespace

std::span<const scale_field> scale_fields(tensor_type type) noexcept {
    switch (type) {
        case tensor_type::q4_0:
        case tensor_type::q5_0:
        case tensor_type::q8_0:
        case tensor_type::iq2_xxs:
        case tensor_type::iq2_xs:
        case tensor_type::iq3_xxs:
        case tensor_type::iq1_s:
        case tensor_type::iq4_nl:
        case tensor_type::iq3_s:
        case tensor_type::iq2_s:
        case tensor_type::iq4_xs:
        case tensor_type::q1_0:
        case tensor_type::q2_0: return sf_d0;
        case tensor_type::q4_1:
        case tensor_type::q5_1: return sf_d_m;
        case tensor_type::q8_1: return sf_d_s;
        case tensor_type::q4_k:
        case tensor_type::q5_k: return sf_d_dmin0;
        case tensor_type::q2_k: return sf_q2_k;
        case tensor_type::q3_k: return sf_q3_k;
        case tensor_type::q6_k: return sf_q6_k;
        case tensor_type::q8_k: return sf_q8_k;
        case tensor_type::iq1_m: return sf_iq1_m;
        case tensor_type::tq1_0: return sf_tq1_0;
        case tensor_type::tq2_0: return sf_tq2_0;
        case tensor_type::mxfp4: return sf_mxfp4;
        case tensor_type::nvfp4: return sf_nvfp4;
        default: return {};
    }
}

check_scope scope_of(tensor_type type) noexcept {
    if (element_format_of(type) != nullptr) return check_scope::elements;
    if (!scale_fields(type).empty()) return check_scope::scales;
    return check_scope::none;
}

struct value_consumer::state {
    value_check_options options;
    std::vector<tensor_ctx> ctx;
    std::vector<tensor_verdict> verdicts;
    std::vector<std::uint64_t> expected;              // per tensor: the next byte offset due
    std::vector<std::vector<std::byte>> carry;        // per tensor: bytes of a block cut by a window
    std::deque<segment> pending;                      // this window's segments (jobs write into them)
    std::vector<bool> stored_nonzero, value_nonzero;  // per tensor
    bool failed = false;
    bool taken = false;

    void fold() {
        for (segment& s : pending) {
            const std::uint32_t i = s.t->index;
            tensor_verdict& v = verdicts[i];
            const partial& p = s.out;
            failed = failed || p.oom;
            v.nan += p.nan;
            v.inf += p.inf;
            v.blocks_poisoned += p.poisoned;
            v.value_nan += p.value_nan;
            v.value_inf += p.value_inf;
            v.bytes_checked += s.bytes.size();
            if (p.nonzero) stored_nonzero[i] = true;
            if (p.value_nonzero) value_nonzero[i] = true;
            for (const value_finding& f : p.examples) keep(v.examples, options.max_examples, f);
            for (const value_finding& f : p.value_examples) keep(v.value_examples, options.max_examples, f);
        }
        pending.clear();
    }

    segment& add(const tensor_ctx& t, std::uint64_t first_block, std::span<const std::byte> bytes) {
        segment& s = pending.emplace_back();
        s.t = &t;
        s.first_block = first_block;
        s.bytes = bytes;
        return s;
    }

    void cut(const tensor_piece& piece) {
        const tensor_ctx& t = ctx[piece.tensor];
        const std::uint64_t bb = t.block_bytes;
        const std::uint64_t off = piece.offset;
        const auto bytes = piece.bytes;
        std::vector<std::byte>& c = carry[piece.tensor];
        if (off != expected[piece.tensor]) c.clear();  // bytes were skipped: the cut block is lost
        std::uint64_t pos = 0;
        if (const std::uint64_t rem = off % bb; rem != 0) {
            const std::uint64_t take = std::min<std::uint64_t>(bb - rem, bytes.size());
            if (c.size() == rem) {
                c.insert(c.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
                if (c.size() == bb) {
                    segment& s = add(t, off / bb, {});
                    s.own = std::move(c);
                    s.bytes = s.own;
                    c = {};
                }
            } else {
                c.clear();
            }
            pos = take;
        }
        const std::uint64_t n_full = (bytes.size() - pos) / bb;
        const std::uint64_t per_segment = std::max<std::uint64_t>(1, job_bytes / bb);
        for (std::uint64_t b = 0; b < n_full; b += per_segment) {
            const std::uint64_t nb = std::min(per_segment, n_full - b);
            add(t, (off + pos) / bb + b, bytes.subspan(pos + b * bb, nb * bb));
        }
        pos += n_full * bb;
        if (pos < bytes.size()) c.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos), bytes.end());
        expected[piece.tensor] = off + bytes.size();
    }
};

value_consumer::value_consumer() noexcept = default;
value_consumer::value_consumer(value_consumer&&) noexcept = default;
value_consumer& value_consumer::operator=(value_consumer&&) noexcept = default;
value_consumer::~value_consumer() = default;

result<value_consumer> value_consumer::make(const gguf::model& m, const value_check_options& options) noexcept {
    if (auto whole = m.require_complete(); !whole) return gguf::unexpected(whole.error());
    try {
        std::vector<tensor_type> types;
        types.reserve(m.tensors().size());
        for (const gguf::tensor_ref& t : m.tensors()) types.push_back(t.info->type);
        return make_for_types(types, options);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("value checks"));
    }
}

result<value_consumer> value_consumer::make_for_types(std::span<const tensor_type> tensors,
                                                      const value_check_options& options) noexcept {
    try {
        value_consumer c;
        c.s_ = std::make_unique<state>();
        state& s = *c.s_;
        s.options = options;
        s.ctx.resize(tensors.size());
        s.verdicts.resize(tensors.size());
        s.expected.assign(tensors.size(), 0);
        s.carry.resize(tensors.size());
        s.stored_nonzero.assign(tensors.size(), false);
        s.value_nonzero.assign(tensors.size(), false);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const tensor_type type = tensors[i];
            tensor_ctx& t = s.ctx[i];
            t.index = static_cast<std::uint32_t>(i);
            t.type = type;
            const gguf::type_traits* tr = gguf::traits(type);
            if (tr != nullptr && !tr->removed()) {
                t.block_bytes = tr->block_bytes;
                t.block_elems = tr->block_elems;
                t.scope = scope_of(type);
                t.elem = element_format_of(type);
                t.fields = scale_fields(type);
                t.fields_all_f16 = !t.fields.empty() && std::all_of(t.fields.begin(), t.fields.end(), [](const scale_field& f) {
                    return f.encoding == enc::f16;
                });
                // f32, f16 and bf16 convert exactly: the element scan has seen every value already.
                const bool exact = type == tensor_type::f32 || type == tensor_type::f16 ||
                                   type == tensor_type::bf16;
                const bool integer = type == tensor_type::i8 || type == tensor_type::i16 ||
                                     type == tensor_type::i32 || type == tensor_type::i64;
                t.values = options.values && !exact && !integer && quant::can_dequantize(type);
            }
            tensor_verdict& v = s.verdicts[i];
            v.tensor = t.index;
            v.scope = t.scope;
            v.values_checked = t.values;
            const bool mx = type == tensor_type::mxfp4;
            v.zero_checked = t.scope == check_scope::elements || (t.scope == check_scope::scales && (t.values || !mx));
        }
        return c;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("value checks"));
    }
}

void value_consumer::schedule(const window& w, std::vector<job>& jobs) {
    state& s = *s_;
    if (s.failed) return;
    const std::size_t jobs_before = jobs.size();
    try {
        s.fold();
        for (const tensor_piece& piece : w.tensors) {
            if (piece.tensor >= s.ctx.size()) continue;
            const tensor_ctx& t = s.ctx[piece.tensor];
            if (t.scope == check_scope::none && !t.values) {
                s.verdicts[piece.tensor].bytes_checked += piece.bytes.size();
                continue;
            }
            s.cut(piece);
        }
        // Consecutive segments into jobs of about job_bytes each.
        const std::size_t cap = s.options.max_examples;
        std::size_t i = 0;
        while (i < s.pending.size()) {
            std::size_t j = i;
            std::uint64_t bytes = 0;
            while (j < s.pending.size() && (j == i || bytes + s.pending[j].bytes.size() <= job_bytes)) {
                bytes += s.pending[j].bytes.size();
                ++j;
            }
            std::deque<segment>* segs = &s.pending;
            jobs.emplace_back([segs, i, j, cap] {
                for (std::size_t k = i; k < j; ++k) run_segment((*segs)[k], cap);
            });
            i = j;
        }
    } catch (const std::bad_alloc&) {
        s.failed = true;
        jobs.resize(jobs_before);  // none of this window's jobs runs: their segments go
        s.pending.clear();
    }
}

result<std::vector<tensor_verdict>> value_consumer::take() noexcept {
    gguf::error e = gguf::out_of_memory_error("value checks");
    if (!s_ || s_->taken) return gguf::unexpected(std::move(e));
    state& s = *s_;
    s.taken = true;
    try {
        s.fold();
    } catch (const std::bad_alloc&) {
        s.failed = true;
    }
    if (s.failed) return gguf::unexpected(std::move(e));
    for (std::size_t i = 0; i < s.verdicts.size(); ++i) {
        tensor_verdict& v = s.verdicts[i];
        const bool use_values = v.scope == check_scope::scales && v.values_checked;
        const bool nonzero = use_values ? s.value_nonzero[i] : s.stored_nonzero[i];
        v.all_zero = v.zero_checked && v.bytes_checked > 0 && !nonzero;
    }
    return std::move(s.verdicts);
}

}  // namespace minfer::check
