#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "minfer/gguf/error.hpp"

using minfer::gguf::errc;

TEST(ErrorsDoc, EveryCodeHasARowAndANameOfItsOwn) {
    std::ifstream in(MINFER_ERRORS_MD);
    ASSERT_TRUE(in) << "cannot read " << MINFER_ERRORS_MD;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    std::set<std::string> seen;
    for (int i = 1; minfer::gguf::to_string(static_cast<errc>(i)) != "unknown"; ++i) {
        const std::string name(minfer::gguf::to_string(static_cast<errc>(i)));
        EXPECT_TRUE(seen.insert(name).second) << "two codes are named " << name;
        EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos) << "docs/ERRORS.md has no row for " << name;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(errc::split_bad_name)) << "a code between 1 and the last has no name";
    EXPECT_EQ(minfer::gguf::to_string(static_cast<errc>(200)), "unknown");
}
