// data_walk: windows of the mapping, jobs on a small pool, each window's pages dropped from the
// process once its jobs are done (MADV_DONTNEED: they stay in the page cache), so the resident set
// stays about one window whatever the size of the model.
//
// Why the mapping and not pread into a buffer, and why no MADV_WILLNEED / MADV_POPULATE_READ per
// window: bench/bench_walk.cpp (minfer-bench-walk; docs/PERFORMANCE.md has the table) brought 4.5 GB
// of page-cached tensor bytes to an XXH3 consumer in 0.44 s through the mapping with pages dropped
// behind, 0.55 s with pread into a 2 MiB buffer (the copy costs more than the page faults), 0.37 s
// through this walker; an earlier walker that announced every window with WILLNEED and
// POPULATE_READ was slower than all of them. The kernel's read-ahead, asked for once with
// MADV_SEQUENTIAL, serves cold reads.
#include "minfer/check/data_walk.hpp"
#include "minfer/gguf/page_advice.hpp"


#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "errors.hpp"

namespace minfer::check {

using gguf::errc;
using gguf::error;
using gguf::unexpected;

namespace {

constexpr std::size_t window_quantum = std::size_t{64} << 10;

// A tensor's bytes as absolute offsets in its part's file.
struct byte_range {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

byte_range span_of(const gguf::model& m, const gguf::tensor_ref& t) noexcept {
    const auto& part = m.parts()[t.part];
    const std::uint64_t begin = part.view.data_offset() + t.info->offset;
    return {begin, begin + t.info->n_bytes};
}

// The range of each part the walk covers: all of it, or its tensor bytes. One pass over the
// tensors for all parts (a split set may have thousands of parts). `walked` is false for a part
// without tensors when only tensor bytes are walked.
struct part_range {
    std::uint64_t begin = ~std::uint64_t{0};
    std::uint64_t end = 0;
    bool walked = false;
};

std::vector<part_range> part_ranges(const gguf::model& m, bool whole_files) {
    std::vector<part_range> out(m.parts().size());
    if (whole_files) {
        for (std::size_t p = 0; p < out.size(); ++p) out[p] = {0, m.parts()[p].file.size(), true};
        return out;
    }
    for (const auto& t : m.tensors()) {
        const byte_range s = span_of(m, t);
        part_range& r = out[t.part];
        r.begin = std::min(r.begin, s.begin);
        r.end = std::max(r.end, s.end);
        r.walked = true;
    }
    return out;
}

std::uint64_t total_bytes(std::span<const part_range> ranges) noexcept {
    std::uint64_t total = 0;
    for (const part_range& r : ranges)
        if (r.walked) total += r.end - r.begin;
    return total;
}

struct window_range {
    std::uint32_t part;
    std::uint64_t begin;
    std::uint64_t end;
    bool part_first;
    bool part_last;
};

// Every window of the walk, in order: cut at multiples of the window size in each file.
std::vector<window_range> plan_windows(std::span<const part_range> ranges, std::uint64_t w_bytes) {
    std::vector<window_range> out;
    for (std::uint32_t p = 0; p < ranges.size(); ++p) {
        const part_range& r = ranges[p];
        if (!r.walked) continue;
        std::uint64_t pos = r.begin;
        bool first = true;
        do {  // at least one window per walked part (a part whose tensors are all empty gets an empty one)
            const std::uint64_t next = std::min<std::uint64_t>(r.end, (pos / w_bytes + 1) * w_bytes);
            out.push_back({p, pos, next, first, next == r.end});
            first = false;
            pos = next;
        } while (pos < r.end);
    }
    return out;
}

// Jobs of one window on `threads` threads: run() hands them to the workers, takes jobs itself and
// waits for the rest. Waits spin briefly before sleeping: in a virtual machine waking a sleeping thread costs a VM exit
// (up to a millisecond measured here), more than the work of a small window.
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
            stop_.store(true);
        }
        start_.notify_all();
        for (auto& w : workers_) w.join();
    }

    /// Runs every job (one job: on the calling thread, no handoff); false when a job threw.
    bool run(std::vector<job>& jobs) {
        if (workers_.empty() || jobs.size() <= 1) {
            for (auto& j : jobs) call(j);
            return !failed_.exchange(false);
        }
        {
            std::lock_guard lock(mu_);
            jobs_ = &jobs;
            count_ = jobs.size();
            next_.store(0);
            left_.store(jobs.size());
            generation_.fetch_add(1);
        }
        start_.notify_all();
        take_jobs(jobs, jobs.size());
        // Every job done, and no worker still inside take_jobs for this generation (it could
        // otherwise take a job of the next one from a vector being refilled).
        auto all_done = [&] { return left_.load() == 0 && busy_.load() == 0; };
        for (int i = 0; i < spin_rounds && !all_done(); ++i) pause();
        {
            std::unique_lock lock(mu_);
            done_.wait(lock, all_done);
            jobs_ = nullptr;
        }
        return !failed_.exchange(false);
    }

private:
    // About 20 µs: enough to catch the next window's jobs of a busy walk, short enough not to take a
    // core from the work on a loaded machine.
    static constexpr int spin_rounds = 4000;

    static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        std::this_thread::yield();
#endif
    }

    void call(job& j) noexcept {
        try {
            j();
        } catch (...) {
            failed_.store(true);
        }
    }

    void take_jobs(std::vector<job>& jobs, std::size_t count) {
        for (;;) {
            const std::size_t i = next_.fetch_add(1);
            if (i >= count) return;
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
            for (int i = 0; i < spin_rounds && generation_.load() == seen && !stop_.load(); ++i) pause();
            std::vector<job>* jobs = nullptr;
            std::size_t count = 0;
            {
                std::unique_lock lock(mu_);
                start_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
                if (stop_.load()) return;
                seen = generation_.load();
                if (jobs_ == nullptr) continue;  // that window is finished already
                jobs = jobs_;
                count = count_;
                busy_.fetch_add(1);
            }
            take_jobs(*jobs, count);
            {
                std::lock_guard lock(mu_);
                busy_.fetch_sub(1);
            }
            done_.notify_all();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable start_;
    std::condition_variable done_;
    std::vector<job>* jobs_ = nullptr;  // guarded by mu_
    std::size_t count_ = 0;             // guarded by mu_
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<bool> stop_{false};
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> left_{0};
    std::atomic<unsigned> busy_{0};
    std::atomic<bool> failed_{false};
};

}  // namespace

std::uint64_t walk_bytes(const gguf::model& m, bool whole_files) noexcept {
    try {
        return total_bytes(part_ranges(m, whole_files));
    } catch (...) {  // the vector of ranges: one entry per part
        return 0;
    }
}

result<void> walk_model_data(const gguf::model& m, std::span<data_consumer* const> consumers,
                             const walk_options& options) noexcept {
    if (auto whole = m.require_complete(); !whole) return whole;  // a head-only model has no bytes to walk
    try {
        const std::size_t w_bytes = std::max(window_quantum, (options.window_bytes + window_quantum - 1) /
                                                                  window_quantum * window_quantum);
        unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
        threads = std::min(threads, 256u);
        const std::vector<part_range> ranges = part_ranges(m, options.whole_files);
        const std::vector<window_range> windows = plan_windows(ranges, w_bytes);
        const std::uint64_t total = total_bytes(ranges);
        job_pool pool(threads);
        std::uint64_t done = 0;
        std::vector<tensor_piece> pieces;
        std::vector<job> jobs;
        const auto tensors = m.tensors();
        std::size_t ti = 0;  // the first tensor not yet wholly delivered (tensors are in part, file order)

        for (std::size_t k = 0; k < windows.size(); ++k) {
            const window_range& wr = windows[k];
            const auto& file = m.parts()[wr.part].file;
            const std::byte* base = file.bytes().data();
            const bool mapped = file.mode() == gguf::load_mode::map;
            if (mapped && wr.part_first)  // a larger read-ahead when cold
                gguf::advise_sequential({base + ranges[wr.part].begin, static_cast<std::size_t>(ranges[wr.part].end - ranges[wr.part].begin)});
            pieces.clear();
            while (ti < tensors.size() && tensors[ti].part == wr.part) {
                const byte_range s = span_of(m, tensors[ti]);
                if (s.begin > wr.end || (s.begin == wr.end && !wr.part_last)) break;  // starts later
                const std::uint64_t a = std::max(s.begin, wr.begin);
                const std::uint64_t b = std::min(s.end, wr.end);
                tensor_piece piece;
                piece.tensor = static_cast<std::uint32_t>(ti);
                piece.offset = a - s.begin;
                piece.bytes = std::span<const std::byte>(base + a, static_cast<std::size_t>(b - a));
                piece.first = a == s.begin;
                piece.last = b == s.end;
                pieces.push_back(piece);
                if (s.end > wr.end) break;  // continues in the next window
                ++ti;
            }

            window w;
            w.index = k;
            w.part = wr.part;
            w.file_offset = wr.begin;
            w.bytes = std::span<const std::byte>(base + wr.begin, static_cast<std::size_t>(wr.end - wr.begin));
            w.tensors = pieces;
            w.part_first = wr.part_first;
            w.part_last = wr.part_last;
            jobs.clear();
            for (data_consumer* c : consumers)
                if (c != nullptr) c->schedule(w, jobs);
            if (!pool.run(jobs)) return unexpected(detail::code_error(errc::out_of_memory));
            if (mapped) gguf::release_pages({base + wr.begin, static_cast<std::size_t>(wr.end - wr.begin)});  // keep the resident set small
            done += wr.end - wr.begin;
            if (options.progress) options.progress(done, total);
        }
        return {};
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

}  // namespace minfer::check
