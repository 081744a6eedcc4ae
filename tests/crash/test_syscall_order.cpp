// The order of the calls that make every write path durable, read from a trace of the real
// commands (the LD_PRELOAD shim's MINFER_TRACE). A kill test cannot see this: after SIGKILL the page
// cache still holds what was written, so a missing fsync only shows after a power cut. What must
// hold (docs/ARCHITECTURE.md, "Durability: the order of the calls"):
//   atomic output: the data, then fsync of the temporary, then the rename/link that publishes it,
//                  then fsync of the directory;
//   in-place edit: the journal published as an atomic output (and its directory synced) before the
//                  model's head changes; the head written and synced; only then the journal removed,
//                  and the directory synced;
//   recovery:      the model synced before the journal is removed (also when the model already holds
//                  the new head), the directory after;
//   split:         every part published as an atomic output, part 1 last.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gguf_bytes.hpp"
#include "spawn.hpp"
#include "minfer/gguf_write/in_place.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

struct call {
    std::string name;  ///< write, pwrite, fsync, rename, link, unlink, …
    std::string path;  ///< the file (for rename/link: the source)
    std::string to;    ///< rename/link: the target
};

// Run argv with the shim preloaded and extra environment; returns the exit status (-1: a signal).
int run_shimmed(const std::vector<std::string>& argv, std::vector<std::string> env_extra) {
    env_extra.push_back(std::string("LD_PRELOAD=") + MINFER_KILL_SHIM);
    const outcome o = run_with(argv, env_extra);
    return o.killed ? -1 : o.rc;
}

std::vector<call> read_trace(const fs::path& p) {
    std::vector<call> out;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
        call c;
        const auto a = line.find(' ');
        c.name = line.substr(0, a);
        if (a != std::string::npos) {
            std::string rest = line.substr(a + 1);
            // Paths here have no spaces but for " (deleted)" after an O_TMPFILE's name.
            const auto deleted = rest.find(" (deleted)");
            if (deleted != std::string::npos) rest.erase(deleted, 10);
            const auto b = rest.find(' ');
            c.path = rest.substr(0, b);
            if (b != std::string::npos) c.to = rest.substr(b + 1);
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<call> traced(const std::vector<std::string>& argv, const fs::path& trace_file, int* rc = nullptr,
                         std::vector<std::string> env = {}) {
    fs::remove(trace_file);
    env.push_back("MINFER_TRACE=" + trace_file.string());
    const int status = run_shimmed(argv, env);
    if (rc != nullptr) *rc = status;
    auto calls = read_trace(trace_file);
    fs::remove(trace_file);
    return calls;
}

// The index of the first call satisfying `pred` at or after `from`.
template <class P>
std::optional<std::size_t> find_from(const std::vector<call>& calls, std::size_t from, P pred) {
    for (std::size_t i = from; i < calls.size(); ++i)
        if (pred(calls[i])) return i;
    return std::nullopt;
}

std::string dump(const std::vector<call>& calls) {
    std::string s;
    for (const call& c : calls) s += c.name + " " + c.path + (c.to.empty() ? "" : " -> " + c.to) + "\n";
    return s;
}

bool publishes(const call& c, const std::string& target) {
    return (c.name == "rename" || c.name == "link") && c.to == target;
}

// An atomic output of `target` in calls[from, …): returns the index of the publishing call after
// checking that the temporary it publishes was synced after its last write, and that the directory
// is synced after it.
std::size_t expect_atomic(const std::vector<call>& calls, std::size_t from, const std::string& target,
                          const std::string& dir) {
    const auto pub = find_from(calls, from, [&](const call& c) { return publishes(c, target); });
    EXPECT_TRUE(pub) << target << " is never published\n" << dump(calls);
    if (!pub) return calls.size();
    const std::string temp = calls[*pub].path;
    std::optional<std::size_t> last_write, last_sync;
    for (std::size_t i = from; i < *pub; ++i) {
        if (calls[i].path != temp) continue;
        if (calls[i].name == "fsync" || calls[i].name == "fdatasync") last_sync = i;
        else last_write = i;
    }
    EXPECT_TRUE(last_sync) << temp << " is published as " << target << " without an fsync\n" << dump(calls);
    if (last_write && last_sync) {
        EXPECT_LT(*last_write, *last_sync) << "written after its fsync\n" << dump(calls);
    }
    const auto dsync = find_from(calls, *pub, [&](const call& c) { return c.name == "fsync" && c.path == dir; });
    EXPECT_TRUE(dsync) << "the directory is not synced after " << target << " is published\n" << dump(calls);
    return *pub;
}

bytes small_model(std::string_view name, int tensors) {
    writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", name);
    const std::vector<std::byte> zeros(4096);
    w.set_array(in_place_padding_key, value_type::u8, std::span<const std::byte>(zeros));  // room in place
    for (int i = 0; i < tensors; ++i) {
        const std::int64_t ne[] = {64, 16};
        std::string tensor_name("t");  // appended: GCC 12 -O3 warns falsely (-Wrestrict) on "t" + string
        tensor_name += std::to_string(i);
        w.add_tensor(tensor_name, tensor_type::f32, ne,
                     std::span<const std::byte>(random_bytes(64 * 16 * 4, static_cast<std::uint32_t>(i + 1))));
    }
    return to_bytes(w);
}

#ifdef MINFER_EXE
TEST(SyscallOrder, AnEditedCopyIsSyncedBeforeItIsPublishedAndItsDirectoryAfter) {
    temp_dir dir;
    const std::string d = fs::canonical(dir.path()).string();
    write_file(dir / "m.gguf", small_model("old", 3));
    int rc = 0;
    const auto calls = traced({MINFER_EXE, "edit", d + "/m.gguf", "-o", d + "/out.gguf", "--name", "new"},
                              dir.path().parent_path() / (dir.path().filename().string() + ".trace"), &rc);
    ASSERT_EQ(rc, 0) << dump(calls);
    expect_atomic(calls, 0, d + "/out.gguf", d);
    // The input is never written.
    for (const call& c : calls) EXPECT_NE(c.path, d + "/m.gguf") << c.name;
}

TEST(SyscallOrder, SplitPartsAreEachAtomicAndPartOneComesLast) {
    temp_dir dir;
    const std::string d = fs::canonical(dir.path()).string();
    write_file(dir / "m.gguf", small_model("m", 3));
    int rc = 0;
    const auto calls = traced({MINFER_EXE, "split", d + "/m.gguf", d + "/out", "--split-max-tensors", "1"},
                              dir.path().parent_path() / (dir.path().filename().string() + ".trace"), &rc);
    ASSERT_EQ(rc, 0) << dump(calls);
    std::vector<std::size_t> published;
    for (int p = 1; p <= 3; ++p)
        published.push_back(expect_atomic(calls, 0, d + "/" + split_file_name("out", static_cast<std::uint32_t>(p - 1), 3), d));
    ASSERT_EQ(published.size(), 3u);
    EXPECT_GT(published[0], published[1]) << "part 1 is published before part 2\n" << dump(calls);
    EXPECT_GT(published[0], published[2]) << "part 1 is published before part 3\n" << dump(calls);
    // toolbox::write_parts: no part is named before every part's bytes are written, so a kill or a
    // failure during the writing leaves no part of the new set.
    std::optional<std::size_t> last_data;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const call& c = calls[i];
        const bool data = c.name == "write" || c.name == "pwrite" || c.name == "pwrite64" || c.name == "writev" ||
                          c.name == "copy_file_range" || c.name == "ftruncate";
        if (data && c.path.rfind(d + "/", 0) == 0) last_data = i;
    }
    ASSERT_TRUE(last_data) << dump(calls);
    EXPECT_LT(*last_data, std::min(published[1], published[2])) << "a part is named before all are written\n" << dump(calls);
}

TEST(SyscallOrder, AnInPlaceEditJournalsThenWritesThenRemovesTheJournal) {
    temp_dir dir;
    const std::string d = fs::canonical(dir.path()).string();
    const std::string file = d + "/m.gguf";
    const std::string journal = undo_journal_path(file).string();
    write_file(file, small_model("old", 2));
    int rc = 0;
    const auto calls = traced({MINFER_EXE, "edit", file, "--in-place", "--name", "new name"},
                              dir.path().parent_path() / (dir.path().filename().string() + ".trace"), &rc);
    ASSERT_EQ(rc, 0) << dump(calls);
    const std::size_t jpub = expect_atomic(calls, 0, journal, d);
    const auto head = find_from(calls, 0, [&](const call& c) { return c.path == file && c.name.find("write") != std::string::npos; });
    ASSERT_TRUE(head) << dump(calls);
    EXPECT_GT(*head, jpub) << "the model changes before its journal is published\n" << dump(calls);
    const auto dsync = find_from(calls, jpub, [&](const call& c) { return c.name == "fsync" && c.path == d; });
    ASSERT_TRUE(dsync);
    EXPECT_LT(*dsync, *head) << "the journal's name is not durable before the model changes\n" << dump(calls);
    const auto msync = find_from(calls, *head, [&](const call& c) { return c.name == "fsync" && c.path == file; });
    const auto gone = find_from(calls, *head, [&](const call& c) { return c.name == "unlink" && c.path == journal; });
    ASSERT_TRUE(msync && gone) << dump(calls);
    EXPECT_LT(*msync, *gone) << "the journal goes before the new head is durable\n" << dump(calls);
    EXPECT_TRUE(find_from(calls, *gone, [&](const call& c) { return c.name == "fsync" && c.path == d; }))
        << "the journal's removal is not made durable\n" << dump(calls);
}

// The state a power cut can hit: the model holds the new head (in the page cache at least) and the
// journal is still there, because the edit was killed just before removing it. Recovery must sync
// the model before it deletes the only other copy of the new head.
TEST(SyscallOrder, RecoveryOfACompletedEditSyncsTheModelBeforeDroppingTheJournal) {
    temp_dir dir;
    const std::string d = fs::canonical(dir.path()).string();
    const std::string file = d + "/m.gguf";
    const std::string journal = undo_journal_path(file).string();
    const fs::path trace_file = dir.path().parent_path() / (dir.path().filename().string() + ".trace");
    const bytes old_bytes = small_model("old", 2);
    write_file(file, old_bytes);
    const std::vector<std::string> edit{MINFER_EXE, "edit", file, "--in-place", "--name", "new name"};
    const auto full = traced(edit, trace_file);
    const auto unlink_at = find_from(full, 0, [&](const call& c) { return c.name == "unlink" && c.path == journal; });
    ASSERT_TRUE(unlink_at) << dump(full);
    // Line k of the trace is kill point k: stop the edit at the journal's removal.
    write_file(file, old_bytes);
    (void)run_shimmed(edit, {"MINFER_KILL_AT=" + std::to_string(*unlink_at + 1), "MINFER_KILL_MODE=before"});
    ASSERT_TRUE(fs::exists(journal));
    ASSERT_NE(read_file(file), old_bytes);

    int rc = 0;
    const auto calls = traced({MINFER_EXE, "edit", "--recover", file}, trace_file, &rc);
    ASSERT_EQ(rc, 0) << dump(calls);
    const auto msync = find_from(calls, 0, [&](const call& c) { return c.name == "fsync" && c.path == file; });
    const auto gone = find_from(calls, 0, [&](const call& c) { return c.name == "unlink" && c.path == journal; });
    ASSERT_TRUE(gone) << dump(calls);
    ASSERT_TRUE(msync) << "the model is never synced before its journal goes\n" << dump(calls);
    EXPECT_LT(*msync, *gone) << dump(calls);
    EXPECT_TRUE(find_from(calls, *gone, [&](const call& c) { return c.name == "fsync" && c.path == d; }))
        << dump(calls);
    EXPECT_FALSE(fs::exists(journal));
}
#endif

}  // namespace
