// convert::safetensors_file: valid files written here byte by byte, and for every check the smallest
// input that trips it, with its code, section, offset, subject and expected/found.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/safetensors.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
using minfer::gguf::section;

constexpr auto bad = cv::codes::bad_safetensors;

minfer::gguf::result<cv::safetensors_file> read_bytes(const bytes& b) {
    auto buffer = std::make_unique<std::byte[]>(b.size());
    if (!b.empty()) std::memcpy(buffer.get(), b.data(), b.size());
    return cv::safetensors_file::read(minfer::gguf::mapped_file::adopt(std::move(buffer), b.size()), "t.safetensors");
}

// The error of a header text followed by `data` bytes.
minfer::gguf::error header_error(std::string_view header, std::size_t data = 0) {
    return error_of(read_bytes(safetensors_file_bytes(header, filler(data))));
}

// The absolute offset of the first occurrence of `needle` in a header (after the 8 length bytes).
std::uint64_t at(std::string_view header, std::string_view needle, std::size_t from = 0) {
    const std::size_t i = header.find(needle, from);
    EXPECT_NE(i, std::string_view::npos) << needle;
    return 8 + i;
}

// ---- valid files ----

TEST(Safetensors, ReadsTheTableInHeaderOrderAndIndexesItByOffsetAndName) {
    safetensors_builder b;
    b.metadata("format", "pt").add("model.norm.weight", "F32", {4}, 4).add("lm_head.weight", "BF16", {3, 2}, 2)
        .add("flag", "BOOL", {}, 1);
    const bytes file = b.file();
    auto f = read_bytes(file);
    ASSERT_TRUE(f) << f.error().message();
    const std::uint64_t data_offset = 8 + b.header().size();
    EXPECT_EQ(f->header_size(), b.header().size());
    EXPECT_EQ(f->data_offset(), data_offset);
    EXPECT_EQ(f->file_size(), file.size());
    ASSERT_EQ(f->tensors().size(), 3u);
    const cv::tensor_entry& norm = f->tensors()[0];
    EXPECT_EQ(norm.name, "model.norm.weight");
    EXPECT_EQ(norm.dtype, cv::dtype::f32);
    EXPECT_EQ(norm.shape, (std::vector<std::int64_t>{4}));
    EXPECT_EQ(norm.n_elements, 4u);
    EXPECT_EQ(norm.data_begin, 0u);
    EXPECT_EQ(norm.data_end, 16u);
    EXPECT_EQ(norm.file_begin, data_offset);
    EXPECT_EQ(norm.file_end, data_offset + 16);
    EXPECT_EQ(norm.header_offset, at(b.header(), "\"model.norm.weight\""));
    const cv::tensor_entry& head = f->tensors()[1];
    EXPECT_EQ(head.dtype, cv::dtype::bf16);
    EXPECT_EQ(head.shape, (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(head.n_bytes(), 12u);
    const cv::tensor_entry& flag = f->tensors()[2];
    EXPECT_TRUE(flag.shape.empty());  // a scalar: one element
    EXPECT_EQ(flag.n_elements, 1u);
    EXPECT_EQ(flag.n_bytes(), 1u);

    EXPECT_EQ(std::vector<std::uint32_t>(f->by_offset().begin(), f->by_offset().end()), (std::vector<std::uint32_t>{0, 1, 2}));
    EXPECT_EQ(std::vector<std::uint32_t>(f->by_name().begin(), f->by_name().end()), (std::vector<std::uint32_t>{2, 1, 0}));
    ASSERT_NE(f->find("lm_head.weight"), nullptr);
    EXPECT_EQ(f->find("lm_head.weight"), &head);
    EXPECT_EQ(f->find("lm_head"), nullptr);
    EXPECT_EQ(f->metadata().size(), 1u);
    EXPECT_EQ(f->metadata().at("format"), "pt");

    // tensor_data is a view of the file's bytes
    const std::span<const std::byte> d = f->tensor_data(head);
    ASSERT_EQ(d.size(), 12u);
    EXPECT_EQ(std::memcmp(d.data(), file.data() + head.file_begin, 12), 0);
    EXPECT_EQ(std::memcmp(d.data(), b.data().data() + 16, 12), 0);
    cv::tensor_entry foreign = head;
    EXPECT_TRUE(f->tensor_data(foreign).empty());
    EXPECT_TRUE(f->check_convertible());
}

TEST(Safetensors, TheHeaderOrderNeedNotBeTheDataOrder) {
    const std::string header =
        R"({"b":{"dtype":"F16","shape":[2],"data_offsets":[4,8]},"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
    auto f = read_bytes(safetensors_file_bytes(header, filler(8)));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->tensors()[0].name, "b");
    EXPECT_EQ(std::vector<std::uint32_t>(f->by_offset().begin(), f->by_offset().end()), (std::vector<std::uint32_t>{1, 0}));
    EXPECT_EQ(std::vector<std::uint32_t>(f->by_name().begin(), f->by_name().end()), (std::vector<std::uint32_t>{1, 0}));
}

TEST(Safetensors, ZeroSizeTensorsMayShareAnOffsetAsTheReferenceAllows) {
    const std::string header =
        R"({"e1":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("e2":{"dtype":"F32","shape":[3,0],"data_offsets":[4,4]},"e3":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
    auto f = read_bytes(safetensors_file_bytes(header, filler(4)));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->tensors().size(), 4u);
    EXPECT_TRUE(f->tensor_data(f->tensors()[0]).empty());
}

TEST(Safetensors, AnEmptyTableWithNoDataAndTrailingSpacesIsValid) {
    auto f = read_bytes(safetensors_file_bytes("{}      "));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_TRUE(f->tensors().empty());
    auto g = read_bytes(safetensors_file_bytes(R"({"__metadata__":{}})"));
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_TRUE(g->metadata().empty());
}

TEST(Safetensors, EveryDtypeOfTheFormatIsRecognizedAndOnlyTenAreConvertible) {
    for (std::size_t i = 0; i < cv::dtype_count; ++i) {
        const auto t = static_cast<cv::dtype>(i);
        EXPECT_EQ(cv::dtype_from_name(cv::to_string(t)), t);
        EXPECT_EQ(cv::is_convertible(t), i < 10) << cv::to_string(t);
    }
    EXPECT_FALSE(cv::dtype_from_name("f32"));  // case matters
    EXPECT_EQ(cv::bit_size(cv::dtype::f4), 4u);
    EXPECT_EQ(cv::bit_size(cv::dtype::f6_e3m2), 6u);
}

TEST(Safetensors, AnFp8TensorIsValidButRefusedByNameWithTheSupportedList) {
    safetensors_builder b;
    b.add("a", "F32", {2}, 4).add("model.layers.0.mlp.down_proj.weight", "F8_E4M3", {4, 2}, 1);
    auto f = read_bytes(b.file());
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->tensors()[1].dtype, cv::dtype::f8_e4m3);
    EXPECT_EQ(f->tensors()[1].n_bytes(), 8u);
    const auto e = error_of(f->check_convertible());
    EXPECT_TRUE(error_is(e, {cv::codes::unsupported_dtype, section::tensor_info,
                             at(b.header(), "\"model.layers.0.mlp.down_proj.weight\""), {}, {},
                             "model.layers.0.mlp.down_proj.weight"}));
    EXPECT_EQ(e.detail, "dtype F8_E4M3 is not converted (supported: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
    EXPECT_EQ(minfer::gguf::to_string(e.code), "unsupported_dtype");
    EXPECT_NE(e.message().find("t.safetensors: tensor_info at byte"), std::string::npos) << e.message();
    EXPECT_TRUE(f->check_convertible(f->tensors()[0]));
}

TEST(Safetensors, SubByteDtypesMustMakeWholeBytes) {
    // F4 [4] is 16 bits: 2 bytes; F4 [3] is 12 bits
    auto ok = read_bytes(safetensors_file_bytes(R"({"w":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", filler(2)));
    ASSERT_TRUE(ok) << ok.error().message();
    const std::string h = R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})";
    EXPECT_TRUE(error_is(header_error(h, 2), {bad, section::tensor_info, at(h, "[3]"), {}, {}, "w"}));
}

// ---- the length prefix ----

TEST(Safetensors, AFileShorterThanTheLengthPrefix) {
    EXPECT_TRUE(error_is(error_of(read_bytes(filler(5))), {bad, section::header, 0, 8, 5, ""}));
    EXPECT_TRUE(error_is(error_of(read_bytes({})), {bad, section::header, 0, 8, 0}));
}

TEST(Safetensors, AHeaderLengthPastTheFile) {
    const auto e = error_of(read_bytes(safetensors_file_bytes("{}", filler(18), 100)));
    EXPECT_TRUE(error_is(e, {bad, section::header, 0, 20, 100}));
    EXPECT_EQ(e.detail, "header length 100 is past the end of the file (20 bytes follow it)");
}

TEST(Safetensors, AHeaderLengthAboveTheReferenceLimitIsRefusedBeforeTheFileSize) {
    EXPECT_TRUE(error_is(error_of(read_bytes(safetensors_file_bytes("{}", {}, 100'000'001))),
                         {bad, section::header, 0, 100'000'000, 100'000'001}));
    EXPECT_TRUE(error_is(error_of(read_bytes(safetensors_file_bytes("{}", {}, ~std::uint64_t{0} - 1))),
                         {bad, section::header, 0, 100'000'000, ~std::uint64_t{0} - 1}));
}

TEST(Safetensors, AHeaderLengthOfZero) {
    EXPECT_TRUE(error_is(error_of(read_bytes(safetensors_file_bytes("", filler(4)))), {bad, section::header, 0, 2, 0}));
}

// ---- the JSON ----

TEST(Safetensors, AHeaderThatIsNotJson) {
    const std::string h = R"({"__metadata__":{},})";
    const auto e = header_error(h);
    EXPECT_TRUE(error_is(e, {bad, section::header, at(h, ",}") + 1, {}, {}, ""}));  // the '}' where a key must be
    EXPECT_NE(e.detail.find("not valid JSON"), std::string::npos) << e.detail;
    EXPECT_TRUE(error_is(header_error(R"({"a":tru})"), {bad, section::header}));
    EXPECT_TRUE(error_is(header_error("{} x"), {bad, section::header, 8 + 3}));
    // the writer pads with spaces; a NUL is not whitespace (serde_json refuses it too; nlohmann takes it
    // for the end of the text, which would leave what follows unread)
    EXPECT_TRUE(error_is(header_error(std::string("{}\0\0", 4)), {bad, section::header, 8 + 2}));
    EXPECT_TRUE(error_is(header_error(std::string("{} \0{\"w\":1}", 11)), {bad, section::header, 8 + 3}));
    EXPECT_TRUE(error_is(header_error(std::string("{\"a\0\":{}}", 9)), {bad, section::header, 8 + 3}));
    // invalid UTF-8 inside a name: the offending byte
    EXPECT_TRUE(error_is(header_error("{\"a\xff\":{}}"), {bad, section::header, 8 + 3}));
}

TEST(Safetensors, MessagesQuoteAtMostAFewHundredBytesOfTheInput) {
    const std::string long_name(1'000'000, 'n');
    const std::string bad_string = "{\"" + long_name + "\x01\"}";
    auto e = header_error(bad_string);
    EXPECT_TRUE(error_is(e, {bad, section::header, 8 + 2 + long_name.size()}));
    EXPECT_LT(e.detail.size(), 600u);
    const std::string unknown_field = R"({"w":{")" + long_name + R"(":1}})";
    e = header_error(unknown_field);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, 8 + 6, {}, {}, "w"}));
    EXPECT_LT(e.detail.size(), 400u);
    EXPECT_LT(e.message().size(), 700u);
}

TEST(Safetensors, AByteOrderMarkIsNotJson) {
    const auto e = header_error("\xEF\xBB\xBF{}");
    EXPECT_TRUE(error_is(e, {bad, section::header, 8}));
    EXPECT_NE(e.detail.find("byte order mark"), std::string::npos);
}

TEST(Safetensors, AHeaderThatIsNotAnObject) {
    const auto e = header_error("[1,2]");
    EXPECT_TRUE(error_is(e, {bad, section::header, 8}));
    EXPECT_EQ(e.detail, "the header is an array, not a JSON object");
    EXPECT_TRUE(error_is(header_error("  \"x\""), {bad, section::header, 10}));
}

TEST(Safetensors, NestingAHundredThousandDeepIsRefusedWithoutRecursion) {
    const std::string deep_array(100'000, '[');
    EXPECT_TRUE(error_is(header_error(deep_array + std::string(100'000, ']')), {bad, section::header, 8}));
    const std::string in_entry = R"({"w":{"shape":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}}";
    EXPECT_TRUE(error_is(header_error(in_entry), {bad, section::tensor_info, at(in_entry, "[[") + 1, {}, {}, "w"}));
    std::string objects;
    for (int i = 0; i < 50'000; ++i) objects += R"({"a":)";
    EXPECT_TRUE(error_is(header_error(objects), {bad, section::tensor_info, 8 + 6, {}, {}, "a", {},
                                                 "unknown field 'a' (a tensor entry has dtype, shape and data_offsets)"}));
}

TEST(Safetensors, ATensorEntryThatIsNotAnObject) {
    const std::string h = R"({"w": 5})";
    const auto e = header_error(h);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "5"), {}, {}, "w"}));
    EXPECT_EQ(e.detail, "the value is a number, not a tensor entry (an object)");
}

TEST(Safetensors, ATensorEntryMissingAField) {
    const std::string no_dtype = R"({"w":{"shape":[1],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(no_dtype, 4), {bad, section::tensor_info, at(no_dtype, "{\"shape"), {}, {}, "w",
                                                     {}, "the tensor entry has no dtype"}));
    const std::string no_shape = R"({"w":{"dtype":"F32","data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(no_shape, 4), {bad, section::tensor_info, at(no_shape, "{\"dtype"), {}, {}, "w",
                                                     {}, "the tensor entry has no shape"}));
    const std::string no_offsets = R"({"w":{"dtype":"F32","shape":[1]}})";
    EXPECT_TRUE(error_is(header_error(no_offsets, 4), {bad, section::tensor_info, at(no_offsets, "{\"dtype"), {}, {},
                                                       "w", {}, "the tensor entry has no data_offsets"}));
}

TEST(Safetensors, AFieldOfTheWrongKindOrUnknown) {
    const std::string dtype_number = R"({"w":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(dtype_number, 4), {bad, section::tensor_info, at(dtype_number, "32"), {}, {}, "w",
                                                         {}, "dtype is a number, not a string"}));
    const std::string shape_string = R"({"w":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(shape_string, 4), {bad, section::tensor_info, at(shape_string, "\"1\""), {}, {}, "w",
                                                         {}, "shape is a string, not an array of integers"}));
    const std::string offsets_object = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":{}}})";
    EXPECT_TRUE(error_is(header_error(offsets_object, 4), {bad, section::tensor_info, at(offsets_object, "{}"), {}, {}, "w"}));
    const std::string unknown = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"order":"C"}})";
    const auto e = header_error(unknown, 4);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(unknown, "\"order\""), {}, {}, "w"}));
    EXPECT_EQ(e.detail, "unknown field 'order' (a tensor entry has dtype, shape and data_offsets)");
}

TEST(Safetensors, AnUnknownDtypeIsNotSafetensors) {
    const std::string h = R"({"w":{"dtype":"Q4_0","shape":[1],"data_offsets":[0,4]}})";
    const auto e = header_error(h, 4);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "\"Q4_0\""), {}, {}, "w"}));
    EXPECT_EQ(e.detail.substr(0, 21), "unknown dtype 'Q4_0' ");
}

TEST(Safetensors, DimensionsAndOffsetsMustBeNonNegativeIntegers) {
    const std::string negative = R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(negative, 4), {bad, section::tensor_info, at(negative, "-1"), {}, {}, "w", {},
                                                     "a dimension is negative: -1"}));
    const std::string fraction = R"({"w":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(fraction, 4), {bad, section::tensor_info, at(fraction, "1.0"), {}, {}, "w"}));
    const std::string beyond_64_bits = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551616]}})";
    EXPECT_TRUE(error_is(header_error(beyond_64_bits, 4),
                         {bad, section::tensor_info, at(beyond_64_bits, "18446744073709551616"), {}, {}, "w"}));
    const std::string beyond_int64 = R"({"w":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(beyond_int64, 4),
                         {bad, section::tensor_info, at(beyond_int64, "9223372036854775808"), {}, {}, "w"}));
    const std::string null_offset = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,null]}})";
    EXPECT_TRUE(error_is(header_error(null_offset, 4), {bad, section::tensor_info, at(null_offset, "null"), {}, {}, "w"}));
    const std::string nested = R"({"w":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(nested, 4), {bad, section::tensor_info, at(nested, "[1]"), {}, {}, "w"}));
    // "-0" is an integer token of value 0
    EXPECT_TRUE(read_bytes(safetensors_file_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-0,4]}})", filler(4))));
}

TEST(Safetensors, DataOffsetsMustBeTwoNumbers) {
    const std::string three = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})";
    EXPECT_TRUE(error_is(header_error(three, 8), {bad, section::tensor_info, at(three, "[0,4"), 2, 3, "w"}));
    const std::string one = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})";
    EXPECT_TRUE(error_is(header_error(one, 4), {bad, section::tensor_info, at(one, "[0]"), 2, 1, "w"}));
}

TEST(Safetensors, TooManyDimensions) {
    std::string shape = "[";
    for (int i = 0; i < 17; ++i) shape += i > 0 ? ",1" : "1";
    shape += "]";
    const std::string h = R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(h, 4), {bad, section::tensor_info, at(h, shape), {}, {}, "w", {},
                                              "the shape has more than 16 dimensions"}));
}

TEST(Safetensors, OffsetsReversed) {
    const std::string h = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})";
    EXPECT_TRUE(error_is(header_error(h, 8), {bad, section::tensor_info, at(h, "[8,4]"), 8, 4, "w"}));
}

TEST(Safetensors, OffsetsPastTheDataSection) {
    const std::string h = R"({"w":{"dtype":"F32","shape":[25],"data_offsets":[0,100]}})";
    const auto e = header_error(h, 8);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "[0,100]"), 8, 100, "w"}));
    EXPECT_EQ(e.detail, "data_offsets [0, 100) end past the data section (8 bytes)");
}

TEST(Safetensors, TheShapeMustBeTheRangesSize) {
    const std::string h = R"({"w":{"dtype":"BF16","shape":[5,3],"data_offsets":[0,10]}})";
    const auto e = header_error(h, 10);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "[0,10]"), 30, 10, "w"}));
    EXPECT_EQ(e.detail, "BF16 [5, 3] is 30 bytes, but data_offsets [0, 10) hold 10");
}

TEST(Safetensors, AShapeWhoseElementCountOverflows) {
    const std::string elements = R"({"w":{"dtype":"U8","shape":[4294967296,4294967296,2],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(elements, 4), {bad, section::tensor_info, at(elements, "[4294967296"), {}, {}, "w"}));
    const std::string bits = R"({"w":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,4]}})";
    const auto e = header_error(bits, 4);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(bits, "[2305"), {}, {}, "w"}));
    EXPECT_EQ(e.detail, "the bit size of F64 [2305843009213693952] overflows 64 bits");
}

TEST(Safetensors, OverlappingTensors) {
    const std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
    const auto e = header_error(h, 12);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "[4,12]"), 8, 4, "b"}));
    EXPECT_EQ(e.detail, "data_offsets [4, 12) overlap tensor 'a' [0, 8)");
    // the same range twice
    const std::string twice = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
    EXPECT_TRUE(error_is(header_error(twice, 4), {bad, section::tensor_info, at(twice, "[0,4]", 60), 4, 0, "b"}));
    // a zero-size tensor inside another one
    const std::string inside = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})";
    EXPECT_TRUE(error_is(header_error(inside, 8), {bad, section::tensor_info, at(inside, "[4,4]"), 8, 4, "e"}));
}

TEST(Safetensors, AHoleBetweenTensors) {
    const std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
    const auto e = header_error(h, 12);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, at(h, "[8,12]"), 4, 8, "b"}));
    EXPECT_EQ(e.detail, "bytes [4, 8) of the data section belong to no tensor (a hole before data_offsets [8, 12))");
    // the first tensor must start at 0
    const std::string late = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    EXPECT_TRUE(error_is(header_error(late, 8), {bad, section::tensor_info, at(late, "[4,8]"), 0, 4, "a"}));
}

TEST(Safetensors, BytesAfterTheLastTensor) {
    const std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    const auto e = header_error(h, 7);
    EXPECT_TRUE(error_is(e, {bad, section::data, 8 + h.size() + 4, 4, 7, ""}));
    EXPECT_EQ(e.detail, "3 bytes at the end of the data section belong to no tensor");
    EXPECT_TRUE(error_is(header_error("{}", 1), {bad, section::data, 10, 0, 1}));
}

TEST(Safetensors, DuplicateKeys) {
    const std::string name_twice = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
    EXPECT_TRUE(error_is(header_error(name_twice, 2), {bad, section::tensor_info, at(name_twice, "\"w\"", 2), {}, {}, "w",
                                                       {}, "the name appears twice in the header"}));
    const std::string field_twice = R"({"w":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}})";
    EXPECT_TRUE(error_is(header_error(field_twice, 1), {bad, section::tensor_info, at(field_twice, "\"dtype\"", 10), {}, {},
                                                        "w", {}, "the field 'dtype' appears twice"}));
    const std::string metadata_twice = R"({"__metadata__":{"k":"a","k":"b"}})";
    EXPECT_TRUE(error_is(header_error(metadata_twice), {bad, section::header, at(metadata_twice, "\"k\"", 22), {}, {},
                                                        "__metadata__"}));
    const std::string metadata_object_twice = R"({"__metadata__":{},"__metadata__":{}})";
    EXPECT_TRUE(error_is(header_error(metadata_object_twice),
                         {bad, section::header, at(metadata_object_twice, "\"__metadata__\"", 2), {}, {}, "__metadata__"}));
}

TEST(Safetensors, MetadataMustMapStringsToStrings) {
    const std::string number = R"({"__metadata__":{"format":1}})";
    const auto e = header_error(number);
    EXPECT_TRUE(error_is(e, {bad, section::header, at(number, "1"), {}, {}, "__metadata__"}));
    EXPECT_EQ(e.detail, "__metadata__ value 'format' is a number, not a string");
    const std::string not_object = R"({"__metadata__":"pt"})";
    EXPECT_TRUE(error_is(header_error(not_object), {bad, section::header, at(not_object, "\"pt\""), {}, {}, "__metadata__"}));
}

TEST(Safetensors, ANameWithANulByte) {
    const std::string h = R"({"a\u0000b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
    const auto e = header_error(h, 1);
    EXPECT_TRUE(error_is(e, {bad, section::tensor_info, 9, {}, {}, std::string("a\0b", 3)}));
    EXPECT_NE(e.message().find("'a\\x00b'"), std::string::npos) << e.message();  // shown escaped
}

TEST(Safetensors, OpensFilesAndReportsIoErrors) {
    temp_dir dir;
    safetensors_builder b;
    b.add("w", "F16", {2, 2}, 2);
    write_file(dir / "m.safetensors", b.file());
    auto f = cv::safetensors_file::open(dir / "m.safetensors");
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->path(), (dir / "m.safetensors").string());
    auto read = cv::safetensors_file::open(dir / "m.safetensors", minfer::gguf::load_mode::read);
    ASSERT_TRUE(read);
    EXPECT_EQ(std::memcmp(read->tensor_data(read->tensors()[0]).data(), b.data().data(), 8), 0);
    const auto missing = error_of(cv::safetensors_file::open(dir / "absent.safetensors"));
    EXPECT_EQ(missing.code, minfer::gguf::errc::io_error);
    EXPECT_EQ(missing.sys_errno, ENOENT);
    // a bad file's errors name it
    write_file(dir / "bad.safetensors", safetensors_file_bytes("[]"));
    const auto e = error_of(cv::safetensors_file::open(dir / "bad.safetensors"));
    EXPECT_EQ(e.file, (dir / "bad.safetensors").string());
    EXPECT_EQ(e.message(), (dir / "bad.safetensors").string() +
                               ": header at byte 8: invalid safetensors file: the header is an array, not a JSON object "
                               "[bad_safetensors]");
}

}  // namespace
