// The codebook quantizers' lattice tables (see iq_lattice.hpp).
//
// What must agree with ggml (iq2xs_init_impl / iq3xs_init_impl) is the content and order of each
// neighbour list: ggml sorts all grid points by (squared distance, grid index) and keeps every
// point of the `nwant` smallest distinct distances. The quantizers take the first best candidate
// of a list, so the order decides ties. We get the same list without sorting: distances on the
// lattice are small integers, so we note which distances occur, pick the nwant smallest, and emit
// the points of each in index order. The lists are laid out key by key, in key order, as ggml's are.
#include "iq_lattice.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cstddef>

#include "grids.hpp"

namespace minfer::quant::detail {
namespace {

struct lattice_spec {
    int dim;
    int bits;
    int map_size;  // ggml's kmap_size: every key up to the one with all coordinates l = 2 (iq2, iq1)
    int nwant;     // how many distinct nearest distances a neighbour list covers
};

// Distances between points with coordinates 2l + 1, l < 8: at most 8 * 14^2.
constexpr int max_d2 = 8 * 14 * 14;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

iq_lattice build(const lattice_spec& spec, int grid_size, const auto& coordinate_index) {
    iq_lattice t;
    t.dim = spec.dim;
    t.bits = spec.bits;
    t.grid_size = grid_size;
    t.points.resize(at(grid_size * spec.dim));
    t.map.assign(at(spec.map_size), -1);

    // Per coordinate k and level l, every grid point's squared difference (its coordinate k minus
    // 2l + 1, squared), so that a key's distances are sums of these rows.
    const int levels = 1 << spec.bits;
    std::vector<std::int32_t> contrib(at(spec.dim * levels * grid_size));
    const auto row = [&](int k, int l) { return contrib.data() + at((k * levels + l) * grid_size); };
    t.packed.assign(at(grid_size), 0);
    for (int g = 0; g < grid_size; ++g) {
        int key = 0;
        for (int k = 0; k < spec.dim; ++k) {
            const int l = coordinate_index(g, k);
            t.points[at(g * spec.dim + k)] = static_cast<std::int8_t>(2 * l + 1);
            t.packed[at(g)] |= static_cast<std::uint32_t>(2 * l + 1) << (4 * k);
            for (int lk = 0; lk < levels; ++lk) {
                const int diff = (2 * l + 1) - (2 * lk + 1);
                row(k, lk)[g] = diff * diff;
            }
            key |= l << (spec.bits * k);
        }
        t.map[at(key)] = g;
    }

    // The keys in order, the distances kept from one key to the next: only the coordinates that
    // change (one, and another per carry: 4/3 on average for 2 bits) update them. Integer sums, so
    // the order of the updates does not matter.
    const int mask = levels - 1;
    std::vector<std::int32_t> d2(at(grid_size), 0);
    std::vector<int> current(at(spec.dim), 0);
    for (int k = 0; k < spec.dim; ++k) {
        const std::int32_t* r = row(k, 0);
        for (int g = 0; g < grid_size; ++g) d2[at(g)] += r[g];
    }
    std::vector<std::uint16_t> near(at(grid_size));
    std::array<bool, max_d2 + 1> present{};
    for (int key = 0; key < spec.map_size; ++key) {
        for (int k = 0; k < spec.dim; ++k) {
            const int l = (key >> (spec.bits * k)) & mask;
            if (l == current[at(k)]) continue;
            const std::int32_t* from = row(k, current[at(k)]);
            const std::int32_t* to = row(k, l);
            std::int32_t* d = d2.data();
            for (int g = 0; g < grid_size; ++g) d[g] += to[g] - from[g];
            current[at(k)] = l;
        }
        if (t.map[at(key)] >= 0) continue;
        present.fill(false);
        for (const std::int32_t d : d2) present[at(d)] = true;
        // The nwant smallest distances that occur; the list is every point at one of them, by
        // distance, then by index: the points within the largest, in index order, then bucketed.
        int limit = -1, taken = 0;
        for (int d = 0; d <= max_d2 && taken < spec.nwant; ++d) {
            if (!present[at(d)]) continue;
            ++taken;
            limit = d;
        }
        int n_near = 0;
        for (int g = 0; g < grid_size; ++g)
            if (d2[at(g)] <= limit) near[at(n_near++)] = static_cast<std::uint16_t>(g);

        const std::size_t offset = t.neighbours.size();
        t.map[at(key)] = -static_cast<std::int32_t>(offset) - 1;
        t.neighbours.push_back(0);  // the count, filled in below
        for (int d = 0; d <= limit; ++d) {
            if (!present[at(d)]) continue;
            for (int j = 0; j < n_near; ++j)
                if (d2[near[at(j)]] == d) t.neighbours.push_back(near[at(j)]);
        }
        t.neighbours[offset] = static_cast<std::uint16_t>(t.neighbours.size() - offset - 1);
    }
    t.neighbours.insert(t.neighbours.end(), 16, std::uint16_t{0});  // the padding of iq_lattice::neighbours
    return t;
}

// The alphabets of grids.cpp, to turn grid bytes back into coordinate indices.
int iq2_level(std::uint8_t byte) { return byte == 0x08 ? 0 : byte == 0x19 ? 1 : 2; }

template <std::size_t N>
int level_in(const std::uint8_t (&alphabet)[N], std::uint8_t byte) {
    for (std::size_t i = 0; i < N; ++i)
        if (alphabet[i] == byte) return static_cast<int>(i);
    return 0;  // not reached: grids.cpp checks its alphabets at compile time
}

constexpr std::uint8_t iq3xxs_alphabet[8] = {0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3e};

std::uint8_t byte_of(std::uint64_t word, int k) { return static_cast<std::uint8_t>(word >> (8 * k)); }

constexpr lattice_spec iq2_spec(int nwant) { return {8, 2, 43692, nwant}; }
constexpr lattice_spec iq3_spec(int nwant) { return {4, 3, 4096, nwant}; }

}  // namespace

const iq_lattice& iq2xxs_lattice() {
    static const iq_lattice t =
        build(iq2_spec(2), 256, [](int g, int k) { return iq2_level(byte_of(iq2xxs_grid[g], k)); });
    return t;
}

const iq_lattice& iq2xs_lattice() {
    static const iq_lattice t =
        build(iq2_spec(2), 512, [](int g, int k) { return iq2_level(byte_of(iq2xs_grid[g], k)); });
    return t;
}

const iq_lattice& iq2s_lattice() {
    static const iq_lattice t =
        build(iq2_spec(1), 1024, [](int g, int k) { return iq2_level(byte_of(iq2s_grid[g], k)); });
    return t;
}

const iq_lattice& iq1s_lattice() {
    // Grid bytes are -1, 0, 1 (two's complement): index = value + 1.
    static const iq_lattice t = build(iq2_spec(3), 2048, [](int g, int k) {
        return static_cast<int>(static_cast<std::int8_t>(byte_of(iq1s_grid[g], k))) + 1;
    });
    return t;
}

const iq_lattice& iq3xxs_lattice() {
    static const iq_lattice t = build(iq3_spec(2), 256, [](int g, int k) {
        return level_in(iq3xxs_alphabet, byte_of(iq3xxs_grid[g], k));
    });
    return t;
}

const iq_lattice& iq3s_lattice() {
    // Bytes 1, 3, …, 15: index = (value - 1) / 2.
    static const iq_lattice t =
        build(iq3_spec(3), 512, [](int g, int k) { return (byte_of(iq3s_grid[g], k) - 1) / 2; });
    return t;
}

namespace {

// The candidates in list order, each distance summed over the coordinates in order; a strict `<`
// keeps the first of equal distances. A NaN or infinite distance never wins.
template <int Dim>
int best_of(const std::uint16_t* list, const std::uint32_t* packed, const float* xval, const float* weight,
            float scale) {
    const int count = list[0];
    float best_d2 = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= count; ++j) {
        const std::uint32_t p = packed[list[j]];
        float d2 = 0;
        for (int i = 0; i < Dim; ++i) {
            const auto q = static_cast<float>((p >> (4 * i)) & 15u);
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = list[j];
        }
    }
    return best;
}

}  // namespace

int scalar_best_neighbour(int dim, const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                          const float* weight, float scale) {
    return dim == 8 ? best_of<8>(list, packed, xval, weight, scale) : best_of<4>(list, packed, xval, weight, scale);
}

bool prepare_lattice(gguf::tensor_type type) noexcept {
    try {
        switch (type) {
            case gguf::tensor_type::iq2_xxs: (void)iq2xxs_lattice(); break;
            case gguf::tensor_type::iq2_xs: (void)iq2xs_lattice(); break;
            case gguf::tensor_type::iq2_s: (void)iq2s_lattice(); break;
            case gguf::tensor_type::iq1_s:
            case gguf::tensor_type::iq1_m: (void)iq1s_lattice(); break;
            case gguf::tensor_type::iq3_xxs: (void)iq3xxs_lattice(); break;
            case gguf::tensor_type::iq3_s: (void)iq3s_lattice(); break;
            default: break;
        }
        return true;
    } catch (...) {  // std::bad_alloc: the static stays unbuilt, and the next call tries again
        return false;
    }
}

}  // namespace minfer::quant::detail
