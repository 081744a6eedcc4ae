// The documents as text: no merge left half done. A conflict resolved by hand once left
// "<<<<<<< HEAD" / "=======" / ">>>>>>> branch" lines in docs/ARCHITECTURE.md, which nothing else reads
// as Markdown here; every docs/*.md and README.md is checked for such lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

TEST(DocsText, NoMergeConflictMarkers) {
    const std::filesystem::path root(MINFER_SOURCE_DIR);
    std::vector<std::filesystem::path> files{root / "README.md"};
    for (const auto& e : std::filesystem::directory_iterator(root / "docs"))
        if (e.path().extension() == ".md") files.push_back(e.path());
    ASSERT_GT(files.size(), 5u);
    for (const auto& f : files) {
        std::ifstream in(f);
        std::string line;
        int n = 0;
        while (std::getline(in, line)) {
            ++n;
            const bool marker = line.rfind("<<<<<<< ", 0) == 0 || line.rfind(">>>>>>> ", 0) == 0 || line == "=======";
            EXPECT_FALSE(marker) << f.filename().string() << ":" << n << ": " << line;
        }
    }
}

}  // namespace
