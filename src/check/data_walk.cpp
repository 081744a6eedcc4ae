// data_walk: windows of the mapping, jobs on a small pool, pages dropped behind the walk.
#include "minfer/check/data_walk.hpp"
#include "errors.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>

namespace minfer::check {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

namespace {

constexpr std::size_t window_quantum = std::size_t{64} << 10;

// A tensor's bytes as absolute offsets in its part's file.
struct tensor_span {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

tensor_span span_of(const gguf::model& m, const gguf::tensor_ref& t) noexcept {
    const auto& part = m.parts()[t.part];
    const std::uint64_t begin = part.view.data_offset() + t.info->offset;
    return {begin, begin + t.info->n_bytes};
}

// The range of a part the walk covers: all of it, or its tensor bytes.
tensor_span range_of(const gguf::model& m, std::uint32_t part, bool whole_files) noexcept {
    if (whole_files) return {0, m.parts()[part].file.size()};
    tensor_span r{~std::uint64_t{0}, 0};
    for (const auto& t : m.tensors()) {
        if (t.part != part) continue;
        const tensor_span s = span_of(m, t);
        r.begin = std::min(r.begin, s.begin);
        r.end = std::max(r.end, s.end);
    }
    if (r.begin > r.end) return {0, 0};
    return r;
}

bool part_has_tensors(const gguf::model& m, std::uint32_t part) noexcept {
    return std::any_of(m.tensors().begin(), m.tensors().end(), [&](const auto& t) { return t.part == part; });
}

// Advice on whole pages inside [begin, end) of a mapping; failures are ignored (advice only).
void advise(const std::byte* base, std::uint64_t begin, std::uint64_t end, int advice) noexcept {
    static const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const std::uint64_t a = begin / page * page;  // the mapping's base is page-aligned
    const std::uint64_t b = advice == MADV_DONTNEED ? end / page * page : (end + page - 1) / page * page;
    if (b <= a) return;
    (void)madvise(const_cast<std::byte*>(base) + a, static_cast<std::size_t>(b - a), advice);  // NOLINT
}

// Jobs of one window on `threads` threads (the caller's included). Workers wait for a generation
// number to change, take jobs by an atomic index, and the last to finish wakes the caller.
class job_pool {
public:
    explicit job_pool(unsigned threads) {
        for (unsigned i = 1; i < threads; ++i) {
            try {
                workers_.emplace_back([this] { worker(); });
            } catch (...) {  // fewer threads: the work is done by those that started
                break;
            }
        }
    }
    job_pool(const job_pool&) = delete;
    job_pool& operator=(const job_pool&) = delete;
    ~job_pool() {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
        }
        start_.notify_all();
        for (auto& w : workers_) w.join();
    }

    /// Runs every job; false when one threw (std::bad_alloc).
    bool run(std::vector<job>& jobs) {
        if (jobs.empty()) return true;
        if (workers_.empty() || jobs.size() == 1) {
            for (auto& j : jobs) call(j);
        } else {
            {
                std::lock_guard lock(mu_);
                jobs_ = &jobs;
                next_.store(0);
                left_.store(jobs.size());
                ++generation_;
            }
            start_.notify_all();
            take_jobs(jobs);
            std::unique_lock lock(mu_);
            done_.wait(lock, [&] { return left_.load() == 0; });
            jobs_ = nullptr;
        }
        return !failed_.exchange(false);
    }

private:
    void call(job& j) noexcept {
        try {
            j();
        } catch (...) {
            failed_.store(true);
        }
    }

    void take_jobs(std::vector<job>& jobs) {
        for (;;) {
            const std::size_t i = next_.fetch_add(1);
            if (i >= jobs.size()) return;
            call(jobs[i]);
            if (left_.fetch_sub(1) == 1) {
                std::lock_guard lock(mu_);
                done_.notify_all();
            }
        }
    }

    void worker() {
        std::uint64_t seen = 0;
        for (;;) {
            std::vector<job>* jobs = nullptr;
            {
                std::unique_lock lock(mu_);
                start_.wait(lock, [&] { return stop_ || (generation_ != seen && jobs_ != nullptr); });
                if (stop_) return;
                seen = generation_;
                jobs = jobs_;
            }
            take_jobs(*jobs);
        }
    }

    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable start_;
    std::condition_variable done_;
    std::vector<job>* jobs_ = nullptr;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> left_{0};
    std::atomic<bool> failed_{false};
};

}  // namespace

std::uint64_t walk_bytes(const gguf::model& m, bool whole_files) noexcept {
    std::uint64_t total = 0;
    for (std::uint32_t p = 0; p < m.parts().size(); ++p) {
        const tensor_span r = range_of(m, p, whole_files);
        total += r.end - r.begin;
    }
    return total;
}

result<void> walk_model_data(const gguf::model& m, std::span<data_consumer* const> consumers,
                             const walk_options& options) noexcept {
    try {
        const std::size_t w_bytes = std::max(window_quantum, (options.window_bytes + window_quantum - 1) /
                                                                  window_quantum * window_quantum);
        unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
        threads = std::min(threads, 256u);
        job_pool pool(threads);
        const std::uint64_t total = walk_bytes(m, options.whole_files);
        std::uint64_t done = 0;
        std::uint64_t index = 0;
        std::vector<tensor_piece> pieces;
        std::vector<job> jobs;
        const auto tensors = m.tensors();
        std::size_t ti = 0;  // the first tensor not yet wholly delivered (tensors are in part, file order)

        for (std::uint32_t p = 0; p < m.parts().size(); ++p) {
            const auto& part = m.parts()[p];
            if (!options.whole_files && !part_has_tensors(m, p)) continue;
            const tensor_span r = range_of(m, p, options.whole_files);
            const std::byte* base = part.file.bytes().data();
            const bool mapped = part.file.mode() == gguf::load_mode::map;
            std::uint64_t pos = r.begin;
            bool first_window = true;
            if (mapped) advise(base, r.begin, std::min<std::uint64_t>(r.end, r.begin + w_bytes), MADV_WILLNEED);
            do {
                const std::uint64_t next = std::min<std::uint64_t>(r.end, (pos / w_bytes + 1) * w_bytes);
                const bool last_window = next == r.end;
                pieces.clear();
                while (ti < tensors.size() && tensors[ti].part == p) {
                    const tensor_span s = span_of(m, tensors[ti]);
                    if (s.begin > next || (s.begin == next && !last_window)) break;  // starts later
                    const std::uint64_t a = std::max(s.begin, pos);
                    const std::uint64_t b = std::min(s.end, next);
                    tensor_piece piece;
                    piece.tensor = static_cast<std::uint32_t>(ti);
                    piece.offset = a - s.begin;
                    piece.bytes = std::span<const std::byte>(base + a, static_cast<std::size_t>(b - a));
                    piece.first = a == s.begin;
                    piece.last = b == s.end;
                    pieces.push_back(piece);
                    if (s.end > next) break;  // continues in the next window
                    ++ti;
                }
                if (mapped && !last_window)  // read ahead while this window is worked on
                    advise(base, next, std::min<std::uint64_t>(r.end, next + w_bytes), MADV_WILLNEED);

                window w;
                w.index = index++;
                w.part = p;
                w.file_offset = pos;
                w.bytes = std::span<const std::byte>(base + pos, static_cast<std::size_t>(next - pos));
                w.tensors = pieces;
                w.part_first = first_window;
                w.part_last = last_window;
                jobs.clear();
                for (data_consumer* c : consumers)
                    if (c != nullptr) c->schedule(w, jobs);
                if (!pool.run(jobs)) return unexpected(detail::code_error(errc::out_of_memory));
                if (mapped) advise(base, pos, next, MADV_DONTNEED);  // keep the resident set small
                done += next - pos;
                if (options.progress) options.progress(done, total);
                pos = next;
                first_window = false;
            } while (pos < r.end);
        }
        // Tensors of parts the walk skipped cannot exist (a part with tensors is walked), but a
        // zero-byte tensor after the last window of its part is delivered above by last_window.
        return {};
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

}  // namespace minfer::check
