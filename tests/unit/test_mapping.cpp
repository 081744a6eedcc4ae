// Loading is not reading: opening a model with a large data section touches only the pages of its
// metadata; the data pages fault in when (and only when) a tensor is read. load_mode::read gives the
// same parse from an owned copy.
#include <gtest/gtest.h>

#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

long faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt + u.ru_majflt;
}

const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
constexpr std::int64_t big_elems = 64ll << 20;  // f32: 256 MiB
constexpr std::uint64_t big_bytes = 4ull * static_cast<std::uint64_t>(big_elems);

class LargeModel : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new temp_dir;
        writer w;
        std::vector<std::string> vocab;
        for (int i = 0; i < 3000; ++i) vocab.push_back("token_" + std::to_string(i));
        w.set_string("general.architecture", "llama")
            .set_u32("llama.block_count", 1)
            .set_strings("tokenizer.ggml.tokens", std::span<const std::string>(vocab));
        const std::int64_t small[] = {64};
        const std::int64_t big[] = {big_elems};
        w.add_tensor("small", tensor_type::f32, small, random_bytes(256, 5));
        w.add_zero_tensor("big", tensor_type::f32, big);
        w.add_tensor("after", tensor_type::f32, small, random_bytes(256, 6));
        path_ = new fs::path(*dir_ / "large.gguf");
        auto r = w.write(*path_);
        ASSERT_TRUE(r) << r.error().message();
        // a small file for warming up code paths (first calls fault in library code pages)
        writer s;
        s.set_u32("x", 1);
        ASSERT_TRUE(s.write(*dir_ / "warm.gguf"));
    }
    static void TearDownTestSuite() {
        delete path_;
        delete dir_;
    }
    static temp_dir* dir_;
    static fs::path* path_;
};
temp_dir* LargeModel::dir_ = nullptr;
fs::path* LargeModel::path_ = nullptr;

TEST_F(LargeModel, OpenTouchesOnlyTheMetadataPages) {
    ASSERT_EQ(fs::file_size(*path_) > big_bytes, true);
    {
        auto warm = model::open(*dir_ / "warm.gguf");
        ASSERT_TRUE(warm);
        auto again = model::open(*path_);  // warms the same code paths, the page cache and the allocator
        ASSERT_TRUE(again) << again.error().message();
    }
    const long before = faults();
    auto m = model::open(*path_);
    const long during = faults() - before;
    ASSERT_TRUE(m) << m.error().message();

    const std::uint64_t metadata_pages = (m->metadata().data_offset() + page - 1) / page;
    const std::uint64_t data_pages = (m->metadata().data_size() + page - 1) / page;
    EXPECT_GE(data_pages, 65536u);
    EXPECT_LE(static_cast<std::uint64_t>(during), metadata_pages + 64)
        << "open() faulted " << during << " pages; the metadata spans " << metadata_pages << " pages";
    RecordProperty("open_page_faults", static_cast<int>(during));
    RecordProperty("metadata_pages", static_cast<int>(metadata_pages));

    // Positive control: reading 16 MiB of the big tensor does fault pages in, so the counter works.
    const auto big = m->tensor_data(*m->find_tensor("big"));
    ASSERT_EQ(big.size(), big_bytes);
    const long before_read = faults();
    unsigned sum = 0;
    for (std::size_t i = 0; i < (16u << 20); i += page) sum += static_cast<unsigned>(big[i]);
    const long reading = faults() - before_read;
    EXPECT_EQ(sum, 0u);
    EXPECT_GE(reading, 256) << "touching 4096 pages faulted only " << reading;
}

TEST_F(LargeModel, MappingIsReadOnlyAndPrivate) {
    auto m = model::open(*path_);
    ASSERT_TRUE(m);
    const auto bytes = m->parts()[0].file.bytes();
    const auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
    EXPECT_EQ(base % page, 0u);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    bool found = false;
    while (std::getline(maps, line)) {
        std::uintptr_t lo = 0, hi = 0;
        char perms[5] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
        if (lo != base) continue;
        found = true;
        EXPECT_STREQ(perms, "r--p") << line;  // PROT_READ, MAP_PRIVATE
        EXPECT_NE(line.find("large.gguf"), std::string::npos) << line;
        EXPECT_GE(hi - lo, bytes.size());
    }
    EXPECT_TRUE(found) << "no mapping starts at the model's base";
}

TEST_F(LargeModel, ReadModeParsesTheSame) {
    auto mapped = model::open(*path_);
    auto read = model::open(*path_, {.mode = load_mode::read});
    ASSERT_TRUE(mapped);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(read->parts()[0].file.mode(), load_mode::read);
    EXPECT_EQ(read->file_bytes(), mapped->file_bytes());
    const file_view& a = mapped->metadata();
    const file_view& b = read->metadata();
    EXPECT_EQ(a.version(), b.version());
    EXPECT_EQ(a.alignment(), b.alignment());
    EXPECT_EQ(a.data_offset(), b.data_offset());
    EXPECT_EQ(a.data_size(), b.data_size());
    ASSERT_EQ(a.metadata().size(), b.metadata().size());
    for (std::size_t i = 0; i < a.metadata().size(); ++i) {
        EXPECT_EQ(a.metadata()[i].key, b.metadata()[i].key);
        EXPECT_EQ(a.metadata()[i].type, b.metadata()[i].type);
        EXPECT_EQ(a.metadata()[i].offset, b.metadata()[i].offset);
        EXPECT_TRUE(std::equal(a.metadata()[i].payload.begin(), a.metadata()[i].payload.end(),
                               b.metadata()[i].payload.begin(), b.metadata()[i].payload.end()));
    }
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    for (std::size_t i = 0; i < a.tensors().size(); ++i) {
        EXPECT_EQ(a.tensors()[i].name, b.tensors()[i].name);
        EXPECT_EQ(a.tensors()[i].offset, b.tensors()[i].offset);
        EXPECT_EQ(a.tensors()[i].n_bytes, b.tensors()[i].n_bytes);
    }
    for (const char* n : {"small", "after"}) {
        const auto x = mapped->tensor_data(*mapped->find_tensor(n));
        const auto y = read->tensor_data(*read->find_tensor(n));
        EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << n;
    }
    const auto z = read->tensor_data(*read->find_tensor("big"));
    EXPECT_EQ(z.size(), big_bytes);
    EXPECT_EQ(z[big_bytes - 1], std::byte{0});
}

}  // namespace
