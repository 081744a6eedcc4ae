// Tensor sources and the plan: every kind of source round-trips through the loader (to a file, with
// and without copy_file_range, and to memory), the plan's numbers are the loader's, and what cannot
// be planned or read is an error before the output exists.
#include <gtest/gtest.h>

#include <cerrno>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool under_asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool under_asan = true;
#else
constexpr bool under_asan = false;
#endif
#else
constexpr bool under_asan = false;
#endif

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    return n;
}

// A file holding `prefix` junk bytes, then `data`, then `suffix` junk bytes.
fs::path file_with(const fs::path& p, const bytes& data, std::size_t prefix, std::size_t suffix) {
    bytes all = random_bytes(prefix, 99);
    all.insert(all.end(), data.begin(), data.end());
    const bytes tail = random_bytes(suffix, 98);
    all.insert(all.end(), tail.begin(), tail.end());
    write_file(p, all);
    return p;
}

// Byte i of the callback tensor: a pattern a misplaced or repeated chunk would break.
std::byte pattern(std::uint64_t i) { return static_cast<std::byte>((i * 2654435761u) >> 13); }

tensor_source pattern_source(std::uint64_t n, std::vector<std::uint64_t>* calls = nullptr) {
    return tensor_source::callback(n, [calls](std::uint64_t off, std::span<std::byte> out) -> result<void> {
        if (calls) calls->push_back(off);
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = pattern(off + i);
        return {};
    });
}

struct fd_closer {
    int fd;
    ~fd_closer() {
        if (fd >= 0) ::close(fd);
    }
};

// One tensor of every source kind; sizes above the minimum chunk (4096) so the callback and the
// pread fallback run in several chunks.
struct every_kind {
    temp_dir dir;
    bytes borrowed = random_bytes(4 * 5000, 1);
    bytes owned = random_bytes(4 * 3, 2);
    bytes by_path = random_bytes(4 * 7000, 3);
    bytes by_fd = random_bytes(4 * 2500, 4);
    fd_closer fd{-1};
    std::vector<std::uint64_t> calls;
    writer w;

    every_kind() {
        const fs::path src = file_with(dir / "src.bin", by_path, 13, 7);
        file_with(dir / "fd.bin", by_fd, 4096 + 1, 0);
        fd.fd = ::open((dir / "fd.bin").c_str(), O_RDONLY | O_CLOEXEC);
        const std::int64_t ne_b[] = {5000}, ne_o[] = {3}, ne_p[] = {7000}, ne_f[] = {2500}, ne_c[] = {3000, 3},
                           ne_z[] = {100};
        w.set_string("general.architecture", "test").set_u32("general.alignment", 64);
        w.add_tensor("borrowed", tensor_type::f32, ne_b, tensor_source::borrow(borrowed));
        w.add_tensor("owned", tensor_type::f32, ne_o, std::span<const std::byte>(owned));
        w.add_tensor("path", tensor_type::f32, ne_p, tensor_source::file_range(src, 13, by_path.size()));
        w.add_tensor("fd", tensor_type::f32, ne_f, tensor_source::file_range(fd.fd, 4096 + 1, by_fd.size()));
        w.add_tensor("callback", tensor_type::i8, ne_c, pattern_source(9000, &calls));
        w.add_zero_tensor("zeros", tensor_type::f32, ne_z);
    }

    void check(std::span<const std::byte> file) {
        auto v = file_view::parse(file);
        ASSERT_TRUE(v) << v.error().message();
        ASSERT_EQ(v->tensors().size(), 6u);
        auto same = [&](const char* name, const bytes& want) {
            const tensor_info* t = v->find_tensor(name);
            ASSERT_NE(t, nullptr) << name;
            const auto d = v->tensor_data(*t);
            EXPECT_TRUE(std::equal(d.begin(), d.end(), want.begin(), want.end())) << name;
        };
        same("borrowed", borrowed);
        same("owned", owned);
        same("path", by_path);
        same("fd", by_fd);
        bytes c(9000);
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = pattern(i);
        same("callback", c);
        same("zeros", bytes(400));
        // the callback covered [0, 9000) once, in order, in chunks of at most 4096
        ASSERT_FALSE(calls.empty());
        EXPECT_EQ(calls.front(), 0u);
        for (std::size_t i = 1; i < calls.size(); ++i) EXPECT_EQ(calls[i] - calls[i - 1], 4096u);
        EXPECT_EQ(calls.size(), 3u);
        calls.clear();
    }
};

TEST(WriteSources, EveryKindRoundTripsThroughAFile) {
    for (bool kernel : {true, false}) {
        SCOPED_TRACE(kernel ? "copy_file_range" : "pread/pwrite");
        every_kind k;
        write_options o;
        o.kernel_copy = kernel;
        o.chunk_bytes = 4096;
        const fs::path out = k.dir / "out.gguf";
        auto r = k.w.write(out, o);
        ASSERT_TRUE(r) << r.error().message();
        k.check(read_file(out));
        // the model opener agrees, and write() and to_bytes() make the same bytes
        auto m = model::open(out);
        ASSERT_TRUE(m) << m.error().message();
        auto mem = k.w.to_bytes(o);
        ASSERT_TRUE(mem) << mem.error().message();
        EXPECT_EQ(*mem, read_file(out));
    }
}

TEST(WriteSources, EveryKindRoundTripsThroughMemory) {
    every_kind k;
    write_options o;
    o.chunk_bytes = 1;  // raised to the 4096 minimum
    auto mem = k.w.to_bytes(o);
    ASSERT_TRUE(mem) << mem.error().message();
    k.check(*mem);
}

TEST(WriteSources, SourceOnAnotherFilesystemFallsBackToPread) {
    // copy_file_range between filesystems fails with EXDEV: the writer must fall back silently.
    if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
    char tmpl[] = "/dev/shm/minfer-src-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    fd_closer closer{fd};
    const bytes data = random_bytes(3 * 4096 + 5 * 4, 7);  // f32 x 3077
    ASSERT_EQ(::pwrite(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
    ::unlink(tmpl);
    temp_dir dir;
    writer w;
    const std::int64_t ne[] = {3077};
    w.add_tensor("t", tensor_type::f32, ne, tensor_source::file_range(fd, 0, data.size()));
    write_options o;
    o.chunk_bytes = 4096;
    ASSERT_TRUE(w.write(dir / "o.gguf", o));
    auto m = model::open(dir / "o.gguf");
    ASSERT_TRUE(m);
    const auto d = m->tensor_data(m->tensors()[0]);
    EXPECT_TRUE(std::equal(d.begin(), d.end(), data.begin(), data.end()));
}

TEST(WriteSources, RewritingAParsedFileWithBorrowedBytesIsIdentical) {
    // set(kv) copies each record exactly and borrow() points at the parsed file's bytes: no copy of
    // a tensor, the same file out.
    writer w;
    const std::uint32_t u[] = {1, 2};
    const std::string_view s[] = {"x", "yz", ""};
    const std::uint8_t flags[] = {1, 0};
    w.set_string("general.architecture", "llama").set_array("u", value_type::u32, std::span<const std::uint32_t>(u));
    w.set_strings("s", std::span<const std::string_view>(s)).set_f64("f", 0.25).set_u32("general.alignment", 64);
    w.set_array("b", value_type::boolean, std::span<const std::uint8_t>(flags)).set_bool("t", true).set_i8("i8", -3);
    const std::int64_t ne[] = {32, 2};
    w.add_tensor("a", tensor_type::q8_0, ne, random_bytes(68, 1)).add_tensor("b", tensor_type::f16, ne,
                                                                             random_bytes(128, 2));
    const bytes original = to_bytes(w);
    auto v = file_view::parse(original);
    ASSERT_TRUE(v);
    writer copy;
    for (const kv& e : v->metadata()) copy.set(e);
    for (const tensor_info& t : v->tensors())
        copy.add_tensor(t.name, t.type, std::span<const std::int64_t>(t.ne.data(), t.n_dims),
                        tensor_source::borrow(v->tensor_data(t)));
    EXPECT_EQ(to_bytes(copy), original);
}

TEST(WriteSources, ProgressReachesThePlannedSize) {
    every_kind k;
    auto p = k.w.make_plan();
    ASSERT_TRUE(p);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    write_options o;
    o.progress = [&seen](std::uint64_t done, std::uint64_t total) { seen.emplace_back(done, total); };
    ASSERT_TRUE(k.w.write(k.dir / "p.gguf", o));
    ASSERT_EQ(seen.size(), 1 + p->tensor_count());  // the header, then each tensor
    EXPECT_EQ(seen.front().first, p->data_offset());
    for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].first, seen[i - 1].first);
    EXPECT_EQ(seen.back().first, p->file_size());
    for (const auto& s : seen) EXPECT_EQ(s.second, p->file_size());
    // a callback that throws ends the write, and the file is not created
    o.progress = [](std::uint64_t, std::uint64_t) { throw std::runtime_error("stop"); };
    EXPECT_EQ(error_of(k.w.write(k.dir / "q.gguf", o)).code, errc::io_error);
    EXPECT_FALSE(fs::exists(k.dir / "q.gguf"));
}

// ---- the plan -------------------------------------------------------------------------------

TEST(WritePlan, OffsetsAreWhatTheLoaderReads) {
    for (std::uint32_t align : {1u, 32u, 4096u}) {
        SCOPED_TRACE(align);
        writer w;
        w.set_u32("general.alignment", align).set_string("general.name", "plan");
        const std::int64_t a[] = {3}, b[] = {64, 3}, c[] = {7, 1, 1, 2};
        w.add_tensor("a", tensor_type::f32, a, random_bytes(12, 1));
        w.add_zero_tensor("b", tensor_type::q4_0, b);
        w.add_tensor("c", tensor_type::i16, c, tensor_source::callback(28, [](std::uint64_t, std::span<std::byte> o) {
                         std::fill(o.begin(), o.end(), std::byte{7});
                         return result<void>{};
                     }));
        auto p = w.make_plan();
        ASSERT_TRUE(p) << p.error().message();
        const bytes file = to_bytes(w);
        auto v = file_view::parse(file);
        ASSERT_TRUE(v) << v.error().message();
        EXPECT_EQ(p->alignment(), v->alignment());
        EXPECT_EQ(p->kv_count(), v->metadata().size());
        EXPECT_EQ(p->tensor_count(), v->tensors().size());
        EXPECT_EQ(p->data_offset(), v->data_offset());
        EXPECT_EQ(p->data_bytes(), v->data_size());
        EXPECT_EQ(p->file_size(), file.size());
        EXPECT_EQ(p->metadata_end(), v->tensors()[0].info_offset);
        ASSERT_EQ(p->tensors().size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) {
            const plan::tensor& pt = p->tensors()[i];
            const tensor_info& t = v->tensors()[i];
            EXPECT_EQ(pt.name, t.name);
            EXPECT_EQ(pt.type, t.type);
            EXPECT_EQ(pt.n_dims, t.n_dims);
            EXPECT_EQ(pt.ne, t.ne);
            EXPECT_EQ(pt.offset, t.offset);
            EXPECT_EQ(pt.n_bytes, t.n_bytes);
            EXPECT_EQ(pt.info_offset, t.info_offset);
            EXPECT_EQ(pt.padded_bytes % align, 0u);
            const std::uint64_t next = i + 1 < 3 ? v->tensors()[i + 1].offset : v->data_size();
            EXPECT_EQ(pt.offset + pt.padded_bytes, next);
        }
        const auto& last = v->tensors()[2];
        EXPECT_EQ(p->table_end(), last.info_offset + 8 + 1 + 4 + 4 * 8 + 4 + 8);
    }
}

TEST(WritePlan, ATensorOfTwoToTheSixtyThreeBytesIsAnErrorNotACrash) {
    // 2^60 f64 = 2^63 bytes: fits 64 bits, but no object in memory can hold it. to_bytes() used to
    // die in std::terminate (std::length_error through noexcept).
    const std::int64_t ne[] = {std::int64_t{1} << 60};
    writer w;
    w.add_zero_tensor("huge", tensor_type::f64, ne);
    EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::size_overflow, .where = section::tensor_info,
                                                  .found = std::uint64_t{1} << 63, .subject = "huge", .index = 0}));
    temp_dir dir;
    EXPECT_EQ(error_of(w.write(dir / "h.gguf")).code, errc::size_overflow);
    EXPECT_EQ(entries(dir.path()), 0u);
    EXPECT_EQ(error_of(w.make_plan()).code, errc::size_overflow);
}

TEST(WritePlan, AFileTooLargeForMemoryIsAnErrorNotACrash) {
    // 2^48 bytes of zeros: a valid plan, but to_bytes() cannot allocate it (bad_alloc, caught).
    if (under_asan) GTEST_SKIP() << "ASan reports an oversized allocation instead of throwing bad_alloc";
    const std::int64_t ne[] = {std::int64_t{1} << 48};
    writer w;
    w.add_zero_tensor("big", tensor_type::i8, ne);
    ASSERT_TRUE(w.make_plan());
    EXPECT_EQ(error_of(w.to_bytes()).code, errc::out_of_memory);
}

TEST(WritePlan, OverflowingSumsAreErrors) {
    {
        // two tensors of 2^63 - 1 bytes: each fits in memory, their padded sum does not fit 64 bits
        const std::int64_t ne[] = {std::numeric_limits<std::int64_t>::max()};
        writer w;
        w.add_zero_tensor("a", tensor_type::i8, ne).add_zero_tensor("b", tensor_type::i8, ne);
        EXPECT_TRUE(error_is(error_of(w.make_plan()),
                             {.code = errc::data_size_overflow, .where = section::tensor_info, .subject = "b",
                              .index = 1}));
    }
    {
        // the largest alignment and three 2^62-byte tensors: no u64 overflow, but a file larger
        // than off_t can address
        const std::int64_t ne[] = {std::int64_t{1} << 62};
        writer w;
        w.set_u32("general.alignment", 1u << 31);
        w.add_zero_tensor("a", tensor_type::i8, ne).add_zero_tensor("b", tensor_type::i8, ne).add_zero_tensor(
            "c", tensor_type::i8, ne);
        EXPECT_TRUE(error_is(error_of(w.make_plan()), {.code = errc::data_size_overflow, .where = section::data}));
        temp_dir dir;
        EXPECT_EQ(error_of(w.write(dir / "o.gguf")).code, errc::data_size_overflow);
        EXPECT_EQ(entries(dir.path()), 0u);
    }
    {
        // 2^31 alignment with a table end near 2^64 cannot be reached through a writer, but
        // plan::make takes any descriptions: a padded tensor size that wraps is refused
        const std::int64_t ne[] = {std::numeric_limits<std::int64_t>::max() - 5};
        const std::uint32_t align = 1u << 31;
        const kv_desc kvs[] = {{"general.alignment", value_type::u32, std::as_bytes(std::span(&align, 1))}};
        const tensor_desc ts[] = {{"x", tensor_type::i8, ne, std::nullopt}, {"y", tensor_type::i8, ne, std::nullopt}};
        EXPECT_EQ(error_of(plan::make(kvs, ts)).code, errc::data_size_overflow);
    }
}

TEST(WritePlan, RefusesWhatTheLoaderRefuses) {
    const std::uint32_t u = 7;
    const std::uint8_t two = 2;
    const std::uint64_t long_len = (1ull << 30) + 1;
    bytes lying_string(8);
    std::memcpy(lying_string.data(), &long_len, 8);
    bytes bad_bools;  // array of bool: tag, count 2, bytes {1, 2}
    for (std::uint32_t x : {7u}) bad_bools.insert(bad_bools.end(), reinterpret_cast<const std::byte*>(&x),
                                                  reinterpret_cast<const std::byte*>(&x) + 4);
    const std::uint64_t two_count = 2;
    bad_bools.insert(bad_bools.end(), reinterpret_cast<const std::byte*>(&two_count),
                     reinterpret_cast<const std::byte*>(&two_count) + 8);
    bad_bools.push_back(std::byte{1});
    bad_bools.push_back(std::byte{2});
    struct c {
        const char* what;
        kv_desc kv;
        errc code;
    };
    const c cases[] = {
        {"empty key", {"", value_type::u32, std::as_bytes(std::span(&u, 1))}, errc::empty_key},
        {"NUL in key", {std::string_view("a\0b", 3), value_type::u32, std::as_bytes(std::span(&u, 1))},
         errc::nul_in_name},
        {"unknown tag", {"k", static_cast<value_type>(13), std::as_bytes(std::span(&u, 1))}, errc::bad_value_type},
        {"value shorter than its tag", {"k", value_type::u64, std::as_bytes(std::span(&u, 1))}, errc::truncated},
        {"bool byte 2", {"k", value_type::boolean, std::as_bytes(std::span(&two, 1))}, errc::bad_bool},
        {"bool array byte 2", {"k", value_type::array, bad_bools}, errc::bad_bool},
        {"string over the loader's cap", {"k", value_type::string, lying_string}, errc::string_too_long},
        {"alignment not a power of two", {"general.alignment", value_type::u32, std::as_bytes(std::span(&u, 1))},
         errc::bad_alignment},
    };
    for (const c& x : cases) {
        SCOPED_TRACE(x.what);
        const kv_desc kvs[] = {{"first", value_type::u32, std::as_bytes(std::span(&u, 1))}, x.kv};
        const error e = error_of(plan::make(kvs, {}));
        EXPECT_EQ(e.code, x.code) << describe(e);
        EXPECT_EQ(e.where, section::metadata);
        EXPECT_EQ(e.index, 1);
        EXPECT_EQ(e.offset, 24u + 8 + 5 + 4 + 4);  // the planned offset of the second record
    }
    const kv_desc dup[] = {{"k", value_type::u32, std::as_bytes(std::span(&u, 1))},
                           {"k", value_type::u32, std::as_bytes(std::span(&u, 1))}};
    EXPECT_TRUE(error_is(error_of(plan::make(dup, {})), {.code = errc::duplicate_key, .where = section::metadata,
                                                         .expected = 0, .found = 1, .subject = "k", .index = 1}));
}

// ---- sources that cannot be read --------------------------------------------------------------

TEST(WriteSources, ASizeThatDisagreesWithTheShapeFailsBeforeAnythingIsRead) {
    temp_dir dir;
    bool called = false;
    writer w;
    const std::int64_t ne[] = {16};
    w.add_tensor("t", tensor_type::f32, ne,
                 tensor_source::callback(60, [&called](std::uint64_t, std::span<std::byte>) {
                     called = true;
                     return result<void>{};
                 }));
    EXPECT_TRUE(error_is(error_of(w.write(dir / "o.gguf")), {.code = errc::data_truncated, .where = section::data,
                                                             .expected = 64, .found = 60, .subject = "t"}));
    EXPECT_FALSE(called);
    EXPECT_EQ(entries(dir.path()), 0u);
    EXPECT_EQ(error_of(w.to_bytes()).code, errc::data_truncated);
}

TEST(WriteSources, MissingFileAndShortRangeFailBeforeTheOutputExists) {
    temp_dir dir;
    const fs::path out = dir / "o.gguf";
    write_file(out, bytes(5, std::byte{'o'}));  // an existing target stays as it is
    const std::int64_t ne[] = {16};
    {
        writer w;
        w.add_tensor("t", tensor_type::f32, ne, tensor_source::file_range(dir / "missing.bin", 0, 64));
        const error e = error_of(w.write(out));
        EXPECT_TRUE(error_is(e, {.code = errc::io_error, .where = section::file, .subject = "t", .index = 0}));
        EXPECT_EQ(e.sys_errno, ENOENT);
        EXPECT_EQ(e.file, (dir / "missing.bin").string());
        EXPECT_EQ(error_of(w.to_bytes()).sys_errno, ENOENT);
    }
    {
        write_file(dir / "short.bin", random_bytes(100, 1));
        writer w;
        w.add_tensor("t", tensor_type::f32, ne, tensor_source::file_range(dir / "short.bin", 40, 64));
        const error e = error_of(w.write(out));
        EXPECT_TRUE(error_is(e, {.code = errc::data_truncated, .where = section::data, .expected = 104,
                                 .found = 100, .subject = "t", .index = 0}));
        EXPECT_EQ(e.file, (dir / "short.bin").string());
    }
    EXPECT_EQ(read_file(out), bytes(5, std::byte{'o'}));
    EXPECT_EQ(entries(dir.path()), 2u);  // the target and short.bin, no temporary
}

TEST(WriteSources, ACallbackErrorEndsTheWrite) {
    temp_dir dir;
    const fs::path out = dir / "o.gguf";
    const std::int64_t ne[] = {4096};
    {
        writer w;
        w.add_tensor("t", tensor_type::f32, ne,
                     tensor_source::callback(16384, [](std::uint64_t off, std::span<std::byte>) -> result<void> {
                         if (off == 0) return {};
                         error e;
                         e.code = errc::io_error;
                         e.sys_errno = EIO;
                         e.detail = "converter failed";
                         return unexpected(e);
                     }));
        write_options o;
        o.chunk_bytes = 4096;
        const error e = error_of(w.write(out, o));
        EXPECT_TRUE(error_is(e, {.code = errc::io_error, .where = section::data, .subject = "t", .index = 0,
                                 .detail = "converter failed"}));
        EXPECT_EQ(e.sys_errno, EIO);
        EXPECT_FALSE(fs::exists(out));
        EXPECT_EQ(entries(dir.path()), 0u);
    }
    {
        writer w;
        w.add_tensor("t", tensor_type::f32, ne,
                     tensor_source::callback(16384, [](std::uint64_t, std::span<std::byte>) -> result<void> {
                         throw std::runtime_error("user code throws");
                     }));
        EXPECT_EQ(error_of(w.write(out)).code, errc::io_error);
        EXPECT_EQ(error_of(w.to_bytes()).code, errc::io_error);
        EXPECT_EQ(entries(dir.path()), 0u);
    }
}

}  // namespace

// A file-range source with holes (a sparse model) is copied as data where it has data and as holes
// where it has holes: the same bytes, and no disk for the zeros — by the kernel path and the pread
// path alike.
TEST(WriteSources, HolesInAFileSourceStayHoles) {
    temp_dir dir;
    const fs::path src = dir / "sparse.bin";
    constexpr std::uint64_t size = std::uint64_t{64} << 20;  // 64 MiB, 16 f32 tensors of 4 MiB
    {
        const int fd = ::open(src.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
        // Data at the start, in the middle of a tensor, and at the very end.
        const bytes data = random_bytes(8192, 5);
        for (std::uint64_t at : {std::uint64_t{0}, std::uint64_t{20} << 20, size - 8192})
            ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(at)), 8192);
        ::close(fd);
    }
    const bytes whole = read_file(src);
    for (bool kernel : {true, false}) {
        SCOPED_TRACE(kernel ? "copy_file_range" : "pread/pwrite");
        writer w;
        w.set_string("general.architecture", "test");
        const std::int64_t ne[] = {1 << 20};
        for (int i = 0; i < 16; ++i)
            w.add_tensor(std::string(1, 't').append(std::to_string(i)), tensor_type::f32, ne,  // not "t" + …: GCC 12 -O3 -Wrestrict
                         tensor_source::file_range(src, std::uint64_t(i) << 22, std::uint64_t{1} << 22));
        const fs::path out = dir / (kernel ? "k.gguf" : "p.gguf");
        write_options o;
        o.kernel_copy = kernel;
        ASSERT_TRUE(w.write(out, o).has_value());
        auto m = model::open(out);
        ASSERT_TRUE(m.has_value());
        for (int i = 0; i < 16; ++i) {
            const auto got = m->tensor_data(*m->find_tensor(std::string(1, 't').append(std::to_string(i))));
            ASSERT_TRUE(std::equal(got.begin(), got.end(), whole.begin() + (std::ptrdiff_t{i} << 22))) << i;
        }
        struct stat st {};
        ASSERT_EQ(::stat(out.c_str(), &st), 0);
        const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
        EXPECT_LT(allocated, std::uint64_t{4} << 20) << "the holes were written as zeros";
    }
}
