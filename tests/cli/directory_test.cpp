// `minfer info <directory>`: the files that exist, each with the library's verdict.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace minfer_cli_test {

TEST(CliErrors, DirectoryListsCandidates) {
    const auto& f = fx();
    const auto r = run({"info", f.dir.string()});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 3; ++i) total += fs::file_size(f.dir / gguf::split_file_name("x", i, 3));
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;  // heading + 3 candidates, sorted
    EXPECT_EQ(squeeze(lines[1]), "a-broken.gguf " + std::to_string(fs::file_size(f.bad_magic)) +
                                     " bytes (0.0 MiB) error: bad_magic");
    EXPECT_EQ(squeeze(lines[2]), "b-model.gguf " + std::to_string(fs::file_size(f.model)) + " bytes (0.0 MiB) ok");
    EXPECT_EQ(squeeze(lines[3]),
              "x-00001-of-00003.gguf " + std::to_string(total) + " bytes (" + mb_text(total) + ") ok, 3 parts");
    EXPECT_EQ(r.out.find("x-00002"), std::string::npos);
    EXPECT_EQ(r.out.find("notes.txt"), std::string::npos);
    EXPECT_EQ(r.out.find("sub.gguf"), std::string::npos);

    const auto js = run({"info", "--json", f.dir.string()});
    EXPECT_EQ(js.rc, 2);
    const json j = json::parse(js.out);
    ASSERT_EQ(j["candidates"].size(), 3u);
    EXPECT_EQ(j["candidates"][0].value("valid", true), false);
    EXPECT_EQ(j["candidates"][0].value("error", json()), "bad_magic");
    EXPECT_EQ(j["candidates"][1].value("valid", false), true);
    EXPECT_TRUE(j["candidates"][1].contains("error") && j["candidates"][1]["error"].is_null());
    EXPECT_EQ(j["candidates"][2]["name"], "x-00001-of-00003.gguf");
    EXPECT_EQ(j["candidates"][2]["n_parts"], 3);
    EXPECT_EQ(j["candidates"][2]["bytes"], total);
}

// A set with a missing part is not listed as a model: the listing carries model::open's verdict.
TEST(CliErrors, DirectoryShowsIncompleteSplitSet) {
    const auto r = run({"info", fx().split_missing1.parent_path().string()});
    EXPECT_EQ(r.rc, 2);
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 2u) << r.out;
    EXPECT_NE(lines[1].find("y-00001-of-00003.gguf"), std::string::npos) << r.out;
    EXPECT_NE(lines[1].find("error: split_part_missing, 2 of 3 parts present"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(" ok"), std::string::npos) << r.out;
}

// Only files that exist are named: a set whose part 1 is gone shows its later parts, each refused.
TEST(CliErrors, DirectoryNamesOnlyExistingFiles) {
    const fs::path d = fx().root / "no_first";
    fs::create_directories(d);
    fixtures::write_split(d, "z");
    fs::remove(d / "z-00001-of-00003.gguf");
    const auto r = run({"info", d.string()});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out.find("z-00001"), std::string::npos) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "z-00002-of-00003.gguf " + std::to_string(fs::file_size(d / "z-00002-of-00003.gguf")) +
                                             " bytes (0.0 MiB) error: split_not_first"))
        << r.out;
    EXPECT_NE(r.out.find("z-00003-of-00003.gguf"), std::string::npos);
}

}  // namespace minfer_cli_test
