// minfer::quant's entry points: size checks, the choice of kernels, and the threaded path.
#include "minfer/quant/dequantize.hpp"
#include "worker_pool.hpp"
#include "minfer/quant/errors.hpp"

#include <algorithm>
#include <cstdint>
#include <atomic>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "dispatch.hpp"
#include "kernels.hpp"

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

// The traits of a convertible type, or nullptr.
const gguf::type_traits* convertible(tensor_type type) noexcept {
    if (!can_dequantize(type)) return nullptr;
    return gguf::traits(type);
}

// Checks shared by every entry point; on success `blocks` is the number of blocks in dst.
result<void> check(tensor_type type, std::uint64_t src_bytes, std::uint64_t n_values, std::uint64_t& blocks) noexcept {
    const gguf::type_traits* t = convertible(type);
    if (t == nullptr) return unexpected(make_error(quant::codes::type_not_convertible, 0, static_cast<std::uint32_t>(type)));
    if (n_values % t->block_elems != 0) return unexpected(make_error(errc::not_block_multiple, t->block_elems, n_values));
    blocks = n_values / t->block_elems;
    const std::uint64_t need = bytes_for(type, n_values);
    if (src_bytes != need) return unexpected(make_error(errc::buffer_size_mismatch, need, src_bytes, "input bytes"));
    return {};
}

void run(const detail::kernel_table& table, tensor_type type, const std::byte* src, float* dst, std::uint64_t blocks) {
    if (blocks == 0) return;
    const auto id = static_cast<std::uint32_t>(type);
    const auto* in = reinterpret_cast<const std::uint8_t*>(src);
    const auto n = static_cast<std::size_t>(blocks);
    // A large output goes to memory with non-temporal stores (it would not stay in cache anyway);
    // they need 16-byte alignment, which any malloc'ed buffer has.
    const std::uint64_t out_bytes = blocks * gguf::traits(type)->block_elems * sizeof(float);
    if (table.streaming[id] != nullptr && out_bytes >= detail::stream_min_bytes &&
        reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
        table.streaming[id](in, dst, n);
        table.store_fence();
        return;
    }
    detail::block_kernel k = table.by_type[id];
    if (k == nullptr) k = detail::scalar_kernels().by_type[id];
    k(in, dst, n);
}

}  // namespace

bool can_dequantize(tensor_type type) noexcept {
    const auto id = static_cast<std::uint32_t>(type);
    if (id >= gguf::tensor_type_count) return false;
    if (type == tensor_type::q8_1 || type == tensor_type::i64) return false;
    const gguf::type_traits* t = gguf::traits(type);
    return t != nullptr && !t->removed() && detail::scalar_kernels().by_type[id] != nullptr;
}

std::uint64_t bytes_for(tensor_type type, std::uint64_t n_values) noexcept {
    const gguf::type_traits* t = convertible(type);
    if (t == nullptr || n_values % t->block_elems != 0) return 0;
    const std::uint64_t blocks = n_values / t->block_elems;
    if (blocks > UINT64_MAX / t->block_bytes) return 0;
    return blocks * t->block_bytes;
}

result<void> dequantize(tensor_type type, std::span<const std::byte> src, std::span<float> dst) noexcept {
    std::uint64_t blocks = 0;
    if (auto r = check(type, src.size(), dst.size(), blocks); !r) return r;
    run(detail::active_kernels(), type, src.data(), dst.data(), blocks);
    return {};
}

result<void> dequantize_with(isa i, tensor_type type, std::span<const std::byte> src, std::span<float> dst) noexcept {
    std::uint64_t blocks = 0;
    if (auto r = check(type, src.size(), dst.size(), blocks); !r) return r;
    const detail::kernel_table* table = detail::kernels_of(i);
    if (table == nullptr) {
        error e = make_error(quant::codes::type_not_convertible, 0, static_cast<std::uint32_t>(type));
        e.detail = std::string("no ").append(to_string(i)).append(" kernels in this build or on this CPU");
        return unexpected(std::move(e));
    }
    run(*table, type, src.data(), dst.data(), blocks);
    return {};
}

result<void> dequantize_range(tensor_type type, std::span<const std::byte> tensor_bytes, std::uint64_t first,
                              std::span<float> dst, unsigned threads) noexcept {
    const gguf::type_traits* t = convertible(type);
    if (t == nullptr) return unexpected(make_error(quant::codes::type_not_convertible, 0, static_cast<std::uint32_t>(type)));
    if (first % t->block_elems != 0) return unexpected(make_error(errc::not_block_multiple, t->block_elems, first));
    if (tensor_bytes.size() % t->block_bytes != 0) {
        const std::uint64_t whole = tensor_bytes.size() / t->block_bytes * t->block_bytes;
        return unexpected(make_error(errc::buffer_size_mismatch, whole + t->block_bytes, tensor_bytes.size(),
                                     "tensor bytes (not whole blocks)"));
    }
    const std::uint64_t total = tensor_bytes.size() / t->block_bytes * t->block_elems;
    if (first > total || dst.size() > total - first)
        return unexpected(make_error(errc::index_out_of_range, total, first + dst.size()));
    const std::uint64_t offset = first / t->block_elems * t->block_bytes;
    const std::uint64_t bytes = bytes_for(type, dst.size());
    if (dst.size() % t->block_elems != 0) return unexpected(make_error(errc::not_block_multiple, t->block_elems, dst.size()));
    if (threads == 1) return dequantize(type, tensor_bytes.subspan(offset, bytes), dst);
    return dequantize_parallel(type, tensor_bytes.subspan(offset, bytes), dst, threads);
}

result<void> dequantize_parallel(tensor_type type, std::span<const std::byte> src, std::span<float> dst,
                                 unsigned threads) noexcept {
    std::uint64_t blocks = 0;
    if (auto r = check(type, src.size(), dst.size(), blocks); !r) return r;
    const gguf::type_traits* t = gguf::traits(type);
    // The pool's threads are already running: a quarter of a million values (a few hundred
    // microseconds of work) is worth handing one.
    constexpr std::uint64_t min_values_per_thread = 1u << 18;
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t by_size = std::max<std::uint64_t>(1, dst.size() / min_values_per_thread);
    const auto n = static_cast<unsigned>(std::min<std::uint64_t>({threads, by_size, blocks == 0 ? 1 : blocks}));
    const detail::kernel_table& table = detail::active_kernels();
    if (n <= 1) {
        run(table, type, src.data(), dst.data(), blocks);
        return {};
    }
    // Run k converts blocks [k*blocks/n, (k+1)*blocks/n), each boundary rounded down to 64 blocks
    // so that every run's output keeps the buffer's 16-byte alignment (the streaming kernels need it).
    auto boundary = [&](unsigned k) { return k == n ? blocks : blocks * k / n / 64 * 64; };
    auto range = [&](unsigned k) {
        const std::uint64_t b0 = boundary(k), b1 = boundary(k + 1);
        run(table, type, src.data() + b0 * t->block_bytes, dst.data() + b0 * t->block_elems, b1 - b0);
    };
    // On the process's worker pool (worker_pool.hpp): no thread started per call, the caller's
    // thread works too.
    detail::run_tasks(n, n, range);
    return {};
}

}  // namespace minfer::quant
