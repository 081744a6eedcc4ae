// The persistent worker pool (worker_pool.hpp). One job at a time: a job is (task, context, n) and
// a generation number; workers sleep on a condition variable until the generation changes, then
// claim task indexes from an atomic counter as the caller does, and the caller waits until every
// claimed task has finished. Threads are started lazily, as many as the hardware has minus the
// caller's, and never stopped: they sleep between jobs and end with the process.
#include "worker_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>

namespace minfer::quant::detail {
namespace {

class pool {
public:
    // nullptr when it could not be allocated. Never destroyed: a worker may still be asleep on the
    // condition variable at exit, and destroying it then would be undefined; the threads end with
    // the process.
    static pool* shared() noexcept {
        static pool* p = new (std::nothrow) pool;
        return p;
    }

    void run(unsigned n, unsigned threads, void (*task)(void*, unsigned), void* context) noexcept {
        std::unique_lock job(job_, std::try_to_lock);
        // Busy with another caller, or a forked child (its copy of the pool has no threads).
        if (!job.owns_lock() || owner_ != ::getpid()) return inline_all(n, task, context);
        start_workers();
        const unsigned helpers = std::min({started_, threads > 0 ? threads - 1 : 0u, n > 0 ? n - 1 : 0u});
        if (helpers == 0) return inline_all(n, task, context);
        {
            std::lock_guard lock(m_);
            task_ = task;
            context_ = context;
            n_ = n;
            next_.store(0);
            done_ = 0;
            allowed_ = helpers;
            ++generation_;
        }
        wake_.notify_all();
        work();
        std::unique_lock lock(m_);
        finished_.wait(lock, [&] { return done_ == n_ && active_ == 0; });
        allowed_ = 0;  // a worker that wakes only now must not enter this finished job
        task_ = nullptr;
    }

private:
    pool() noexcept : owner_(::getpid()) {}

    static void inline_all(unsigned n, void (*task)(void*, unsigned), void* context) noexcept {
        for (unsigned k = 0; k < n; ++k) task(context, k);
    }

    // Claims and runs tasks until none is left (caller and workers alike).
    void work() noexcept {
        unsigned ran = 0;
        for (unsigned k; (k = next_.fetch_add(1)) < n_;) {
            task_(context_, k);
            ++ran;
        }
        if (ran == 0) return;
        std::lock_guard lock(m_);
        done_ += ran;
        if (done_ == n_) finished_.notify_all();
    }

    void start_workers() noexcept {
        if (tried_) return;
        tried_ = true;
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned i = 0; i + 1 < hw; ++i) {
            try {
                std::thread([this] { worker(); }).detach();
                ++started_;
            } catch (...) {  // no more threads (or memory): the ones started do the work
                break;
            }
        }
    }

    void worker() noexcept {
        std::uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock lock(m_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (allowed_ == 0) continue;  // this job wants fewer threads
                --allowed_;
                ++active_;
            }
            work();
            std::lock_guard lock(m_);
            --active_;
            if (active_ == 0 && done_ == n_) finished_.notify_all();
        }
    }

    std::mutex job_;  // one job at a time
    const pid_t owner_;
    bool tried_ = false;
    unsigned started_ = 0;

    std::mutex m_;
    std::condition_variable wake_, finished_;
    std::uint64_t generation_ = 0;
    void (*task_)(void*, unsigned) = nullptr;
    void* context_ = nullptr;
    unsigned n_ = 0;
    unsigned done_ = 0;
    unsigned allowed_ = 0;  // workers that may still join the current job
    unsigned active_ = 0;   // workers inside work() for the current job
    std::atomic<unsigned> next_{0};
};

}  // namespace

void run_tasks(unsigned n, unsigned threads, void (*task)(void*, unsigned), void* context) noexcept {
    pool* p = pool::shared();
    if (p == nullptr) {  // the pool itself could not be allocated
        for (unsigned k = 0; k < n; ++k) task(context, k);
        return;
    }
    p->run(n, threads, task, context);
}

}  // namespace minfer::quant::detail
