// data_walk: windows read with pread into two cache-sized buffers (one worked on while the next is
// read), or taken straight from memory for a model read into memory; jobs on a small pool.
//
// Why pread and not the mapping: in a virtual machine, every 4 KiB page touched through a user
// mapping costs a nested page walk; the kernel's copy reads the page cache through its own huge-page
// mapping. Measured on a 4 GiB file (docs/PERFORMANCE.md): XXH3 over the mapping 6.4 GB/s, with
// every page pre-populated by MADV_POPULATE_READ no better; `cat` (read into a small buffer) 13 GB/s.
// A file truncated by another process while it is walked is then a precise I/O error, not a SIGBUS.
#include "minfer/check/data_walk.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
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

bool part_has_tensors(const gguf::model& m, std::uint32_t part) noexcept {
    return std::any_of(m.tensors().begin(), m.tensors().end(), [&](const auto& t) { return t.part == part; });
}

// The range of a part the walk covers: all of it, or its tensor bytes; empty (begin > end) when the
// part has nothing to walk.
byte_range range_of(const gguf::model& m, std::uint32_t part, bool whole_files) noexcept {
    if (whole_files) return {0, m.parts()[part].file.size()};
    byte_range r{~std::uint64_t{0}, 0};
    for (const auto& t : m.tensors()) {
        if (t.part != part) continue;
        const byte_range s = span_of(m, t);
        r.begin = std::min(r.begin, s.begin);
        r.end = std::max(r.end, s.end);
    }
    return r;
}

struct window_range {
    std::uint32_t part;
    std::uint64_t begin;
    std::uint64_t end;
    bool part_first;
    bool part_last;
};

// Every window of the walk, in order: cut at multiples of the window size in each file.
std::vector<window_range> plan_windows(const gguf::model& m, bool whole_files, std::uint64_t w_bytes) {
    std::vector<window_range> out;
    for (std::uint32_t p = 0; p < m.parts().size(); ++p) {
        if (!whole_files && !part_has_tensors(m, p)) continue;
        const byte_range r = range_of(m, p, whole_files);
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

error read_error(const gguf::model& m, std::uint32_t part, std::uint64_t offset, int err, const char* what) {
    error e;
    e.code = errc::io_error;
    e.where = gguf::section::data;
    e.offset = offset;
    e.sys_errno = err;
    e.file = m.parts()[part].path.string();
    e.detail = what;
    if (m.parts().size() > 1) {
        e.part = part + 1;
        e.n_parts = static_cast<std::uint32_t>(m.parts().size());
    }
    return e;
}

// Jobs of one window on `threads` threads. start() hands the jobs to the workers and returns, so the
// walking thread can read the next window; finish() has it take what is left and wait for the rest.
// Waits spin briefly before sleeping: in a virtual machine waking a sleeping thread costs a VM exit
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

    void start(std::vector<job>& jobs) {
        if (workers_.empty() || jobs.empty()) return;
        {
            std::lock_guard lock(mu_);
            jobs_ = &jobs;
            count_ = jobs.size();
            next_.store(0);
            left_.store(jobs.size());
            generation_.fetch_add(1);
        }
        start_.notify_all();
    }

    /// Runs what the workers have not taken and waits for the rest; false when a job threw.
    bool finish(std::vector<job>& jobs) {
        if (jobs.empty()) return true;
        if (workers_.empty()) {
            for (auto& j : jobs) call(j);
        } else {
            take_jobs(jobs, jobs.size());
            // Every job done, and no worker still inside take_jobs for this generation (it could
            // otherwise take a job of the next one from a vector being refilled).
            auto all_done = [&] { return left_.load() == 0 && busy_.load() == 0; };
            for (int i = 0; i < spin_rounds && !all_done(); ++i) pause();
            std::unique_lock lock(mu_);
            done_.wait(lock, all_done);
            jobs_ = nullptr;
        }
        return !failed_.exchange(false);
    }

private:
    static constexpr int spin_rounds = 20000;  // about 100 µs

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

// The bytes of one window: read into a buffer from the part's descriptor, or viewed in memory.
class window_source {
public:
    window_source(const gguf::model& m, std::size_t w_bytes) : m_(m), w_bytes_(w_bytes) {}

    /// Fill slot `slot` with window `w`. @returns io_error on a failed or short read.
    result<std::span<const std::byte>> load(const window_range& w, int slot) {
        const auto& part = m_.parts()[w.part];
        const int fd = part.file.descriptor();
        const std::size_t n = static_cast<std::size_t>(w.end - w.begin);
        if (fd < 0) return part.file.bytes().subspan(static_cast<std::size_t>(w.begin), n);  // in memory
        auto& buf = buffers_[slot];
        if (!buf) {
            buf.reset(new (std::align_val_t{64}) std::byte[w_bytes_]);
            if (w.part != advised_part_) {
                (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a larger read-ahead when cold
                advised_part_ = w.part;
            }
        }
        std::size_t done = 0;
        while (done < n) {
            const ssize_t got = ::pread(fd, buf.get() + done, n - done, static_cast<off_t>(w.begin + done));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return unexpected(read_error(m_, w.part, w.begin + done, errno, "reading tensor data"));
            if (got == 0)
                return unexpected(read_error(m_, w.part, w.begin + done, 0,
                                             "the file ended early: it was truncated after it was opened"));
            done += static_cast<std::size_t>(got);
        }
        return std::span<const std::byte>(buf.get(), n);
    }

private:
    struct aligned_delete {
        void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
    };
    const gguf::model& m_;
    std::size_t w_bytes_;
    std::unique_ptr<std::byte[], aligned_delete> buffers_[2];
    std::uint32_t advised_part_ = ~0u;
};

}  // namespace

std::uint64_t walk_bytes(const gguf::model& m, bool whole_files) noexcept {
    std::uint64_t total = 0;
    for (std::uint32_t p = 0; p < m.parts().size(); ++p) {
        if (!whole_files && !part_has_tensors(m, p)) continue;
        const byte_range r = range_of(m, p, whole_files);
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
        const std::vector<window_range> windows = plan_windows(m, options.whole_files, w_bytes);
        const std::uint64_t total = walk_bytes(m, options.whole_files);
        window_source source(m, w_bytes);
        job_pool pool(threads);
        std::uint64_t done = 0;
        std::vector<tensor_piece> pieces;
        std::vector<job> jobs;
        const auto tensors = m.tensors();
        std::size_t ti = 0;  // the first tensor not yet wholly delivered (tensors are in part, file order)

        int slot = 0;
        result<std::span<const std::byte>> current = std::span<const std::byte>();
        if (!windows.empty()) current = source.load(windows[0], slot);
        for (std::size_t k = 0; k < windows.size(); ++k) {
            if (!current) return unexpected(current.error());
            const window_range& wr = windows[k];
            const std::byte* base = current->data();
            pieces.clear();
            while (ti < tensors.size() && tensors[ti].part == wr.part) {
                const byte_range s = span_of(m, tensors[ti]);
                if (s.begin > wr.end || (s.begin == wr.end && !wr.part_last)) break;  // starts later
                const std::uint64_t a = std::max(s.begin, wr.begin);
                const std::uint64_t b = std::min(s.end, wr.end);
                tensor_piece piece;
                piece.tensor = static_cast<std::uint32_t>(ti);
                piece.offset = a - s.begin;
                piece.bytes = std::span<const std::byte>(base + (a - wr.begin), static_cast<std::size_t>(b - a));
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
            w.bytes = *current;
            w.tensors = pieces;
            w.part_first = wr.part_first;
            w.part_last = wr.part_last;
            jobs.clear();
            for (data_consumer* c : consumers)
                if (c != nullptr) c->schedule(w, jobs);
            pool.start(jobs);
            // Read the next window into the other buffer while the workers hash this one.
            result<std::span<const std::byte>> next = std::span<const std::byte>();
            if (k + 1 < windows.size()) next = source.load(windows[k + 1], 1 - slot);
            if (!pool.finish(jobs)) return unexpected(detail::code_error(errc::out_of_memory));
            done += wr.end - wr.begin;
            if (options.progress) options.progress(done, total);
            current = std::move(next);
            slot = 1 - slot;
        }
        return {};
    } catch (...) {
        return unexpected(detail::code_error(errc::out_of_memory));
    }
}

}  // namespace minfer::check
