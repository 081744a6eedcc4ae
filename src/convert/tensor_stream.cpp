// tensor_stream.hpp: a planned tensor's bytes, batch by batch.
#include "minfer/convert/tensor_stream.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "half_rows.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"

namespace minfer::convert {
namespace {

constexpr std::uint64_t batch_values_target = std::uint64_t{1} << 18;  // 1 MiB of float32 per batch

template <class T>
T load(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// `n` values of `t` at `src` as float32, as torch's .to(torch.float32) gives them.
gguf::result<void> to_f32(dtype t, const std::byte* src, std::span<float> out) noexcept {
    const std::size_t n = out.size();
    switch (t) {
        case dtype::f32: std::memcpy(out.data(), src, n * 4); return {};
        case dtype::f16: return quant::dequantize(gguf::tensor_type::f16, {src, n * 2}, out);
        case dtype::bf16: return quant::dequantize(gguf::tensor_type::bf16, {src, n * 2}, out);
        case dtype::f64:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<double>(src + 8 * i));
            return {};
        case dtype::i64:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int64_t>(src + 8 * i));
            return {};
        case dtype::i32:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int32_t>(src + 4 * i));
            return {};
        case dtype::i16:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int16_t>(src + 2 * i));
            return {};
        case dtype::i8:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::int8_t>(src + i));
            return {};
        case dtype::u8:
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(load<std::uint8_t>(src + i));
            return {};
        case dtype::boolean:
            for (std::size_t i = 0; i < n; ++i) out[i] = load<std::uint8_t>(src + i) != 0 ? 1.0f : 0.0f;
            return {};
        default: break;
    }
    gguf::error e;  // unreachable: model_plan refused the checkpoint (check_convertible)
    e.code = codes::unsupported_dtype;
    e.subject = to_string(t);
    e.detail = "a dtype the converter does not read";
    return gguf::unexpected(std::move(e));
}

std::uint64_t element_bytes(dtype t) noexcept { return bit_size(t) / 8; }

}  // namespace

struct tensor_stream::state {
    const model_plan* plan = nullptr;
    const planned_tensor* t = nullptr;
    bool release = true;
    std::uint64_t row_values = 1, n_rows = 0, row_bytes = 0, batch_rows = 1;
    // permute: the unit the first dimension counts (values per torch row) and the units
    std::uint64_t unit = 1, units = 1;
    std::vector<float> values;      // a batch of rows as float32
    std::vector<std::byte> bytes;   // the same batch in the output type
    std::uint64_t staged_first = 0, staged_rows = 0;  // rows held in `bytes`
    std::vector<std::uintptr_t> released;             // per input: its pages given back below this address

    std::span<const std::byte> input(std::size_t i) const {
        const checkpoint& w = *plan->weights;
        return w.tensor_data(w.tensors()[t->inputs[i]]);
    }
    dtype input_dtype(std::size_t i) const { return plan->weights->tensors()[t->inputs[i]].entry->dtype; }

    // Values of output rows [first, first + n) into out.
    gguf::result<void> gather(std::uint64_t first, std::uint64_t n, std::span<float> out) {
        if (t->op == tensor_op::values) {
            const std::uint64_t from = first * row_values, count = n * row_values;
            std::copy_n(t->values.begin() + static_cast<std::ptrdiff_t>(from), count, out.begin());
            return {};
        }
        if (t->op == tensor_op::copy) {
            const dtype d = input_dtype(0);
            const std::uint64_t eb = element_bytes(d);
            const auto in = input(0);
            auto r = to_f32(d, in.data() + first * row_values * eb, out.first(n * row_values));
            if (r) give_back(0, in, (first + n) * row_values * eb);
            return r;
        }
        if (t->op == tensor_op::stack) {
            const std::uint64_t per_expert = n_rows / t->inputs.size();
            std::uint64_t done = 0;
            while (done < n) {
                const std::uint64_t row = first + done, e = row / per_expert, in_row = row % per_expert;
                const std::uint64_t take = std::min(n - done, per_expert - in_row);
                const dtype d = input_dtype(e);
                const std::uint64_t eb = element_bytes(d);
                const auto in = input(e);
                auto r = to_f32(d, in.data() + in_row * row_values * eb, out.subspan(done * row_values, take * row_values));
                if (!r) return r;
                give_back(e, in, (in_row + take) * row_values * eb);
                done += take;
            }
            return {};
        }
        // permute_heads: unit u of the output (a torch row of `unit` values) is unit perm(u) of the
        // input: reshape(heads, 2, half, …).swapaxes(1, 2): output (h, i, j) ← input (h, j, i).
        const dtype d = input_dtype(0);
        const std::uint64_t eb = element_bytes(d);
        const auto in = input(0);
        const std::uint64_t per_head = units / t->heads, half = per_head / 2;
        const std::uint64_t first_unit = first * row_values / unit, n_units = n * row_values / unit;
        for (std::uint64_t k = 0; k < n_units; ++k) {
            const std::uint64_t u = first_unit + k;
            const std::uint64_t h = u / per_head, rest = u % per_head, i = rest / 2, j = rest % 2;
            const std::uint64_t src_unit = h * per_head + j * half + i;
            auto r = to_f32(d, in.data() + src_unit * unit * eb, out.subspan(k * unit, unit));
            if (!r) return r;
        }
        return {};
    }

    // Release the pages of input `i` below byte `upto` of its data (whole pages only).
    void give_back(std::size_t i, std::span<const std::byte> in, std::uint64_t upto) {
        if (!release || in.empty()) return;
        static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
        const auto begin = reinterpret_cast<std::uintptr_t>(in.data());
        const std::uintptr_t end = (begin + upto) & ~(page - 1);
        std::uintptr_t& from = released[i];
        if (from == 0) from = (begin + page - 1) & ~(page - 1);  // a page shared with the tensor before stays
        if (end <= from) return;
        madvise(reinterpret_cast<void*>(from), end - from, MADV_DONTNEED);
        from = end;
    }

    gguf::result<void> stage(std::uint64_t first) {
        const std::uint64_t n = std::min(batch_rows, n_rows - first);
        auto r = gather(first, n, std::span<float>(values).first(n * row_values));
        if (!r) return r;
        const std::span<std::byte> dst = std::span<std::byte>(bytes).first(n * row_bytes);
        if (t->type == gguf::tensor_type::f32) {
            std::memcpy(dst.data(), values.data(), dst.size());
        } else if (t->type == gguf::tensor_type::f16) {
            // numpy's conversion (gguf-py's), not ggml's: they differ on NaN payloads
            detail::f32_to_f16_numpy_row(values.data(), dst.data(), n * row_values);
        } else {
            auto q = quant::quantize_rows(t->type, std::span<const float>(values).first(n * row_values),
                                          static_cast<std::int64_t>(row_values), {}, dst);
            if (!q) return q;
        }
        staged_first = first;
        staged_rows = n;
        return {};
    }
};

tensor_stream::tensor_stream(const model_plan& plan, std::size_t index, bool release_pages) : s_(std::make_unique<state>()) {
    state& s = *s_;
    s.plan = &plan;
    s.t = &plan.tensors[index];
    s.release = release_pages;
    s.row_values = s.t->ne.empty() ? 1 : static_cast<std::uint64_t>(s.t->ne[0]);
    s.n_rows = s.row_values ? s.t->n_elements / s.row_values : 0;
    s.row_bytes = quant::bytes_for(s.t->type, s.row_values);
    s.batch_rows = std::max<std::uint64_t>(1, batch_values_target / std::max<std::uint64_t>(1, s.row_values));
    s.batch_rows = std::min(s.batch_rows, std::max<std::uint64_t>(1, s.n_rows));
    if (s.t->op == tensor_op::permute_heads) {
        // torch's first dimension: ne.back(); a unit is the values of one index of it
        const std::uint64_t first_dim = static_cast<std::uint64_t>(s.t->ne.back());
        s.units = first_dim;
        s.unit = first_dim ? s.t->n_elements / first_dim : 1;
    }
    s.released.assign(s.t->inputs.size(), 0);
}

tensor_stream::~tensor_stream() = default;
tensor_stream::tensor_stream(tensor_stream&&) noexcept = default;
tensor_stream& tensor_stream::operator=(tensor_stream&&) noexcept = default;

std::uint64_t tensor_stream::row_values() const noexcept { return s_->row_values; }
std::uint64_t tensor_stream::rows() const noexcept { return s_->n_rows; }

gguf::result<void> tensor_stream::fill(std::uint64_t offset, std::span<std::byte> out) noexcept {
    try {
        state& s = *s_;
        if (s.values.empty()) {
            s.values.resize(s.batch_rows * s.row_values);
            s.bytes.resize(s.batch_rows * s.row_bytes);
        }
        if (offset + out.size() > s.n_rows * s.row_bytes || s.row_bytes == 0) {
            gguf::error e;
            e.code = gguf::errc::data_truncated;
            e.subject = s.t->name;
            e.expected = s.n_rows * s.row_bytes;
            e.found = offset + out.size();
            return gguf::unexpected(std::move(e));
        }
        std::size_t done = 0;
        while (done < out.size()) {
            const std::uint64_t at = offset + done, row = at / s.row_bytes;
            if (s.staged_rows == 0 || row < s.staged_first || row >= s.staged_first + s.staged_rows) {
                auto r = s.stage(row);
                if (!r) return r;
            }
            const std::uint64_t from = at - s.staged_first * s.row_bytes;
            const std::uint64_t avail = s.staged_rows * s.row_bytes - from;
            const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(avail, out.size() - done));
            std::memcpy(out.data() + done, s.bytes.data() + from, take);
            done += take;
        }
        return {};
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("converting a tensor"));
    }
}

gguf::result<void> tensor_stream::rows_f32(std::uint64_t first, std::uint64_t n, std::span<float> out) noexcept {
    try {
        state& s = *s_;
        if (first + n > s.n_rows || out.size() != n * s.row_values) {
            gguf::error e;
            e.code = gguf::errc::data_truncated;
            e.subject = s.t->name;
            e.expected = s.n_rows;
            e.found = first + n;
            return gguf::unexpected(std::move(e));
        }
        return s.gather(first, n, out);
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("converting a tensor"));
    }
}

}  // namespace minfer::convert
