// Error text: code and section ids, exact message goldens, and escaping of file-controlled bytes.
#include <gtest/gtest.h>

#include <cerrno>

#include <string>
#include <string_view>
#include <vector>

#include "gguf_bytes.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"
#ifdef MINFER_TEST_CHECK
#include "minfer/check/errors.hpp"
#endif
#ifdef MINFER_TEST_REMOTE
#include "minfer/remote/errors.hpp"
#endif
#ifdef MINFER_TEST_TOOLBOX
#include "minfer/toolbox/errors.hpp"
#endif
#ifdef MINFER_TEST_CONVERT
#include "minfer/convert/errors.hpp"
#endif

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

// The names of one domain's codes 0..n-1 (n: the first number it does not have).
std::vector<std::string_view> names_of(std::uint8_t domain) {
    std::vector<std::string_view> out;
    for (unsigned n = domain == domains::loader ? 0 : 1; n < 256; ++n) {
        const std::string_view name = to_string(make_code(domain, static_cast<std::uint8_t>(n)));
        // the loader's numbers that moved to a library are "unknown" up to its last code
        if (name == "unknown" && (domain != domains::loader || n > static_cast<unsigned>(last_code))) break;
        out.push_back(name);
    }
    return out;
}

// The loader's codes keep their numbers; the numbers of codes that moved to a library are unknown to it.
TEST(ErrorIds, EveryLoaderCodeHasItsStableName) {
    const std::vector<std::string_view> names = {
        "ok", "io_error", "out_of_memory", "truncated", "bad_magic", "bad_version", "byte_swapped",
        "version_unsupported", "version_too_new", "negative_count", "count_too_large", "empty_key", "duplicate_key",
        "bad_value_type", "nested_array", "string_too_long", "string_exceeds_file", "array_too_long",
        "array_exceeds_file", "bad_bool", "alignment_wrong_type", "bad_alignment", "bad_name_length",
        "duplicate_tensor", "bad_n_dims", "bad_dim", "shape_overflow", "bad_tensor_type", "removed_tensor_type",
        "not_block_multiple", "size_overflow", "offset_mismatch", "data_size_overflow", "data_truncated",
        "split_not_first", "split_no_mismatch", "split_count_mismatch", "split_part_missing",
        "split_tensor_count_mismatch", "split_duplicate_tensor", "split_bad_key", "key_not_found", "type_mismatch",
        "tensor_not_found", "index_out_of_range", "nul_in_name", "value_out_of_range", "split_arch_mismatch",
        "split_bad_name", "bad_value_text", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown",
        "buffer_size_mismatch", "unknown", "unknown", "unknown", "head_incomplete", "fetch_budget_exceeded",
        "http_status", "unknown", "unknown", "transfer_failed", "bad_hyperparameter", "model_incomplete", "unknown",
        "input_too_large"};
    EXPECT_EQ(names_of(domains::loader), names);
    EXPECT_EQ(static_cast<std::size_t>(last_code) + 1, names.size());
    EXPECT_EQ(to_string(static_cast<errc>(names.size())), "unknown");
    EXPECT_EQ(to_string(static_cast<errc>(255)), "unknown");
    EXPECT_EQ(to_string(static_cast<errc>(0xFFFF)), "unknown");  // a domain no one registered
}

// Each library names its own codes (its errors.cpp, registered by including its errors.hpp): the same
// names as when errc held them all, so JSON and Python show what they did.
TEST(ErrorIds, EveryLibraryNamesItsOwnCodes) {
    EXPECT_EQ(names_of(domains::gguf_write),
              (std::vector<std::string_view>{"token_not_found", "no_room_in_place", "journal_present",
                                             "journal_invalid", "too_many_parts", "output_not_regular"}));
    EXPECT_EQ(to_string(minfer::gguf::write_codes::journal_present), "journal_present");
    EXPECT_EQ(names_of(domains::quant),
              (std::vector<std::string_view>{"type_not_convertible", "type_not_quantizable", "importance_required",
                                             "quantize_failed", "bad_imatrix", "imatrix_mismatch",
                                             "requantize_refused", "non_finite_weight", "row_too_long"}));
    EXPECT_EQ(to_string(minfer::quant::codes::bad_imatrix), "bad_imatrix");
#ifdef MINFER_TEST_CHECK
    EXPECT_EQ(names_of(domains::check),
              (std::vector<std::string_view>{"hash_unavailable", "manifest_too_large", "manifest_bad_line"}));
    EXPECT_EQ(find_error_domain(domains::check)->library, "check");
#endif
#ifdef MINFER_TEST_REMOTE
    EXPECT_EQ(names_of(domains::remote), (std::vector<std::string_view>{"range_ignored", "bad_content_range", "library_unavailable"}));
    EXPECT_EQ(to_string(minfer::remote::codes::bad_content_range), "bad_content_range");
#endif
#ifdef MINFER_TEST_TOOLBOX
    EXPECT_EQ(names_of(domains::toolbox), (std::vector<std::string_view>{"bad_selection", "key_not_adjustable",
                                                                          "sources_incompatible", "bad_config",
                                                                          "unsupported_config"}));
    EXPECT_EQ(to_string(minfer::toolbox::codes::bad_config), "bad_config");
    EXPECT_EQ(find_error_domain(domains::toolbox)->library, "toolbox");
#endif
#ifdef MINFER_TEST_CONVERT
    EXPECT_EQ(names_of(minfer::convert::error_domain_id),
              (std::vector<std::string_view>{"bad_safetensors", "unsupported_dtype", "bad_model_config",
                                             "bad_checkpoint_index", "unsupported_architecture", "no_weights",
                                             "bad_tokenizer", "unsupported_tokenizer", "bad_tensor", "bad_model_card"}));
    EXPECT_EQ(to_string(minfer::convert::codes::bad_safetensors), "bad_safetensors");
    EXPECT_EQ(find_error_domain(minfer::convert::error_domain_id)->library, "convert");
#endif
    for (std::uint8_t d : {domains::gguf_write, domains::quant}) {
        ASSERT_NE(find_error_domain(d), nullptr) << int{d};
        EXPECT_EQ(find_error_domain(d)->id, d);
    }
    EXPECT_EQ(find_error_domain(domains::gguf_write)->library, "gguf_write");
}

// The loader's header does not declare the libraries' codes: errc has no enumerator of theirs.
template <class E>
concept declares_range_ignored = requires { E::range_ignored; };
template <class E>
concept declares_journal_present = requires { E::journal_present; };
static_assert(!declares_range_ignored<errc> && !declares_journal_present<errc>);
static_assert(domain_of(minfer::gguf::write_codes::journal_present) == domains::gguf_write);
static_assert(domain_of(minfer::quant::codes::non_finite_weight) == domains::quant);
static_assert(domain_of(errc::input_too_large) == domains::loader);

// A library adds a code by its own header and names it by its own domain: the loader learns the name and
// the description from the registry, with no change of its own.
std::string_view test_domain_name(std::uint8_t code) noexcept { return code == 1 ? "test_code" : ""; }
std::string test_domain_describe(const error& e, bool path_said) {
    std::string out = "the test code with found ";
    out += std::to_string(e.found);
    if (!path_said) out += " (no path said)";
    return out;
}
constexpr error_domain test_domain{250, "test", &test_domain_name, &test_domain_describe};

TEST(ErrorIds, ACodeOfANewDomainNamesAndDescribesItself) {
    const errc code = make_code(250, 1);
    EXPECT_EQ(to_string(code), "unknown");
    register_error_domain(test_domain);
    EXPECT_EQ(to_string(code), "test_code");
    EXPECT_EQ(to_string(make_code(250, 2)), "unknown");
    error e;
    e.code = code;
    e.found = 7;
    e.file = "m.gguf";
    EXPECT_EQ(e.description(), "the test code with found 7 (no path said)");
    EXPECT_EQ(e.message(), "m.gguf: the test code with found 7 [test_code]");
    e.code = make_code(250, 2);
    EXPECT_EQ(e.description(), "unknown error");
    error_domain loader{domains::loader, "x", &test_domain_name, &test_domain_describe};
    register_error_domain(loader);  // the loader's own domain cannot be replaced
    EXPECT_EQ(to_string(errc::io_error), "io_error");
    EXPECT_EQ(to_string(make_code(0, 1)), "io_error");
}

TEST(ErrorIds, Sections) {
    EXPECT_EQ(to_string(section::file), "file");
    EXPECT_EQ(to_string(section::header), "header");
    EXPECT_EQ(to_string(section::metadata), "metadata");
    EXPECT_EQ(to_string(section::tensor_info), "tensor_info");
    EXPECT_EQ(to_string(section::data), "data");
    EXPECT_EQ(to_string(section::split), "split");
    EXPECT_EQ(to_string(section::access), "access");
    EXPECT_EQ(to_string(static_cast<section>(99)), "unknown");
}

TEST(ErrorIds, EveryCodeDescribesItselfWithoutCrashing) {
    std::vector<errc> all;
    for (unsigned d = 0; d < 256; ++d) {
        const auto domain = static_cast<std::uint8_t>(d);
        for (std::size_t n = 0; n < names_of(domain).size() + 1; ++n)  // and the first number past the last
            all.push_back(make_code(domain, static_cast<std::uint8_t>(n + (domain == domains::loader ? 0 : 1))));
    }
    EXPECT_GE(all.size(), 70u + 19u);
    for (const errc c : all) {
        for (section s : {section::file, section::header, section::tensor_info, section::split}) {
            error e;
            e.code = c;
            e.where = s;
            e.found = 0xFFFFFFFFFFFFFFFFull;  // hostile values must not break the text
            e.expected = 3;
            e.subject = std::string("x\0y", 3);
            const std::string m = e.message();
            EXPECT_FALSE(e.description().empty()) << to_string(c);
            std::string tag(1, '[');  // appended: GCC 12 -O3 reports a false -Wrestrict on `"[" + std::string`
            tag += to_string(e.code);
            tag += ']';
            EXPECT_NE(m.find(tag), std::string::npos) << m;
            EXPECT_EQ(m.find('\0'), std::string::npos) << to_string(c);
        }
    }
}

// ---- goldens -------------------------------------------------------------------------------

std::string message_of(const gguf_bytes& g, const std::string& file = "x.gguf") {
    error e = parse_error(g);
    e.file = file;
    return e.message();
}

TEST(ErrorGoldens, OffsetMismatch) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {16}, tensor_type::f32, 64).pad(32).zeros(128);
    EXPECT_EQ(message_of(g), "x.gguf: tensor_info at byte 49: tensor 'w' has offset 64, expected 0 [offset_mismatch]");
}

TEST(ErrorGoldens, BadMagic) {
    gguf_bytes g;
    g.raw("PK\x03\x04").zeros(20);  // a zip file
    EXPECT_EQ(message_of(g),
              "x.gguf: header at byte 0: invalid magic characters: 'PK\\x03\\x04', expected 'GGUF' [bad_magic]");
}

TEST(ErrorGoldens, ByteSwapped) {
    gguf_bytes g;
    g.header(0x03000000u, 0, 0);
    EXPECT_EQ(message_of(g),
              "x.gguf: header at byte 4: this GGUF file version 50331648 is extremely large, is there a mismatch "
              "between the host and model endianness? [byte_swapped]");
}

TEST(ErrorGoldens, CountTooLarge) {
    gguf_bytes g;
    g.header(3, 0, std::int64_t{1} << 62);
    EXPECT_EQ(message_of(g),
              "x.gguf: header at byte 16: n_kv = 4611686018427387904 is more than the rest of the file can hold "
              "(at most 0) [count_too_large]");
}

TEST(ErrorGoldens, StringExceedsFile) {
    gguf_bytes g;
    g.header(3, 0, 1).key("general.name", value_type::string).str_len(1900544, "abc");
    EXPECT_EQ(message_of(g),
              "x.gguf: metadata at byte 48: string length 1900544 exceeds remaining file size 3 bytes (string value "
              "of 'general.name') [string_exceeds_file]");
}

TEST(ErrorGoldens, DuplicateKey) {
    gguf_bytes g;
    g.header(3, 0, 2).kv_u32("k", 1).kv_u32("k", 2);
    EXPECT_EQ(message_of(g), "x.gguf: metadata at byte 41: duplicate key 'k' for KV 0 and 1 [duplicate_key]");
}

TEST(ErrorGoldens, NotBlockMultiple) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("blk.0.ffn_down.weight", {895, 4}, tensor_type::q4_0, 0);
    EXPECT_EQ(message_of(g),
              "x.gguf: tensor_info at byte 57: tensor 'blk.0.ffn_down.weight' of type 2 (q4_0) has 895 elements per "
              "row, not a multiple of block size (32) [not_block_multiple]");
}

TEST(ErrorGoldens, RemovedType) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {32}, 31u, 0);
    EXPECT_EQ(message_of(g),
              "x.gguf: tensor_info at byte 45: tensor 'w' has type 31 (q4_0_4_4), which ggml no longer supports in "
              "files; re-convert it as q4_0 [removed_tensor_type]");
}

TEST(ErrorGoldens, DataTruncated) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {64}, tensor_type::f32, 0).pad(32).zeros(100);
    EXPECT_EQ(message_of(g),
              "x.gguf: data at byte 64: tensor 'w' needs the file to hold 320 bytes, but it has 164: 156 bytes "
              "missing (truncated download?) [data_truncated]");
}

TEST(ErrorGoldens, SplitPartContext) {
    error e;
    e.code = errc::split_no_mismatch;
    e.where = section::split;
    e.subject = "m-00002-of-00003.gguf";
    e.file = "m-00002-of-00003.gguf";
    e.part = 2;
    e.n_parts = 3;
    e.expected = 1;
    e.found = 2;
    EXPECT_EQ(e.message(),
              "m-00002-of-00003.gguf (part 2 of 3): split: this part has split.no=2, expected 1 [split_no_mismatch]");
    EXPECT_EQ(e.description(), "split 'm-00002-of-00003.gguf' has split.no=2, expected 1");  // alone, it names the file
}

TEST(ErrorGoldens, AccessErrorsHaveNoLocation) {
    gguf_bytes g;
    g.header(3, 0, 1).kv_u32("llama.block_count", 2);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r);
    EXPECT_EQ(error_of(r->get<std::string_view>("llama.block_count")).message(),
              "key 'llama.block_count' has type u32, expected string [type_mismatch]");
    auto a = r->find("llama.block_count")->get<array_view>();
    EXPECT_EQ(error_of(a).message(), "key 'llama.block_count' has type u32, expected array [type_mismatch]");
    array_view empty;
    EXPECT_EQ(error_of(empty.at<std::uint8_t>(3)).message(),
              "index 3 is out of range for an array of 0 elements [index_out_of_range]");
    EXPECT_EQ(error_of(empty.at<float>(0)).message(), "value has type u8, expected f32 [type_mismatch]");
}

TEST(ErrorGoldens, IoError) {
    temp_dir dir;
    const auto p = dir / "nope.gguf";
    EXPECT_EQ(error_of(mapped_file::open(p)).message(),
              p.string() + ": cannot open: No such file or directory [io_error]");
}

TEST(ErrorGoldens, NoFileNoPrefix) {
    error e;
    e.code = errc::bad_version;
    e.where = section::header;
    e.offset = 4;
    EXPECT_EQ(e.message(), "header at byte 4: bad GGUF version: 0 [bad_version]");
    error ok;
    EXPECT_EQ(ok.message(), "no error [ok]");
}

// ---- escaping ------------------------------------------------------------------------------

TEST(Escape, PrintableAsciiAsIs) {
    EXPECT_EQ(escape("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
    EXPECT_EQ(escape(""), "");
    EXPECT_EQ(escape(" ~"), " ~");
}

TEST(Escape, CEscapes) {
    EXPECT_EQ(escape("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    EXPECT_EQ(escape("it's"), "it\\'s");
    EXPECT_EQ(escape("back\\slash"), "back\\\\slash");
}

TEST(Escape, ControlBytesAsHex) {
    EXPECT_EQ(escape(std::string("\0\x01\x1b\x7f", 4)), "\\x00\\x01\\x1B\\x7F");
    EXPECT_EQ(escape("\x1b[2J\x1b]0;pwned\x07"), "\\x1B[2J\\x1B]0;pwned\\x07");  // terminal escapes neutralised
}

TEST(Escape, Utf8) {
    EXPECT_EQ(escape("\xE2\x96\x81the"), "\xE2\x96\x81the");            // U+2581, kept
    EXPECT_EQ(escape("caf\xC3\xA9"), "caf\xC3\xA9");                    // U+00E9
    EXPECT_EQ(escape("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");          // U+1F600
    EXPECT_EQ(escape("\xC3"), "\\xC3");                                  // cut sequence
    EXPECT_EQ(escape("\xC0\xAF"), "\\xC0\\xAF");                         // overlong '/'
    EXPECT_EQ(escape("\xE0\x80\xAF"), "\\xE0\\x80\\xAF");                // overlong 3-byte
    EXPECT_EQ(escape("\xED\xA0\x80"), "\\xED\\xA0\\x80");                // UTF-16 surrogate
    EXPECT_EQ(escape("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");       // above U+10FFFF
    EXPECT_EQ(escape("\xFF\xFE"), "\\xFF\\xFE");
    EXPECT_EQ(escape("\xE2\x96"), "\\xE2\\x96");
}

TEST(Escape, DangerousCodePointsAsUnicodeEscapes) {
    EXPECT_EQ(escape("\xC2\x85"), "\\u0085");                        // NEL, a C1 control
    EXPECT_EQ(escape("\xC2\x9B" "31m"), "\\u009B31m");               // CSI
    EXPECT_EQ(escape("abc\xE2\x80\xAE" "fdp.exe"), "abc\\u202Efdp.exe");  // right-to-left override
    EXPECT_EQ(escape("\xE2\x81\xA6"), "\\u2066");                    // left-to-right isolate
}

TEST(Escape, SubjectsAreEscapedInMessages) {
    gguf_bytes g;
    const std::string evil = "w\x1b[31m\xE2\x80\xAE";
    g.header(3, 1, 0).tensor_info(evil, {33}, tensor_type::q4_0, 0);
    const error e = parse_error(g);
    EXPECT_EQ(e.subject, evil);
    EXPECT_EQ(e.description(),
              "tensor 'w\\x1B[31m\\u202E' of type 2 (q4_0) has 33 elements per row, not a multiple of block size (32)");
    error f;
    f.code = errc::io_error;
    f.file = "dir/\x1b]0;x\x07.gguf";
    f.sys_errno = ENOENT;
    // The path is said once, escaped; description() alone (no file prefix) names it.
    EXPECT_EQ(f.message(), "dir/\\x1B]0;x\\x07.gguf: cannot open: No such file or directory [io_error]");
    EXPECT_EQ(f.description(), "cannot open 'dir/\\x1B]0;x\\x07.gguf': No such file or directory");
}

TEST(Escape, LongSubjectsAreCapped) {
    gguf_bytes g;
    const std::string key(1000, 'k');
    g.header(3, 0, 2).kv_u8(key, 1).kv_u8(key, 2);
    const error e = parse_error(g);
    EXPECT_EQ(e.code, errc::duplicate_key);
    EXPECT_EQ(e.subject.size(), 256u);
}

}  // namespace

// A result carries its error on the heap (result.hpp's error_box): returning one costs a pointer,
// not the few hundred bytes of an error, on every return of every call chain.
static_assert(sizeof(minfer::gguf::result<void>) <= 2 * sizeof(void*));
static_assert(sizeof(minfer::gguf::result<std::uint64_t>) <= 2 * sizeof(void*));
static_assert(sizeof(minfer::gguf::error) > 8 * sizeof(void*));  // what boxing saves

TEST(ResultBox, KeepsEveryFieldAndCopiesIndependently) {
    using namespace minfer::gguf;
    error e;
    e.code = errc::truncated;
    e.offset = 77;
    e.file = "a-long-path-that-does-not-fit-in-the-small-string-buffer.gguf";
    e.detail = "detail";
    result<int> r = unexpected(e);
    result<int> copy = r;
    ASSERT_FALSE(copy.has_value());
    EXPECT_EQ(copy.error().code, errc::truncated);
    EXPECT_EQ(copy.error().offset, 77u);
    EXPECT_EQ(copy.error().file, e.file);
    EXPECT_NE(&copy.error(), &r.error());  // a deep copy, not a shared box
    error moved = std::move(r).error();
    EXPECT_EQ(moved.detail, "detail");
    EXPECT_EQ(copy.error().detail, "detail");  // the copy is untouched by the move from the original
    result<void> v = unexpected(moved);
    EXPECT_EQ(v.error().file, e.file);
    result<void> ok;
    EXPECT_TRUE(ok.has_value());
}
