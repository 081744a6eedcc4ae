// minfer::toolbox: the pieces both frontends (the CLI and the Python module) call.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <optional>

#include "gguf_bytes.hpp"
#include "minfer/toolbox/edit_steps.hpp"
#include "minfer/toolbox/exit_code.hpp"
#include "minfer/toolbox/hash_line.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "minfer/toolbox/verify.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/check/errors.hpp"
#include "minfer/toolbox/errors.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/toolbox/prune.hpp"
#include <string>
#include <vector>

namespace tb = minfer::toolbox;
using minfer::gguf::errc;

TEST(ToolboxExitCode, IoCodesAreExit3AndKindIo) {
    // remote's codes by number: this library does not link minfer::remote, and classifies its whole
    // domain as I/O (range_ignored = 1, bad_content_range = 2, and a code remote adds later).
    using minfer::gguf::domains::remote;
    using minfer::gguf::make_code;
    for (errc c : {errc::io_error, errc::split_part_missing, errc::out_of_memory, errc::fetch_budget_exceeded,
                   errc::http_status, make_code(remote, 1), make_code(remote, 2), make_code(remote, 200),
                   errc::transfer_failed}) {
        EXPECT_EQ(tb::exit_code_for(c), 3) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::io) << minfer::gguf::to_string(c);
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
    }
}

TEST(ToolboxExitCode, CommandLineValuesAreUsage) {
    for (errc c : {errc::bad_value_text, errc::model_incomplete, minfer::gguf::write_codes::output_not_regular,
                   minfer::quant::codes::requantize_refused, tb::codes::bad_selection, tb::codes::bad_config,
                   tb::codes::unsupported_config})
        EXPECT_EQ(tb::exit_code_for(c), 2) << minfer::gguf::to_string(c);
    EXPECT_EQ(tb::kind_of(errc::bad_value_text), tb::error_kind::request);
}

TEST(ToolboxExitCode, AMalformedImportanceMatrixIsAnInvalidFile) {
    EXPECT_EQ(tb::kind_of(minfer::quant::codes::bad_imatrix), tb::error_kind::invalid_file);
    EXPECT_EQ(tb::exit_code_for(minfer::quant::codes::bad_imatrix), 1);
    EXPECT_EQ(tb::exit_code_for(minfer::quant::codes::imatrix_mismatch), 1);
}

TEST(ToolboxExitCode, ParseFailuresAreInvalidFilesAndRequestsAreNot) {
    EXPECT_TRUE(tb::is_parse_failure(errc::bad_magic));
    EXPECT_TRUE(tb::is_parse_failure(errc::split_bad_name));
    EXPECT_EQ(tb::kind_of(errc::bad_magic), tb::error_kind::invalid_file);
    EXPECT_EQ(tb::exit_code_for(errc::bad_magic), 1);
    for (errc c : {errc::key_not_found, errc::type_mismatch, errc::tensor_not_found, errc::index_out_of_range,
                   errc::value_out_of_range}) {
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::request) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::exit_code_for(c), 1) << minfer::gguf::to_string(c);
    }
    // a valid file whose model llama.cpp cannot load: an invalid file, though not a parse failure
    EXPECT_FALSE(tb::is_parse_failure(errc::bad_hyperparameter));
    EXPECT_EQ(tb::kind_of(errc::bad_hyperparameter), tb::error_kind::invalid_file);
    EXPECT_EQ(tb::to_string(tb::error_kind::invalid_file), "invalid");
    EXPECT_EQ(tb::to_string(tb::error_kind::request), "request");
    EXPECT_EQ(tb::to_string(tb::error_kind::io), "io");
}

// A Hugging Face checkpoint is not GGUF: its codes never say "failed to parse GGUF". A checkpoint that
// is not what its formats say is an invalid input; one the converter does not handle, a request.
TEST(ToolboxExitCode, ACheckpointsCodesAreInvalidInputsOrRequests) {
    namespace cc = minfer::convert::codes;
    for (errc c : {cc::bad_safetensors, cc::bad_model_config, cc::bad_checkpoint_index, cc::no_weights,
                   cc::bad_tokenizer, cc::bad_tensor, cc::bad_model_card}) {
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::invalid_file) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::exit_code_for(c), 1) << minfer::gguf::to_string(c);
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
    }
    for (errc c : {cc::unsupported_dtype, cc::unsupported_architecture, cc::unsupported_tokenizer}) {
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::request) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::exit_code_for(c), 1) << minfer::gguf::to_string(c);
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
    }
}

// Every code that a library linked here names, in every domain, that the table leaves out.
std::vector<std::string> unclassified_codes() {
    std::vector<std::string> missing;
    for (unsigned d = 0; d < 256; ++d)
        for (unsigned n = 1; n < 256; ++n) {
            const errc c = minfer::gguf::make_code(static_cast<std::uint8_t>(d), static_cast<std::uint8_t>(n));
            if (minfer::gguf::to_string(c) == "unknown") continue;
            if (tb::find_classification(c) == nullptr) missing.push_back(std::string(minfer::gguf::to_string(c)));
        }
    return missing;
}

std::string_view appended_name(std::uint8_t n) noexcept { return n == 1 ? "a_code_added_later" : std::string_view(); }
std::string appended_describe(const minfer::gguf::error&, bool) { return "a code added later"; }
std::string_view no_name(std::uint8_t) noexcept { return {}; }

// The classification is a table with a row per code, not a rule about where a code sits in its enum
// (input_too_large once exited 1 from quantize and 3 from edit). Every named code of every domain
// linked into this test has a row; and a code appended to a domain without one is caught: a domain
// registered here with one named code makes the walk report it.
TEST(ToolboxExitCode, EveryNamedCodeHasARowAndAnAppendedCodeIsCaught) {
    EXPECT_EQ(unclassified_codes(), std::vector<std::string>{});
    for (std::uint8_t n : {std::uint8_t{1}, std::uint8_t{2}})  // remote's, by number (this library does not link remote)
        EXPECT_NE(tb::find_classification(minfer::gguf::make_code(minfer::gguf::domains::remote, n)), nullptr);
    EXPECT_EQ(tb::exit_code_for(errc::input_too_large), 3);
    EXPECT_EQ(tb::kind_of(errc::input_too_large), tb::error_kind::io);

    static const minfer::gguf::error_domain appended{200, "appended", appended_name, appended_describe};
    minfer::gguf::register_error_domain(appended);
    EXPECT_EQ(unclassified_codes(), std::vector<std::string>{"a_code_added_later"});
    // until it gets a row, it is a request with exit 1, never a parse failure
    const errc added = minfer::gguf::make_code(200, 1);
    EXPECT_EQ(tb::exit_code_for(added), 1);
    EXPECT_EQ(tb::kind_of(added), tb::error_kind::request);
    EXPECT_FALSE(tb::is_parse_failure(added));
    static const minfer::gguf::error_domain removed{200, "appended", no_name, appended_describe};
    minfer::gguf::register_error_domain(removed);
    EXPECT_EQ(unclassified_codes(), std::vector<std::string>{});
}

// ------------------------------------------------------------------------------ the option texts

TEST(ToolboxSize, ReadsTheDocumentedForms) {
    std::string why;
    EXPECT_EQ(tb::parse_size("2G", why), 2'000'000'000u);
    EXPECT_EQ(tb::parse_size("1.5GiB", why), 1'610'612'736u);
    EXPECT_EQ(tb::parse_size("0.5KiB", why), 512u);
    EXPECT_EQ(tb::parse_size("1.0009K", why), 1000u);
    EXPECT_EQ(tb::parse_size("18446744073709551615", why), 18446744073709551615ull);
    EXPECT_FALSE(tb::parse_size("18446744073709551616", why));
    EXPECT_EQ(why, "too large");
    EXPECT_FALSE(tb::parse_size("1.5", why));
    EXPECT_EQ(why, "a number of bytes must be whole");
    EXPECT_FALSE(tb::parse_size("0K", why));
    EXPECT_EQ(why, "it must be at least 1 byte");
    EXPECT_FALSE(tb::parse_size("1kb", why));
    EXPECT_NE(why.find("unknown unit 'kb'"), std::string::npos) << why;
    EXPECT_FALSE(tb::parse_size("G", why));
    EXPECT_EQ(why, "it must start with a number");
    EXPECT_EQ(tb::parse_count("42"), 42u);
    EXPECT_FALSE(tb::parse_count("-1"));
    EXPECT_FALSE(tb::parse_count(""));
}

TEST(ToolboxSha256, EitherCaseAndTheReasonWithoutLowercase) {
    const std::string lower(64, 'a');
    const std::string upper(64, 'A');
    std::string why;
    const auto a = tb::parse_sha256(lower, &why);
    const auto b = tb::parse_sha256(upper, &why);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->text(), lower);
    EXPECT_EQ(b->text(), lower);
    EXPECT_FALSE(tb::parse_sha256(std::string(63, 'a') + "g", &why));
    EXPECT_EQ(why.find("lowercase"), std::string::npos) << why;
    EXPECT_FALSE(why.empty());
    EXPECT_FALSE(tb::parse_sha256("abc", nullptr));
}

TEST(ToolboxHashLine, IsLlamaGgufHashsFormat) {
    using minfer::check::hash_kind;
    EXPECT_EQ(tb::hash_line(hash_kind::xxh64, "0123456789abcdef", "m.gguf:tok_embd"),
              "xxh64     0123456789abcdef  m.gguf:tok_embd");
    EXPECT_EQ(tb::hash_line(hash_kind::sha256, "ff", "m.gguf", "Ok"), "sha256    ff  m.gguf  -  Ok");
    EXPECT_EQ(tb::hash_line(hash_kind::uuid, "u", std::string_view("a\xff", 2)), std::string("uuid      u  a\xff"));
}

TEST(ToolboxPartOf, FindsTheSameFileUnderAnotherName) {
    using namespace minfer::test;
    namespace fs = std::filesystem;
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {3}, minfer::gguf::tensor_type::f32, 0).pad(32).zeros(32);
    write_file(p, g.span());
    auto m = minfer::gguf::model::open(p);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(tb::part_of(*m, p), 0u);
    EXPECT_EQ(tb::part_of(*m, dir / "." / "m.gguf"), 0u);  // another spelling
    ASSERT_EQ(::link(p.c_str(), (dir / "hard.gguf").c_str()), 0);
    EXPECT_EQ(tb::part_of(*m, dir / "hard.gguf"), 0u);     // a hard link
    fs::create_symlink(p, dir / "sym.gguf");
    EXPECT_EQ(tb::part_of(*m, dir / "sym.gguf"), 0u);      // a symbolic link
    EXPECT_FALSE(tb::part_of(*m, dir / "absent.gguf"));
    write_file(dir / "other.gguf", g.span());
    EXPECT_FALSE(tb::part_of(*m, dir / "other.gguf"));    // equal bytes, another file
}

// ------------------------------------------------------------------------------ verify

namespace {
// The file's SHA-256 as coreutils computes it: independent of minfer::check.
std::string sha256sum(const std::filesystem::path& p) {
    std::string cmd = "sha256sum '" + p.string() + "'";
    FILE* f = ::popen(cmd.c_str(), "r");
    if (f == nullptr) return {};
    char buf[65] = {};
    const std::size_t n = std::fread(buf, 1, 64, f);
    ::pclose(f);
    return std::string(buf, n);
}
}  // namespace

TEST(ToolboxVerify, TalliesFindingsWarningsAndTheFileHash) {
    using namespace minfer::test;
    namespace fs = std::filesystem;
    namespace gg = minfer::gguf;
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    gg::writer w;
    std::vector<float> bad(8, 1.0f);
    bad[2] = std::numeric_limits<float>::quiet_NaN();
    bad[5] = std::numeric_limits<float>::infinity();
    const std::int64_t ne[] = {8};
    w.add_tensor("bad", gg::tensor_type::f32, ne, std::as_bytes(std::span<const float>(bad)));
    w.add_tensor("zero", gg::tensor_type::f32, ne, std::vector<std::byte>(32));
    w.add_tensor("fine", gg::tensor_type::f32, ne, std::as_bytes(std::span<const float>(std::vector<float>(8, 0.5f))));
    ASSERT_TRUE(w.write(p));
    auto m = gg::model::open(p);
    ASSERT_TRUE(m) << m.error().message();
    const std::string hex = sha256sum(p);
    ASSERT_EQ(hex.size(), 64u);

    tb::verify_request rq;
    rq.threads = 1;
    rq.file_sha256.push_back(*tb::parse_sha256(hex, nullptr));
    auto r = tb::verify(*m, rq);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->verdicts.size(), 3u);
    EXPECT_EQ(r->findings, 2u);  // the NaN and the Inf
    EXPECT_EQ(r->tensors_with_findings, 1u);
    EXPECT_EQ(r->warnings, 1u);  // the all-zero tensor
    EXPECT_EQ(r->bytes, 3u * 32u);
    ASSERT_EQ(r->files.size(), 1u);
    EXPECT_TRUE(r->files[0].match) << r->files[0].ours.text() << " vs " << hex;
    EXPECT_TRUE(r->files_ok);
    EXPECT_FALSE(r->clean());

    std::string other = hex;
    other[0] = other[0] == '0' ? '1' : '0';
    rq.file_sha256[0] = *tb::parse_sha256(other, nullptr);
    r = tb::verify(*m, rq);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->files_ok);
    EXPECT_FALSE(r->files[0].match);

    rq.file_sha256.push_back(rq.file_sha256[0]);  // two hashes for one part
    r = tb::verify(*m, rq);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::buffer_size_mismatch);
    EXPECT_EQ(r.error().expected, 1u);
    EXPECT_EQ(r.error().found, 2u);
}

// ------------------------------------------------------------------------------ the edit's steps

TEST(ToolboxEditSteps, RefuseJournalNamesTheJournal) {
    using namespace minfer::test;
    temp_dir dir;
    const std::filesystem::path p = dir / "m.gguf";
    EXPECT_TRUE(tb::refuse_journal(p));
    const auto journal = minfer::gguf::undo_journal_path(p);
    write_file(journal, bytes(4));
    const auto r = tb::refuse_journal(p);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, minfer::gguf::write_codes::journal_present);
    EXPECT_EQ(r.error().file, journal.string());
}

TEST(ToolboxEditSteps, AddReserveAppendsAU8ArrayOfZeros) {
    minfer::gguf::metadata_edit_plan plan;
    tb::add_reserve(plan, 0);
    EXPECT_TRUE(plan.changes.empty());
    tb::add_reserve(plan, 64);
    ASSERT_EQ(plan.changes.size(), 1u);
    const auto& c = plan.changes[0];
    EXPECT_EQ(c.key, minfer::gguf::in_place_padding_key);
    EXPECT_EQ(c.type, minfer::gguf::value_type::array);
    ASSERT_EQ(c.value.size(), 12u + 64u);
    std::uint32_t tag = 99;
    std::uint64_t count = 0;
    std::memcpy(&tag, c.value.data(), 4);
    std::memcpy(&count, c.value.data() + 4, 8);
    EXPECT_EQ(tag, 0u);  // u8
    EXPECT_EQ(count, 64u);
    for (std::size_t i = 12; i < c.value.size(); ++i) EXPECT_EQ(c.value[i], std::byte{0});
}

TEST(ToolboxEditSteps, PlanInPlaceEditFitsNothingAndRefusesTooMuch) {
    using namespace minfer::test;
    temp_dir dir;
    const std::filesystem::path p = dir / "m.gguf";
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {3}, minfer::gguf::tensor_type::f32, 0).pad(32).zeros(32);
    write_file(p, g.span());
    auto m = minfer::gguf::model::open(p);
    ASSERT_TRUE(m) << m.error().message();
    minfer::gguf::metadata_edit_plan none;
    auto same = tb::plan_in_place_edit(*m, none);
    ASSERT_TRUE(same) << same.error().message();
    EXPECT_EQ(same->new_head, same->old_head);
    minfer::gguf::metadata_edit_plan big;
    big.changes.push_back(minfer::gguf::metadata_change::set_string("general.name", std::string(500, 'x')));
    auto refused = tb::plan_in_place_edit(*m, big);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, minfer::gguf::write_codes::no_room_in_place);
}

// ------------------------------------------------------------------------------ split's protocol

// A model of three f32 tensors of 8 values, and its plan of one tensor per part.
class ToolboxSplitWrite : public ::testing::Test {
protected:
    void SetUp() override {
        minfer::gguf::writer w;
        const std::int64_t ne[] = {8};
        const std::vector<std::byte> values(32, std::byte{1});
        for (const char* name : {"a", "b", "c"}) w.add_tensor(name, minfer::gguf::tensor_type::f32, ne, values);
        auto r = w.write(dir / "m.gguf");
        ASSERT_TRUE(r) << r.error().message();
        auto opened = minfer::gguf::model::open(dir / "m.gguf");
        ASSERT_TRUE(opened) << opened.error().message();
        m.emplace(std::move(*opened));
        minfer::gguf::split_options so;
        so.max_tensors = 1;
        auto made = minfer::gguf::split_plan::make(*m, so);
        ASSERT_TRUE(made) << made.error().message();
        ASSERT_EQ(made->part_count(), 3u);
        plan.emplace(std::move(*made));
    }
    minfer::test::temp_dir dir;
    std::optional<minfer::gguf::model> m;
    std::optional<minfer::gguf::split_plan> plan;
};

TEST_F(ToolboxSplitWrite, WritesEveryPartAndPartOneLast) {
    std::vector<std::string> targets;
    for (std::uint32_t i = 0; i < 3; ++i) targets.push_back(plan->part_name((dir / "s").string(), i));
    std::vector<std::uint64_t> seen;
    tb::split_write_options o;
    o.progress = [&](std::uint64_t done, std::uint64_t total) {
        EXPECT_EQ(total, plan->total_bytes());
        seen.push_back(done);
    };
    EXPECT_FALSE(tb::write_split(*m, *plan, targets, o));
    for (const auto& t : targets) EXPECT_TRUE(std::filesystem::exists(t)) << t;
    auto set = minfer::gguf::model::open(targets[0]);
    ASSERT_TRUE(set) << set.error().message();
    EXPECT_EQ(set->parts().size(), 3u);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), plan->total_bytes());  // the progress runs over all parts
}

TEST_F(ToolboxSplitWrite, AFailureLeavesNoPart) {
    // part 1 cannot be written (its directory does not exist): nothing is named, parts 2 and 3 included
    std::vector<std::string> targets{(dir / "missing" / "p1.gguf").string(), (dir / "p2.gguf").string(),
                                     (dir / "p3.gguf").string()};
    const auto failed = tb::write_split(*m, *plan, targets, {});
    ASSERT_TRUE(failed);
    ASSERT_TRUE(failed->part);
    EXPECT_EQ(*failed->part, 0u);
    EXPECT_EQ(failed->error.code, errc::io_error);
    EXPECT_TRUE(failed->removed.empty());  // nothing had been named
    EXPECT_TRUE(failed->not_removed.empty());
    EXPECT_FALSE(std::filesystem::exists(targets[1]));
    EXPECT_FALSE(std::filesystem::exists(targets[2]));
}

// No part is named while any is being written: a kill or a failure at any moment of the writing
// leaves no part of the new set, and every old part as it was.
TEST_F(ToolboxSplitWrite, NoPartIsNamedUntilAllAreWritten) {
    std::vector<std::string> targets;
    for (std::uint32_t i = 0; i < 3; ++i) targets.push_back(plan->part_name((dir / "s").string(), i));
    tb::split_write_options o;
    std::size_t calls = 0;
    o.progress = [&](std::uint64_t, std::uint64_t) {
        ++calls;
        for (const auto& t : targets) EXPECT_FALSE(std::filesystem::exists(t)) << t << " named mid-write";
    };
    EXPECT_FALSE(tb::write_split(*m, *plan, targets, o));
    EXPECT_GT(calls, 3u);
    for (const auto& t : targets) EXPECT_TRUE(std::filesystem::exists(t)) << t;
}

// Replacing a set: a failure mid-write (here the progress callback throws, as a Ctrl-C in a
// frontend's progress bar does) leaves every old part as it was, part 1 included.
TEST_F(ToolboxSplitWrite, AFailureWhileReplacingKeepsTheOldSet) {
    std::vector<std::string> targets;
    for (std::uint32_t i = 0; i < 3; ++i) targets.push_back(plan->part_name((dir / "old").string(), i));
    for (const auto& t : targets) std::ofstream(t) << "old " << t;
    tb::split_write_options o;
    o.overwrite = true;
    o.progress = [&](std::uint64_t done, std::uint64_t total) {
        if (done > total / 2) throw std::runtime_error("interrupted");
    };
    const auto failed = tb::write_split(*m, *plan, targets, o);
    ASSERT_TRUE(failed);
    EXPECT_EQ(failed->error.code, errc::io_error);
    for (const auto& t : targets) {
        std::ifstream in(t);
        std::string text;
        std::getline(in, text);
        EXPECT_EQ(text, "old " + t);
    }
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
    EXPECT_EQ(files, 1u + targets.size());  // the input and the old parts: no temporary left
}

// ------------------------------------------------------------------------------ prune's lists

TEST(ToolboxIndexList, ReadsItemsAndRangesAndRefusesTheRest) {
    auto l = tb::parse_index_list("5-7,0,2,6,30-31", 32, "layers");
    ASSERT_TRUE(l.has_value()) << l.error().message();
    EXPECT_EQ(*l, (std::vector<std::uint32_t>{0, 2, 5, 6, 7, 30, 31}));
    EXPECT_EQ(*tb::parse_index_list("3", 4, "layers"), (std::vector<std::uint32_t>{3}));
    for (const char* bad : {"", ",", "1,", "a", "-1", "1-", "3-1", "1 ,2", "0x3", "1-2-3"}) {
        auto r = tb::parse_index_list(bad, 8, "layers");
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_EQ(r.error().code, tb::codes::bad_selection) << bad;
        EXPECT_EQ(r.error().subject, "layers") << bad;
    }
    auto out = tb::parse_index_list("2,8", 8, "experts");
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().expected, 8u);
    EXPECT_EQ(out.error().found, 8u);
    EXPECT_NE(out.error().detail.find("expert 8 does not exist"), std::string::npos) << out.error().detail;
    auto all = tb::parse_index_list("0-7", 8, "experts");
    ASSERT_FALSE(all.has_value());
    EXPECT_NE(all.error().detail.find("all 8"), std::string::npos);
    EXPECT_EQ(minfer::gguf::to_string(all.error().code), "bad_selection");
}
