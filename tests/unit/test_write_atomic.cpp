// Atomic output: whatever happens during a write — a full disk, a kill, a planted symlink — the
// target holds the old file or the complete new one, and no temporary is left where one could be
// cleaned up. Each case runs with the unnamed O_TMPFILE and with the named-temporary fallback.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf_bytes.hpp"
#include "minfer/gguf_write/errors.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> names_in(const fs::path& dir) {
    std::set<std::string> n;
    for (const auto& e : fs::directory_iterator(dir)) n.insert(e.path().filename().string());
    return n;
}

// Runs fn in a forked child; returns the raw wait status.
template <class F>
int in_child(F&& fn) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(fn());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

write_options with_tmpfile(bool tmpfile) {
    write_options o;
    o.file.use_tmpfile = tmpfile;
    return o;
}

const char* mode_name(bool tmpfile) { return tmpfile ? "O_TMPFILE" : "named temporary"; }

tensor_source filler(std::uint64_t n, std::byte value) {
    return tensor_source::callback(n, [value](std::uint64_t, std::span<std::byte> out) {
        std::fill(out.begin(), out.end(), value);
        return result<void>{};
    });
}

TEST(WriteAtomic, DiskFullIsAnErrorAndLeavesTheTargetAndNoTemporary) {
    // RLIMIT_FSIZE stands in for a full disk: writes past 1 MiB fail with EFBIG (SIGXFSZ ignored).
    const std::int64_t ne[] = {1 << 20};  // 4 MiB of f32
    for (bool tmpfile : {true, false}) {
        for (const char* kind : {"callback", "zeros", "file range"}) {
            SCOPED_TRACE(std::string(mode_name(tmpfile)) + ", " + kind);
            temp_dir dir;
            const fs::path target = dir / "m.gguf";
            const bytes old = random_bytes(1000, 5);
            write_file(target, old);
            write_file(dir / "src.bin", random_bytes(4 << 20, 6));
            writer w;
            w.set_string("general.architecture", "full");
            if (kind == std::string_view("callback")) w.add_tensor("t", tensor_type::f32, ne, filler(4 << 20, std::byte{3}));
            if (kind == std::string_view("zeros")) w.add_zero_tensor("t", tensor_type::f32, ne);
            if (kind == std::string_view("file range"))
                w.add_tensor("t", tensor_type::f32, ne, tensor_source::file_range(dir / "src.bin", 0, 4 << 20));
            const int status = in_child([&] {
                std::signal(SIGXFSZ, SIG_IGN);
                const rlimit lim{1 << 20, 1 << 20};
                if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 20;
                auto r = w.write(target, with_tmpfile(tmpfile));
                if (r) return 10;
                if (r.error().code != errc::io_error) return 11;
                if (r.error().sys_errno != EFBIG) return 12;
                if (r.error().file != target.string() || r.error().detail.empty()) return 13;
                return 0;
            });
            ASSERT_TRUE(WIFEXITED(status)) << status;
            EXPECT_EQ(WEXITSTATUS(status), 0) << "10: wrote anyway, 11: not io_error, 12: errno not EFBIG, 13: no path";
            EXPECT_EQ(read_file(target), old);
            EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"m.gguf", "src.bin"}));
        }
    }
}

TEST(WriteAtomic, KilledMidWriteLeavesNothingUnderTheTargetName) {
    const std::int64_t ne[] = {2 << 20};  // 8 MiB of f32
    for (bool tmpfile : {true, false}) {
        for (bool existed : {false, true}) {
            SCOPED_TRACE(std::string(mode_name(tmpfile)) + (existed ? ", target existed" : ", no target"));
            temp_dir dir;
            const fs::path target = dir / "m.gguf";
            const bytes old = random_bytes(777, 9);
            if (existed) write_file(target, old);
            writer w;
            w.set_string("general.architecture", "killed");
            const std::int64_t small[] = {256};
            w.add_tensor("first", tensor_type::f32, small, random_bytes(1024, 1));
            // halfway through the second tensor the process dies, as under the OOM killer
            w.add_tensor("second", tensor_type::f32, ne,
                         tensor_source::callback(8 << 20, [](std::uint64_t off, std::span<std::byte> out) {
                             if (off >= (4u << 20)) ::raise(SIGKILL);
                             std::fill(out.begin(), out.end(), std::byte{1});
                             return result<void>{};
                         }));
            const int status = in_child([&] { return w.write(target, with_tmpfile(tmpfile)) ? 0 : 1; });
            ASSERT_TRUE(WIFSIGNALED(status)) << status;
            EXPECT_EQ(WTERMSIG(status), SIGKILL);
            if (existed) {
                EXPECT_EQ(read_file(target), old);
            } else {
                EXPECT_FALSE(fs::exists(target));
            }
            std::set<std::string> left = names_in(dir.path());
            left.erase("m.gguf");
            if (tmpfile) {
                EXPECT_TRUE(left.empty()) << *left.begin();  // an unnamed file dies with its process
            } else {
                // the named temporary cannot be removed by a killed process; it is not the target
                ASSERT_EQ(left.size(), 1u);
                EXPECT_EQ(left.begin()->rfind("m.gguf.tmp.", 0), 0u) << *left.begin();
                EXPECT_GT(fs::file_size(dir / *left.begin()), 1u << 20);  // it died mid-write
            }
        }
    }
}

TEST(WriteAtomic, PlantedSymlinksAreNotFollowed) {
    // The old writer used "<target>.tmp.<pid>.<serial>" with O_CREAT|O_TRUNC: a symlink planted at
    // that name made it truncate and overwrite the file the link pointed to.
    for (bool tmpfile : {true, false}) {
        SCOPED_TRACE(mode_name(tmpfile));
        temp_dir dir, elsewhere;
        const fs::path victim = elsewhere / "victim";
        const bytes precious = random_bytes(300, 1);
        write_file(victim, precious);
        const fs::path target = dir / "m.gguf";
        const std::string pid = std::to_string(::getpid());
        for (int serial = 0; serial < 64; ++serial)
            fs::create_symlink(victim, dir / ("m.gguf.tmp." + pid + "." + std::to_string(serial)));
        fs::create_symlink(victim, dir / "m.gguf.tmp");
        // (A link at the target name itself is the user's: its target is replaced, as `cp` writes
        // through it — OnlyANewNameOrARegularFileIsReplaced.)
        writer w;
        w.set_string("general.architecture", "safe");
        const std::int64_t ne[] = {8};
        w.add_tensor("t", tensor_type::f32, ne, random_bytes(32, 2));
        ASSERT_TRUE(w.write(target, with_tmpfile(tmpfile)));
        EXPECT_EQ(read_file(victim), precious);
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(target)));
        EXPECT_EQ(read_file(target), to_bytes(w));
        EXPECT_EQ(names_in(dir.path()).size(), 66u);  // the 65 planted links and the target
    }
}

TEST(WriteAtomic, AnExistingTargetIsReplacedAtomically) {
    for (bool tmpfile : {true, false}) {
        SCOPED_TRACE(mode_name(tmpfile));
        temp_dir dir;
        const fs::path p = dir / "m.gguf";
        writer old_w;
        old_w.set_string("version", "old");
        ASSERT_TRUE(old_w.write(p, with_tmpfile(tmpfile)));
        auto old_model = model::open(p);
        ASSERT_TRUE(old_model);
        struct stat before {};
        ASSERT_EQ(::stat(p.c_str(), &before), 0);
        writer new_w;
        new_w.set_string("version", "new");
        ASSERT_TRUE(new_w.write(p, with_tmpfile(tmpfile)));
        struct stat after {};
        ASSERT_EQ(::stat(p.c_str(), &after), 0);
        EXPECT_NE(before.st_ino, after.st_ino);  // a new file took the name; the old one was never written
        EXPECT_EQ(old_model->get<std::string_view>("version").value_or(""), "old");
        EXPECT_EQ(read_file(p), to_bytes(new_w));
        EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"m.gguf"}));
    }
}

TEST(WriteAtomic, ModeIsTheRequestedOneUnderTheUmask) {
    for (bool tmpfile : {true, false}) {
        for (auto [mask, mode, want] : {std::tuple{022u, 0644u, 0644u}, std::tuple{077u, 0644u, 0600u},
                                        std::tuple{0u, 0640u, 0640u}}) {
            SCOPED_TRACE(std::string(mode_name(tmpfile)) + " umask " + std::to_string(mask));
            temp_dir dir;
            const mode_t saved = ::umask(static_cast<mode_t>(mask));
            write_options o = with_tmpfile(tmpfile);
            o.file.mode = mode;
            const auto r = writer{}.write(dir / "m.gguf", o);
            ::umask(saved);
            ASSERT_TRUE(r);
            struct stat st {};
            ASSERT_EQ(::stat((dir / "m.gguf").c_str(), &st), 0);
            EXPECT_EQ(st.st_mode & 07777, want);
        }
    }
}

TEST(WriteAtomic, AtomicFileDiscardsUnlessCommitted) {
    for (bool tmpfile : {true, false}) {
        SCOPED_TRACE(mode_name(tmpfile));
        temp_dir dir;
        atomic_file_options o;
        o.use_tmpfile = tmpfile;
        {
            auto f = atomic_file::create(dir / "x", o);
            ASSERT_TRUE(f) << f.error().message();
            ASSERT_EQ(::write(f->fd(), "abc", 3), 3);
            EXPECT_EQ(f->temp_path().empty(), tmpfile);
        }  // destroyed uncommitted
        EXPECT_TRUE(names_in(dir.path()).empty());
        auto f = atomic_file::create(dir / "x", o);
        ASSERT_TRUE(f);
        ASSERT_EQ(::write(f->fd(), "abc", 3), 3);
        ASSERT_TRUE(f->commit());
        EXPECT_EQ(f->fd(), -1);
        EXPECT_EQ(error_of(f->commit()).code, errc::io_error);  // twice is a misuse, not a crash
        EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"x"}));
        EXPECT_EQ(fs::file_size(dir / "x"), 3u);
    }
    temp_dir dir;
    const error missing = error_of(atomic_file::create(dir / "no" / "x"));
    EXPECT_TRUE(error_is(missing, {.code = errc::io_error, .where = section::file}));
    EXPECT_EQ(missing.sys_errno, ENOENT);
    EXPECT_EQ(missing.file, (dir / "no").string());
    EXPECT_EQ(error_of(atomic_file::create(dir.path() / "")).code, minfer::gguf::write_codes::output_not_regular);  // a directory
}

}  // namespace

// replace_existing=false: the kernel decides, at the commit, that the target exists; the old file
// stays, the temporary goes, and a free name is taken normally.
TEST(WriteAtomic, NoReplaceRefusesAnExistingTargetAndLeavesNothing) {
    for (bool tmpfile : {true, false}) {
        SCOPED_TRACE(mode_name(tmpfile));
        temp_dir dir;
        const fs::path target = dir / "out.gguf";
        const bytes old = random_bytes(100, 9);
        write_file(target, old);
        atomic_file_options o;
        o.use_tmpfile = tmpfile;
        o.replace_existing = false;
        auto f = atomic_file::create(target, o);
        ASSERT_TRUE(f.has_value());
        ASSERT_EQ(::write(f->fd(), "new", 3), 3);
        auto r = f->commit();
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, errc::io_error);
        EXPECT_EQ(r.error().sys_errno, EEXIST);
        EXPECT_EQ(read_file(target), old);
        EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"out.gguf"}));

        const fs::path fresh = dir / "fresh.gguf";
        auto g = atomic_file::create(fresh, o);
        ASSERT_TRUE(g.has_value());
        ASSERT_EQ(::write(g->fd(), "new", 3), 3);
        ASSERT_TRUE(g->commit().has_value());
        EXPECT_EQ(fs::file_size(fresh), 3u);
        EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"out.gguf", "fresh.gguf"}));
    }
}

// What is not a regular file is never replaced, whatever replace_existing says: refused at create()
// (a FIFO, a directory, a dangling link), and at commit() when a FIFO took the name after create()
// (the check just before the rename). A link to a regular file: the target is replaced, the link kept.
TEST(WriteAtomic, OnlyANewNameOrARegularFileIsReplaced) {
    for (bool tmpfile : {true, false}) {
        SCOPED_TRACE(mode_name(tmpfile));
        temp_dir dir;
        atomic_file_options o;
        o.use_tmpfile = tmpfile;
        ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
        fs::create_directory(dir / "sub");
        fs::create_symlink("nowhere", dir / "dangling");
        for (const char* name : {"fifo", "sub", "dangling"}) {
            const error e = error_of(atomic_file::create(dir / name, o));
            EXPECT_EQ(e.code, minfer::gguf::write_codes::output_not_regular) << name << ": " << e.message();
            EXPECT_EQ(e.file, (dir / name).string());
        }
        EXPECT_EQ(error_of(atomic_file::create(dir / "fifo", o)).found, static_cast<std::uint64_t>(S_IFIFO));

        // A FIFO put at the name between create() and commit(): the commit refuses, nothing is left.
        auto f = atomic_file::create(dir / "late", o);
        ASSERT_TRUE(f) << f.error().message();
        ASSERT_EQ(::write(f->fd(), "abc", 3), 3);
        ASSERT_EQ(::mkfifo((dir / "late").c_str(), 0644), 0);
        const error late = error_of(f->commit());
        EXPECT_EQ(late.code, minfer::gguf::write_codes::output_not_regular) << late.message();
        EXPECT_TRUE(fs::is_fifo(dir / "late"));
        EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"fifo", "sub", "dangling", "late"}));

        // A link to a regular file: the rename happens beside the target; the link stays.
        fs::create_directory(dir / "store");
        write_file(dir / "store" / "real", random_bytes(10, 1));
        fs::create_symlink(fs::path("store") / "real", dir / "link");
        auto g = atomic_file::create(dir / "link", o);
        ASSERT_TRUE(g) << g.error().message();
        ASSERT_EQ(::write(g->fd(), "new", 3), 3);
        ASSERT_TRUE(g->commit());
        EXPECT_TRUE(fs::is_symlink(dir / "link"));
        EXPECT_EQ(fs::file_size(dir / "store" / "real"), 3u);
        EXPECT_EQ(names_in(dir / "store"), (std::set<std::string>{"real"}));
    }
}
