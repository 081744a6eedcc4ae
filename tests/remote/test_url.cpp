// URLs (recognising, hf:// mapping, file names, siblings, Hub hosts) and the Content-Range parser.
#include <gtest/gtest.h>

#include "minfer/remote/content_range.hpp"
#include "minfer/remote/url.hpp"

namespace {

namespace remote = minfer::remote;
using minfer::gguf::errc;

TEST(Url, IsRemote) {
    EXPECT_TRUE(remote::is_remote("http://h/m.gguf"));
    EXPECT_TRUE(remote::is_remote("HTTPS://h/m.gguf"));
    EXPECT_TRUE(remote::is_remote("hf://o/r/m.gguf"));
    EXPECT_FALSE(remote::is_remote("m.gguf"));
    EXPECT_FALSE(remote::is_remote("./http://m.gguf"));
    EXPECT_FALSE(remote::is_remote("ftp://h/m.gguf"));
    EXPECT_FALSE(remote::is_remote("http:/h/m.gguf"));
}

TEST(Url, HfNamesMapToTheResolveUrl) {
    auto u = remote::resolve("hf://Qwen/Qwen2-0.5B-Instruct-GGUF/qwen2-0_5b-instruct-q4_0.gguf");
    ASSERT_TRUE(u) << u.error().message();
    EXPECT_EQ(*u, "https://huggingface.co/Qwen/Qwen2-0.5B-Instruct-GGUF/resolve/main/qwen2-0_5b-instruct-q4_0.gguf");
    u = remote::resolve("hf://o/r/sub/dir/m-00001-of-00002.gguf@v1.0");
    ASSERT_TRUE(u);
    EXPECT_EQ(*u, "https://huggingface.co/o/r/resolve/v1.0/sub/dir/m-00001-of-00002.gguf");
    u = remote::resolve("hf://o/r/m.gguf@refs/pr/1");
    ASSERT_TRUE(u);
    EXPECT_EQ(*u, "https://huggingface.co/o/r/resolve/refs%2Fpr%2F1/m.gguf");
}

TEST(Url, BadHfNamesAreRefused) {
    for (const char* bad : {"hf://", "hf://o", "hf://o/r", "hf://o/r/", "hf://o//m.gguf", "hf://-o/r/m.gguf",
                            "hf://o/r./m.gguf", "hf://o/r/../m.gguf", "hf://o/r/a//m.gguf", "hf://o/r/m.gguf@",
                            "hf://o/r/m.gguf@a..b", "hf://o/r/m gguf", "hf://o/r/m.gguf?x=1", "hf://o/r/m%41.gguf",
                            "hf://o/r/m.gguf@/main", "hf://o p/r/m.gguf", "hf://o/r/m.gguf#frag"}) {
        auto u = remote::resolve(bad);
        EXPECT_FALSE(u) << bad;
        if (!u) {
            EXPECT_EQ(u.error().code, errc::bad_value_text) << bad;
        }
    }
}

TEST(Url, HttpUrlsAreChecked) {
    EXPECT_TRUE(remote::resolve("http://127.0.0.1:8080/a/m.gguf"));
    EXPECT_TRUE(remote::resolve("https://example.com/m.gguf?download=1"));
    auto lowered = remote::resolve("HTTP://h/m.gguf");
    ASSERT_TRUE(lowered);
    EXPECT_EQ(*lowered, "http://h/m.gguf");
    for (const char* bad : {"http://", "http:///m.gguf", "http://h/", "http://h", "http://h:0/m.gguf",
                            "http://h:65536/m.gguf", "http://h:x/m.gguf", "http://u:p@h/m.gguf", "http://h/a b.gguf",
                            "http://h/\x01.gguf", "file:///m.gguf"}) {
        auto u = remote::resolve(bad);
        EXPECT_FALSE(u) << bad;
    }
}

TEST(Url, CheckpointDirectories) {
    auto d = remote::resolve_directory("hf://Qwen/Qwen3-0.6B");
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->base, "https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/");
    EXPECT_EQ(d->name, "Qwen3-0.6B");
    EXPECT_EQ(remote::file_in(*d, "model-00001-of-00002.safetensors"),
              "https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/model-00001-of-00002.safetensors");
    d = remote::resolve_directory("hf://o/r@refs/pr/1");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->base, "https://huggingface.co/o/r/resolve/refs%2Fpr%2F1/");
    EXPECT_EQ(d->name, "r");
    d = remote::resolve_directory("HTTP://127.0.0.1:8080/models/Tiny-Qwen3");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->base, "http://127.0.0.1:8080/models/Tiny-Qwen3/");
    EXPECT_EQ(d->name, "Tiny-Qwen3");
    d = remote::resolve_directory("https://huggingface.co/meta-llama/Llama-3.2-1B/resolve/main/");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "Llama-3.2-1B");
    EXPECT_EQ(remote::file_in(*d, "a b.json"), "https://huggingface.co/meta-llama/Llama-3.2-1B/resolve/main/a%20b.json");
    d = remote::resolve_directory("http://h/x/My%20Model/");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "My Model");
    for (const char* bad : {"hf://o", "hf://o/r/file.json", "hf://o/r@", "hf://o/r@a..b", "http://h", "http://h/",
                            "http://h/m?x=1", "http://h/m#f", "http://h/%2E%2E/", "ftp://h/m/", "http://u:p@h/m/"}) {
        auto r = remote::resolve_directory(bad);
        EXPECT_FALSE(r) << bad;
        if (!r) {
            EXPECT_EQ(r.error().code, errc::bad_value_text) << bad;
        }
    }
}

TEST(Url, FileNameAndSibling) {
    EXPECT_EQ(remote::file_name("http://h/a/m-00001-of-00003.gguf"), "m-00001-of-00003.gguf");
    EXPECT_EQ(remote::file_name("http://h/a/m-00001-of-00003.gguf?sig=abc/def#x"), "m-00001-of-00003.gguf");
    EXPECT_EQ(remote::file_name("http://h/a/my%20model.gguf"), "my model.gguf");
    EXPECT_EQ(remote::file_name("http://h"), "");
    EXPECT_EQ(remote::sibling("http://h/a/m-00001-of-00003.gguf", "m-00002-of-00003.gguf"),
              "http://h/a/m-00002-of-00003.gguf");
    EXPECT_EQ(remote::sibling("http://h/a/m-00001-of-00003.gguf?download=true#top", "m-00002-of-00003.gguf"),
              "http://h/a/m-00002-of-00003.gguf?download=true");
    EXPECT_EQ(remote::sibling("http://h/a/x.gguf", "my model.gguf"), "http://h/a/my%20model.gguf");
}

TEST(Url, OnlyTheHubIsTheHub) {
    EXPECT_TRUE(remote::is_hub("https://huggingface.co/o/r/resolve/main/m.gguf"));
    EXPECT_TRUE(remote::is_hub("https://HF.co/o/r/resolve/main/m.gguf"));
    EXPECT_TRUE(remote::is_hub("https://huggingface.co:443/m.gguf"));
    EXPECT_FALSE(remote::is_hub("https://huggingface.co.evil.example/m.gguf"));
    EXPECT_FALSE(remote::is_hub("https://evil.example/huggingface.co/m.gguf"));
    EXPECT_FALSE(remote::is_hub("https://evil.example?huggingface.co"));
}

TEST(ContentRange, Parses) {
    auto r = remote::parse_content_range("bytes 0-99/1000");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->unsatisfied);
    EXPECT_EQ(r->first, 0u);
    EXPECT_EQ(r->last, 99u);
    EXPECT_EQ(r->total, 1000u);
    r = remote::parse_content_range("  Bytes 5-5/6 ");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->first, 5u);
    r = remote::parse_content_range("bytes */0");
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->unsatisfied);
    EXPECT_EQ(r->total, 0u);
    r = remote::parse_content_range("bytes 0-18446744073709551614/18446744073709551615");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->total, 18446744073709551615ull);
}

TEST(ContentRange, RefusesEverythingElse) {
    for (const char* bad : {"", "bytes", "bytes ", "bytes 0-99/*", "bytes 0-99", "bytes 99-0/1000", "bytes 0-1000/1000",
                            "bytes -1-5/10", "bytes 0-5/10x", "bytes 0-5/", "bytes  0-5/10", "bytes=0-5/10",
                            "items 0-5/10", "bytes 0 -5/10", "bytes +0-5/10", "bytes 0-18446744073709551616/2",
                            "bytes */", "bytes */*", "bytes 0-5/10, 6-7/10"}) {
        EXPECT_FALSE(remote::parse_content_range(bad)) << bad;
    }
}

}  // namespace
