// convert::sentencepiece_model: tokenizer.model files written here byte by byte. Each check of the
// protobuf reader and of sentencepiece's load rules with the smallest input that trips it, with its
// code, offset, subject and item; the fields read, their defaults, protobuf's merge rules; and, when
// MINFER_CONVERT_MODELS names tests/convert/make_models.py's output, the real test models.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "protobuf_bytes.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
using minfer::gguf::section;

constexpr auto bad = cv::codes::bad_tokenizer;

minfer::gguf::result<cv::sentencepiece_model> parse(const std::string& b) {
    return cv::parse_sentencepiece_model(std::as_bytes(std::span(b.data(), b.size())), "tokenizer.model");
}

minfer::gguf::error error_of_bytes(const std::string& b) { return error_of(parse(b)); }

// error_is, and the piece the error is about (gguf::error::item; -1: none).
::testing::AssertionResult refusal_is(const minfer::gguf::error& e, const want& w, std::int64_t item) {
    ::testing::AssertionResult r = error_is(e, w);
    if (!r) return r;
    if (e.item != item) return ::testing::AssertionFailure() << "item: want " << item << "\n  got " << describe(e);
    return ::testing::AssertionSuccess();
}

// The smallest model sentencepiece loads: one UNKNOWN piece, and a BPE trainer spec (a unigram model
// needs a normal piece too). 15 bytes: 0A 09 [0A 05 "<unk>" 18 02] 12 02 [18 02].
pb_message smallest() {
    pb_message m;
    m.message(1, spm_piece("<unk>", 0, spm_type::unknown));
    m.message(2, pb_message().varint(3, 2));
    return m;
}
constexpr std::uint64_t smallest_size = 15;

// A field numbered 100 the schema does not name: its tag as a varint (800 = A0 06) with wire type w.
std::string unknown_tag(std::uint8_t w) {
    std::string t;
    put_varint(t, (100u << 3) | w);
    return t;
}

TEST(SentencePieceModel, TheSmallestModelAndTheSchemasDefaults) {
    ASSERT_EQ(smallest().size(), smallest_size);
    auto m = parse(smallest().str());
    ASSERT_TRUE(m) << m.error().message();
    ASSERT_EQ(m->size(), 1u);
    EXPECT_EQ(m->pieces[0].piece, "<unk>");
    EXPECT_EQ(m->pieces[0].type, cv::piece_type::unknown);
    EXPECT_EQ(m->pieces[0].score, 0.0f);
    EXPECT_EQ(m->pieces[0].offset, 0u);
    EXPECT_EQ(m->trainer_spec.model_type, cv::spm_model_type::bpe);
    // the defaults of sentencepiece_model.proto for what the file leaves out
    EXPECT_EQ(m->trainer_spec.vocab_size, 8000);
    EXPECT_FALSE(m->trainer_spec.byte_fallback);
    EXPECT_EQ(m->trainer_spec.unk_id, 0);
    EXPECT_EQ(m->trainer_spec.bos_id, 1);
    EXPECT_EQ(m->trainer_spec.eos_id, 2);
    EXPECT_EQ(m->trainer_spec.pad_id, -1);
    EXPECT_EQ(m->trainer_spec.unk_piece, "<unk>");
    EXPECT_EQ(m->trainer_spec.bos_piece, "<s>");
    EXPECT_EQ(m->trainer_spec.eos_piece, "</s>");
    EXPECT_EQ(m->trainer_spec.pad_piece, "<pad>");
    EXPECT_EQ(m->trainer_spec.unk_surface, " \xE2\x81\x87 ");
    EXPECT_TRUE(m->normalizer_spec.add_dummy_prefix);
    EXPECT_TRUE(m->normalizer_spec.remove_extra_whitespaces);
    EXPECT_TRUE(m->normalizer_spec.escape_whitespaces);
    EXPECT_TRUE(m->normalizer_spec.name.empty());
    EXPECT_FALSE(m->denormalizer_spec);
    EXPECT_EQ(m->self_test_samples, 0u);
    // without a trainer spec the model type is UNIGRAM, which needs a normal piece
    pb_message unigram;
    unigram.message(1, spm_piece("<unk>", 0, spm_type::unknown)).message(1, spm_piece("a"));
    auto u = parse(unigram.str());
    ASSERT_TRUE(u) << u.error().message();
    EXPECT_EQ(u->trainer_spec.model_type, cv::spm_model_type::unigram);
}

TEST(SentencePieceModel, ReadsTheFieldsItKeeps) {
    pb_message trainer;
    trainer.bytes(1, "corpus.txt").bytes(1, "more.txt")  // repeated input: checked, not kept
        .varint(3, 4).int32(4, 32000).float32(10, 0.9995f).varint(11, 1u << 20)
        .boolean(24, true).boolean(25, true).boolean(26, true).boolean(35, false)
        .int32(40, 3).int32(41, -1).int32(42, 5).int32(43, 6)
        .bytes(44, "??").bytes(45, "[UNK]").bytes(46, "[BOS]").bytes(47, "[EOS]").bytes(48, "[PAD]")
        .bytes(30, "<ctrl>").fixed64(1000, 7);  // an unknown 64-bit field
    const std::string charsmap = std::string("\x04\x00\x00\x00", 4) + "TRIEnormalized";
    pb_message normalizer;
    normalizer.bytes(1, "nmt_nfkc").bytes(2, charsmap).boolean(3, false).boolean(4, false).boolean(5, false)
        .bytes(6, "a\tb\n");
    pb_message sample;
    sample.bytes(1, "in").bytes(2, "out");
    pb_message tests;
    tests.message(1, sample).message(1, sample);
    pb_message m;
    m.message(1, spm_piece("[UNK]", 0, spm_type::unknown))
        .message(1, spm_piece("x", -1.5f))
        .message(1, spm_piece("<ctrl>", 0, spm_type::control))
        .message(2, trainer)
        .message(3, normalizer)
        .message(4, tests)
        .message(5, pb_message().bytes(1, "denorm"));
    auto r = parse(m.str());
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ(r->pieces[1].piece, "x");
    EXPECT_EQ(r->pieces[1].score, -1.5f);
    EXPECT_EQ(r->pieces[2].type, cv::piece_type::control);
    EXPECT_EQ(r->pieces[1].offset, r->pieces[0].offset + 2 + 9);  // the first piece's record: 0A 09 [0A 05 "[UNK]" 18 02]
    const auto& t = r->trainer_spec;
    EXPECT_EQ(t.model_type, cv::spm_model_type::character);
    EXPECT_EQ(t.vocab_size, 32000);
    EXPECT_TRUE(t.treat_whitespace_as_suffix && t.split_digits && t.allow_whitespace_only_pieces);
    EXPECT_FALSE(t.byte_fallback);
    EXPECT_EQ(t.unk_id, 3);
    EXPECT_EQ(t.bos_id, -1);
    EXPECT_EQ(t.eos_id, 5);
    EXPECT_EQ(t.pad_id, 6);
    EXPECT_EQ(t.unk_surface, "??");
    EXPECT_EQ(t.unk_piece, "[UNK]");
    EXPECT_EQ(t.bos_piece, "[BOS]");
    EXPECT_EQ(t.eos_piece, "[EOS]");
    EXPECT_EQ(t.pad_piece, "[PAD]");
    const auto& n = r->normalizer_spec;
    EXPECT_EQ(n.name, "nmt_nfkc");
    EXPECT_EQ(n.precompiled_charsmap, charsmap);
    EXPECT_FALSE(n.add_dummy_prefix || n.remove_extra_whitespaces || n.escape_whitespaces);
    EXPECT_EQ(n.normalization_rule_tsv, "a\tb\n");
    ASSERT_TRUE(r->denormalizer_spec);
    EXPECT_EQ(r->denormalizer_spec->name, "denorm");
    EXPECT_TRUE(r->denormalizer_spec->add_dummy_prefix);  // its own defaults
    EXPECT_EQ(r->self_test_samples, 2u);
}

// protobuf's rules for a field given twice: a scalar takes its last value, a message is merged.
TEST(SentencePieceModel, RepeatedSingularFieldsAsProtobufReadsThem) {
    pb_message piece;
    piece.bytes(1, "first").bytes(1, "a").float32(2, 1.0f).float32(2, -2.0f);
    pb_message m;
    m.message(1, spm_piece("<unk>", 0, spm_type::unknown))
        .message(1, piece)
        .message(2, pb_message().varint(3, 1).int32(4, 100))
        .message(2, pb_message().boolean(35, false).int32(4, 200));
    auto r = parse(m.str());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->pieces[1].piece, "a");
    EXPECT_EQ(r->pieces[1].score, -2.0f);
    EXPECT_EQ(r->trainer_spec.model_type, cv::spm_model_type::unigram);  // from the first trainer_spec
    EXPECT_EQ(r->trainer_spec.vocab_size, 200);                        // the second's
}

// ---- the wire format -------------------------------------------------------------------------------

TEST(SentencePieceModel, VarintsCutShortLongOrBeyond64Bits) {
    // a tag's varint that the file ends in
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + "\x80"),
                         {bad, section::metadata, smallest_size, {}, {}, "ModelProto"}));
    // a value's varint: the offset is its first byte, after the 2-byte tag
    const std::string tag = unknown_tag(0);
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + tag + "\xFF"),
                         {bad, section::metadata, smallest_size + 2, {}, {}, "100"}));
    // 11 bytes (ten with the continuation bit): the 12-byte varint is refused at its 10th
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + tag + std::string(11, '\xFF') + "\x01"),
                         {bad, section::metadata, smallest_size + 2, 10, 11, "100"}));
    // 10 bytes whose last carries bits 64 and up
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + tag + std::string(9, '\xFF') + "\x02"),
                         {bad, section::metadata, smallest_size + 2, {}, {}, "100"}));
    // 10 bytes of exactly 2^64 - 1: a valid (unknown) field
    EXPECT_TRUE(parse(smallest().str() + tag + std::string(9, '\xFF') + "\x01"));
    // a varint is bounded by its own message, not by the file: the piece's message (1 byte) ends
    // inside the type's tag, though the file goes on
    pb_message m;
    m.raw("\x0A\x01\x80").message(2, pb_message().varint(3, 2));
    auto e = error_of_bytes(m.str());
    EXPECT_TRUE(refusal_is(e, {bad, section::metadata, 2, {}, {}, "pieces"}, 0));
    EXPECT_NE(e.detail.find("cut short"), std::string::npos) << e.detail;
}

TEST(SentencePieceModel, ATagBeyond32BitsOrNumberedZero) {
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + "\x80\x80\x80\x80\x10"),
                         {bad, section::metadata, smallest_size, 0xFFFFFFFFu, 0x100000000u, "ModelProto"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + std::string("\x02\x00", 2)),
                         {bad, section::metadata, smallest_size, {}, {}, "ModelProto"}));
}

TEST(SentencePieceModel, LengthsPastTheEndOfTheirMessage) {
    // 5 bytes announced, 1 left: the offset is the length's
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + "\x0A\x05\x41"),
                         {bad, section::metadata, smallest_size + 1, 1, 5, "pieces"}));
    // a length of 2^63: no overflow, refused
    std::string huge = smallest().str() + "\x0A";
    put_varint(huge, std::uint64_t{1} << 63);
    EXPECT_TRUE(error_is(error_of_bytes(huge), {bad, section::metadata, smallest_size + 1, 0, std::uint64_t{1} << 63, "pieces"}));
    // inside a piece (3 bytes: 0A 05 41), its string's length runs past the piece though not past the file
    pb_message m;
    m.raw("\x0A\x03\x0A\x05\x41").message(2, pb_message().varint(3, 2)).raw("pad.");
    EXPECT_TRUE(refusal_is(error_of_bytes(m.str()), {bad, section::metadata, 3, 1, 5, "pieces.piece"}, 0));
}

TEST(SentencePieceModel, FixedWidthValuesCutShort) {
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + unknown_tag(5) + "ab"),
                         {bad, section::metadata, smallest_size, 4, 2, "100"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + unknown_tag(1) + "abc"),
                         {bad, section::metadata, smallest_size, 8, 3, "100"}));
    // a score whose 4 bytes the piece's message does not hold: 0A 03 [15 00 00] (score's tag, 2 bytes)
    EXPECT_TRUE(refusal_is(error_of_bytes(smallest().str() + std::string("\x0A\x03\x15\x00\x00", 5) + "more"),
                         {bad, section::metadata, smallest_size + 2, 4, 2, "pieces.score"}, 1));
}

TEST(SentencePieceModel, AKnownFieldOfAnotherWireType) {
    // pieces as a varint: 08 01
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + "\x08\x01"), {bad, section::metadata, smallest_size, 2, 0, "pieces"}));
    // a score as a varint, in the second piece: 0A 03 [0A 01 'a'] … 10 00
    pb_message piece;
    piece.bytes(1, "a").varint(2, 0);
    pb_message m = smallest();
    m.message(1, piece);
    EXPECT_TRUE(refusal_is(error_of_bytes(m.str()), {bad, section::metadata, smallest_size + 2 + 3, 5, 0, "pieces.score"}, 1));
    // a type as 32 bits
    pb_message typed;
    typed.bytes(1, "b").fixed32(3, 1);
    EXPECT_TRUE(refusal_is(error_of_bytes(smallest().message(1, typed).str()),
                         {bad, section::metadata, smallest_size + 2 + 3, 0, 5, "pieces.type"}, 1));
    // trainer_spec.byte_fallback (35) as bytes: its tag is 9A 02
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().bytes(35, "\x01")).str()),
                         {bad, section::metadata, smallest_size + 2, 0, 2, "trainer_spec.byte_fallback"}));
    // a string field as a varint in the normalizer spec, and in the denormalizer spec
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(3, pb_message().varint(1, 3)).str()),
                         {bad, section::metadata, smallest_size + 2, 2, 0, "normalizer_spec.name"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(5, pb_message().varint(2, 3)).str()),
                         {bad, section::metadata, smallest_size + 2, 2, 0, "denormalizer_spec.precompiled_charsmap"}));
}

TEST(SentencePieceModel, GroupsAndWireTypesThatDoNotExist) {
    // field 1 with wire types 3 (start group), 4 (end group), 6 and 7: one tag byte each
    for (const char tag : {'\x0B', '\x0C', '\x0E', '\x0F'}) {
        const auto w = static_cast<std::uint64_t>(tag & 7);
        EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + tag), {bad, section::metadata, smallest_size, 0, w, "pieces"}))
            << w;
    }
    // in an unknown field too (protobuf would skip a group there)
    EXPECT_TRUE(error_is(error_of_bytes(smallest().str() + unknown_tag(3) + unknown_tag(4)),
                         {bad, section::metadata, smallest_size, 0, 3, "100"}));
}

TEST(SentencePieceModel, ValuesOutsideTheirRange) {
    // bools: 0 or 1
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(35, 2)).str()),
                         {bad, section::metadata, smallest_size + 2, 1, 2, "trainer_spec.byte_fallback"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(3, pb_message().varint(3, 256)).str()),
                         {bad, section::metadata, smallest_size + 2, 1, 256, "normalizer_spec.add_dummy_prefix"}));
    // enums: the schema's values only (proto2 would keep an unknown one aside and use the default)
    for (std::uint64_t t : {0u, 5u, 99u})
        EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(3, t)).str()),
                             {bad, section::metadata, smallest_size + 2, 0, t, "trainer_spec.model_type"}))
            << t;
    for (std::uint64_t t : {0u, 7u})
        EXPECT_TRUE(refusal_is(error_of_bytes(smallest().message(1, pb_message().bytes(1, "a").varint(3, t)).str()),
                             {bad, section::metadata, smallest_size + 2 + 3, 0, t, "pieces.type"}, 1))
            << t;
    // int32: a sign-extended 32-bit value; 2^31 and a 5-byte -1 (0xFFFFFFFF) are not
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(4, 0x80000000u)).str()),
                         {bad, section::metadata, smallest_size + 2, 0, 0x80000000u, "trainer_spec.vocab_size"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(43, 0xFFFFFFFFu)).str()),
                         {bad, section::metadata, smallest_size + 2, 0, 0xFFFFFFFFu, "trainer_spec.pad_id"}));
    // the fields kept or not: character_coverage (10) must be 32-bit, num_threads (16) an int32
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(10, 1)).str()),
                         {bad, section::metadata, smallest_size + 2, 5, 0, "trainer_spec.character_coverage"}));
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(2, pb_message().varint(16, std::uint64_t{1} << 40)).str()),
                         {bad, section::metadata, smallest_size + 2, {}, {}, "trainer_spec.num_threads"}));
    // a 10-byte -1 is an int32 as protobuf writes it
    auto ok = parse(smallest().message(2, pb_message().int32(43, -1).int32(41, -7)).str());
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->trainer_spec.bos_id, -7);
}

TEST(SentencePieceModel, UnknownFieldsAreSkippedByWireTypeAtEveryLevel) {
    pb_message piece;
    piece.bytes(1, "a").varint(200, 1).fixed64(201, 2).bytes(202, "x").fixed32(203, 3);  // extensions (200 and up)
    pb_message trainer;
    trainer.varint(3, 2).varint(8, 1).bytes(27, "unused number").fixed32(39, 0).fixed64(1000, 0);
    pb_message m;
    m.message(1, spm_piece("<unk>", 0, spm_type::unknown)).message(1, piece).message(2, trainer)
        .varint(6, 1).fixed64(7, 2).bytes(8, "x").fixed32(9, 3).message(3, pb_message().varint(100, 9));
    auto r = parse(m.str());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->size(), 2u);
    EXPECT_EQ(r->pieces[1].piece, "a");
}

// The schema bounds the nesting (ModelProto → self_test_data → samples): an unknown field is skipped
// whole, whatever it holds, and the deepest known level is checked like the others.
TEST(SentencePieceModel, NestingIsTheSchemas) {
    pb_message deep;
    deep.bytes(1, "leaf");
    for (int i = 0; i < 500; ++i) {
        pb_message outer;
        outer.message(1, deep);
        deep = outer;
    }
    pb_message m = smallest();
    m.message(1000, deep);
    auto r = parse(m.str());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->size(), 1u);

    pb_message sample;
    sample.bytes(1, "in").varint(2, 1);  // expected (2) as a varint
    pb_message tests;
    tests.message(1, pb_message().bytes(1, "ok")).message(1, sample);
    const std::string b = smallest().message(4, tests).str();
    // 13 + 2 (self_test_data's tag and length) + 6 (the first sample) + 2 (the second's) + 4 ("in")
    EXPECT_TRUE(error_is(error_of_bytes(b), {bad, section::metadata, smallest_size + 2 + 6 + 2 + 4, 2, 0,
                                             "self_test_data.samples.expected"}));
    // self_test_data.samples as a varint
    EXPECT_TRUE(error_is(error_of_bytes(smallest().message(4, pb_message().varint(1, 0)).str()),
                         {bad, section::metadata, smallest_size + 2, 2, 0, "self_test_data.samples"}));
}

// ---- what sentencepiece's loader refuses -----------------------------------------------------------

TEST(SentencePieceModel, ExactlyOneUnknownPiece) {
    // an empty file is a ModelProto without pieces
    EXPECT_TRUE(error_is(error_of_bytes(""), {bad, section::metadata, 0, 1, 0, "pieces"}));
    pb_message none;
    none.message(1, spm_piece("a")).message(2, pb_message().varint(3, 2));
    EXPECT_TRUE(error_is(error_of_bytes(none.str()), {bad, section::metadata, 0, 1, 0, "pieces"}));
    pb_message two = smallest();
    two.message(1, spm_piece("<unk2>", 0, spm_type::unknown));
    EXPECT_TRUE(refusal_is(error_of_bytes(two.str()), {bad, section::metadata, smallest_size, 0, 1, "pieces.type"}, 1));
}

TEST(SentencePieceModel, APieceWithNoStringOrNotUtf8) {
    // a piece message holding only a type: its string is absent, i.e. empty
    EXPECT_TRUE(refusal_is(error_of_bytes(smallest().message(1, pb_message().varint(3, 1)).str()),
                         {bad, section::metadata, smallest_size, 0, 0, "pieces.piece"}, 1));
    EXPECT_TRUE(refusal_is(error_of_bytes(smallest().message(1, spm_piece("")).str()),
                         {bad, section::metadata, smallest_size, {}, {}, "pieces.piece"}, 1));
    for (const char* text : {"\xFF", "a\xC3", "\xED\xA0\x80" /* a surrogate */, "\xC0\xAF" /* overlong */}) {
        auto e = error_of_bytes(smallest().message(1, spm_piece(text)).str());
        EXPECT_TRUE(refusal_is(e, {bad, section::metadata, smallest_size, {}, {}, "pieces.piece"}, 1)) << text;
        EXPECT_NE(e.detail.find("UTF-8"), std::string::npos) << e.detail;
    }
    // what is valid UTF-8 passes, a NUL byte included (for BPE)
    auto ok = parse(smallest().message(1, spm_piece(std::string("\xE2\x96\x81" "a\0b", 6))).str());
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->pieces[1].piece.size(), 6u);
}

TEST(SentencePieceModel, APieceTwiceInItsClass) {
    // NORMAL, USER_DEFINED and UNUSED share one map; UNKNOWN, CONTROL and BYTE another
    pb_message m = smallest();
    m.message(1, spm_piece("a")).message(1, spm_piece("a", -1));
    EXPECT_TRUE(refusal_is(error_of_bytes(m.str()), {bad, section::metadata, smallest_size + 5, 1, 2, "pieces.piece"}, 2));
    pb_message u = smallest();
    u.message(1, spm_piece("a", 0, spm_type::user_defined)).message(1, spm_piece("a", 0, spm_type::unused));
    EXPECT_TRUE(refusal_is(error_of_bytes(u.str()), {bad, section::metadata, {}, 1, 2, "pieces.piece"}, 2));
    pb_message c = smallest();
    c.message(1, spm_piece("<s>", 0, spm_type::control)).message(1, spm_piece("<unk>", 0, spm_type::control));
    EXPECT_TRUE(refusal_is(error_of_bytes(c.str()), {bad, section::metadata, {}, 0, 2, "pieces.piece"}, 2));
    // the same text in both maps is fine
    pb_message both = smallest();
    both.message(1, spm_piece("<s>", 0, spm_type::control)).message(1, spm_piece("<s>")).message(1, spm_piece("<unk>"));
    auto ok = parse(both.str());
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->size(), 4u);
}

TEST(SentencePieceModel, BytePieces) {
    // a byte piece without byte_fallback
    EXPECT_TRUE(refusal_is(error_of_bytes(smallest().message(1, spm_piece("<0x41>", 0, spm_type::byte)).str()),
                         {bad, section::metadata, smallest_size, {}, {}, "pieces.type"}, 1));
    // every byte but 0x41 with byte_fallback: the count and the missing one
    spm_model_builder b;
    b.piece("<unk>", 0, spm_type::unknown).byte_pieces().byte_fallback(true);
    ASSERT_TRUE(parse(b.bytes()));
    spm_model_builder missing;
    missing.piece("<unk>", 0, spm_type::unknown).byte_fallback(true);
    for (int i = 0; i < 256; ++i) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", i);
        if (i != 0x41) missing.piece(name, 0, spm_type::byte);
    }
    auto e = error_of_bytes(missing.bytes());
    EXPECT_TRUE(error_is(e, {bad, section::metadata, 0, 256, 255, "trainer_spec.byte_fallback"}));
    EXPECT_NE(e.detail.find("<0x41>"), std::string::npos) << e.detail;
    // spellings that are not <0xXX> with upper-case hex digits
    for (const char* name : {"<0xff>", "<0x4>", "<0x041>", "<0X41>", "<0xG1>", "0x41"}) {
        spm_model_builder wrong;
        wrong.piece("<unk>", 0, spm_type::unknown).byte_fallback(true).piece(name, 0, spm_type::byte).byte_pieces();
        EXPECT_TRUE(refusal_is(error_of_bytes(wrong.bytes()), {bad, section::metadata, {}, {}, {}, "pieces.piece"}, 1)) << name;
    }
    // a byte twice is a duplicate in the reserved map
    spm_model_builder twice;
    twice.piece("<unk>", 0, spm_type::unknown).byte_fallback(true).byte_pieces().piece("<0x00>", 0, spm_type::byte);
    EXPECT_TRUE(refusal_is(error_of_bytes(twice.bytes()), {bad, section::metadata, {}, 1, 257, "pieces.piece"}, 257));
}

TEST(SentencePieceModel, AUnigramModelsTrie) {
    pb_message only_unknown;
    only_unknown.message(1, spm_piece("<unk>", 0, spm_type::unknown)).message(1, spm_piece("<s>", 0, spm_type::control));
    EXPECT_TRUE(error_is(error_of_bytes(only_unknown.str()), {bad, section::metadata, 0, 1, 0, "pieces"}));
    pb_message nul;
    nul.message(1, spm_piece("<unk>", 0, spm_type::unknown)).message(1, spm_piece(std::string("a\0b", 3)));
    EXPECT_TRUE(refusal_is(error_of_bytes(nul.str()), {bad, section::metadata, 11, {}, {}, "pieces.piece"}, 1));
    // an UNUSED piece counts as normal; a control piece may hold a NUL (it is not in the trie)
    pb_message ok;
    ok.message(1, spm_piece("<unk>", 0, spm_type::unknown)).message(1, spm_piece("z", 0, spm_type::unused))
        .message(1, spm_piece(std::string("<\0>", 3), 0, spm_type::control));
    EXPECT_TRUE(parse(ok.str()));
}

TEST(SentencePieceModel, ANormalizationMapsFrame) {
    const auto with_map = [](std::uint32_t field, const std::string& map) {
        return smallest().message(field, pb_message().bytes(2, map)).str();
    };
    const auto le32 = [](std::uint32_t v) {
        std::string s(4, '\0');
        for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFFu);
        return s;
    };
    EXPECT_TRUE(parse(with_map(3, "")));                          // no map
    EXPECT_TRUE(parse(with_map(3, le32(0) + "x")));               // an empty trie, one byte of strings
    EXPECT_TRUE(parse(with_map(3, le32(4) + "TRIE")));            // the trie up to the end
    EXPECT_TRUE(error_is(error_of_bytes(with_map(3, le32(0))),    // 4 bytes: the size alone
                         {bad, section::metadata, smallest_size + 2, 5, 4, "normalizer_spec.precompiled_charsmap"}));
    // a trie of 5 bytes in 5 bytes after the size … 6: sentencepiece takes it (5 < 9) and reads past the blob
    EXPECT_TRUE(error_is(error_of_bytes(with_map(3, le32(6) + "TRIE!")),
                         {bad, section::metadata, smallest_size + 2, 5, 6, "normalizer_spec.precompiled_charsmap"}));
    EXPECT_TRUE(error_is(error_of_bytes(with_map(5, le32(0xFFFFFFFFu) + "T")),
                         {bad, section::metadata, smallest_size + 2, 1, 0xFFFFFFFFu, "denormalizer_spec.precompiled_charsmap"}));
}

TEST(SentencePieceModel, ThePiecesCap) {
    // 2^21 + 1 empty pieces (2 bytes each): refused at the one past the cap, before their emptiness
    std::string b;
    b.reserve(2 * (cv::sentencepiece_max_pieces + 1));
    for (std::size_t i = 0; i <= cv::sentencepiece_max_pieces; ++i) b += std::string("\x0A\x00", 2);
    EXPECT_TRUE(error_is(error_of_bytes(b), {bad, section::metadata, 2 * cv::sentencepiece_max_pieces,
                                             cv::sentencepiece_max_pieces, cv::sentencepiece_max_pieces + 1, "pieces"}));
}

TEST(SentencePieceModel, TheFilesSizeCapAndAMissingFile) {
    temp_dir dir;
    const auto big = dir.path() / "tokenizer.model";
    write_file(big, {});
    std::filesystem::resize_file(big, cv::sentencepiece_model_max_bytes + 1);  // sparse: refused by its size
    auto e = error_of(cv::read_sentencepiece_model(big));
    EXPECT_TRUE(error_is(e, {bad, section::file, {}, cv::sentencepiece_model_max_bytes, cv::sentencepiece_model_max_bytes + 1}));
    EXPECT_EQ(e.file, big.string());
    auto missing = error_of(cv::read_sentencepiece_model(dir.path() / "none.model"));
    EXPECT_EQ(missing.code, minfer::gguf::errc::io_error);
    EXPECT_EQ(missing.sys_errno, ENOENT);
    // and one read from disk names its path
    const std::string good = smallest().str();
    write_file(dir.path() / "ok.model", std::as_bytes(std::span(good.data(), good.size())));
    auto r = cv::read_sentencepiece_model(dir.path() / "ok.model");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->file, (dir.path() / "ok.model").string());
    // an error message names the file, the field and the piece
    const auto msg = error_of_bytes(smallest().message(1, spm_piece("\xFF")).str()).message();
    EXPECT_NE(msg.find("invalid tokenizer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pieces.piece"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad_tokenizer"), std::string::npos) << msg;
}

// The Python API's classification (IsUnknown, IsControl, IsUnused, IsByte) is the piece's type.
TEST(SentencePieceModel, ThePythonApisClassification) {
    spm_model_builder b;
    b.piece("<unk>", 0, spm_type::unknown).piece("<s>", 0, spm_type::control).piece("a").piece("<u>", 0, spm_type::user_defined)
        .piece("z", 0, spm_type::unused).byte_pieces().byte_fallback(true);
    auto m = parse(b.bytes());
    ASSERT_TRUE(m) << m.error().message();
    struct row {
        std::size_t id;
        bool unknown, control, unused, byte, user_defined;
    };
    for (const row& r : {row{0, true, false, false, false, false}, row{1, false, true, false, false, false},
                         row{2, false, false, false, false, false}, row{3, false, false, false, false, true},
                         row{4, false, false, true, false, false}, row{5, false, false, false, true, false},
                         row{5 + 255, false, false, false, true, false}, row{5 + 256, false, false, false, false, false}}) {
        EXPECT_EQ(m->is_unknown(r.id), r.unknown) << r.id;
        EXPECT_EQ(m->is_control(r.id), r.control) << r.id;
        EXPECT_EQ(m->is_unused(r.id), r.unused) << r.id;
        EXPECT_EQ(m->is_byte(r.id), r.byte) << r.id;
        EXPECT_EQ(m->is_user_defined(r.id), r.user_defined) << r.id;
    }
    EXPECT_EQ(cv::to_string(cv::piece_type::user_defined), "USER_DEFINED");
    EXPECT_EQ(cv::to_string(cv::spm_model_type::character), "CHAR");
}

// tests/convert/make_models.py's SentencePiece models (Debian's sentencepiece 0.1.97 trained them).
TEST(SentencePieceModel, TheTestCheckpointsTokenizers) {
    const char* models = std::getenv("MINFER_CONVERT_MODELS");
    if (models == nullptr || *models == '\0')
        GTEST_SKIP() << "MINFER_CONVERT_MODELS is not set: the real tokenizer.model files are not read (set it to the "
                        "folder tests/convert/make_models.py writes, build/convert-models)";
    struct expect {
        const char* model;
        std::size_t pieces, control;
    };
    for (const expect& x : {expect{"Tiny-Llama-SPM", 400, 2}, expect{"Tiny-Mistral-v0.3-SPM", 360, 4}}) {
        auto m = cv::read_sentencepiece_model(std::filesystem::path(models) / x.model / "tokenizer.model");
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->size(), x.pieces) << x.model;
        EXPECT_EQ(m->trainer_spec.model_type, cv::spm_model_type::bpe);
        EXPECT_TRUE(m->trainer_spec.byte_fallback);
        EXPECT_TRUE(m->trainer_spec.split_digits);
        EXPECT_TRUE(m->trainer_spec.allow_whitespace_only_pieces);
        EXPECT_EQ(m->trainer_spec.vocab_size, static_cast<std::int32_t>(x.pieces));
        EXPECT_EQ(m->trainer_spec.pad_id, -1);
        EXPECT_EQ(m->normalizer_spec.name, "identity");
        EXPECT_TRUE(m->normalizer_spec.add_dummy_prefix);
        EXPECT_FALSE(m->normalizer_spec.remove_extra_whitespaces);
        std::size_t unknown = 0, control = 0, bytes = 0;
        for (std::size_t i = 0; i < m->size(); ++i) {
            unknown += m->is_unknown(i);
            control += m->is_control(i);
            bytes += m->is_byte(i);
        }
        EXPECT_EQ(unknown, 1u);
        EXPECT_EQ(control, x.control) << x.model;
        EXPECT_EQ(bytes, 256u);
        EXPECT_EQ(m->pieces[0].piece, "<unk>");
    }
}

}  // namespace
