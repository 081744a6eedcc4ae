#pragma once
// The search tables of the codebook quantizers (internal): each iq* grid seen as points of a small
// integer lattice, the map from every lattice point to its grid index, and, for the points that
// are not on the grid, the list of their nearest grid points.
//
// ggml's quantizers look every candidate point up in tables built by iq2xs_init_impl and
// iq3xs_init_impl; ties between neighbours are broken by their order in those lists, so ours hold
// the same entries in the same order (see iq_lattice.cpp). Built on first use, once per process
// (function-local statics: thread-safe), from the grids of grids.hpp.
#include <cstdint>

#include "minfer/gguf/types.hpp"
#include <vector>

namespace minfer::quant::detail {

/// One grid as a lattice. A grid point has `dim` coordinates, each an index l (0 ≤ l < 2^bits)
/// into the format's alphabet, held as the odd number 2l + 1 (the form the quantizers compare
/// scaled values with). A lattice point's key packs its coordinates' l, `bits` bits each, lowest
/// coordinate first.
struct iq_lattice {
    int dim = 0;   ///< 8 (iq2, iq1) or 4 (iq3)
    int bits = 0;  ///< 2 or 3
    int grid_size = 0;
    /// grid_size * dim bytes: coordinate k of grid point g (2l + 1) at [g * dim + k].
    std::vector<std::int8_t> points;
    /// Indexed by key: the grid index (≥ 0) of an on-grid point, or -(offset + 1) where
    /// neighbours[offset] is the count n of its nearest grid points and the n entries after it
    /// their indices.
    std::vector<std::int32_t> map;
    /// Followed by 16 zero entries, so that a search reading 16 indices at a time past the end of
    /// the last list stays inside the vector (the extra lanes are masked; index 0 is a valid point).
    std::vector<std::uint16_t> neighbours;
    /// grid_size words: coordinate k of grid point g (2l + 1 < 16) in bits 4k..4k+3 of [g], so that
    /// the AVX2 neighbour search gets a point's coordinates from one 32-bit load.
    std::vector<std::uint32_t> packed;

    [[nodiscard]] const std::int8_t* point(int g) const noexcept { return points.data() + g * dim; }
    /// The neighbour list (count first) of an off-grid key's map entry.
    [[nodiscard]] const std::uint16_t* neighbours_of(std::int32_t entry) const noexcept {
        return neighbours.data() + (-entry - 1);
    }
};

/// The five lattices: iq2_xxs (256 points), iq2_xs (512), iq2_s (1024), iq1_s / iq1_m (2048, shared),
/// iq3_xxs (256), iq3_s (512).
const iq_lattice& iq2xxs_lattice();
const iq_lattice& iq2xs_lattice();
const iq_lattice& iq2s_lattice();
const iq_lattice& iq1s_lattice();
const iq_lattice& iq3xxs_lattice();
const iq_lattice& iq3s_lattice();

/// ggml's iq2_find_best_neighbour / iq3_find_best_neighbour in scalar code, candidate by candidate
/// (see neighbour_search_fn in quantize_kernels.hpp), for points of `dim` (4 or 8) coordinates.
int scalar_best_neighbour(int dim, const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                          const float* weight, float scale);

/// Build the lattice `type`'s quantizer uses (nothing for a type without one), on the calling thread.
/// The tables are built once, on first use, and allocate; the row quantizers are noexcept and run on
/// workers, where a failed allocation would end the process. quantize_rows_parallel calls this first:
/// false (out of memory) is returned as an error, and once it is true no later use allocates.
bool prepare_lattice(gguf::tensor_type type) noexcept;

}  // namespace minfer::quant::detail
