// `minfer edit` end to end: every option, each refusal with its smallest trigger (exit code, the one
// stderr line, nothing written), round trips checked with the loader (values, key order, every
// tensor's info and bytes against the input), the input never touched, --dry-run, in-place edits
// (fit, no room, repeated, recovery) and a real file.
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "cli_support.hpp"
#include "special_files.hpp"
#include "minfer/gguf_write/in_place.hpp"

namespace minfer_cli_test {
namespace {

// A model for edits: a vocabulary with a duplicate, chat templates (plain and named), a long
// description to make room for in-place edits, an alignment key and tensors with non-zero bytes.
const std::vector<std::string> vocab{"<unk>", "<s>", "</s>", "hello", "hello", "w\xc3\xb6rld"};

fs::path edit_dir() {
    static const fs::path d = [] {
        const fs::path p = temp_root() / "edit";
        fs::create_directories(p);
        return p;
    }();
    return d;
}

void write_model(const fs::path& p, std::size_t description_bytes = 20) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "old name");
    w.set_string("general.description", std::string(description_bytes, 'd'));
    w.set_u32("llama.block_count", 2);
    w.set_f32("llama.rope.freq_base", 10000.0f);
    w.set_u32("general.alignment", 32);
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(vocab));
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_i32("tokenizer.ggml.padding_token_id", -1);
    w.set_string("tokenizer.chat_template", "{{ old }}");
    w.set_string("tokenizer.chat_template.tool_use", "{{ tools }}");
    const std::vector<std::uint32_t> nums{1, 2, 3};
    w.set_array("t.nums", gguf::value_type::u32, std::span<const std::uint32_t>(nums));
    std::vector<float> a(12);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) + 0.5f;
    const std::array<std::int64_t, 2> ne_a{4, 3};
    w.add_tensor("a.weight", gguf::tensor_type::f32, ne_a, bytes_of(a));
    std::vector<std::byte> b(34 * 2);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(i * 7 + 1);
    const std::array<std::int64_t, 2> ne_b{32, 2};
    w.add_tensor("b.weight", gguf::tensor_type::q8_0, ne_b, b);
    must_write(w, p);
}

// A fresh copy of the model for one test.
fs::path fresh(const std::string& name, std::size_t description_bytes = 20) {
    const fs::path p = edit_dir() / name;
    fs::remove(p);
    fs::remove(gguf::undo_journal_path(p));
    write_model(p, description_bytes);
    return p;
}

gguf::model open(const fs::path& p) {
    auto m = gguf::model::open(p);
    if (!m) throw std::runtime_error(m.error().message());
    return std::move(*m);
}

// A string key of a file, copied out of the model that dies with the call.
std::string string_of(const fs::path& p, std::string_view key) {
    const gguf::model m = open(p);
    auto v = m.get<std::string_view>(key);
    return v ? std::string(*v) : std::string("<missing>");
}
bool has_key(const fs::path& p, std::string_view key) {
    const gguf::model m = open(p);
    return m.find(key) != nullptr;
}
std::uint64_t count_of(const fs::path& p, std::string_view key) {
    const gguf::model m = open(p);
    const gguf::kv* e = m.find(key);
    return e != nullptr ? e->count : 0;
}

std::vector<std::string> keys_of(const gguf::model& m) {
    std::vector<std::string> k;
    for (const gguf::kv& r : m.metadata().metadata()) k.emplace_back(r.key);
    return k;
}

// Every tensor of `b` has `a`'s info (name, type, shape, offset, size) and bytes.
void expect_same_tensors(const fs::path& a_path, const fs::path& b_path) {
    const gguf::model a = open(a_path);
    const gguf::model b = open(b_path);
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    for (std::size_t i = 0; i < a.tensors().size(); ++i) {
        const gguf::tensor_info& x = *a.tensors()[i].info;
        const gguf::tensor_info& y = *b.tensors()[i].info;
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.type, y.type);
        EXPECT_EQ(x.ne, y.ne);
        EXPECT_EQ(x.offset, y.offset);
        EXPECT_EQ(x.n_bytes, y.n_bytes);
        const auto da = a.tensor_data(a.tensors()[i]);
        const auto db = b.tensor_data(b.tensors()[i]);
        ASSERT_EQ(da.size(), db.size());
        EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin())) << x.name;
    }
}

struct file_state {
    std::string bytes;
    timespec mtime{};
};
file_state state_of(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return {slurp(p), st.st_mtim};
}
void expect_unchanged(const fs::path& p, const file_state& before) {
    const file_state now = state_of(p);
    EXPECT_TRUE(now.bytes == before.bytes) << p << " changed";
    EXPECT_EQ(now.mtime.tv_sec, before.mtime.tv_sec);
    EXPECT_EQ(now.mtime.tv_nsec, before.mtime.tv_nsec);
}

// A refusal: exit code, one stderr line equal to `line` (or starting with it when `prefix`),
// nothing on stdout, the input unchanged, the output not created.
void expect_refused(const std::vector<std::string>& changes, int rc, const std::string& line, bool prefix = false) {
    const fs::path in = fresh("refused.gguf");
    const fs::path out = edit_dir() / "refused-out.gguf";
    fs::remove(out);
    const file_state before = state_of(in);
    std::vector<std::string> args{"edit", in.string(), "-o", out.string()};
    args.insert(args.end(), changes.begin(), changes.end());
    const run_result r = run(args);
    EXPECT_EQ(r.rc, rc) << r.err;
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    if (prefix) {
        EXPECT_EQ(lines[0].substr(0, line.size()), line) << lines[0];
    } else {
        EXPECT_EQ(lines[0], line);
    }
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(out));
    expect_unchanged(in, before);
}

std::string in_name() { return (edit_dir() / "refused.gguf").string(); }

TEST(CliEdit, SetKeepsTypeAndPositionRoundTrip) {
    const fs::path in = fresh("rt.gguf");
    const fs::path out = edit_dir() / "rt-out.gguf";
    fs::remove(out);
    const file_state before = state_of(in);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--set", "llama.block_count=7", "--set",
                              "general.name=x=y"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");  // not a terminal: no progress line
    EXPECT_TRUE(has_line(r.out, "~ general.name (string): \"old name\" -> \"x=y\""));
    EXPECT_TRUE(has_line(r.out, "~ llama.block_count (u32): 2 -> 7"));
    EXPECT_TRUE(has_line(r.out, "2 keys: 0 added, 2 changed, 0 removed"));
    const gguf::model m = open(out);
    EXPECT_EQ(m.get<std::uint32_t>("llama.block_count").value(), 7u);
    EXPECT_EQ(m.get<std::string_view>("general.name").value(), "x=y");
    EXPECT_EQ(keys_of(m), keys_of(open(in)));  // changed keys keep their position
    expect_same_tensors(in, out);
    expect_unchanged(in, before);
}

TEST(CliEdit, EveryChangeInOneRun) {
    const fs::path in = fresh("all.gguf");
    const fs::path out = edit_dir() / "all-out.gguf";
    fs::remove(out);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--set", "new.u64:u64=0x10", "--set",
                              "llama.rope.freq_base:f32=500000.5", "--set", "new.flag:bool=false", "--set",
                              "new.text:str=h\xc3\xa9", "--delete", "t.nums", "--chat-template", "{{ new }}",
                              "--special-token", "eos", "</s>", "--special-token", "pad", "0", "--special-token",
                              "tokenizer.ggml.eot_token_id", "w\xc3\xb6rld", "--name", "N", "--description", "D",
                              "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");  // --quiet
    const gguf::model m = open(out);
    EXPECT_EQ(m.get<std::uint64_t>("new.u64").value(), 16u);
    EXPECT_EQ(m.get<float>("llama.rope.freq_base").value(), 500000.5f);
    EXPECT_EQ(m.get<bool>("new.flag").value(), false);
    EXPECT_EQ(m.get<std::string_view>("new.text").value(), "h\xc3\xa9");
    EXPECT_EQ(m.find("t.nums"), nullptr);
    EXPECT_EQ(m.get<std::string_view>("tokenizer.chat_template").value(), "{{ new }}");
    EXPECT_EQ(m.find("tokenizer.chat_template.tool_use"), nullptr);  // named templates go with the old one
    EXPECT_EQ(m.get<std::uint32_t>("tokenizer.ggml.eos_token_id").value(), 2u);
    EXPECT_EQ(m.get<std::uint32_t>("tokenizer.ggml.padding_token_id").value(), 0u);  // i32 -1 became u32 0
    EXPECT_EQ(m.get<std::uint32_t>("tokenizer.ggml.eot_token_id").value(), 5u);
    EXPECT_EQ(m.get<std::string_view>("general.name").value(), "N");
    EXPECT_EQ(m.get<std::string_view>("general.description").value(), "D");
    // Kept keys in their order; new keys last in the order given (the template is re-added, as
    // gguf_new_metadata does).
    const std::vector<std::string> want{"general.architecture", "general.name", "general.description",
                                        "llama.block_count", "llama.rope.freq_base", "general.alignment",
                                        "tokenizer.ggml.tokens", "tokenizer.ggml.bos_token_id",
                                        "tokenizer.ggml.padding_token_id", "new.u64", "new.flag", "new.text",
                                        "tokenizer.chat_template", "tokenizer.ggml.eos_token_id",
                                        "tokenizer.ggml.eot_token_id"};
    EXPECT_EQ(keys_of(m), want);
    expect_same_tensors(in, out);
}

TEST(CliEdit, ChangesApplyInCommandLineOrder) {
    const fs::path in = fresh("order.gguf");
    const fs::path out = edit_dir() / "order-out.gguf";
    fs::remove(out);
    // The --set needs the key the earlier --set added; the later --name wins over the earlier one
    // given through --set.
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--set", "k:u8=1", "--set", "k=2", "--set",
                              "general.name=first", "--name", "second"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const gguf::model m = open(out);
    EXPECT_EQ(m.get<std::uint8_t>("k").value(), 2);
    EXPECT_EQ(m.get<std::string_view>("general.name").value(), "second");
    const run_result bad = run({"edit", in.string(), "-o", out.string(), "--force", "--set", "k=2", "--set", "k:u8=1"});
    EXPECT_EQ(bad.rc, 1);
}

TEST(CliEdit, ChatTemplateFile) {
    const fs::path in = fresh("ctf.gguf");
    const fs::path out = edit_dir() / "ctf-out.gguf";
    const fs::path tpl = edit_dir() / "t.jinja";
    const std::string text = "{% for m in messages %}\n{{ m.content }}\n{% endfor %}\n";
    write_file(tpl, text);
    fs::remove(out);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--chat-template-file", tpl.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(string_of(out, "tokenizer.chat_template"), text);
    EXPECT_TRUE(has_line(r.out, "- tokenizer.chat_template.tool_use (string): \"{{ tools }}\""));

    const fs::path bad = edit_dir() / "bad.jinja";
    write_file(bad, "ok\xff");
    expect_refused({"--chat-template-file", bad.string()},
                   2, "Error: the value for key 'tokenizer.chat_template' is not valid: the chat template is not "
                      "valid UTF-8 (byte 2) [bad_value_text]");
    expect_refused({"--chat-template-file", (edit_dir() / "none.jinja").string()}, 3,
                   "Error: cannot read the chat template file '" + (edit_dir() / "none.jinja").string() +
                       "': No such file or directory");
    const run_result both = run({"edit", in_name(), "-o", out.string(), "--force", "--chat-template", "x",
                                 "--chat-template-file", tpl.string()});
    EXPECT_EQ(both.rc, 2);
}

TEST(CliEdit, ChatTemplateFromStdin) {
    const fs::path in = fresh("stdin.gguf");
    const fs::path out = edit_dir() / "stdin-out.gguf";
    fs::remove(out);
    const std::string cmd = "printf '{{ from stdin }}' | '" + std::string(MINFER_EXE) + "' edit '" + in.string() +
                            "' -o '" + out.string() + "' --quiet --chat-template-file -";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(string_of(out, "tokenizer.chat_template"), "{{ from stdin }}");
}

// A chat template file is read up to 16 MiB (docs/CLI.md): /dev/zero, a file of 17 MiB and 17 MiB
// on standard input are refused with the cap named, after reading at most the cap (the old read
// grew without end on /dev/zero and took 6 GB for a 1.5 GB file).
TEST(CliEdit, ChatTemplateFileIsCapped) {
    const std::string cap = "more than 16777216 bytes (16 MiB), the most read for a chat template";
    const fs::path in = fresh("capped.gguf");
    const fs::path out = edit_dir() / "capped-out.gguf";
    fs::remove(out);
#ifdef MINFER_ASAN
    const long as_mib = 0;  // ASan reserves terabytes of address space
#else
    const long as_mib = 512;  // the unbounded read fails here instead of eating the machine
#endif
    const peak zero = measure({"edit", in.string(), "-o", out.string(), "--chat-template-file", "/dev/zero"},
                              "/dev/null", as_mib);
    EXPECT_EQ(zero.rc, 3) << zero.err;
    EXPECT_EQ(zero.err, "Error: cannot read the chat template file '/dev/zero': " + cap + "\n");
#ifndef MINFER_ASAN
    EXPECT_LT(zero.rss_kib, 96L * 1024) << "peak RSS reading /dev/zero";
#endif
    EXPECT_FALSE(fs::exists(out));

    const fs::path big = edit_dir() / "big.jinja";
    { std::ofstream f(big); }
    fs::resize_file(big, (std::uint64_t{17} << 20));  // sparse: costs no disk
    expect_refused({"--chat-template-file", big.string()}, 3,
                   "Error: cannot read the chat template file '" + big.string() + "': " + cap);

    const std::string cmd = "head -c 17825792 /dev/zero | '" + std::string(MINFER_EXE) + "' edit '" + in.string() +
                            "' -o '" + out.string() + "' --quiet --chat-template-file - 2>/dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3);
    EXPECT_FALSE(fs::exists(out));

    // At the cap exactly it is read (then refused as a template for its NUL bytes, not for its size).
    fs::resize_file(big, std::uint64_t{16} << 20);
    const run_result at_cap = run({"edit", in.string(), "-o", out.string(), "--chat-template-file", big.string()});
    EXPECT_EQ(at_cap.err.find("the most read"), std::string::npos) << at_cap.err;
}

TEST(CliEdit, OutputCannotBeWritten) {
    const fs::path in = fresh("nowrite.gguf");
    const fs::path out = edit_dir() / "no-such-dir" / "out.gguf";
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--name", "x"});
    EXPECT_EQ(r.rc, 3);
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0].starts_with("Error: ")) << lines[0];
    EXPECT_NE(lines[0].find("[io_error]"), std::string::npos) << lines[0];
    EXPECT_EQ(r.out, "");
}

TEST(CliEdit, LongStringsAreCutInTheDiff) {
    const fs::path in = fresh("long.gguf");
    const std::string tpl(500, 't');
    const run_result r = run({"edit", in.string(), "--dry-run", "--chat-template", tpl});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "~ tokenizer.chat_template (string): \"{{ old }}\" -> \"" + std::string(60, 't') +
                                    "\"… (500 bytes)"));
}

TEST(CliEdit, DryRunWritesNothing) {
    const fs::path in = fresh("dry.gguf");
    const fs::path out = edit_dir() / "dry-out.gguf";
    fs::remove(out);
    const file_state before = state_of(in);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--dry-run", "--set", "a.b:u32=5", "--delete",
                              "general.name", "--set", "llama.block_count:i64=-3", "--special-token", "bos", "2",
                              "--allow-type-change"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out,
              "- general.name (string): \"old name\"\n"
              "~ llama.block_count (u32 -> i64): 2 -> -3  [type forced by --allow-type-change; expected u32]\n"
              "~ tokenizer.ggml.bos_token_id (u32): 1 -> 2\n"
              "+ a.b (u32): 5\n"
              "4 keys: 1 added, 2 changed, 1 removed\n"
              "--in-place: fits\n"
              "dry run: nothing written\n");
    EXPECT_EQ(r.err, "Warning: llama.block_count becomes i64 although llama.cpp reads it as u32: llama.cpp will not "
                     "load the model\n");
    EXPECT_FALSE(fs::exists(out));
    expect_unchanged(in, before);
    // Without -o too.
    EXPECT_EQ(run({"edit", in.string(), "--dry-run", "--name", "x"}).rc, 0);
    expect_unchanged(in, before);
}

TEST(CliEdit, DryRunSaysWhenInPlaceDoesNotFit) {
    const fs::path in = fresh("dry-nofit.gguf");
    const run_result r = run({"edit", in.string(), "--dry-run", "--description", std::string(300, 'x')});
    ASSERT_EQ(r.rc, 0) << r.err;
    bool found = false;
    for (const std::string& l : lines_of(r.out))
        if (l.starts_with("--in-place: does not fit: ") && l.find(" bytes missing (") != std::string::npos) found = true;
    EXPECT_TRUE(found) << r.out;
}

TEST(CliEdit, SameValueIsNoChange) {
    const fs::path in = fresh("same.gguf");
    const run_result r = run({"edit", in.string(), "--dry-run", "--name", "old name"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "no change: every value is already as asked"));
}

TEST(CliEdit, ValueRefusals) {
    expect_refused({"--set", "llama.block_count=-1"}, 2,
                   "Error: the value for key 'llama.block_count' is not valid: '-1' is not a u32 (0 to 4294967295) "
                   "[bad_value_text]");
    expect_refused({"--set", "llama.block_count=4294967296"}, 2,
                   "Error: the value for key 'llama.block_count' is not valid: '4294967296' is not a u32 (0 to "
                   "4294967295) [bad_value_text]");
    expect_refused({"--set", "k:u8=256"}, 2,
                   "Error: the value for key 'k' is not valid: '256' is not a u8 (0 to 255) [bad_value_text]");
    expect_refused({"--set", "llama.block_count=1e3"}, 2,
                   "Error: the value for key 'llama.block_count' is not valid: '1e3' is not a u32 (0 to 4294967295) "
                   "[bad_value_text]");
    expect_refused({"--set", "llama.block_count="}, 2,
                   "Error: the value for key 'llama.block_count' is not valid: '' is not a u32 (0 to 4294967295) "
                   "[bad_value_text]");
    expect_refused({"--set", "llama.rope.freq_base=fast"}, 2,
                   "Error: the value for key 'llama.rope.freq_base' is not valid: 'fast' is not an f32 (a finite "
                   "decimal number; nan and inf are refused) [bad_value_text]");
    expect_refused({"--set", "k:f64=nan"}, 2, "Error: the value for key 'k' is not valid: 'nan' is not an f64", true);
    expect_refused({"--set", "k:bool=yes"}, 2,
                   "Error: the value for key 'k' is not valid: 'yes' is not a bool (true or false) [bad_value_text]");
    expect_refused({"--set", "k:u33=1"}, 2,
                   "Error: the value for key 'k:u33' is not valid: unknown type 'u33' (a type is one of u8, i8, u16, "
                   "i16, u32, i32, u64, i64, f32, f64, bool, str) [bad_value_text]");
    expect_refused({"--set", "k:str=a\xff"}, 2,
                   "Error: the value for key 'k' is not valid: the text is not valid UTF-8 (byte 1); GGUF strings "
                   "are UTF-8 [bad_value_text]");
    expect_refused({"--name", "a\xff"}, 2,
                   "Error: the value for key 'general.name' is not valid: the text is not valid UTF-8 (byte 1); GGUF "
                   "strings are UTF-8 [bad_value_text]");
    expect_refused({"--set", "k\xff:u8=1"}, 2,
                   "Error: the value for key 'k\\xFF' is not valid: the key is not valid UTF-8 (byte 1) "
                   "[bad_value_text]");
    expect_refused({"--set", ":u8=1"}, 2,
                   "Error: value is not valid: a key cannot be empty [bad_value_text]");
    expect_refused({"--set", "general.alignment=3"}, 2,
                   "Error: the value for key 'general.alignment' is not valid: 3 is not a power of two above 0, "
                   "which general.alignment must be [bad_value_text]");
    expect_refused({"--set", "general.alignment:u64=32"}, 2,
                   "Error: the value for key 'general.alignment' is not valid: llama.cpp reads general.alignment as "
                   "a u32 and refuses a model that stores another type: expected u32, given u64; give a u32 value (or "
                   "leave the type out), or force the change with --allow-type-change (Python: "
                   "allow_type_change=True) [bad_value_text]");
    expect_refused({"--set", "t.nums=1"}, 2,
                   "Error: the value for key 't.nums' is not valid: the key is an array of u32 (3 items); only "
                   "scalars and strings can be set [bad_value_text]");
    expect_refused({"--set", "noequals"}, 2,
                   "Error: value is not valid: 'noequals' has no '=': give KEY=VALUE or KEY:TYPE=VALUE "
                   "[bad_value_text]");
    expect_refused({"--special-token", "bogus", "1"}, 2,
                   "Error: the value for key 'bogus' is not valid: unknown special token 'bogus'", true);
}

TEST(CliEdit, KeyAndTokenRefusals) {
    const std::string f = in_name();
    expect_refused({"--set", "no.such=1"}, 1,
                   "Error: " + f + ": key 'no.such' not found; the model has no such key; to add it give its type: "
                   "--set KEY:TYPE=VALUE with TYPE one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool, str "
                   "[key_not_found]");
    expect_refused({"--delete", "no.such"}, 1,
                   "Error: " + f + ": key 'no.such' not found; there is nothing to delete [key_not_found]");
    expect_refused({"--special-token", "eos", "6"}, 1,
                   "Error: " + f + ": token id 6 is outside the vocabulary of 6 tokens [token_not_found]");
    expect_refused({"--special-token", "eos", "<|nope|>"}, 1,
                   "Error: " + f + ": no token of the vocabulary is '<|nope|>' [token_not_found]");
}

TEST(CliEdit, NoVocabulary) {
    const fs::path in = edit_dir() / "novocab.gguf";
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    must_write(w, in);
    const run_result r = run({"edit", in.string(), "--dry-run", "--special-token", "eos", "</s>"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "Error: " + in.string() +
                         ": no token of the vocabulary is '</s>': the model has no vocabulary (no string array "
                         "tokenizer.ggml.tokens) [token_not_found]\n");
}

TEST(CliEdit, SeveralMatchesWarn) {
    const fs::path in = fresh("warn.gguf");
    const run_result r = run({"edit", in.string(), "--dry-run", "--special-token", "eos", "hello"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "Warning: 2 tokens are 'hello' (ids 3, 4); tokenizer.ggml.eos_token_id takes the first, 3\n");
    const run_result d = run({"edit", in.string(), "--dry-run", "--delete", "general.architecture"});
    ASSERT_EQ(d.rc, 0) << d.err;
    EXPECT_EQ(d.err, "Warning: general.architecture is deleted: llama.cpp will not load the model without it\n");
}

TEST(CliEdit, UsageRefusals) {
    const fs::path in = fresh("usage.gguf");
    const fs::path out = edit_dir() / "usage-out.gguf";
    fs::remove(out);
    const run_result none = run({"edit", in.string(), "-o", out.string()});
    EXPECT_EQ(none.rc, 2);
    EXPECT_EQ(none.err, "Error: no change given: use --set, --delete, --chat-template, --chat-template-file, "
                        "--special-token, --name, --description or --reserve\n");
    const run_result no_out = run({"edit", in.string(), "--name", "x"});
    EXPECT_EQ(no_out.rc, 2);
    EXPECT_EQ(no_out.err, "Error: no output given: write a new file with -o OUT, or edit the model itself with "
                          "--in-place\n");
    const run_result odd = run({"edit", in.string(), "-o", out.string(), "--special-token", "eos"});
    EXPECT_EQ(odd.rc, 2);
    const run_result no_model = run({"edit", "--name", "x"});
    EXPECT_EQ(no_model.rc, 2);
    EXPECT_FALSE(fs::exists(out));
}

TEST(CliEdit, OutputExistsNeedsForce) {
    const fs::path in = fresh("exists.gguf");
    const fs::path out = edit_dir() / "exists-out.gguf";
    write_file(out, "keep me");
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--name", "x"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: the output '" + out.string() + "' exists; add --force to replace it\n");
    EXPECT_EQ(slurp(out), "keep me");
    const run_result f = run({"edit", in.string(), "-o", out.string(), "--name", "x", "--force"});
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_EQ(string_of(out, "general.name"), "x");
    // -f, as quantize, split, merge and tensor --dump spell it too
    const run_result short_f = run({"edit", in.string(), "-o", out.string(), "--name", "y", "-f"});
    ASSERT_EQ(short_f.rc, 0) << short_f.err;
    EXPECT_EQ(string_of(out, "general.name"), "y");
}

// -o names a FIFO, a device, a socket, a directory or a dangling link: refused with or without
// --force, exit 2, the thing still there (as root, `-o /dev/null --force` replaced /dev/null).
TEST(CliEdit, OutputThatIsNoRegularFileIsNeverReplaced) {
    const fs::path in = fresh("special.gguf");
    const fs::path dir = edit_dir() / "special";
    fs::create_directories(dir);
    std::vector<special_file> specials = make_special_files(dir, "out");
    const fs::path dangling = dir / "dangling.gguf";
    fs::remove(dangling);
    fs::create_symlink(dir / "nowhere.gguf", dangling);
    specials.push_back({"symbolic link to a missing file", dangling, fs::file_type::symlink});
    const fs::path to_fifo = dir / "to-fifo.gguf";
    fs::remove(to_fifo);
    fs::create_symlink(specials.front().path, to_fifo);
    specials.push_back({"symbolic link to a FIFO", to_fifo, fs::file_type::symlink});
    for (const special_file& s : specials) {
        for (const bool force : {true, false}) {
            SCOPED_TRACE(s.kind + (force ? " --force" : ""));
            std::vector<std::string> args{"edit", in.string(), "-o", s.path.string(), "--name", "x"};
            if (force) args.push_back("--force");
            const run_result r = run(args);
            EXPECT_EQ(r.rc, 2) << r.err;
            EXPECT_EQ(r.err.rfind("Error: " + s.path.string() + ": cannot write the output: it is a " + s.kind, 0), 0u)
                << r.err;
            EXPECT_NE(r.err.find("[output_not_regular]"), std::string::npos) << r.err;
            EXPECT_EQ(fs::symlink_status(s.path).type(), s.type);
        }
    }
    EXPECT_FALSE(fs::exists(dir / "nowhere.gguf"));
    EXPECT_EQ(names_in(dir).size(), specials.size());  // no temporary left behind
}

// -o names a link to a regular file: with --force the target is replaced and the link stays (as
// `cp` writes through a link); without it, the existing target is refused like any existing file.
TEST(CliEdit, OutputLinkReplacesItsTarget) {
    const fs::path in = fresh("linked.gguf");
    const fs::path dir = edit_dir() / "linked";
    fs::remove_all(dir);
    fs::create_directories(dir / "real");
    const fs::path target = dir / "real" / "model.gguf";
    const fs::path link = dir / "link.gguf";
    write_file(target, "old");
    fs::create_symlink(fs::path("real") / "model.gguf", link);  // relative, as links usually are
    const run_result r = run({"edit", in.string(), "-o", link.string(), "--name", "x"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: the output '" + link.string() + "' exists; add --force to replace it\n");
    EXPECT_EQ(slurp(target), "old");
    const run_result f = run({"edit", in.string(), "-o", link.string(), "--name", "x", "--force", "--quiet"});
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(fs::read_symlink(link), fs::path("real") / "model.gguf");
    EXPECT_EQ(string_of(target, "general.name"), "x");
    EXPECT_EQ(names_in(dir / "real"), (std::set<std::string>{"model.gguf"}));
}

TEST(CliEdit, OutputIsTheInput) {
    const fs::path in = fresh("self.gguf");
    const file_state before = state_of(in);
    const fs::path link = edit_dir() / "self-link.gguf";
    const fs::path sym = edit_dir() / "self-sym.gguf";
    fs::remove(link);
    fs::remove(sym);
    fs::create_hard_link(in, link);
    fs::create_symlink(in, sym);
    const std::string other_spelling = (edit_dir() / "." / "self.gguf").string();
    for (const std::string& o : {in.string(), other_spelling, link.string(), sym.string()}) {
        for (const bool force : {false, true}) {
            std::vector<std::string> args{"edit", in.string(), "-o", o, "--name", "x"};
            if (force) args.push_back("--force");
            const run_result r = run(args);
            EXPECT_EQ(r.rc, 2) << o;
            EXPECT_EQ(r.err, "Error: the output '" + o +
                                 "' is the input model: a rewrite never replaces its input; write another file, or "
                                 "edit this one with --in-place\n");
        }
    }
    expect_unchanged(in, before);
}

TEST(CliEdit, SplitSet) {
    const fs::path dir = edit_dir() / "split";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fixtures::write_split(dir, "s");
    const fs::path first = dir / "s-00001-of-00003.gguf";
    const fs::path second = dir / "s-00002-of-00003.gguf";
    const fs::path out = edit_dir() / "split-out.gguf";
    fs::remove(out);
    const run_result r = run({"edit", first.string(), "-o", out.string(), "--name", "x"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: '" + first.string() +
                         "' is part 1 of a split set of 3 parts; -o would write a lone part 1 that loads only beside "
                         "the other parts. Edit the set with --in-place (part 1 holds the metadata), or merge it "
                         "first (minfer merge)\n");
    EXPECT_FALSE(fs::exists(out));
    // A later part as the output is the input too.
    const run_result part = run({"edit", first.string(), "-o", second.string(), "--name", "x", "--force"});
    EXPECT_EQ(part.rc, 2);
    EXPECT_NE(part.err.find("is the input model (one of its split parts)"), std::string::npos) << part.err;
    const run_result key = run({"edit", first.string(), "--dry-run", "--delete", "split.count"});
    EXPECT_EQ(key.rc, 2);
    EXPECT_NE(key.err.find("the split.* keys describe this split set of 3 parts"), std::string::npos) << key.err;
}

TEST(CliEdit, InvalidInput) {
    const fs::path out = edit_dir() / "invalid-out.gguf";
    const run_result r = run({"edit", fx().bad_magic.string(), "-o", out.string(), "--name", "x"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.substr(0, 27), "Error: failed to parse GGUF");
    const run_result missing = run({"edit", (edit_dir() / "nope.gguf").string(), "-o", out.string(), "--name", "x"});
    EXPECT_EQ(missing.rc, 3);
    EXPECT_FALSE(fs::exists(out));
}

// ---- in place ----

std::uint64_t data_offset_of(const fs::path& p) {
    const gguf::model m = open(p);
    return m.metadata().data_offset();
}

TEST(CliEditInPlace, FitsAndKeepsTheData) {
    const fs::path in = fresh("ip.gguf", 400);  // a long description to shorten
    const std::string before = slurp(in);
    const std::uint64_t D = data_offset_of(in);
    const run_result r = run({"edit", in.string(), "--in-place", "--description", "short", "--set", "k:u32=9"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "+ k (u32): 9"));
    const std::string after = slurp(in);
    ASSERT_EQ(after.size(), before.size());
    EXPECT_TRUE(after.substr(D) == before.substr(D));  // the data section is untouched
    const gguf::model m = open(in);
    EXPECT_EQ(m.metadata().data_offset(), D);
    EXPECT_EQ(m.get<std::string_view>("general.description").value(), "short");
    EXPECT_EQ(m.get<std::uint32_t>("k").value(), 9u);
    const gguf::kv* pad = m.find("minfer.padding");
    ASSERT_NE(pad, nullptr);
    EXPECT_TRUE(pad->is_array());
    EXPECT_FALSE(fs::exists(gguf::undo_journal_path(in)));
    bool said = false;
    for (const std::string& l : lines_of(r.out))
        if (l.starts_with("Edited '" + in.string() + "' in place: " + std::to_string(D) + " bytes of header rewritten"))
            said = true;
    EXPECT_TRUE(said) << r.out;

    // Again: the padding is reused (one padding key, the file still the same size).
    const std::uint64_t pad_before = pad->count;
    const run_result again = run({"edit", in.string(), "--in-place", "--description", "a bit longer"});
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(slurp(in).size(), before.size());
    const gguf::model m2 = open(in);
    EXPECT_EQ(m2.get<std::string_view>("general.description").value(), "a bit longer");
    std::size_t pads = 0;
    for (const gguf::kv& e : m2.metadata().metadata()) pads += e.key == "minfer.padding" ? 1u : 0u;
    EXPECT_EQ(pads, 1u);
    EXPECT_EQ(m2.find("minfer.padding")->count, pad_before - 7);  // "a bit longer" is 7 bytes longer than "short"
    EXPECT_TRUE(slurp(in).substr(D) == before.substr(D));
    // -o naming the input is allowed with --in-place.
    const run_result named = run({"edit", in.string(), "-o", in.string(), "--in-place", "--name", "n"});
    EXPECT_EQ(named.rc, 0) << named.err;
    // A full rewrite of the edited file drops the padding.
    const fs::path out = edit_dir() / "ip-out.gguf";
    fs::remove(out);
    const run_result full = run({"edit", in.string(), "-o", out.string(), "--name", "m"});
    ASSERT_EQ(full.rc, 0) << full.err;
    EXPECT_TRUE(has_line(full.out, "- minfer.padding ([u8 x " + std::to_string(count_of(in, "minfer.padding")) + "])"));
    EXPECT_FALSE(has_key(out, "minfer.padding"));
    expect_same_tensors(in, out);
}

TEST(CliEditInPlace, NoRoom) {
    const fs::path in = fresh("ip-noroom.gguf");
    const file_state before = state_of(in);
    const run_result r = run({"edit", in.string(), "--in-place", "--description", std::string(300, 'x')});
    EXPECT_EQ(r.rc, 1);
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0].starts_with("Error: " + in.string() + ": ")) << lines[0];
    EXPECT_NE(lines[0].find(" bytes missing (write a new file with -o instead) [no_room_in_place]"), std::string::npos)
        << lines[0];
    expect_unchanged(in, before);
    EXPECT_FALSE(fs::exists(gguf::undo_journal_path(in)));
}

// --reserve leaves room in a new file: an in-place edit that grows the metadata then fits, where the
// same edit of a file without room is refused; the room shrinks by what the edit took.
TEST(CliEditInPlace, ReserveMakesRoomForLaterGrowth) {
    const fs::path in = fresh("ip-reserve-in.gguf");
    const fs::path roomy = edit_dir() / "ip-reserve.gguf";
    fs::remove(roomy);
    const run_result dry = run({"edit", in.string(), "-o", roomy.string(), "--name", "n", "--reserve", "4KiB", "--dry-run"});
    EXPECT_EQ(dry.rc, 0) << dry.err;
    EXPECT_NE(dry.out.find("+ minfer.padding (u8 array): 4096 zero bytes reserved"), std::string::npos) << dry.out;
    EXPECT_FALSE(fs::exists(roomy));
    const run_result w = run({"edit", in.string(), "-o", roomy.string(), "--name", "n", "--reserve", "4KiB", "--quiet"});
    ASSERT_EQ(w.rc, 0) << w.err;
    EXPECT_EQ(count_of(roomy, gguf::in_place_padding_key), 4096u);
    const auto size = fs::file_size(roomy);

    const std::string grown(3000, 'g');
    const run_result no_room = run({"edit", in.string(), "--in-place", "--description", grown});
    EXPECT_EQ(no_room.rc, 1) << no_room.err;
    const run_result fits = run({"edit", roomy.string(), "--in-place", "--description", grown, "--quiet"});
    EXPECT_EQ(fits.rc, 0) << fits.err;
    EXPECT_EQ(fs::file_size(roomy), size);
    EXPECT_EQ(string_of(roomy, "general.description"), grown);
    EXPECT_EQ(string_of(roomy, "general.name"), "n");
    // What is left: the reserve less the growth, plus the slack the writer left before the data
    // (less than the alignment, 32).
    const std::uint64_t left = count_of(roomy, gguf::in_place_padding_key);
    EXPECT_GE(left, 4096u - (3000u - 20u));
    EXPECT_LT(left, 4096u - (3000u - 20u) + 32u);
}

TEST(CliEditInPlace, ReserveRefusals) {
    const fs::path in = fresh("ip-reserve-bad.gguf");
    const fs::path out = edit_dir() / "ip-reserve-bad-out.gguf";
    fs::remove(out);
    for (const char* bad : {"0", "-1", "1X", "", "2GiB"}) {
        const run_result r = run({"edit", in.string(), "-o", out.string(), "--name", "n", "--reserve", bad});
        EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << bad;
    }
    const run_result r = run({"edit", in.string(), "--in-place", "--name", "n", "--reserve", "1K"});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("--reserve leaves room in a new file"), std::string::npos) << r.err;
}

TEST(CliEditInPlace, OtherOutputRefused) {
    const fs::path in = fresh("ip-other.gguf");
    const run_result r = run({"edit", in.string(), "--in-place", "-o", (edit_dir() / "x.gguf").string(), "--name", "x"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "Error: --in-place edits '" + in.string() + "' itself; -o must be left out or name that file\n");
}

TEST(CliEditInPlace, SplitSetEditsPartOne) {
    const fs::path dir = edit_dir() / "split-ip";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fixtures::write_split(dir, "s");
    const fs::path first = dir / "s-00001-of-00003.gguf";
    const std::string second = slurp(dir / "s-00002-of-00003.gguf");
    const run_result r = run({"edit", first.string(), "--in-place", "--set", "general.architecture=llamb"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const gguf::model m = open(first);
    EXPECT_EQ(m.parts().size(), 3u);
    EXPECT_EQ(m.get<std::string_view>("general.architecture").value(), "llamb");
    EXPECT_TRUE(slurp(dir / "s-00002-of-00003.gguf") == second);
}

TEST(CliEditInPlace, Recover) {
    const fs::path in = fresh("ip-recover.gguf", 400);
    const run_result r = run({"edit", "--recover", in.string()});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "nothing to do: no undo journal beside '" + in.string() + "'\n");
    EXPECT_EQ(run({"edit", "--recover", in.string(), "--in-place"}).rc, 2);
    const run_result with_change = run({"edit", "--recover", in.string(), "--name", "x"});
    EXPECT_EQ(with_change.rc, 2);
    EXPECT_EQ(with_change.err, "Error: --recover resolves an interrupted edit and takes no change; run the edit "
                               "afterwards\n");

    // A journal beside the model stops every edit until it is resolved.
    const fs::path journal = gguf::undo_journal_path(in);
    write_file(journal, "not a journal");
    const file_state before = state_of(in);
    for (const bool in_place : {true, false}) {
        const fs::path out = edit_dir() / "ip-recover-out.gguf";
        fs::remove(out);
        std::vector<std::string> args{"edit", in.string(), "--name", "x"};
        if (in_place) {
            args.push_back("--in-place");
        } else {
            args.insert(args.end(), {"-o", out.string()});
        }
        const run_result j = run(args);
        EXPECT_EQ(j.rc, 1);
        EXPECT_EQ(j.err, "Error: " + journal.string() + ": an interrupted in-place edit left its undo journal '" +
                             journal.string() + "'; run 'minfer edit --recover' on the model first [journal_present]\n");
        EXPECT_FALSE(fs::exists(out));
    }
    expect_unchanged(in, before);
    const run_result bad = run({"edit", "--recover", in.string()});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("[journal_invalid]"), std::string::npos) << bad.err;
    fs::remove(journal);
}

// ---- issue 21: edit never writes a model its loader or llama.cpp's refuses ----

// split.* are the split commands' keys: a lone file with split.count 3 is a part 1 whose other parts
// do not exist, which `minfer info` then refuses.
TEST(CliEditSafety, SplitKeysAreForSplitAndMergeOnly) {
    for (const std::vector<std::string>& change :
         {std::vector<std::string>{"--set", "split.count:u16=3"}, {"--set", "split.no:u16=0"},
          {"--set", "split.tensors.count:i32=2"}}) {
        const fs::path in = fresh("split-key.gguf");
        const fs::path out = edit_dir() / "split-key-out.gguf";
        fs::remove(out);
        std::vector<std::string> args{"edit", in.string(), "-o", out.string()};
        args.insert(args.end(), change.begin(), change.end());
        const run_result r = run(args);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find("only minfer split and minfer merge write them"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
    // --allow-type-change is about types; it does not open the split keys.
    const fs::path in = fresh("split-key.gguf");
    const run_result forced =
        run({"edit", in.string(), "--dry-run", "--allow-type-change", "--set", "split.count:u16=3"});
    EXPECT_EQ(forced.rc, 2) << forced.err;
}

// A key llama.cpp reads keeps llama.cpp's type: its loader checks the stored type exactly.
TEST(CliEditSafety, KnownKeysKeepLlamaCppsType) {
    const std::string f = "Error: the value for key ";
    expect_refused({"--set", "llama.context_length:str=hello"}, 2,
                   f + "'llama.context_length' is not valid: llama.cpp reads llama.context_length as a u32 and "
                       "refuses a model that stores another type: expected u32, given str; give a u32 value (or "
                       "leave the type out), or force the change with --allow-type-change (Python: "
                       "allow_type_change=True) [bad_value_text]");
    expect_refused({"--set", "llama.block_count:bool=true"}, 2,
                   f + "'llama.block_count' is not valid: llama.cpp reads llama.block_count as a u32", true);
    expect_refused({"--set", "llama.rope.freq_base:f64=1e6"}, 2,
                   f + "'llama.rope.freq_base' is not valid: llama.cpp reads llama.rope.freq_base as a f32", true);
    expect_refused({"--set", "general.name:u32=5"}, 2,
                   f + "'general.name' is not valid: llama.cpp reads general.name as a str", true);
    expect_refused({"--set", "tokenizer.ggml.add_bos_token:u8=1"}, 2,
                   f + "'tokenizer.ggml.add_bos_token' is not valid: llama.cpp reads tokenizer.ggml.add_bos_token "
                       "as a bool", true);
    expect_refused({"--set", "tokenizer.ggml.tokens:str=x"}, 2,
                   f + "'tokenizer.ggml.tokens' is not valid: llama.cpp reads tokenizer.ggml.tokens as an array of "
                       "str and refuses a model that stores another type: expected an array of str, given str; "
                       "force the change with --allow-type-change (Python: allow_type_change=True) [bad_value_text]");
    // Another existing key keeps its own type (here one an earlier change of the run gave it).
    expect_refused({"--set", "t.k:u8=1", "--set", "t.k:u16=2"}, 2,
                   f + "'t.k' is not valid: the model stores t.k as a u8: expected u8, given u16; give a u8 value "
                       "(or leave the type out), or force the change with --allow-type-change (Python: "
                       "allow_type_change=True) [bad_value_text]");

    // The right type, given or left out, is an edit as before; the value loads as llama.cpp reads it.
    const fs::path in = fresh("known.gguf");
    const fs::path out = edit_dir() / "known-out.gguf";
    fs::remove(out);
    const run_result ok = run({"edit", in.string(), "-o", out.string(), "--set", "llama.context_length:u32=4096",
                               "--set", "llama.block_count=3", "--set", "tokenizer.ggml.add_bos_token:bool=true",
                               "--set", "llama.attention.head_count:u32=8"});
    ASSERT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(ok.err, "");
    const gguf::model m = open(out);
    EXPECT_EQ(m.find("llama.context_length")->type, gguf::value_type::u32);
    EXPECT_EQ(m.get<std::uint32_t>("llama.block_count").value(), 3u);
    EXPECT_EQ(m.get<bool>("tokenizer.ggml.add_bos_token").value(), true);
}

// --allow-type-change forces it, and the diff and a warning say so; the loader's own rule stays.
TEST(CliEditSafety, AllowTypeChangeIsExplicitAndMarked) {
    const fs::path in = fresh("forced.gguf");
    const fs::path out = edit_dir() / "forced-out.gguf";
    fs::remove(out);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--allow-type-change", "--set",
                              "llama.context_length:str=hello", "--set", "t.k:u8=1", "--set", "t.k:u16=2"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "+ llama.context_length (string): \"hello\"  [type forced by --allow-type-change; "
                                "expected u32]"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "+ t.k (u16): 2  [type forced by --allow-type-change; expected u8]")) << r.out;
    EXPECT_EQ(r.err, "Warning: llama.context_length becomes str although llama.cpp reads it as u32: llama.cpp will "
                     "not load the model\n");
    EXPECT_EQ(string_of(out, "llama.context_length"), "hello");
    // A type the key may have is not marked, with the flag or without.
    const run_result plain = run({"edit", in.string(), "--dry-run", "--allow-type-change", "--set",
                                  "llama.block_count:u32=7"});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_TRUE(has_line(plain.out, "~ llama.block_count (u32): 2 -> 7")) << plain.out;
    // general.alignment must stay a u32 power of two: the loader refuses anything else.
    const run_result align =
        run({"edit", in.string(), "--dry-run", "--allow-type-change", "--set", "general.alignment:u64=32"});
    EXPECT_EQ(align.rc, 2);
    EXPECT_NE(align.err.find("general.alignment must be a u32, not u64"), std::string::npos) << align.err;
}

// --reserve alone is an edit: a copy with room for later in-place edits.
TEST(CliEditSafety, ReserveAlone) {
    const fs::path in = fresh("reserve-alone.gguf");
    const fs::path out = edit_dir() / "reserve-alone-out.gguf";
    fs::remove(out);
    const run_result r = run({"edit", in.string(), "-o", out.string(), "--reserve", "4KiB"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "+ minfer.padding (u8 array): 4096 zero bytes reserved for later in-place edits"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "1 key: 1 added, 0 changed, 0 removed")) << r.out;
    EXPECT_EQ(count_of(out, "minfer.padding"), 4096u);
    expect_same_tensors(in, out);
    // The room serves: an in-place edit that grows the metadata now fits.
    const run_result grow = run({"edit", out.string(), "--in-place", "--description", std::string(1000, 'g')});
    EXPECT_EQ(grow.rc, 0) << grow.err;
}

// An in-place edit that changes nothing writes nothing and says so.
TEST(CliEditSafety, InPlaceNoChangeClaimsNoRewrite) {
    const fs::path in = fresh("ip-same.gguf", 400);
    const file_state before = state_of(in);
    const run_result r = run({"edit", in.string(), "--in-place", "--name", "old name", "--set", "llama.block_count=2"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "no change: every value is already as asked; '" + in.string() +
                         "' is left as it was (nothing written)\n");
    expect_unchanged(in, before);
    EXPECT_FALSE(fs::exists(gguf::undo_journal_path(in)));
}

// A damaged journal: the message says what to do, and --discard-journal does it.
TEST(CliEditSafety, DamagedJournalSaysWhatToDo) {
    const fs::path in = fresh("ip-damaged.gguf", 400);
    const fs::path journal = gguf::undo_journal_path(in);
    write_file(journal, "not a journal");
    const file_state before = state_of(in);
    const run_result bad = run({"edit", "--recover", in.string()});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_EQ(bad.err, "Error: " + journal.string() + ": undo journal '" + journal.string() +
                           "' cannot be used: it is shorter than its fixed header. The model was not touched: check "
                           "it (minfer verify '" + in.string() + "'); if it is sound, remove the journal (minfer "
                           "edit --discard-journal '" + in.string() + "', or edit_discard_journal in Python), "
                           "otherwise restore the model from a copy [journal_invalid]\n");
    EXPECT_EQ(run({"edit", "--discard-journal", in.string(), "--name", "x"}).rc, 2);
    EXPECT_TRUE(fs::exists(journal));
    const run_result d = run({"edit", "--discard-journal", in.string()});
    EXPECT_EQ(d.rc, 0) << d.err;
    EXPECT_EQ(d.out, "removed the undo journal beside '" + in.string() +
                         "'; the model is as the interrupted edit left it (check it with 'minfer verify')\n");
    EXPECT_FALSE(fs::exists(journal));
    expect_unchanged(in, before);
    const run_result again = run({"edit", "--discard-journal", in.string()});
    EXPECT_EQ(again.rc, 0);
    EXPECT_EQ(again.out, "nothing to do: no undo journal beside '" + in.string() + "'\n");
    // Edits work again.
    EXPECT_EQ(run({"edit", in.string(), "--in-place", "--name", "n"}).rc, 0);
}

// `info --key` prints a string's exact bytes, so saving a template and setting it back is the identity.
TEST(CliEditSafety, ChatTemplateRoundTripThroughInfoKey) {
    for (const std::string& tpl : {std::string("{% for m in messages %}{{ m.content }}{% endfor %}"),
                                   std::string("{{ a }}\n{{ b }}\n"), std::string("\n\n")}) {
        fs::path model = edit_dir() / "rt-0.gguf";
        fs::remove(model);
        {
            const fs::path base = fresh("rt-base.gguf");
            const run_result r = run({"edit", base.string(), "-o", model.string(), "--chat-template", tpl});
            ASSERT_EQ(r.rc, 0) << r.err;
        }
        for (int round = 1; round <= 3; ++round) {
            const fs::path saved = edit_dir() / "rt.jinja";
            const run_result k = run({"info", "--key", "tokenizer.chat_template", model.string()}, saved);
            ASSERT_EQ(k.rc, 0) << k.err;
            EXPECT_EQ(slurp(saved), tpl) << "round " << round;
            const fs::path next = edit_dir() / ("rt-" + std::to_string(round) + ".gguf");
            fs::remove(next);
            const run_result e =
                run({"edit", model.string(), "-o", next.string(), "--chat-template-file", saved.string()});
            ASSERT_EQ(e.rc, 0) << e.err;
            EXPECT_EQ(string_of(next, "tokenizer.chat_template"), tpl) << "round " << round;
            model = next;
        }
    }
}

// ---- a file written by another tool ----

TEST(CliEditReal, Stories260K) {
    const fs::path real = fs::path(MINFER_SHARED_DIR) / "fixtures" / "real" / "cozy-genworker__stories260K__a945bfc.gguf";
    if (!fs::exists(real))
        GTEST_SKIP() << "SKIPPED: real GGUF fixture not found at " << real.string()
                     << " (the ../shared checkout beside this repository; configure with -DMINFER_SHARED_DIR=...)";
    const fs::path out = edit_dir() / "stories-out.gguf";
    fs::remove(out);
    const file_state before = state_of(real);
    const run_result r = run({"edit", real.string(), "-o", out.string(), "--name", "edited", "--chat-template",
                              "{{ x }}", "--special-token", "eos", "</s>", "--set", "llama.context_length=256"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const gguf::model m = open(out);
    EXPECT_EQ(m.get<std::string_view>("general.name").value(), "edited");
    EXPECT_EQ(m.get<std::string_view>("tokenizer.chat_template").value(), "{{ x }}");
    EXPECT_EQ(m.get_as<std::uint32_t>("llama.context_length").value(), 256u);
    const gguf::model in = open(real);
    EXPECT_EQ(m.get_as<std::uint32_t>("tokenizer.ggml.eos_token_id").value(),
              in.get_as<std::uint32_t>("tokenizer.ggml.eos_token_id").value());  // </s> is the eos already
    expect_same_tensors(real, out);
    expect_unchanged(real, before);
}

}  // namespace
}  // namespace minfer_cli_test
