// minfer_quantize: ggml_quantize_chunk's bytes through minfer::quant::quantize_rows (the one
// quantizer; nothing here computes a block). This file adds what a C caller needs around it: the
// pointers and counts checked before anything is read, the sizes checked for overflow, and dst left
// untouched on every error (the quantizer may fail on a row after earlier rows are written, so the
// rows go to a scratch buffer first and are copied to dst only when all of them succeeded).
#include "minfer.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>

#include "capi_errors.hpp"
#include "minfer/gguf/rules.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/quantize.hpp"

namespace gguf = minfer::gguf;
namespace quant = minfer::quant;
using namespace minfer::capi;

namespace {

bool in_table(int ggml_type) noexcept {
    return ggml_type >= 0 && ggml_type < static_cast<int>(gguf::tensor_type_count);
}

void record_size_overflow(const char* fn, std::int64_t n_rows, std::int64_t n_per_row) noexcept {
    gguf::error e;
    e.code = gguf::errc::size_overflow;
    e.where = gguf::section::access;
    e.subject = fn;
    e.expected = static_cast<std::uint64_t>(PTRDIFF_MAX);  // the most bytes one buffer can hold
    e.shape = {n_per_row, n_rows, 1, 1};
    record(e);
}

// The bytes of n_rows quantized rows of n_per_row values, and of their n_rows * n_per_row input
// floats; false with the error recorded when the type cannot be quantized, a row is not whole
// blocks, n_rows is negative or a size does not fit one buffer.
bool sizes_of(int ggml_type, std::int64_t n_rows, std::int64_t n_per_row, const char* fn, std::uint64_t& out_bytes,
              std::uint64_t& n_values) noexcept {
    if (!in_table(ggml_type) || !quant::can_quantize(static_cast<gguf::tensor_type>(ggml_type))) {
        record_code(quant::codes::type_not_quantizable, fn, {}, 0, static_cast<std::uint64_t>(ggml_type));
        return false;
    }
    const gguf::type_traits* t = gguf::traits(static_cast<std::uint32_t>(ggml_type));
    if (n_per_row <= 0 || n_per_row % t->block_elems != 0) {
        gguf::error e;
        e.code = gguf::errc::not_block_multiple;
        e.where = gguf::section::access;
        e.expected = t->block_elems;
        e.found = static_cast<std::uint64_t>(n_per_row);
        try {
            e.detail = t->name;
        } catch (...) {
        }
        record(e);
        return false;
    }
    if (n_rows < 0) {
        record_code(gguf::errc::buffer_size_mismatch, fn, "n_rows is negative", 0, static_cast<std::uint64_t>(n_rows));
        return false;
    }
    std::int64_t values = 0;
    std::uint64_t in_bytes = 0, row_bytes = static_cast<std::uint64_t>(n_per_row) / t->block_elems * t->block_bytes,
                  bytes = 0;
    if (__builtin_mul_overflow(n_rows, n_per_row, &values) ||
        __builtin_mul_overflow(static_cast<std::uint64_t>(values), sizeof(float), &in_bytes) ||
        !gguf::rules::fits_in_memory(in_bytes) ||
        __builtin_mul_overflow(static_cast<std::uint64_t>(n_rows), row_bytes, &bytes) ||
        !gguf::rules::fits_in_memory(bytes)) {
        record_size_overflow(fn, n_rows, n_per_row);
        return false;
    }
    out_bytes = bytes;
    n_values = static_cast<std::uint64_t>(values);
    return true;
}

}  // namespace

extern "C" {

int64_t minfer_quantize(int ggml_type, const float* src, int64_t n_rows, int64_t n_per_row, const float* imatrix,
                        void* dst, size_t dst_size, struct minfer_error* err) noexcept {
    constexpr const char* fn = "minfer_quantize";
    auto fail = [err]() noexcept -> int64_t {
        report(err, true);
        return -1;
    };
    try {
        if (src == nullptr) {
            record_code(null_argument, fn, "src");
            return fail();
        }
        if (dst == nullptr) {
            record_code(null_argument, fn, "dst");
            return fail();
        }
        const std::span<const float> importance(imatrix, imatrix == nullptr || n_per_row <= 0
                                                             ? 0
                                                             : static_cast<std::size_t>(n_per_row));
        // The quantizer's own checks first, in its order (importance weights, type, block): on zero
        // rows it checks every argument and writes nothing.
        if (in_table(ggml_type) && n_per_row > 0) {
            auto probe = quant::quantize_rows(static_cast<gguf::tensor_type>(ggml_type), {}, n_per_row, importance, {});
            if (!probe) {
                record(probe.error());
                return fail();
            }
        }
        std::uint64_t need = 0, n_values = 0;
        if (!sizes_of(ggml_type, n_rows, n_per_row, fn, need, n_values)) return fail();
        if (dst_size < need) {
            record_code(gguf::errc::buffer_size_mismatch, fn, "dst_size", need, dst_size);
            return fail();
        }
        if (need == 0) {
            report(err, false);
            return 0;
        }
        const std::unique_ptr<std::byte[]> scratch(new (std::nothrow) std::byte[need]);
        if (!scratch) {
            record(gguf::out_of_memory_error("the quantized rows"));
            return fail();
        }
        auto r = quant::quantize_rows(static_cast<gguf::tensor_type>(ggml_type),
                                      {src, static_cast<std::size_t>(n_values)}, n_per_row, importance,
                                      {scratch.get(), static_cast<std::size_t>(need)});
        if (!r) {
            record(r.error());
            return fail();
        }
        std::memcpy(dst, scratch.get(), need);
        report(err, false);
        return static_cast<int64_t>(need);
    } catch (...) {
        record_exception(fn);
        return fail();
    }
}

size_t minfer_quantize_dst_size(int ggml_type, int64_t n_rows, int64_t n_per_row) noexcept {
    std::uint64_t bytes = 0, n_values = 0;
    if (!sizes_of(ggml_type, n_rows, n_per_row, "minfer_quantize_dst_size", bytes, n_values)) return 0;
    return static_cast<size_t>(bytes);
}

bool minfer_quantize_requires_imatrix(int ggml_type) noexcept {
    return in_table(ggml_type) && quant::requires_importance(static_cast<gguf::tensor_type>(ggml_type));
}

}  // extern "C"
