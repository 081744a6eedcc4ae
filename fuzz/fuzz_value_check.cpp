// The value checks (check::value_consumer) on arbitrary bytes as the data of two tensors of an
// arbitrary type, cut into windows of an arbitrary size and phase (so blocks straddle windows
// anywhere), jobs run on 1-3 threads: the consumer must never crash, and its verdicts must equal a
// plain scalar recount made here element by element and block by block (counts, the first N
// example indices, all-zero, bytes seen). Any difference prints the type and traps.
//
// Input: byte 0 the type (modulo the ids that have a block layout), byte 1 the window size
// (1 + 13·b bytes), byte 2 flags (bit 0 values mode, bits 1-4 max_examples, bits 5-6 threads - 1),
// byte 3 the phase of the cuts, byte 4 where the data is split between the two tensors; the rest,
// cut to whole blocks, is the data.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "minfer/check/value_check.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"

namespace {

namespace check = minfer::check;
namespace gguf = minfer::gguf;
namespace quant = minfer::quant;
using gguf::tensor_type;

[[noreturn]] void differ(tensor_type t, const char* what, std::uint64_t ours, std::uint64_t ref) {
    const std::string_view name = gguf::to_string(t);
    std::fprintf(stderr, "fuzz_value_check: %.*s: %s: consumer %llu, recount %llu\n", static_cast<int>(name.size()),
                 name.data(), what, static_cast<unsigned long long>(ours), static_cast<unsigned long long>(ref));
    __builtin_trap();
}

void same(tensor_type t, const char* what, std::uint64_t ours, std::uint64_t ref) {
    if (ours != ref) differ(t, what, ours, ref);
}

std::uint64_t le(const std::uint8_t* p, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

struct recount {
    std::uint64_t nan = 0, inf = 0, poisoned = 0, value_nan = 0, value_inf = 0;
    bool any_nonzero = false, any_value_nonzero = false;
    std::vector<std::uint64_t> examples, value_examples;
};

// NaN (1), Inf (2) or finite (0) for one element of a float type, and whether it is nonzero.
int element_class(tensor_type t, const std::uint8_t* p, bool& nonzero) {
    switch (t) {
        case tensor_type::f32: {
            float f;
            std::memcpy(&f, p, 4);
            nonzero = !(f == 0.0f);
            return std::isnan(f) ? 1 : std::isinf(f) ? 2 : 0;
        }
        case tensor_type::bf16: {
            const auto b = static_cast<std::uint32_t>(le(p, 2)) << 16;
            float f;
            std::memcpy(&f, &b, 4);
            nonzero = !(f == 0.0f);
            return std::isnan(f) ? 1 : std::isinf(f) ? 2 : 0;
        }
        case tensor_type::f64: {
            double d;
            std::memcpy(&d, p, 8);
            nonzero = !(d == 0.0);
            return std::isnan(d) ? 1 : std::isinf(d) ? 2 : 0;
        }
        default: {  // f16
            const auto h = static_cast<std::uint32_t>(le(p, 2));
            nonzero = (h & 0x7fff) != 0;
            if ((h & 0x7c00) != 0x7c00) return 0;
            return (h & 0x3ff) != 0 ? 1 : 2;
        }
    }
}

// One scale field: NaN (1), Inf (2) or neither (0), and whether it is ±0.
int field_class(const check::scale_field& f, const std::uint8_t* block, bool& zero) {
    const std::uint8_t* p = block + f.offset;
    std::uint32_t h = 0;
    switch (f.encoding) {
        case check::scale_encoding::f32: {
            const auto b = static_cast<std::uint32_t>(le(p, 4));
            float v;
            std::memcpy(&v, &b, 4);
            zero = v == 0.0f;
            return std::isnan(v) ? 1 : std::isinf(v) ? 2 : 0;
        }
        case check::scale_encoding::e8m0:
            zero = false;
            return *p == 0xff ? 1 : 0;
        case check::scale_encoding::ue4m3:
            zero = *p == 0 || *p == 0x7f || *p == 0x80;
            return 0;
        case check::scale_encoding::iq1m_f16:
            for (int i = 0; i < 4; ++i) h |= ((static_cast<std::uint32_t>(le(p + 2 * i, 2)) >> 12) & 15) << (4 * i);
            break;
        case check::scale_encoding::f16: h = static_cast<std::uint32_t>(le(p, 2)); break;
    }
    zero = (h & 0x7fff) == 0;
    if ((h & 0x7c00) != 0x7c00) return 0;
    return (h & 0x3ff) != 0 ? 1 : 2;
}

recount count(tensor_type t, const gguf::type_traits& tr, std::span<const std::uint8_t> data, bool values,
              std::size_t cap) {
    recount r;
    const std::size_t bb = tr.block_bytes, n_blocks = data.size() / bb;
    const check::check_scope scope = check::scope_of(t);
    std::vector<bool> stored_bad(n_blocks, false);
    for (std::size_t b = 0; b < n_blocks; ++b) {
        const std::uint8_t* p = data.data() + b * bb;
        if (scope == check::check_scope::elements) {
            bool nz = false;
            const int c = element_class(t, p, nz);
            r.any_nonzero = r.any_nonzero || nz;
            if (c == 0) continue;
            (c == 1 ? r.nan : r.inf) += 1;
            stored_bad[b] = true;
            if (r.examples.size() < cap) r.examples.push_back(b);
        } else if (scope == check::check_scope::scales) {
            bool bad = false;
            for (const check::scale_field& f : check::scale_fields(t)) {
                bool zero = false;
                const int c = field_class(f, p, zero);
                r.any_nonzero = r.any_nonzero || !zero;
                if (c == 0) continue;
                (c == 1 ? r.nan : r.inf) += 1;
                bad = true;
            }
            if (bad) {
                ++r.poisoned;
                stored_bad[b] = true;
                if (r.examples.size() < cap) r.examples.push_back(b);
            }
        }
    }
    if (values) {
        std::vector<float> v(n_blocks * tr.block_elems);
        const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
        if (!quant::dequantize(t, std::span<const std::byte>(bytes, n_blocks * bb), v)) differ(t, "dequantize", 0, 1);
        for (std::size_t i = 0; i < v.size(); ++i) {
            r.any_value_nonzero = r.any_value_nonzero || !(v[i] == 0.0f);
            if (std::isfinite(v[i]) || stored_bad[i / tr.block_elems]) continue;
            (std::isnan(v[i]) ? r.value_nan : r.value_inf) += 1;
            if (r.value_examples.size() < cap) r.value_examples.push_back(i);
        }
    }
    return r;
}

const std::vector<tensor_type>& types() {
    static const std::vector<tensor_type> v = [] {
        std::vector<tensor_type> out;
        for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
            const gguf::type_traits* tr = gguf::traits(id);
            if (tr != nullptr && !tr->removed()) out.push_back(static_cast<tensor_type>(id));
        }
        return out;
    }();
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 5) return 0;
    const tensor_type type = types()[data[0] % types().size()];
    const gguf::type_traits& tr = *gguf::traits(type);
    const std::uint64_t window = 1 + std::uint64_t{data[1]} * 13;
    const bool values_mode = (data[2] & 1) != 0;
    const std::size_t cap = (data[2] >> 1) & 15;
    const unsigned threads = 1 + ((data[2] >> 5) & 3) % 3;
    const std::uint64_t phase = data[3] % window;
    const std::size_t n_blocks = (size - 5) / tr.block_bytes;
    const std::size_t split = n_blocks == 0 ? 0 : data[4] % (n_blocks + 1);
    const std::span<const std::uint8_t> all(data + 5, n_blocks * tr.block_bytes);
    const std::span<const std::uint8_t> part[2] = {all.first(split * tr.block_bytes), all.subspan(split * tr.block_bytes)};

    check::value_check_options o;
    o.values = values_mode;
    o.max_examples = cap;
    const tensor_type pair[2] = {type, type};
    auto c = check::value_consumer::make_for_types(pair, o);
    if (!c) return 0;

    // A virtual file: tensor 0 at `phase`, tensor 1 after it at the next multiple of 32.
    const std::uint64_t start[2] = {phase, (phase + part[0].size() + 31) / 32 * 32};
    const std::uint64_t end = start[1] + part[1].size();
    std::uint64_t k = 0;
    for (std::uint64_t w0 = 0; w0 < end; w0 += window) {
        std::vector<check::tensor_piece> pieces;
        for (std::uint32_t i = 0; i < 2; ++i) {
            const std::uint64_t a = start[i], n = part[i].size();
            const std::uint64_t s = std::max(a, w0), e = std::min(a + n, w0 + window);
            if (s >= e) continue;
            check::tensor_piece p;
            p.tensor = i;
            p.offset = s - a;
            p.bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(part[i].data()) + (s - a), e - s);
            p.first = s == a;
            p.last = e == a + n;
            pieces.push_back(p);
        }
        if (pieces.empty()) continue;
        check::window w;
        w.index = k++;
        w.tensors = pieces;
        std::vector<check::job> jobs;
        c->schedule(w, jobs);
        if (threads == 1 || jobs.size() < 2) {
            for (auto& j : jobs) j();
        } else {
            std::vector<std::thread> pool;
            for (unsigned t = 0; t < threads; ++t)
                pool.emplace_back([&jobs, t, threads] {
                    for (std::size_t j = t; j < jobs.size(); j += threads) jobs[j]();
                });
            for (auto& th : pool) th.join();
        }
    }
    auto v = c->take();
    if (!v) differ(type, "take failed", 0, 1);

    for (std::uint32_t i = 0; i < 2; ++i) {
        const check::tensor_verdict& x = (*v)[i];
        const bool integer = type == tensor_type::i8 || type == tensor_type::i16 || type == tensor_type::i32 ||
                             type == tensor_type::i64;
        const bool exact = type == tensor_type::f32 || type == tensor_type::f16 || type == tensor_type::bf16;
        const bool values = values_mode && quant::can_dequantize(type) && !integer && !exact;
        same(type, "values_checked", x.values_checked, values);
        const recount r = count(type, tr, part[i], values, cap);
        same(type, "bytes_checked", x.bytes_checked, part[i].size());
        same(type, "nan", x.nan, r.nan);
        same(type, "inf", x.inf, r.inf);
        same(type, "blocks_poisoned", x.blocks_poisoned, r.poisoned);
        same(type, "value_nan", x.value_nan, r.value_nan);
        same(type, "value_inf", x.value_inf, r.value_inf);
        same(type, "examples", x.examples.size(), r.examples.size());
        for (std::size_t e = 0; e < r.examples.size(); ++e) same(type, "example index", x.examples[e].index, r.examples[e]);
        same(type, "value examples", x.value_examples.size(), r.value_examples.size());
        for (std::size_t e = 0; e < r.value_examples.size(); ++e)
            same(type, "value example index", x.value_examples[e].index, r.value_examples[e]);
        const bool use_values = x.scope == check::check_scope::scales && values;
        const bool zero = x.zero_checked && !part[i].empty() && !(use_values ? r.any_value_nonzero : r.any_nonzero);
        same(type, "all_zero", x.all_zero, zero);
    }
    return 0;
}
