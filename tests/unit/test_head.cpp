// Heads: a file judged from its first bytes (file_view::parse_head), grown until decided
// (fetch_head), and models opened over any source_opener. The property under test: every head
// gives either the verdict of the whole file — the same error, field by field, or the same
// view — or head_incomplete asking for more bytes than it had. Remote files (minfer::remote) rest
// on it: a URL gets the verdict of its local copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <random>
#include <set>

#include "gguf_bytes.hpp"
#include "head_source.hpp"
#include "minfer/gguf/byte_source.hpp"
#include "minfer/gguf/split.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

fs::path fixtures_dir() {
    if (const char* env = std::getenv("MINFER_SHARED_DIR")) return fs::path(env) / "fixtures" / "real";
    return fs::path(MINFER_SHARED_DIR) / "fixtures" / "real";
}

std::vector<fs::path> fixture_files() {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fixtures_dir(), ec))
        if (e.path().extension() == ".gguf") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Head lengths worth trying: every one up to `dense`, powers of two and their neighbours, the
// data offset and its neighbours, and random ones.
std::vector<std::uint64_t> head_lengths(const bytes& file, std::uint64_t dense, std::uint64_t data_offset, int random) {
    std::set<std::uint64_t> ls;
    const std::uint64_t n = file.size();
    for (std::uint64_t L = 0; L <= std::min(dense, n); ++L) ls.insert(L);
    for (std::uint64_t p = 1; p <= n; p *= 2)
        for (std::uint64_t q : {p - 1, p, p + 1}) ls.insert(std::min(q, n));
    for (std::uint64_t d = 0; d < 3; ++d) {
        ls.insert(std::min(n, data_offset + d));
        if (data_offset >= d) ls.insert(data_offset - d);
    }
    std::mt19937_64 rng(n);
    for (int i = 0; i < random; ++i) ls.insert(n == 0 ? 0 : rng() % (n + 1));
    ls.insert(n);
    return {ls.begin(), ls.end()};
}

// A model with a vocabulary big enough that its metadata spans many reads (about 200 KiB).
bytes vocab_model(std::uint32_t n_tokens = 12000) {
    writer w;
    w.set_string("general.architecture", "llama").set_u32("llama.block_count", 2);
    std::vector<std::string> tokens;
    std::vector<float> scores;
    for (std::uint32_t i = 0; i < n_tokens; ++i) {
        tokens.push_back(std::string("tok_") + std::to_string(i * 7919u % 100003u));
        scores.push_back(static_cast<float>(i) * 0.5f);
    }
    w.set_strings("tokenizer.ggml.tokens", tokens);
    w.set_array("tokenizer.ggml.scores", value_type::f32, std::span<const float>(scores));
    const std::int64_t ne1[] = {64, 3};
    const std::int64_t ne2[] = {96};
    w.add_tensor("token_embd.weight", tensor_type::f32, ne1, random_bytes(64 * 3 * 4, 1));
    w.add_tensor("output_norm.weight", tensor_type::f32, ne2, random_bytes(96 * 4, 2));
    return to_bytes(w);
}

}  // namespace

TEST(Head, EveryHeadOfAWrittenModelGivesTheWholeVerdict) {
    const bytes file = vocab_model(300);
    auto whole = file_view::parse(file);
    ASSERT_TRUE(whole) << describe(whole.error());
    // Every single head length: the file is small.
    for (std::uint64_t L = 0; L <= file.size(); ++L) expect_head_agrees(file, L, whole);
}

TEST(Head, EveryHeadOfATruncatedModelGivesTheWholeVerdict) {
    // The same model cut inside its tensor table and inside its data: the whole file's verdicts are
    // truncated / data_truncated, and every head must say exactly that or ask for more.
    const bytes full = vocab_model(50);
    auto v = file_view::parse(full);
    ASSERT_TRUE(v);
    for (const std::uint64_t cut : {v->data_offset() - 5, v->data_offset() + 10, std::uint64_t{30}}) {
        const bytes file(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
        auto whole = file_view::parse(file);
        ASSERT_FALSE(whole.has_value());
        for (std::uint64_t L = 0; L <= file.size(); ++L) expect_head_agrees(file, L, whole);
    }
}

TEST(Head, HeadsOfEveryRealFixtureGiveTheWholeVerdict) {
    const auto files = fixture_files();
    if (files.empty()) GTEST_SKIP() << "no fixtures in " << fixtures_dir() << " (the ../shared checkout)";
    for (const fs::path& p : files) {
        SCOPED_TRACE(p.filename().string());
        const bytes file = read_file(p);
        auto whole = file_view::parse(file);
        const std::uint64_t data_offset = whole ? whole->data_offset() : file.size() / 2;
        for (std::uint64_t L : head_lengths(file, 128, data_offset, 40)) expect_head_agrees(file, L, whole);
    }
}

TEST(FetchHead, GrowsToTheVerdictOfEveryFixtureWithinTwiceTheHead) {
    auto files = fixture_files();
    std::vector<std::pair<std::string, bytes>> inputs;
    for (const fs::path& p : files) inputs.emplace_back(p.filename().string(), read_file(p));
    inputs.emplace_back("vocab_model", vocab_model());
    for (const auto& [name, file] : inputs) {
        SCOPED_TRACE(name);
        auto whole = file_view::parse(file);
        growing_source src(file);
        head_options o;
        o.first_read = 4096;
        auto h = fetch_head(src, o);
        if (!whole) {
            ASSERT_FALSE(h.has_value());
            EXPECT_TRUE(same_error(whole.error(), h.error()));
            continue;
        }
        ASSERT_TRUE(h.has_value()) << describe(h.error());
        EXPECT_TRUE(same_view(*whole, h->view));
        EXPECT_EQ(h->file_size, file.size());
        EXPECT_EQ(h->view.bytes().data(), h->bytes.bytes().data()) << "the view points into the bytes kept";
        // Growth at least doubles: the bytes read stay below twice the head the parse needs (or
        // the first read), and the reads are logarithmic in it.
        const std::uint64_t need = whole->data_offset();
        EXPECT_LE(src.fetched, std::max<std::uint64_t>(o.first_read, 2 * need)) << "data offset " << need;
        int bound = 1;
        for (std::uint64_t n = o.first_read; n < need; n *= 2) ++bound;
        EXPECT_LE(src.calls, bound);
    }
}

TEST(FetchHead, TheBudgetStopsTheGrowthWithAPreciseError) {
    const bytes file = vocab_model();
    auto whole = file_view::parse(file);
    ASSERT_TRUE(whole);
    // The parse needs the head up to the end of the tensor table (the padding after it is never read).
    std::uint64_t need = whole->data_offset();
    while (file_view::parse_head(std::span(file).first(static_cast<std::size_t>(need - 1)), file.size())) --need;
    ASSERT_GT(need + whole->alignment(), whole->data_offset());
    {
        growing_source src(file);
        head_options o;
        o.first_read = 1024;
        o.max_read = need - 1;
        auto h = fetch_head(src, o);
        ASSERT_FALSE(h.has_value());
        EXPECT_EQ(h.error().code, errc::fetch_budget_exceeded) << describe(h.error());
        EXPECT_EQ(h.error().expected, need - 1);
        EXPECT_GT(h.error().found, need - 1 - 1);
        EXPECT_LE(src.largest, need - 1) << "never asks past the budget";
    }
    {
        growing_source src(file);
        head_options o;
        o.first_read = 1024;
        o.max_read = need;  // exactly enough
        auto h = fetch_head(src, o);
        ASSERT_TRUE(h.has_value()) << describe(h.error());
        EXPECT_EQ(h->view.data_offset(), whole->data_offset());
        EXPECT_EQ(h->bytes.size(), need);
    }
}

TEST(FetchHead, ASourceThatGivesLessThanAskedFailsInsteadOfLooping) {
    const bytes file = vocab_model();
    growing_source src(file, /*short_by=*/1);
    head_options o;
    o.first_read = 1024;
    auto h = fetch_head(src, o);
    ASSERT_FALSE(h.has_value());
    EXPECT_EQ(h.error().code, errc::transfer_failed) << describe(h.error());
    EXPECT_EQ(src.calls, 1);
}

TEST(FetchHead, WholeSourcesAreParsedOnceWhole) {
    const bytes file = vocab_model(100);
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    write_file(p, file);
    for (load_mode mode : {load_mode::map, load_mode::read}) {
        auto src = open_file_source(p, mode);
        ASSERT_TRUE(src);
        EXPECT_TRUE((*src)->whole());
        auto h = fetch_head(**src, {});
        ASSERT_TRUE(h);
        EXPECT_TRUE(h->view.complete());
        EXPECT_EQ(h->bytes.size(), file.size());
    }
    auto buf = make_buffer_source(file);
    ASSERT_TRUE(buf);
    auto h = fetch_head(**buf, {});
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->view.complete());
    EXPECT_TRUE(std::equal(file.begin(), file.end(), h->bytes.bytes().begin(), h->bytes.bytes().end()));
    auto missing = open_file_source(dir / "absent.gguf");
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code, errc::io_error);
    EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

namespace {
// A 3-part set in memory and on disk: the same bytes.
struct set_fixture {
    temp_dir dir;
    memory_opener mem;
    std::vector<fs::path> paths;
    set_fixture() {
        for (std::uint32_t i = 0; i < 3; ++i) {
            writer w;
            if (i == 0) {
                w.set_string("general.architecture", "llama");
                std::vector<std::string> tokens(3000, "t");
                for (std::size_t k = 0; k < tokens.size(); ++k) tokens[k] += std::to_string(k);
                w.set_strings("tokenizer.ggml.tokens", tokens);
            }
            w.set_u16("split.no", static_cast<std::uint16_t>(i))
                .set_u16("split.count", 3)
                .set_i32("split.tensors.count", 6);
            for (std::uint32_t k = 0; k < 2; ++k) {
                const std::int64_t ne[] = {32, 4};
                std::string name("w");
                name += std::to_string(i);
                name += '.';
                name += std::to_string(k);
                w.add_tensor(name, tensor_type::f32, ne, random_bytes(32 * 4 * 4, i * 10 + k));
            }
            const bytes b = to_bytes(w);
            const std::string fname = split_file_name("m", i, 3);
            paths.push_back(dir / fname);
            write_file(paths.back(), b);
            mem.files[std::string("mem://host/models/") + fname] = b;
        }
    }
};
}  // namespace

TEST(ModelOverOpener, ASetInMemoryOpensAsTheSameSetOnDisk) {
    set_fixture s;
    auto disk = model::open(s.paths[0]);
    ASSERT_TRUE(disk) << describe(disk.error());
    auto mem = model::open(s.mem, "mem://host/models/m-00001-of-00003.gguf");
    ASSERT_TRUE(mem) << describe(mem.error());
    ASSERT_EQ(mem->parts().size(), 3u);
    EXPECT_EQ(mem->file_bytes(), disk->file_bytes());
    ASSERT_EQ(mem->tensors().size(), disk->tensors().size());
    for (std::size_t i = 0; i < mem->tensors().size(); ++i) {
        EXPECT_EQ(mem->tensors()[i].info->name, disk->tensors()[i].info->name);
        EXPECT_EQ(mem->tensors()[i].part, disk->tensors()[i].part);
    }
    for (std::size_t p = 0; p < 3; ++p) {
        EXPECT_EQ(mem->parts()[p].path.string(), std::string("mem://host/models/") + split_file_name("m", static_cast<std::uint32_t>(p), 3));
        EXPECT_EQ(mem->parts()[p].view.file_size(), disk->parts()[p].view.file_size());
        EXPECT_EQ(mem->parts()[p].trailing_bytes(), disk->parts()[p].trailing_bytes());
        EXPECT_TRUE(same_view(disk->parts()[p].view, mem->parts()[p].view));
    }
    // Heads of 256 KiB hold these small parts whole; a head that stops short has no tensor bytes.
    for (const tensor_ref& t : mem->tensors()) {
        const auto d = mem->tensor_data(t);
        if (mem->parts()[t.part].view.complete()) EXPECT_EQ(d.size(), t.info->n_bytes);
        else EXPECT_TRUE(d.empty());
    }
}

TEST(ModelOverOpener, AMissingPartIsMissingWhateverTheOpenerSays) {
    for (int how = 0; how < 3; ++how) {
        set_fixture s;
        const std::string part2 = std::string("mem://host/models/") + split_file_name("m", 1, 3);
        if (how == 0) {
            s.mem.files.erase(part2);  // ENOENT
        } else {
            error e;
            e.code = errc::http_status;
            e.found = how == 1 ? 404 : 403;
            e.file = part2;
            s.mem.failures[part2] = e;
        }
        auto m = model::open(s.mem, "mem://host/models/m-00001-of-00003.gguf");
        ASSERT_FALSE(m.has_value());
        const error& e = m.error();
        EXPECT_EQ(e.code, how == 2 ? errc::http_status : errc::split_part_missing) << describe(e);
        EXPECT_EQ(e.part, 2u);
        EXPECT_EQ(e.n_parts, 3u);
        EXPECT_EQ(e.file, part2);
    }
}

TEST(ModelOverOpener, AnEntryThatIsALaterPartNamesPartOneBesideIt) {
    set_fixture s;
    auto m = model::open(s.mem, "mem://host/models/m-00002-of-00003.gguf");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, errc::split_not_first);
    EXPECT_EQ(m.error().detail, "mem://host/models/m-00001-of-00003.gguf");
}
