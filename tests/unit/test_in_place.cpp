// In-place edits: the head is rewritten, the data section never moves, and every refusal leaves the
// file byte for byte as it was. The crash behaviour (kills at every step) is tests/crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

#include "gguf_bytes.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/errors.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

// A small model: a few keys (one string we resize), two f32 tensors with distinct bytes.
bytes small_model(std::string_view name, std::uint32_t alignment = 32) {
    writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", name);
    w.set_u32("llama.block_count", 2);
    if (alignment != 32) w.set_u32("general.alignment", alignment);
    const std::int64_t ne_a[] = {8, 3};
    const std::int64_t ne_b[] = {5};
    w.add_tensor("a.weight", tensor_type::f32, ne_a, std::span<const std::byte>(random_bytes(96, 1)));
    w.add_tensor("b.weight", tensor_type::f32, ne_b, std::span<const std::byte>(random_bytes(20, 2)));
    return to_bytes(w);
}

// The writer an in-place edit of `m` with `changes` plans from: the part's own tensors.
writer edited(const model& m, const model_source& src, std::vector<metadata_change> changes) {
    std::vector<tensor_ref> refs(m.tensors().begin(), m.tensors().end());
    auto w = rewrite(m, src, changes, refs);
    EXPECT_TRUE(w.has_value());
    return w.has_value() ? std::move(*w) : writer{};
}

struct opened {
    model m;
    model_source src;
};
opened open_both(const fs::path& p) {
    auto m = model::open(p);
    if (!m) throw std::runtime_error(m.error().message());
    auto s = model_source::open(*m);
    if (!s) throw std::runtime_error(s.error().message());
    return {std::move(*m), std::move(*s)};
}

std::span<const std::byte> data_section(const bytes& file, std::uint64_t data_offset) {
    return std::span(file).subspan(static_cast<std::size_t>(data_offset));
}

}  // namespace

TEST(InPlace, AShorterValueIsPaddedAndTheDataSectionStaysPut) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("a rather long model name that we will shorten");
    write_file(p, before);
    std::uint64_t D = 0;
    {
        auto o = open_both(p);
        D = o.m.metadata().data_offset();
        auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", "short")}));
        ASSERT_TRUE(plan.has_value()) << plan.error().message();
        EXPECT_EQ(plan->new_head.size(), D);
        EXPECT_GT(plan->padding_bytes, 0u);
        ASSERT_TRUE(apply_in_place(*plan, std::move(o.m)).has_value());
    }
    const bytes after = read_file(p);
    ASSERT_EQ(after.size(), before.size());
    EXPECT_TRUE(std::ranges::equal(data_section(after, D), data_section(before, D)));
    EXPECT_FALSE(fs::exists(undo_journal_path(p)));
    auto m = model::open(p);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    EXPECT_EQ(m->get<std::string_view>("general.name").value(), "short");
    EXPECT_EQ(m->metadata().data_offset(), D);
    const kv* pad = m->find(in_place_padding_key);
    ASSERT_NE(pad, nullptr);
    EXPECT_EQ(pad->element_type, value_type::u8);
    EXPECT_TRUE(std::ranges::all_of(pad->payload, [](std::byte b) { return b == std::byte{0}; }));
    // The tensors read back the same bytes.
    for (const tensor_ref& t : m->tensors()) EXPECT_EQ(m->tensor_data(t).size(), t.info->n_bytes);
}

TEST(InPlace, ALongerValueThatDoesNotFitIsRefusedWithTheMissingBytes) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("x");
    write_file(p, before);
    auto o = open_both(p);
    const std::string big(4096, 'n');
    auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", big)}));
    ASSERT_FALSE(plan.has_value());
    const error& e = plan.error();
    EXPECT_EQ(e.code, minfer::gguf::write_codes::no_room_in_place);
    EXPECT_EQ(e.expected, o.m.metadata().data_offset());
    EXPECT_GT(e.found, e.expected);
    EXPECT_NE(e.message().find("bytes missing"), std::string::npos) << e.message();
    // About the head as a whole: the message names the file, not a byte of a section.
    EXPECT_EQ(e.where, section::file);
    EXPECT_EQ(e.message().rfind(p.string() + ": the new metadata and tensor table need ", 0), 0u) << e.message();
    EXPECT_EQ(read_file(p), before);
}

// Every size of a value around the boundary: the edit fits exactly when the loader's own layout
// rule allows it (the new table ends in the last alignment block before D, or leaves room for the
// padding key), and whenever it fits the file opens with the new value and the same data section.
TEST(InPlace, EveryValueSizeAroundTheBoundaryFitsExactlyWhenTheLayoutAllows) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes original = small_model(std::string(200, 'o'));
    std::uint64_t D = 0;
    int fits = 0, refused = 0;
    for (std::size_t len = 120; len <= 320; ++len) {
        SCOPED_TRACE("name length " + std::to_string(len));
        write_file(p, original);
        const std::string name(len, 'n');
        bool expect_fit = false;
        {
            auto o = open_both(p);
            D = o.m.metadata().data_offset();
            writer w = edited(o.m, o.src, {metadata_change::set_string("general.name", name)});
            auto layout = w.make_plan();
            ASSERT_TRUE(layout.has_value());
            expect_fit = layout->data_offset() == D || layout->table_end() + 38 <= D;
            auto plan = plan_in_place(o.m, 0, w);
            ASSERT_EQ(plan.has_value(), expect_fit) << (plan ? std::string("fits") : plan.error().message());
            if (!plan) {
                EXPECT_EQ(plan.error().code, minfer::gguf::write_codes::no_room_in_place);
                ++refused;
                continue;
            }
            ++fits;
            ASSERT_TRUE(apply_in_place(*plan, std::move(o.m)).has_value());
        }
        const bytes after = read_file(p);
        ASSERT_EQ(after.size(), original.size());
        EXPECT_TRUE(std::ranges::equal(data_section(after, D), data_section(original, D)));
        auto m = model::open(p);
        ASSERT_TRUE(m.has_value()) << m.error().message();
        EXPECT_EQ(m->get<std::string_view>("general.name").value(), name);
    }
    EXPECT_GT(fits, 0);
    EXPECT_GT(refused, 0);
}

TEST(InPlace, RepeatedEditsReuseThePadding) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    write_file(p, small_model(std::string(300, 'a')));
    for (std::size_t len : {10u, 250u, 1u, 300u, 299u}) {
        auto o = open_both(p);
        auto plan = plan_in_place(o.m, 0,
                                  edited(o.m, o.src, {metadata_change::set_string("general.name", std::string(len, 'b'))}));
        ASSERT_TRUE(plan.has_value()) << len << ": " << plan.error().message();
        ASSERT_TRUE(apply_in_place(*plan, std::move(o.m)).has_value());
        auto m = model::open(p);
        ASSERT_TRUE(m.has_value());
        EXPECT_EQ(m->get<std::string_view>("general.name").value().size(), len);
        // The 3 keys, and the padding key at most once (none when the new table ends in D's block).
        const auto n = m->metadata().metadata().size();
        EXPECT_TRUE(n == 3u || (n == 4u && m->find(in_place_padding_key) != nullptr)) << n;
    }
}

TEST(InPlace, AnAlignmentOtherThan32IsKept) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model(std::string(100, 'a'), 256);
    write_file(p, before);
    auto o = open_both(p);
    auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", "z")}));
    ASSERT_TRUE(plan.has_value()) << plan.error().message();
    ASSERT_TRUE(apply_in_place(*plan, std::move(o.m)).has_value());
    auto m = model::open(p);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    EXPECT_EQ(m->metadata().alignment(), 256u);
}

TEST(InPlace, ChangingTheTensorsIsRefused) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("x");
    write_file(p, before);
    auto o = open_both(p);
    // Only the second tensor: the first would move.
    std::vector<tensor_ref> refs{o.m.tensors()[1]};
    auto w = rewrite(o.m, o.src, {}, refs);
    ASSERT_TRUE(w.has_value());
    auto plan = plan_in_place(o.m, 0, *w);
    ASSERT_FALSE(plan.has_value());
    EXPECT_EQ(plan.error().code, errc::offset_mismatch);
    // A new alignment moves the data section.
    auto plan2 = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_u32("general.alignment", 4096)}));
    ASSERT_FALSE(plan2.has_value());
    EXPECT_TRUE(plan2.error().code == errc::offset_mismatch || plan2.error().code == minfer::gguf::write_codes::no_room_in_place)
        << plan2.error().message();
    EXPECT_EQ(read_file(p), before);
}

TEST(InPlace, AFileChangedAfterPlanningIsNotWritten) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    write_file(p, small_model(std::string(64, 'a')));
    auto o = open_both(p);
    auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", "b")}));
    ASSERT_TRUE(plan.has_value());
    bytes changed = read_file(p);
    changed[40] = std::byte{'Z'};  // inside the metadata
    write_file(p, changed);
    auto r = apply_in_place(*plan, std::move(o.m));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::io_error);
    EXPECT_EQ(r.error().sys_errno, ESTALE);
    EXPECT_EQ(read_file(p), changed);
    EXPECT_FALSE(fs::exists(undo_journal_path(p)));
}

TEST(InPlace, ThePlanningModelIsConsumedAndReadsNothingAfterwards) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    write_file(p, small_model(std::string(64, 'a')));
    auto o = open_both(p);
    auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", "b")}));
    ASSERT_TRUE(plan.has_value());
    ASSERT_TRUE(apply_in_place(*plan, std::move(o.m)).has_value());
    // Before, the same object read general.name out of rewritten bytes. Now it is empty: every
    // accessor answers "absent", none reads the file.
    const model& after = o.m;  // NOLINT(bugprone-use-after-move): consumed by contract
    EXPECT_TRUE(after.parts().empty());
    EXPECT_TRUE(after.tensors().empty());
    EXPECT_EQ(after.find("general.name"), nullptr);
    EXPECT_EQ(after.find("general.architecture"), nullptr);
    EXPECT_EQ(after.get<std::string_view>("general.name").error().code, errc::key_not_found);
    EXPECT_EQ(after.find_tensor("t"), nullptr);
    EXPECT_TRUE(after.path().empty());
    auto reopened = model::open(p);
    ASSERT_TRUE(reopened.has_value());
    EXPECT_EQ(*reopened->get<std::string_view>("general.name"), "b");
}

TEST(InPlace, AnEditAppliedWithAnotherModelIsRefusedAndChangesNothing) {
    temp_dir dir;
    const fs::path a = dir / "a.gguf", b = dir / "b.gguf";
    const bytes before = small_model(std::string(64, 'a'));
    write_file(a, before);
    write_file(b, before);
    auto oa = open_both(a);
    auto ob = open_both(b);
    auto plan = plan_in_place(oa.m, 0, edited(oa.m, oa.src, {metadata_change::set_string("general.name", "b")}));
    ASSERT_TRUE(plan.has_value());
    auto r = apply_in_place(*plan, std::move(ob.m));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::bad_value_text);
    EXPECT_EQ(read_file(a), before);
    EXPECT_EQ(read_file(b), before);
    EXPECT_FALSE(ob.m.parts().empty());  // NOLINT(bugprone-use-after-move): refused, so left open
}

TEST(InPlace, AJournalBesideTheFileBlocksEveryEdit) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model(std::string(64, 'a'));
    write_file(p, before);
    write_file(undo_journal_path(p), random_bytes(10, 3));
    auto o = open_both(p);
    auto plan = plan_in_place(o.m, 0, edited(o.m, o.src, {metadata_change::set_string("general.name", "b")}));
    ASSERT_FALSE(plan.has_value());
    EXPECT_EQ(plan.error().code, minfer::gguf::write_codes::journal_present);
    EXPECT_EQ(plan.error().file, undo_journal_path(p).string());
    EXPECT_EQ(read_file(p), before);
}

TEST(InPlace, RecoveryWithoutAJournalDoesNothing) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("x");
    write_file(p, before);
    auto r = recover_in_place(p);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, recovery::nothing_to_do);
    EXPECT_EQ(read_file(p), before);
}

// journal_invalid says what to do (check the model, then discard the journal), and discard_journal
// removes the journal and nothing else.
TEST(InPlace, ADamagedJournalCanBeDiscardedAfterChecking) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("x");
    write_file(p, before);
    const fs::path j = undo_journal_path(p);
    write_file(j, bytes(10));
    auto r = recover_in_place(p);
    ASSERT_FALSE(r.has_value());
    const std::string m = r.error().message();
    EXPECT_NE(m.find("check it (minfer verify '" + p.string() + "')"), std::string::npos) << m;
    EXPECT_NE(m.find("minfer edit --discard-journal '" + p.string() + "'"), std::string::npos) << m;
    auto d = discard_journal(p);
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_TRUE(*d);
    EXPECT_FALSE(fs::exists(j));
    EXPECT_EQ(read_file(p), before);
    auto again = discard_journal(p);
    ASSERT_TRUE(again.has_value());
    EXPECT_FALSE(*again);
    auto missing = discard_journal(dir / "none.gguf");
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code, errc::io_error);
}

TEST(InPlace, ADamagedOrForeignJournalIsRefusedAndTheFileUntouched) {
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    const bytes before = small_model("x");
    write_file(p, before);
    const fs::path j = undo_journal_path(p);
    auto expect_invalid = [&](const bytes& journal, std::string_view why) {
        SCOPED_TRACE(std::string(why));
        write_file(j, journal);
        auto r = recover_in_place(p);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, minfer::gguf::write_codes::journal_invalid) << r.error().message();
        EXPECT_EQ(read_file(p), before);
        EXPECT_TRUE(fs::exists(j));  // kept for a human to look at
    };
    expect_invalid(bytes(10), "shorter than its header");
    // A well-formed journal for this file: magic, size, D, checksum, old head, new head.
    const std::uint64_t D = [&] {
        auto m = model::open(p);
        return m->metadata().data_offset();
    }();
    auto make = [&](std::uint64_t size, std::uint64_t head, const bytes& old_head, const bytes& new_head,
                    bool good_sum) {
        bytes j_bytes;
        const char magic[16] = {'M', 'I', 'N', 'F', 'E', 'R', '-', 'U', 'N', 'D', 'O', '-', '1', '\n', 0, 0};
        for (char c : magic) j_bytes.push_back(static_cast<std::byte>(c));
        for (std::uint64_t v : {size, head, std::uint64_t{0}})
            for (int i = 0; i < 8; ++i) j_bytes.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
        j_bytes.insert(j_bytes.end(), old_head.begin(), old_head.end());
        j_bytes.insert(j_bytes.end(), new_head.begin(), new_head.end());
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (std::size_t i = 40; i < j_bytes.size(); ++i) {
            h ^= static_cast<std::uint8_t>(j_bytes[i]);
            h *= 0x100000001b3ull;
        }
        if (!good_sum) h ^= 1;
        for (int i = 0; i < 8; ++i) j_bytes[32 + static_cast<std::size_t>(i)] = static_cast<std::byte>((h >> (8 * i)) & 0xFF);
        return j_bytes;
    };
    const bytes head(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(D));
    bytes other = head;
    other[20] ^= std::byte{0xFF};
    other[21] ^= std::byte{0xFF};
    expect_invalid(make(before.size() + 1, D, head, other, true), "made for another size");
    expect_invalid(make(before.size(), D, head, other, false), "bad checksum");
    expect_invalid(make(before.size(), D + 1, head, other, true), "head size disagrees with the length");
    bytes foreign_old = head, foreign_new = other;
    foreign_old[30] ^= std::byte{0x55};
    foreign_new[30] ^= std::byte{0x55};
    expect_invalid(make(before.size(), D, foreign_old, foreign_new, true), "the file's bytes are neither head");

    // A valid one rolls back a mix of the old and the new head (byte 20 new, byte 21 old)...
    bytes mixed = before;
    mixed[20] = other[20];
    write_file(p, mixed);
    write_file(j, make(before.size(), D, head, other, true));
    auto r = recover_in_place(p);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, recovery::rolled_back);
    EXPECT_EQ(read_file(p), before);
    EXPECT_FALSE(fs::exists(j));
    // ...and completes a head that is wholly the new one (the kill came after the write).
    bytes done = before;
    std::copy(other.begin(), other.end(), done.begin());
    write_file(p, done);
    write_file(j, make(before.size(), D, head, other, true));
    auto r2 = recover_in_place(p);
    ASSERT_TRUE(r2.has_value()) << r2.error().message();
    EXPECT_EQ(*r2, recovery::completed);
    EXPECT_EQ(read_file(p), done);
    EXPECT_FALSE(fs::exists(j));
}
