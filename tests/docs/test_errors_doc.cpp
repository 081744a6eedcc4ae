#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"
#ifdef MINFER_TEST_CHECK
#include "minfer/check/errors.hpp"
#endif
#ifdef MINFER_TEST_REMOTE
#include "minfer/remote/errors.hpp"
#endif
#ifdef MINFER_TEST_CONVERT
#include "minfer/convert/errors.hpp"
#endif

using minfer::gguf::errc;

TEST(ErrorsDoc, EveryCodeHasARowAndANameOfItsOwn) {
    std::ifstream in(MINFER_ERRORS_MD);
    ASSERT_TRUE(in) << "cannot read " << MINFER_ERRORS_MD;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    using namespace minfer::gguf;
    std::set<std::string> seen;
    std::size_t loader_codes = 0;
    for (unsigned d = 0; d < 256; ++d) {  // every domain: the loader's and each registered library's
        const auto domain = static_cast<std::uint8_t>(d);
        for (unsigned n = domain == domains::loader ? 1 : 0; n < 256; ++n) {
            const std::string name(to_string(make_code(domain, static_cast<std::uint8_t>(n))));
            if (name == "unknown") continue;  // a loader number that moved, or a number a library lacks
            if (domain == domains::loader) ++loader_codes;
            EXPECT_TRUE(seen.insert(name).second) << "two codes are named " << name;
            EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos) << "docs/ERRORS.md has no row for " << name;
        }
    }
    EXPECT_EQ(loader_codes, 57u) << "the loader's codes 1..last_code, less the 12 numbers that moved";
    EXPECT_GE(seen.size(), loader_codes + 14);  // gguf_write's and quant's codes at least
    EXPECT_EQ(to_string(static_cast<errc>(200)), "unknown");
}
