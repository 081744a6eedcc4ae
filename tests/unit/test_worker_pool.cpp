// The persistent worker pool of minfer::quant (src/quant/worker_pool.hpp): every task index runs
// exactly once per job whatever the thread count, concurrent callers (the pool busy) still get all
// their tasks done, and a forked child, whose copy of the pool has no threads, does the work itself
// instead of waiting for workers that do not exist.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "worker_pool.hpp"

namespace {

using minfer::quant::detail::run_tasks;

// Runs one job and checks that each of its n tasks ran once.
bool one_job(unsigned n, unsigned threads) {
    std::vector<std::atomic<int>> ran(n);
    auto task = [&](unsigned k) { ran[k].fetch_add(1); };
    run_tasks(n, threads, task);
    for (auto& r : ran)
        if (r.load() != 1) return false;
    return true;
}

TEST(WorkerPool, EveryTaskRunsOnce) {
    for (unsigned threads : {0u, 1u, 2u, 3u, 64u})
        for (unsigned n : {0u, 1u, 2u, 3u, 7u, 100u, 1000u}) EXPECT_TRUE(one_job(n, threads)) << n << " tasks, " << threads;
}

TEST(WorkerPool, ManyJobsInARow) {
    // Jobs back to back: a worker that wakes late for a finished job must not run a task of it
    // (or of the next) twice.
    for (int j = 0; j < 2000; ++j) ASSERT_TRUE(one_job(static_cast<unsigned>(1 + j % 9), 2)) << j;
}

TEST(WorkerPool, ConcurrentCallersAllFinish) {
    std::atomic<int> bad{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c)
        callers.emplace_back([&] {
            for (int j = 0; j < 300; ++j)
                if (!one_job(static_cast<unsigned>(1 + j % 17), 2)) ++bad;
        });
    for (auto& t : callers) t.join();
    EXPECT_EQ(bad.load(), 0);
}

TEST(WorkerPool, AForkedChildDoesTheWorkItself) {
    ASSERT_TRUE(one_job(8, 2));  // the parent's workers are started
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(20);  // a child waiting for workers that do not exist is killed, and the test fails
        ::_exit(one_job(64, 2) && one_job(3, 8) ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "the child did not finish (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
