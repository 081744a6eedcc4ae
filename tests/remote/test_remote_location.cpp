// One answer to "is this location a URL?": the toolbox's names_remote_model (the commands' frontends
// and the toolbox's own refusals where minfer::remote is not built) against minfer::remote::is_remote.
#include <gtest/gtest.h>

#include <string_view>

#include "minfer/remote/url.hpp"
#include "minfer/toolbox/remote_settings.hpp"

TEST(RemoteLocation, TheToolboxAndRemoteAgree) {
    constexpr std::string_view cases[] = {
        "http://h/m.gguf", "https://h/m.gguf", "hf://o/r/m.gguf", "HTTP://H/M.GGUF", "Https://h/m.gguf", "HF://o/r",
        "http://", "hf://", "m.gguf", "./http://m.gguf", "/abs/https://x", "http:/h/m.gguf", "https:h", "ftp://h/m",
        "file:///m.gguf", "", "h", "hf:/o/r", " http://h/m.gguf", "http//h"};
    int remote = 0;
    for (std::string_view c : cases) {
        EXPECT_EQ(minfer::toolbox::names_remote_model(c), minfer::remote::is_remote(c)) << '"' << c << '"';
        remote += minfer::toolbox::names_remote_model(c);
    }
    EXPECT_EQ(remote, 8);  // the first eight
}
