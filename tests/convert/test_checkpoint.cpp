// convert::checkpoint: checkpoint directories written here (one file, shards with and without an
// index), and every refusal of the index and the shards, with its code, file, offset and subject.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "minfer/convert/checkpoint.hpp"
#include "minfer/convert/errors.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
using minfer::gguf::section;

constexpr auto bad_index = cv::codes::bad_checkpoint_index;

void write_text(const std::filesystem::path& p, std::string_view text) {
    write_file(p, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::uint64_t at(std::string_view text, std::string_view needle, std::size_t from = 0) {
    const std::size_t i = text.find(needle, from);
    EXPECT_NE(i, std::string_view::npos) << needle;
    return i;
}

std::vector<std::string> names_of(const cv::checkpoint& c) {
    std::vector<std::string> names;
    for (const cv::checkpoint_tensor& t : c.tensors()) names.emplace_back(t.name());
    return names;
}

std::vector<std::string> shard_names_of(const cv::checkpoint& c) {
    std::vector<std::string> names;
    for (const cv::safetensors_file& s : c.shards()) names.push_back(std::filesystem::path(s.path()).filename().string());
    return names;
}

// Two shards: model-00001 holds b and a, model-00002 holds c.
struct sharded {
    temp_dir dir;
    safetensors_builder first, second;
    sharded() {
        first.add("model.b", "F32", {2}, 4).add("model.a", "F16", {3}, 2);
        second.add("model.c", "BF16", {2, 2}, 2);
        write_file(dir / "model-00001-of-00002.safetensors", first.file());
        write_file(dir / "model-00002-of-00002.safetensors", second.file());
    }
};

constexpr std::string_view good_index = R"({
  "metadata": {"total_size": 22, "note": [1, {"x": null}]},
  "weight_map": {
    "model.c": "model-00002-of-00002.safetensors",
    "model.a": "model-00001-of-00002.safetensors",
    "model.b": "model-00001-of-00002.safetensors"
  }
})";

TEST(Checkpoint, OneFile) {
    temp_dir dir;
    safetensors_builder b;
    b.add("z", "F32", {1}, 4).add("a", "I64", {2}, 8);
    write_file(dir / "model.safetensors", b.file());
    write_text(dir / "config.json", "{}");
    write_text(dir / "other.safetensors", "not looked at");  // not model*: not a part
    auto c = cv::checkpoint::open(dir.path());
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_FALSE(c->indexed());
    EXPECT_EQ(c->directory(), dir.path());
    EXPECT_EQ(shard_names_of(*c), (std::vector<std::string>{"model.safetensors"}));
    EXPECT_EQ(names_of(*c), (std::vector<std::string>{"a", "z"}));  // by name within a shard
    const cv::checkpoint_tensor* z = c->find("z");
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(z->shard, 0u);
    EXPECT_EQ(c->tensor_data(*z).size(), 4u);
    EXPECT_EQ(std::memcmp(c->tensor_data(*z).data(), b.data().data(), 4), 0);
    EXPECT_EQ(c->find("y"), nullptr);
    EXPECT_TRUE(c->check_convertible());
}

TEST(Checkpoint, ShardsFromTheIndexInNameOrder) {
    sharded s;
    write_text(s.dir / "model.safetensors.index.json", good_index);
    write_text(s.dir / "model-stray.safetensors", "not a part once there is an index");
    auto c = cv::checkpoint::open(s.dir.path());
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_TRUE(c->indexed());
    EXPECT_EQ(shard_names_of(*c), (std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
    EXPECT_EQ(names_of(*c), (std::vector<std::string>{"model.a", "model.b", "model.c"}));
    const cv::checkpoint_tensor* t = c->find("model.c");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->shard, 1u);
    EXPECT_EQ(std::memcmp(c->tensor_data(*t).data(), s.second.data().data(), 8), 0);
}

TEST(Checkpoint, ShardsWithoutAnIndexAreFoundAsTheReferenceFindsThem) {
    sharded s;
    auto c = cv::checkpoint::open(s.dir.path());
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_FALSE(c->indexed());
    EXPECT_EQ(names_of(*c), (std::vector<std::string>{"model.a", "model.b", "model.c"}));
    EXPECT_EQ(c->find("model.a")->shard, 0u);
}

TEST(Checkpoint, AShardMayBeASymbolicLinkAsInTheHubCache) {
    sharded s;
    std::filesystem::create_directory(s.dir / "blobs");
    std::filesystem::rename(s.dir / "model-00002-of-00002.safetensors", s.dir / "blobs" / "0123abcd");
    std::filesystem::create_symlink("blobs/0123abcd", s.dir / "model-00002-of-00002.safetensors");
    write_text(s.dir / "model.safetensors.index.json", good_index);
    auto c = cv::checkpoint::open(s.dir.path());
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->tensors().size(), 3u);
}

TEST(Checkpoint, AnIndexNamingAMissingShard) {
    sharded s;
    std::filesystem::remove(s.dir / "model-00002-of-00002.safetensors");
    const auto index = s.dir / "model.safetensors.index.json";
    write_text(index, good_index);
    const auto e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {bad_index, section::split, at(good_index, "\"model-00002"), {}, {},
                             "model-00002-of-00002.safetensors", {}, "the shard is missing from the directory"}));
    EXPECT_EQ(e.file, index.string());
    EXPECT_EQ(e.sys_errno, ENOENT);
}

TEST(Checkpoint, AShardThatIsNotARegularFile) {
    sharded s;
    std::filesystem::remove(s.dir / "model-00002-of-00002.safetensors");
    std::filesystem::create_directory(s.dir / "model-00002-of-00002.safetensors");
    write_text(s.dir / "model.safetensors.index.json", good_index);
    EXPECT_TRUE(error_is(error_of(cv::checkpoint::open(s.dir.path())),
                         {bad_index, section::split, at(good_index, "\"model-00002"), {}, {},
                          "model-00002-of-00002.safetensors", {}, "the shard is not a regular file"}));
}

TEST(Checkpoint, ShardNamesThatLeaveTheDirectoryAreRefused) {
    for (std::string name : {"../model-00001-of-00002.safetensors", "/etc/passwd", "sub/model.safetensors", "..", ".",
                             "", "a\\\\b.safetensors", "a\\u0000b"}) {
        sharded s;
        const std::string index = R"({"weight_map": {"model.a": ")" + name + R"("}})";
        write_text(s.dir / "model.safetensors.index.json", index);
        const auto e = error_of(cv::checkpoint::open(s.dir.path()));
        EXPECT_TRUE(error_is(e, {bad_index, section::metadata, at(index, ": \"", 20) + 2, {}, {}, "model.a"})) << name;
        EXPECT_NE(e.detail.find("is not a file name in the checkpoint's directory"), std::string::npos) << e.detail;
    }
}

TEST(Checkpoint, ATensorAbsentFromTheShardTheIndexNames) {
    sharded s;
    const std::string index = R"({"weight_map": {"model.a": "model-00001-of-00002.safetensors", "model.b": "model-00001-of-00002.safetensors",
      "model.c": "model-00001-of-00002.safetensors"}})";
    write_text(s.dir / "model.safetensors.index.json", index);
    const auto e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {bad_index, section::split, at(index, "\"model-00001", at(index, "\"model.c\"")), {}, {},
                             "model.c", {},
                             "the index puts the tensor in 'model-00001-of-00002.safetensors', which does not hold it"}));
}

TEST(Checkpoint, AShardHoldingATensorTheIndexDoesNotList) {
    sharded s;
    const std::string index = R"({"weight_map": {"model.a": "model-00001-of-00002.safetensors", "model.c": "model-00002-of-00002.safetensors"}})";
    write_text(s.dir / "model.safetensors.index.json", index);
    const auto e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {bad_index, section::split, 8 + at(s.first.header(), "\"model.b\""), {}, {}, "model.b", {},
                             "the shard holds a tensor the index does not list"}));
    EXPECT_EQ(e.file, (s.dir / "model-00001-of-00002.safetensors").string());
}

TEST(Checkpoint, ATensorInTwoShards) {
    sharded s;
    safetensors_builder again;
    again.add("model.c", "BF16", {2, 2}, 2).add("model.a", "F16", {3}, 2);
    write_file(s.dir / "model-00002-of-00002.safetensors", again.file());
    // with an index: the second copy is where the index does not put it
    write_text(s.dir / "model.safetensors.index.json", good_index);
    auto e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {bad_index, section::split, 8 + at(again.header(), "\"model.a\""), {}, {}, "model.a"}));
    EXPECT_EQ(e.detail, "the tensor is in two shards: this one, and 'model-00001-of-00002.safetensors' where the index puts it");
    // without: refused instead of the last one winning
    std::filesystem::remove(s.dir / "model.safetensors.index.json");
    e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {bad_index, section::split, 8 + at(again.header(), "\"model.a\""), {}, {}, "model.a", {},
                             "the tensor is in two shards: this one and 'model-00001-of-00002.safetensors'"}));
    EXPECT_EQ(e.file, (s.dir / "model-00002-of-00002.safetensors").string());
}

TEST(Checkpoint, AnIndexThatIsNotAWeightMap) {
    struct bad_case {
        std::string text;
        std::uint64_t offset;
        std::string subject;
    };
    const std::string not_json = R"({"weight_map": {"model.a": "x",}})";
    const std::vector<bad_case> cases{
        {not_json, at(not_json, ",}") + 1, ""},
        {"[]", 0, ""},
        {R"({"metadata": {}})", 0, "weight_map"},
        {R"({"weight_map": null})", 15, "weight_map"},
        {R"({"weight_map": ["model-00001-of-00002.safetensors"]})", 15, "weight_map"},
        {R"({"weight_map": {"model.a": 1}})", 27, "model.a"},
        {R"({"weight_map": {"model.a": {"file": "x"}}})", 27, "model.a"},
        {R"({"weight_map": {}})", 15, "weight_map"},
        {R"({"weight_map": {"model.a": "a.safetensors", "model.a": "b.safetensors"}})", 44, "model.a"},
        {R"({"weight_map": {}, "weight_map": {}})", 19, ""},
        {"\xEF\xBB\xBF{}", 0, ""},
    };
    for (const bad_case& c : cases) {
        sharded s;
        write_text(s.dir / "model.safetensors.index.json", c.text);
        const auto e = error_of(cv::checkpoint::open(s.dir.path()));
        EXPECT_TRUE(error_is(e, {bad_index, section::metadata, c.offset, {}, {}, c.subject})) << c.text;
        EXPECT_EQ(e.file, (s.dir / "model.safetensors.index.json").string());
    }
}

TEST(Checkpoint, NoWeights) {
    temp_dir dir;
    write_text(dir / "config.json", "{}");
    auto e = error_of(cv::checkpoint::open(dir.path()));
    EXPECT_TRUE(error_is(e, {cv::codes::no_weights, section::file, 0}));
    EXPECT_EQ(e.detail, "no model*.safetensors and no model.safetensors.index.json in the directory");
    EXPECT_EQ(minfer::gguf::to_string(e.code), "no_weights");
    write_text(dir / "pytorch_model.bin", "PK");
    e = error_of(cv::checkpoint::open(dir.path()));
    EXPECT_TRUE(error_is(e, {cv::codes::no_weights, section::file, 0}));
    EXPECT_NE(e.detail.find("pytorch_model.bin"), std::string::npos) << e.detail;
    EXPECT_NE(e.detail.find("never read"), std::string::npos) << e.detail;
}

TEST(Checkpoint, ABadShardIsReportedAsItself) {
    sharded s;
    write_file(s.dir / "model-00002-of-00002.safetensors", safetensors_file_bytes("{}", filler(3)));
    const auto e = error_of(cv::checkpoint::open(s.dir.path()));
    EXPECT_TRUE(error_is(e, {cv::codes::bad_safetensors, section::data, 10, 0, 3}));
    EXPECT_EQ(e.file, (s.dir / "model-00002-of-00002.safetensors").string());
}

TEST(Checkpoint, UnsupportedDtypesAreFoundAcrossShards) {
    sharded s;
    safetensors_builder fp8;
    fp8.add("model.c", "F8_E5M2", {4}, 1);
    write_file(s.dir / "model-00002-of-00002.safetensors", fp8.file());
    auto c = cv::checkpoint::open(s.dir.path());
    ASSERT_TRUE(c) << c.error().message();
    const auto e = error_of(c->check_convertible());
    EXPECT_TRUE(error_is(e, {cv::codes::unsupported_dtype, section::tensor_info, 8 + at(fp8.header(), "\"model.c\""), {},
                             {}, "model.c"}));
    EXPECT_EQ(e.file, (s.dir / "model-00002-of-00002.safetensors").string());
}

TEST(Checkpoint, NotADirectory) {
    temp_dir dir;
    auto e = error_of(cv::checkpoint::open(dir / "absent"));
    EXPECT_EQ(e.code, minfer::gguf::errc::io_error);
    EXPECT_EQ(e.sys_errno, ENOENT);
    write_text(dir / "model.safetensors", "x");
    e = error_of(cv::checkpoint::open(dir / "model.safetensors"));
    EXPECT_EQ(e.code, minfer::gguf::errc::io_error);
    EXPECT_EQ(e.sys_errno, ENOTDIR);
}

}  // namespace
