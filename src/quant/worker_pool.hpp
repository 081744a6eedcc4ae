#pragma once
// The quantizers' and converters' threads: started once, on the first parallel call, and kept for
// the life of the process, so that a model's hundreds of batches (quantize) or chunks (tensor
// --dump, --stats, the value readers) do not each start and join threads. Internal to minfer::quant.
#include <cstdint>

namespace minfer::quant::detail {

/// Runs task(k) for k in [0, n) on the process's worker threads and the calling thread, and returns
/// when all have returned. Never throws and never fails: a worker that cannot be started, a pool
/// busy with another caller's job (another thread of the process) or a call from a forked child
/// leaves the tasks to the calling thread, one after the other. Tasks must not throw. At most
/// `threads` threads (the caller included) work on the job.
void run_tasks(unsigned n, unsigned threads, void (*task)(void* context, unsigned k), void* context) noexcept;

/// run_tasks with a callable (taken by reference; it must outlive the call).
template <class F>
void run_tasks(unsigned n, unsigned threads, F& f) noexcept {
    run_tasks(n, threads, [](void* c, unsigned k) { (*static_cast<F*>(c))(k); }, &f);
}

}  // namespace minfer::quant::detail
