#include "minfer/toolbox/split_write.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/written_head.hpp"

namespace minfer::toolbox {
namespace {

split_write_failure failure(gguf::error e, std::optional<std::uint32_t> part) {
    split_write_failure f;
    f.error = std::move(e);
    f.part = part;
    return f;
}

// Room for `needed` more descriptors: the soft limit raised towards the hard one when it is short.
bool make_room_for_descriptors(std::uint64_t needed) noexcept {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return true;  // unknown: let open() say
    const std::uint64_t want = needed + 64;                   // and what the process already holds
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want) return true;
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want) return false;
    lim.rlim_cur = static_cast<rlim_t>(want);
    return ::setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

}  // namespace

std::optional<split_write_failure> write_parts(const std::vector<gguf::writer>& writers,
                                               const std::vector<std::string>& targets, const split_write_options& o) {
    const auto n_parts = static_cast<std::uint32_t>(writers.size());
    if (targets.size() != writers.size()) {
        gguf::error e;
        e.code = gguf::errc::buffer_size_mismatch;
        e.expected = writers.size();
        e.found = targets.size();
        e.detail = "output names";
        return failure(std::move(e), std::nullopt);
    }
    try {
        // Sizes first: the progress total, and every part's plan checked before anything is created.
        std::vector<std::uint64_t> sizes, heads;
        sizes.reserve(n_parts);
        heads.reserve(n_parts);
        std::uint64_t total = 0;
        for (std::uint32_t i = 0; i < n_parts; ++i) {
            auto p = writers[i].make_plan();
            if (!p) return failure(std::move(p).error(), i);
            sizes.push_back(p->file_size());
            heads.push_back(p->data_offset());
            total += p->file_size();
        }
        if (n_parts > 1 && !make_room_for_descriptors(2ull * n_parts)) {
            gguf::error e;
            e.code = gguf::errc::io_error;
            e.sys_errno = EMFILE;
            e.file = targets[0];
            e.expected = 2ull * n_parts + 64;
            e.detail = "hold every part open until all are written (raise the hard limit on open files, ulimit -Hn)";
            return failure(std::move(e), std::nullopt);
        }

        // 1. Every part complete, unnamed. A failure drops the temporaries: nothing was named.
        std::vector<gguf::atomic_file> done;
        done.reserve(n_parts);
        std::uint64_t before = 0;
        for (std::uint32_t i = 0; i < n_parts; ++i) {
            gguf::write_options wo;
            wo.file.replace_existing = o.overwrite;  // without it the kernel refuses a part that appeared since
            if (o.progress)
                wo.progress = [&o, before, total](std::uint64_t d, std::uint64_t) { o.progress(before + d, total); };
            auto f = writers[i].write_uncommitted(targets[i], wo);
            if (!f) return failure(std::move(f).error(), i);
            // Synced now, part by part: the renames below then follow one another with nothing
            // to flush between them (a kill lands between two of them in microseconds, not in
            // the seconds a part's write-back takes).
            if (auto r = f->sync(); !r) return failure(std::move(r).error(), i);
            // The part as written must pass the loader before it gets a name: its head read back
            // from the file and parsed with the loader's rules against the file's size.
            if (auto r = gguf::verify_written_head(*f, heads[i], targets[i], "part"); !r) return failure(std::move(r).error(), i);
            done.push_back(std::move(*f));
            before += sizes[i];
        }

        // 2. The names: an old part 1 goes first (its link's target, so that the link stays), then
        // parts 2..N, then part 1. The directories whose entries change (a link's target's, for a
        // part behind a link) are each synced once after the renames.
        std::vector<std::filesystem::path> dirs;
        for (const gguf::atomic_file& f : done) {
            const std::filesystem::path dir = f.resolved_target().parent_path();
            if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
        }
        if (o.overwrite && n_parts > 1) {
            std::error_code ec;
            std::filesystem::remove(done[0].resolved_target(), ec);  // none there: nothing to do
        }
        std::vector<std::string> named;
        for (std::uint32_t k = 0; k < n_parts; ++k) {
            const std::uint32_t i = n_parts > 1 ? (k + 1) % n_parts : 0;  // 2, 3, …, N, then 1
            if (auto r = done[i].commit(/*sync_directory=*/n_parts == 1); !r) {
                split_write_failure f = failure(std::move(r).error(), i);
                for (const std::string& p : named) {
                    std::error_code ec;
                    if (std::filesystem::remove(p, ec)) {
                        f.removed.push_back(p);
                    } else if (ec) {
                        f.not_removed.emplace_back(p, ec);
                    }
                }
                return f;
            }
            named.push_back(targets[i]);
        }
        if (n_parts > 1) {
            // The renames reach the disk with their directories: after a crash, the set is there
            // whole (or, in the worst case, without part 1, which nothing opens).
            for (const std::filesystem::path& dir : dirs) {
                const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                const int err = fd < 0 || ::fsync(fd) != 0 ? errno : 0;
                if (fd >= 0) ::close(fd);
                if (err != 0) {
                    gguf::error e;
                    e.code = gguf::errc::io_error;
                    e.sys_errno = err;
                    e.file = dir.string();
                    e.detail = "fsync the directory of the parts";
                    return failure(std::move(e), std::nullopt);  // every part is in place, named
                }
            }
        }
        return std::nullopt;
    } catch (...) {  // std::bad_alloc of the bookkeeping; the temporaries are dropped on the way out
        return failure(gguf::out_of_memory_error("writing the parts"), std::nullopt);
    }
}

std::optional<split_write_failure> write_split(const gguf::model& m, const gguf::split_plan& plan,
                                               const std::vector<std::string>& targets, const split_write_options& o) {
    auto src = gguf::model_source::open(m);
    if (!src) return failure(std::move(src).error(), std::nullopt);
    try {
        std::vector<gguf::writer> writers;
        writers.reserve(plan.part_count());
        for (std::uint32_t i = 0; i < plan.part_count(); ++i) {
            auto w = plan.part_writer(m, *src, i);
            if (!w) return failure(std::move(w).error(), i);
            writers.push_back(std::move(*w));
        }
        return write_parts(writers, targets, o);  // src outlives the writers' file sources
    } catch (...) {
        return failure(gguf::out_of_memory_error("planning the parts"), std::nullopt);
    }
}

}  // namespace minfer::toolbox
