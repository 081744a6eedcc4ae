// A merged tensor as a writer source (assemble_merge.hpp).
#include "assemble_merge.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>
#include <utility>

#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/validate.hpp"

namespace minfer::toolbox::detail {
namespace {

constexpr std::uint64_t batch_values = std::uint64_t{1} << 20;
constexpr std::size_t spool_chunk = std::size_t{4} << 20;  // one range request per chunk

gguf::error spool_error(const std::filesystem::path& dir, const std::string& what, int err) {
    gguf::error e;
    e.code = gguf::errc::io_error;
    e.file = dir.string();
    e.detail = what;
    e.sys_errno = err;
    return e;
}

// A remote input's bytes in an unlinked temporary file, mapped read-only.
class spool {
public:
    spool() = default;
    spool(const spool&) = delete;
    spool& operator=(const spool&) = delete;
    ~spool() { release(); }

    gguf::result<std::span<const std::byte>> fill(const std::filesystem::path& dir, const merge_job::read_fn& read, std::uint64_t n) {
        release();
        if (n == 0) return std::span<const std::byte>();
        const std::filesystem::path where = dir.empty() ? std::filesystem::path(".") : dir;
        fd_ = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
            std::string name = (where / ".minfer-spool-XXXXXX").string();  // a filesystem without O_TMPFILE
            fd_ = ::mkostemp(name.data(), O_CLOEXEC);
            if (fd_ >= 0) ::unlink(name.c_str());
        }
        if (fd_ < 0) return gguf::unexpected(spool_error(where, "create a temporary file for a remote tensor in", errno));
        std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(n, spool_chunk)));
        for (std::uint64_t off = 0; off < n;) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), n - off));
            if (auto r = read(off, std::span<std::byte>(buf.data(), k)); !r) return gguf::unexpected(std::move(r).error());
            for (std::size_t w = 0; w < k;) {
                const ssize_t put = ::pwrite(fd_, buf.data() + w, k - w, static_cast<off_t>(off + w));
                if (put < 0 && errno == EINTR) continue;
                if (put <= 0) return gguf::unexpected(spool_error(where, "write a remote tensor's temporary copy in", put < 0 ? errno : ENOSPC));
                w += static_cast<std::size_t>(put);
            }
            off += k;
        }
        void* m = ::mmap(nullptr, static_cast<std::size_t>(n), PROT_READ, MAP_SHARED, fd_, 0);
        if (m == MAP_FAILED) return gguf::unexpected(spool_error(where, "map a remote tensor's temporary copy in", errno));
        map_ = m;
        size_ = static_cast<std::size_t>(n);
        return std::span<const std::byte>(static_cast<const std::byte*>(map_), size_);
    }

    void release() noexcept {
        if (map_ != nullptr) ::munmap(map_, size_);
        if (fd_ >= 0) ::close(fd_);
        map_ = nullptr;
        size_ = 0;
        fd_ = -1;
    }

private:
    int fd_ = -1;
    void* map_ = nullptr;
    std::size_t size_ = 0;
};

class merging {
public:
    merging(merge_job job, merge_math::merger m) : job_(std::move(job)), merger_(std::move(m)) {
        n_per_row_ = static_cast<std::uint64_t>(job_.ne[0]);
        n_rows_ = static_cast<std::uint64_t>(job_.ne[1]) * static_cast<std::uint64_t>(job_.ne[2]) *
                  static_cast<std::uint64_t>(job_.ne[3]);
        row_bytes_ = quant::bytes_for(job_.to, n_per_row_);
        rows_per_matrix_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(job_.ne[1]));
        batch_rows_ = std::max<std::uint64_t>(1, batch_values / std::max<std::uint64_t>(1, n_per_row_));
    }

    gguf::result<void> fill(std::uint64_t offset, std::span<std::byte> out) {
        if (!inputs_ready_) {
            if (auto r = fetch_remote_inputs(); !r) return r;
            inputs_ready_ = true;
        }
        if (!statistics_done_) {
            if (auto r = statistics(); !r) return r;
            statistics_done_ = true;
        }
        while (!out.empty()) {
            if (offset < begin_ || offset >= end_) {
                if (row_bytes_ == 0 || offset % row_bytes_ != 0) return order_error(offset);
                if (auto r = produce(offset / row_bytes_); !r) return r;
            }
            const std::uint64_t n = std::min<std::uint64_t>(out.size(), end_ - offset);
            std::memcpy(out.data(), bytes_.data() + (offset - begin_), static_cast<std::size_t>(n));
            out = out.subspan(static_cast<std::size_t>(n));
            offset += n;
        }
        if (offset == n_rows_ * row_bytes_)  // the tensor's last byte: its remote inputs' copies go
            for (spool& sp : spools_) sp.release();
        return {};
    }

private:
    // Each input's bytes: the model's mapping, or a remote input's temporary copy.
    gguf::result<void> fetch_remote_inputs() {
        const std::size_t n = job_.models.size();
        data_.resize(n);
        spools_ = std::vector<spool>(n);
        for (std::size_t i = 0; i < n; ++i) {
            const gguf::tensor_ref& t = *job_.tensors[i];
            if (i >= job_.reads.size() || !job_.reads[i]) {
                data_[i] = job_.models[i]->tensor_data(t);
                continue;
            }
            if (!merger_.reads(i)) continue;
            auto d = spools_[i].fill(job_.spool_dir, job_.reads[i], t.info->n_bytes);
            if (!d) {
                gguf::error e = std::move(d).error();
                if (e.subject.empty()) e.subject = t.info->name;
                return gguf::unexpected(std::move(e));
            }
            data_[i] = *d;
        }
        return {};
    }

    // Rows [row, row + k) of every source the pass reads, as f32.
    gguf::result<void> load(std::uint64_t row, std::uint64_t k) {
        const std::size_t n = job_.models.size();
        inputs_.resize(n);
        spans_.assign(n, std::span<const float>());
        for (std::size_t i = 0; i < n; ++i) {
            if (!merger_.reads(i)) continue;
            inputs_[i].resize(static_cast<std::size_t>(k * n_per_row_));
            const gguf::tensor_ref& t = *job_.tensors[i];
            if (auto r = quant::dequantize_range(t.info->type, data_[i], row * n_per_row_, inputs_[i],
                                                 job_.threads);
                !r) {
                gguf::error e = std::move(r).error();
                if (e.subject.empty()) e.subject = t.info->name;
                return gguf::unexpected(std::move(e));
            }
            spans_[i] = inputs_[i];
        }
        return {};
    }

    gguf::result<void> statistics() {
        while (merger_.needs_statistics()) {
            for (std::uint64_t row = 0; row < n_rows_; row += batch_rows_) {
                const std::uint64_t k = std::min(batch_rows_, n_rows_ - row);
                if (auto r = load(row, k); !r) return r;
                if (auto r = merger_.observe(spans_); !r) return r;
            }
        }
        return {};
    }

    gguf::result<void> produce(std::uint64_t row) {
        if (row >= n_rows_) return order_error(row * row_bytes_);
        // a batch never crosses a matrix (an expert's importance weights are its own)
        const std::uint64_t matrix_end = std::min(n_rows_, (row / rows_per_matrix_ + 1) * rows_per_matrix_);
        const std::uint64_t k = std::min(batch_rows_, matrix_end - row);
        if (auto r = load(row, k); !r) return r;
        merged_.resize(static_cast<std::size_t>(k * n_per_row_));
        if (auto r = merger_.merge(spans_, merged_); !r) return r;
        bytes_.resize(static_cast<std::size_t>(k * row_bytes_));
        if (job_.to == gguf::tensor_type::f32) {
            std::memcpy(bytes_.data(), merged_.data(), bytes_.size());
        } else {
            // A batch is whole rows of one matrix, whose importance weights are its matrix's ne[0].
            std::span<const float> importance;
            if (!job_.importance.empty())
                importance = job_.importance.subspan(static_cast<std::size_t>(row / rows_per_matrix_ * n_per_row_),
                                                     static_cast<std::size_t>(n_per_row_));
            auto q = quant::quantize_rows_parallel(job_.to, merged_, static_cast<std::int64_t>(n_per_row_), importance, bytes_,
                                                   job_.threads);
            if (!q) {
                gguf::error e = std::move(q).error();
                if (e.subject.empty()) e.subject = job_.name;
                return gguf::unexpected(std::move(e));
            }
        }
        if (auto bad = quant::validate_bytes(job_.to, bytes_)) {
            gguf::error e;
            e.code = quant::codes::quantize_failed;
            e.subject = job_.name;
            e.index = static_cast<std::int64_t>(row);
            e.detail = "the merged values are beyond what the type holds (an infinite or NaN scale or value)";
            return gguf::unexpected(std::move(e));
        }
        begin_ = row * row_bytes_;
        end_ = begin_ + k * row_bytes_;
        return {};
    }

    gguf::result<void> order_error(std::uint64_t offset) const {
        gguf::error e;
        e.code = gguf::errc::index_out_of_range;
        e.subject = job_.name;
        e.found = offset;
        e.detail = "a merged tensor's bytes were asked for out of order";
        return gguf::unexpected(std::move(e));
    }

    merge_job job_;
    merge_math::merger merger_;
    bool inputs_ready_ = false, statistics_done_ = false;
    std::vector<std::span<const std::byte>> data_;
    std::vector<spool> spools_;
    std::uint64_t n_per_row_ = 0, n_rows_ = 0, row_bytes_ = 0, batch_rows_ = 1, rows_per_matrix_ = 1;
    std::vector<std::vector<float>> inputs_;
    std::vector<std::span<const float>> spans_;
    std::vector<float> merged_;
    std::vector<std::byte> bytes_;
    std::uint64_t begin_ = 0, end_ = 0;
};

}  // namespace

gguf::result<gguf::tensor_source> merged_source(merge_job job) noexcept {
    try {
        job.merge.name = job.name;
        auto m = merge_math::merger::create(job.merge);
        if (!m) return gguf::unexpected(std::move(m).error());
        std::uint64_t values = 1;
        for (std::int64_t n : job.ne) values *= static_cast<std::uint64_t>(n);
        const std::uint64_t size = quant::bytes_for(job.to, values);
        auto state = std::make_shared<merging>(std::move(job), std::move(*m));
        return gguf::tensor_source::callback(size, [state](std::uint64_t offset, std::span<std::byte> out) noexcept -> gguf::result<void> {
            try {
                return state->fill(offset, out);
            } catch (...) {
                return gguf::unexpected(gguf::out_of_memory_error("merging a tensor"));
            }
        });
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("preparing a merge"));
    }
}

}  // namespace minfer::toolbox::detail
