// quantize.hpp's entry points: the checks made before a byte is written, the choice of the row
// quantizer (the basic family or the codebook one), and the threaded path.
#include "minfer/quant/quantize.hpp"
#include "worker_pool.hpp"

#include "iq_lattice.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/errors.hpp"
#include "quantize_kernels.hpp"

namespace minfer::quant {
namespace {

using gguf::errc;
using gguf::error;
using gguf::section;
using gguf::unexpected;

error make_error(errc code, std::uint64_t expected, std::uint64_t found, const char* detail = nullptr) {
    error e;
    e.code = code;
    e.where = section::access;
    e.expected = expected;
    e.found = found;
    if (detail != nullptr) e.detail = detail;
    return e;
}

detail::row_quantizer quantizer_of(tensor_type type) noexcept {
    if (static_cast<std::uint32_t>(type) >= gguf::tensor_type_count) return nullptr;
    if (detail::row_quantizer q = detail::basic_quantizer(type)) return q;
    return detail::iq_quantizer(type);
}

struct plan {
    detail::row_quantizer fn = nullptr;
    std::int64_t rows = 0;
    std::uint64_t row_bytes = 0;
};

// Everything ggml_quantize_chunk would assert on, and every size, before anything is written.
result<plan> check(tensor_type type, std::span<const float> src, std::int64_t n_per_row,
                   std::span<const float> importance, std::span<std::byte> dst) noexcept {
    const auto id = static_cast<std::uint32_t>(type);
    plan p;
    // As ggml_quantize_chunk: the missing importance weights first (whether this build has the
    // type's quantizer or not), then the type.
    if (importance.empty() && requires_importance(type)) return unexpected(make_error(quant::codes::importance_required, 0, id));
    p.fn = quantizer_of(type);
    if (p.fn == nullptr) return unexpected(make_error(quant::codes::type_not_quantizable, 0, id));
    const gguf::type_traits* t = gguf::traits(type);
    if (n_per_row <= 0 || n_per_row % t->block_elems != 0)
        return unexpected(make_error(errc::not_block_multiple, t->block_elems, static_cast<std::uint64_t>(n_per_row),
                                     gguf::to_string(type).data()));
    const auto per_row = static_cast<std::uint64_t>(n_per_row);
    if (src.size() % per_row != 0) {
        const std::uint64_t whole = (src.size() / per_row + 1) * per_row;
        return unexpected(make_error(errc::buffer_size_mismatch, whole, src.size(), "input values (not whole rows)"));
    }
    if (!importance.empty() && importance.size() != per_row)
        return unexpected(make_error(errc::buffer_size_mismatch, per_row, importance.size(), "importance weights"));
    const std::uint64_t need = bytes_for(type, src.size());
    if (dst.size() != need) return unexpected(make_error(errc::buffer_size_mismatch, need, dst.size(), "output bytes"));
    p.rows = static_cast<std::int64_t>(src.size() / per_row);
    p.row_bytes = per_row / t->block_elems * t->block_bytes;
    return p;
}

error failed_row(tensor_type type, std::int64_t row) {
    error e = make_error(quant::codes::quantize_failed, 0, static_cast<std::uint32_t>(type));
    e.index = row;
    return e;
}

}  // namespace

bool can_quantize(tensor_type type) noexcept { return quantizer_of(type) != nullptr; }

bool requires_importance(tensor_type type) noexcept {
    return type == tensor_type::iq2_xxs || type == tensor_type::iq2_xs || type == tensor_type::iq1_s;
}

result<void> quantize_rows(tensor_type type, std::span<const float> src, std::int64_t n_per_row,
                           std::span<const float> importance, std::span<std::byte> dst) noexcept {
    return quantize_rows_parallel(type, src, n_per_row, importance, dst, 1);
}

result<void> quantize_rows_parallel(tensor_type type, std::span<const float> src, std::int64_t n_per_row,
                                    std::span<const float> importance, std::span<std::byte> dst,
                                    unsigned threads) noexcept {
    auto p = check(type, src, n_per_row, importance, dst);
    if (!p) return unexpected(std::move(p).error());
    if (p->rows == 0) return {};
    if (!detail::prepare_lattice(type)) return unexpected(gguf::out_of_memory_error("building the codebook lattice"));
    const float* imp = importance.empty() ? nullptr : importance.data();
    auto* out = reinterpret_cast<std::uint8_t*>(dst.data());
    // Rows [r0, r1): the global index of the first failing row, or -1.
    auto run = [&](std::int64_t r0, std::int64_t r1) -> std::int64_t {
        const std::int64_t bad = p->fn(src.data() + r0 * n_per_row, out + static_cast<std::uint64_t>(r0) * p->row_bytes,
                                       r1 - r0, n_per_row, imp);
        return bad < 0 ? -1 : r0 + bad;
    };

    // At most one thread per hardware thread (more only add start-up and switching: llama-quantize's
    // THREADS=100000 once started thousands per batch), and no more than rows.
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    if (threads == 0 || threads > hw) threads = hw;
    const auto n = static_cast<unsigned>(std::min<std::int64_t>(threads, p->rows));
    std::int64_t bad = -1;
    // Run k takes rows [k*rows/n, (k+1)*rows/n) on the process's worker pool (worker_pool.hpp: the
    // threads are started once, not per batch; the caller's thread works too and takes every run
    // when no worker can). Rows are independent: the bytes are the same. The first failing row of
    // each run is kept in a fixed array (no allocation: this function is noexcept).
    constexpr unsigned max_runs = 256;
    std::int64_t first_bad[max_runs];
    // Four runs per thread: a thread that finishes early takes another (rows' costs differ with
    // their values: the IQ searches try more neighbours on some).
    const auto runs = static_cast<unsigned>(std::min<std::int64_t>({p->rows, std::int64_t{n} * 4, max_runs}));
    auto boundary = [&](unsigned k) { return p->rows * static_cast<std::int64_t>(k) / runs; };
    auto one_run = [&](unsigned k) { first_bad[k] = run(boundary(k), boundary(k + 1)); };
    detail::run_tasks(runs, n, one_run);
    for (unsigned k = 0; k < runs; ++k) {
        if (first_bad[k] >= 0) {
            bad = first_bad[k];  // runs are in row order: the first one found is the smallest
            break;
        }
    }
    if (bad >= 0) return unexpected(failed_row(type, bad));
    return {};
}

}  // namespace minfer::quant
