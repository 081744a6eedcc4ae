// `minfer edit`: change a model's metadata. The library checks every change against the model
// (metadata_edit.hpp) and writes either a new file through the rewrite engine (rewrite.hpp, an
// atomic write whose tensor bytes are kernel-copied from the input) or, with --in-place, only the
// input's head (in_place.hpp, journaled). This file reads the options in command-line order, guards
// the files (the input is never the output of a full rewrite; an existing output needs --force),
// shows the diff and maps errors to exit codes.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "../common/plural.hpp"
#include "../common/exit_codes.hpp"
#include "../common/named_input.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "minfer/toolbox/edit_steps.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "../common/run_printing.hpp"
#include "../common/progress.hpp"
#include "../common/quote.hpp"
#include "minfer/toolbox/size_text.hpp"
#include "commands.hpp"
#include "edit_options.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/metadata_edit.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/errors.hpp"

namespace minfer::cli {
namespace {

namespace fs = std::filesystem;

edit_options opt;           // filled by CLI11 during parsing, read by edit_run()
CLI::App* edit_app = nullptr;
CLI::Option* reserve_opt = nullptr;  // whether --reserve was given (an empty value is an error, not absent)  // its parse order gives the changes in command-line order
struct change_options {
    CLI::Option *set = nullptr, *del = nullptr, *name = nullptr, *description = nullptr, *chat_template = nullptr,
                *chat_template_file = nullptr, *special_token = nullptr;
} change_opt;

constexpr std::size_t shown_bytes = 60;  // strings in the diff are cut here, with their length

// A path in a message: quoted and escaped, as the library's messages show paths.
std::string path_text(const std::string& p) { return "'" + gguf::escape(p) + "'"; }

int fail(std::string_view message, int code) {
    fmt::print(stderr, "Error: {}\n", message);
    std::fflush(stderr);
    return code;
}

int report(const gguf::error& e) {
    std::string m = e.message();
    // Some descriptions leave the detail out (key_not_found: the accessors' wording); an edit's
    // detail says what to do, so it goes before the code.
    if (!e.detail.empty() && m.find(e.detail) == std::string::npos) {
        const std::size_t code_at = m.rfind(" [");
        m.insert(code_at == std::string::npos ? m.size() : code_at, "; " + e.detail);
    }
    // exit_code_for: a value on the command line that is wrong (bad_value_text) is a usage error;
    // what the file cannot honour (a key or token it lacks, no room in place) is 1; I/O is 3.
    return fail(m, exit_code_for(e));
}


// The changes, in the order given on the command line (CLI11's parse order holds one entry per
// argument string; --special-token's two arguments are two entries).
std::optional<int> collect(std::vector<gguf::metadata_edit>& edits) {
    if (change_opt.special_token->results().size() % 2 != 0)
        return fail("--special-token takes two arguments: NAME TOKEN (a token's id or its text)", exit_usage);
    std::map<const CLI::Option*, std::size_t> next;
    std::string token_name;
    for (const CLI::Option* op : edit_app->parse_order()) {
        const std::vector<std::string>& res = op->results();
        const std::size_t i = next[op]++;
        if (i >= res.size()) continue;
        const std::string& v = res[i];
        if (op == change_opt.set) {
            auto e = gguf::parse_set_text(v);
            if (!e) return report(e.error());
            edits.push_back(std::move(*e));
        } else if (op == change_opt.del) {
            edits.push_back(gguf::metadata_edit::erase(v));
        } else if (op == change_opt.name) {
            edits.push_back(gguf::metadata_edit::name(v));
        } else if (op == change_opt.description) {
            edits.push_back(gguf::metadata_edit::description(v));
        } else if (op == change_opt.chat_template) {
            edits.push_back(gguf::metadata_edit::chat_template(v));
        } else if (op == change_opt.chat_template_file) {
            auto text = read_named_input(v, max_chat_template_bytes, "a chat template");
            if (!text) {
                const gguf::error& e = text.error();
                const std::string why = e.code == gguf::errc::input_too_large
                                            ? fmt::format("more than {} bytes ({} MiB), the most read for a chat template",
                                                          e.expected, e.expected >> 20)
                                        : e.sys_errno != 0 ? std::string(std::strerror(e.sys_errno))
                                                           : e.message();
                return fail(fmt::format("cannot read the chat template file {}: {}", path_text(v), why), exit_io);
            }
            edits.push_back(gguf::metadata_edit::chat_template(std::move(*text)));
        } else if (op == change_opt.special_token) {
            if (i % 2 == 0) {
                token_name = v;
            } else {
                edits.push_back(gguf::metadata_edit::special_token(token_name, v));
            }
        }
    }
    return std::nullopt;
}

std::string type_label(const gguf::kv& e) {
    if (!e.is_array()) return std::string(gguf::to_string(e.type));
    return fmt::format("[{} x {}]", gguf::to_string(e.element_type), e.count);
}

// A value as `minfer info` shows it; arrays only by their type label (never set by an edit).
std::string value_text(const gguf::kv& e) { return scalar_value_text(e, shown_bytes); }

std::string with_value(const gguf::kv& e) {
    const std::string v = value_text(e);
    return v.empty() ? std::string() : ": " + v;
}

// A line whose type --allow-type-change forced says so, with the type the key should have.
std::string forced_note(const gguf::metadata_diff_entry& d) {
    return d.forced_over.empty() ? std::string()
                                 : fmt::format("  [type forced by --allow-type-change; expected {}]", d.forced_over);
}

// The diff as text: one line per key (+ added, ~ changed, - removed), the room --reserve adds (which
// replaces any padding key the input had: that key's removal is not listed), and a count.
std::string diff_text_of(const gguf::metadata_edit_plan& plan, std::uint64_t reserve = 0) {
    std::string text;
    std::size_t added = 0, changed = 0, removed = 0;
    for (const gguf::metadata_diff_entry& d : plan.diff) {
        const std::string key = gguf::escape(d.key);
        if (reserve > 0 && d.key == gguf::in_place_padding_key && !d.after) continue;
        if (d.before == nullptr) {
            const gguf::kv now = d.after->view(d.key);
            text += fmt::format("+ {} ({}){}{}\n", key, type_label(now), with_value(now), forced_note(d));
            ++added;
        } else if (!d.after) {
            text += fmt::format("- {} ({}){}\n", key, type_label(*d.before), with_value(*d.before));
            ++removed;
        } else {
            const gguf::kv now = d.after->view(d.key);
            const std::string before_type = type_label(*d.before), after_type = type_label(now);
            const std::string types =
                before_type == after_type ? before_type : fmt::format("{} -> {}", before_type, after_type);
            const std::string before_value = value_text(*d.before);
            text += fmt::format("~ {} ({}): {}{}{}\n", key, types, before_value.empty() ? "" : before_value + " -> ",
                      value_text(now), forced_note(d));
            ++changed;
        }
    }
    if (reserve > 0) {
        text += fmt::format("+ {} (u8 array): {} zero bytes reserved for later in-place edits\n",
                            gguf::in_place_padding_key, reserve);
        ++added;
    }
    const std::size_t n = added + changed + removed;
    if (n == 0) {
        text += fmt::format("no change: every value is already as asked\n");
    } else {
        text += fmt::format("{} key{}: {} added, {} changed, {} removed\n", n, n == 1 ? "" : "s", added, changed,
                            removed);
    }
    return text;
}

void print_warnings(const gguf::metadata_edit_plan& plan) {
    for (const std::string& w : plan.warnings) fmt::print(stderr, "Warning: {}\n", w);
    std::fflush(stderr);
}

// "fits" or why not, for a dry run.
void print_in_place_verdict(const gguf::model& m, const gguf::metadata_edit_plan& in_place_plan, out_buffer& out) {
    auto e = toolbox::plan_in_place_edit(m, in_place_plan);
    if (e) {
        if (e->padding_bytes > 0) {
            out.print("--in-place: fits ({} bytes of padding in {})\n", e->padding_bytes, gguf::in_place_padding_key);
        } else {
            out.print("--in-place: fits\n");
        }
        return;
    }
    const gguf::error& err = e.error();
    if (err.code == gguf::write_codes::no_room_in_place) {
        out.print("--in-place: does not fit: {} bytes missing ({} needed, {} before the tensor data)\n",
                  err.found - err.expected, err.found, err.expected);
    } else {
        out.print("--in-place: not possible: {}\n", err.description());
    }
}

int recover() {
    const fs::path file(opt.recover);
    auto r = gguf::recover_in_place(file);
    if (!r) return report(r.error());
    const std::string name = path_text(opt.recover);
    switch (*r) {
        case gguf::recovery::nothing_to_do:
            fmt::print("nothing to do: no undo journal beside {}\n", name);
            break;
        case gguf::recovery::rolled_back:
            fmt::print("rolled back: {} holds the model as it was before the interrupted edit; the journal is removed\n",
                       name);
            break;
        case gguf::recovery::completed:
            fmt::print("completed: {} already held the edited model; the journal is removed\n", name);
            break;
    }
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

// --discard-journal: the way out of a journal recovery cannot use (journal_invalid's message
// points here, after checking the model).
int discard() {
    auto r = gguf::discard_journal(fs::path(opt.discard_journal));
    if (!r) return report(r.error());
    const std::string name = path_text(opt.discard_journal);
    if (*r) {
        fmt::print("removed the undo journal beside {}; the model is as the interrupted edit left it (check it with "
                   "'minfer verify')\n",
                   name);
    } else {
        fmt::print("nothing to do: no undo journal beside {}\n", name);
    }
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

int run(out_buffer& out) {
    if (!opt.recover.empty() || !opt.discard_journal.empty()) {
        const char* what = !opt.recover.empty() ? "--recover" : "--discard-journal";
        if (!opt.recover.empty() && !opt.discard_journal.empty())
            return fail("--recover and --discard-journal exclude each other: recover first; discard a journal only "
                        "when recovery cannot use it",
                        exit_usage);
        for (const CLI::Option* o : {change_opt.set, change_opt.del, change_opt.name, change_opt.description,
                                     change_opt.chat_template, change_opt.chat_template_file, change_opt.special_token})
            if (o->count() > 0)
                return fail(fmt::format("{} resolves an interrupted edit and takes no change; run the edit afterwards",
                                        what),
                            exit_usage);
        if (reserve_opt != nullptr && reserve_opt->count() > 0)
            return fail(fmt::format("{} resolves an interrupted edit and takes no change; run the edit afterwards",
                                    what),
                        exit_usage);
        return !opt.recover.empty() ? recover() : discard();
    }
    if (opt.path.empty()) return fail("no model given: minfer edit MODEL -o OUT [changes…]", exit_usage);

    // --reserve: a padding key of that many zero bytes, which a later --in-place edit can grow into
    // (a file fresh from any writer has less than its alignment to spare before the tensor data).
    // It is a change of its own: a file can be rewritten only to make room.
    std::uint64_t reserve = 0;
    if (reserve_opt != nullptr && reserve_opt->count() > 0) {  // given, even empty (an error below)
        if (opt.in_place)
            return fail("--reserve leaves room in a new file (-o); an in-place edit keeps the room the file has",
                        exit_usage);
        std::string why;
        const auto bytes = toolbox::parse_size(opt.reserve, why);
        if (!bytes) return fail(fmt::format("--reserve {}: {}", gguf::escape(opt.reserve), why), exit_usage);
        if (*bytes > toolbox::max_reserve)
            return fail(fmt::format("--reserve {}: at most 1 GiB of room", gguf::escape(opt.reserve)), exit_usage);
        reserve = *bytes;
    }

    std::vector<gguf::metadata_edit> edits;
    if (auto rc = collect(edits)) return *rc;
    if (edits.empty() && reserve == 0)
        return fail("no change given: use --set, --delete, --chat-template, --chat-template-file, --special-token, "
                    "--name, --description or --reserve",
                    exit_usage);
    if (!opt.in_place && opt.output.empty() && !opt.dry_run)
        return fail("no output given: write a new file with -o OUT, or edit the model itself with --in-place",
                    exit_usage);

    // An interrupted in-place edit may have left the model in a state only --recover can resolve:
    // refuse before opening it (open_model would only warn), and for the other parts of a set after.
    if (auto refused = toolbox::refuse_journal(fs::path(opt.path)); !refused) return report(refused.error());
    auto opened = open_model(opt.path, false);
    if (!opened) return report_error(opened.error());
    gguf::model& m = *opened;  // not const: an in-place edit consumes it (apply_in_place)
    const std::size_t n_parts = m.parts().size();
    for (const gguf::model_part& p : m.parts())
        if (auto refused = toolbox::refuse_journal(p.path); !refused) return report(refused.error());

    if (!opt.output.empty()) {
        const std::optional<std::size_t> out_part = toolbox::part_of(m, opt.output);
        const bool is_input = out_part.has_value();
        const bool is_first = out_part == std::size_t{0};
        if (opt.in_place) {
            if (!is_first)
                return fail(fmt::format("--in-place edits {} itself; -o must be left out or name that file",
                                        path_text(opt.path)),
                            exit_usage);
        } else {
            if (is_input)
                return fail(fmt::format("the output {} is the input model{}: a rewrite never replaces its input; "
                                        "write another file, or edit this one with --in-place",
                                        path_text(opt.output), n_parts > 1 ? " (one of its split parts)" : ""),
                            exit_usage);
            if (n_parts > 1)
                return fail(fmt::format("{} is part 1 of a split set of {} parts; -o would write a lone part 1 that "
                                        "loads only beside the other parts. Edit the set with --in-place (part 1 "
                                        "holds the metadata), or merge it first (minfer merge)",
                                        path_text(opt.path), n_parts),
                            exit_usage);
            // Before any work: a FIFO, device or directory is never replaced (not even with --force),
            // an existing file only with --force (docs/CLI.md "Output files"). atomic_file checks again.
            if (auto checked = gguf::check_output_path(fs::path(opt.output), opt.force); !checked) {
                if (gguf::is_output_exists(checked.error()))
                    return fail(fmt::format("the output {} exists; add --force to replace it", path_text(opt.output)),
                                exit_usage);
                return report(checked.error());
            }
        }
    }

    gguf::metadata_edit_options options;
    options.drop_padding = !opt.in_place;
    options.allow_type_change = opt.allow_type_change;
    auto plan = gguf::plan_metadata_edit(m, edits, options);
    if (!plan) return report(plan.error());
    print_warnings(*plan);
    toolbox::add_reserve(*plan, reserve);

    if (opt.dry_run) {
        out.write(diff_text_of(*plan, reserve));
        if (opt.in_place) {
            print_in_place_verdict(m, *plan, out);
        } else {
            gguf::metadata_edit_options in_place_options = options;
            in_place_options.drop_padding = false;
            auto in_place = gguf::plan_metadata_edit(m, edits, in_place_options);
            if (!in_place) return report(in_place.error());
            print_in_place_verdict(m, *in_place, out);
        }
        out.print("dry run: nothing written\n");
        return exit_ok;
    }

    if (opt.in_place) {
        auto edit = toolbox::plan_in_place_edit(m, *plan);
        if (!edit) return report(edit.error());
        // Nothing to change: no journal, no write, and no claim of one.
        if (plan->diff.empty() || edit->new_head == edit->old_head) {
            if (!opt.quiet)
                out.print("no change: every value is already as asked; {} is left as it was (nothing written)\n",
                          path_text(edit->file.string()));
            return exit_ok;
        }
        // The diff's old values are views into the input's mapping, which the edit overwrites:
        // render them first, print them once the edit is done.
        std::string diff;
        if (!opt.quiet) diff = diff_text_of(*plan);
        auto done = gguf::apply_in_place(*edit, std::move(m));
        if (!done) return report(done.error());
        if (!opt.quiet) {
            out.write(diff);
            out.print("Edited {} in place: {} bytes of header rewritten, tensor data untouched ({} bytes of "
                      "padding)\n",
                      path_text(edit->file.string()), edit->new_head.size(), edit->padding_bytes);
        }
        return exit_ok;
    }

    auto src = gguf::model_source::open(m);
    if (!src) return report(src.error());
    auto w = gguf::rewrite(m, *src, plan->changes, m.tensors());
    if (!w) return report(w.error());
    progress line("writing " + gguf::escape(opt.output), opt.quiet);
    gguf::write_options wo;
    // Without --force the kernel decides atomically that the output does not exist (no check-then-write race).
    wo.file.replace_existing = opt.force;
    wo.progress = line.callback();
    auto written = w->write(fs::path(opt.output), wo);
    line.finish();
    if (!written) {
        const gguf::error& e = written.error();
        if (gguf::is_output_exists(e) && !opt.force)
            return fail(fmt::format("the output {} exists; add --force to replace it", path_text(opt.output)),
                        exit_usage);
        return report(e);
    }
    if (!opt.quiet) {
        out.write(diff_text_of(*plan, reserve));
        std::error_code ec;
        const auto size = fs::file_size(fs::path(opt.output), ec);
        out.print("Wrote {} ({} bytes, {})\n", path_text(opt.output), ec ? 0 : size,
                  plural(m.tensors().size(), "tensor", "tensors"));
    }
    return exit_ok;
}

}  // namespace

void edit_add_options(CLI::App& sub) {
    edit_app = &sub;
    sub.footer(
        "Changes apply in the order given. A dry run prints them (and whether --in-place would fit) and writes "
        "nothing.\n\n"
        "Exit codes:\n"
        "  0  success (also a dry run)\n"
        "  1  the model cannot take the change: a key or token it does not have, no room in place, an undo\n"
        "     journal beside it (or one --recover cannot use); or the input is not a valid GGUF model\n"
        "  2  usage error: bad option, a value that does not parse or fit its type, an unknown type name, a\n"
        "     type the key must not have (without --allow-type-change), a split.* key, the output exists\n"
        "     (without --force), is the input, or is not a regular file (a FIFO, device, directory: never\n"
        "     replaced, even with --force)\n"
        "  3  I/O error: the input, a split part or a template file cannot be read, the output cannot be\n"
        "     written (disk full, permission), out of memory\n");
    sub.add_option("model", opt.path, "The .gguf file to edit, or part 1 of a split set (with --in-place)");
    sub.add_option("-o,--output", opt.output,
                   "Write the edited model to this new file (atomically; tensor bytes copied by the kernel)");
    change_opt.set = sub.add_option("--set", opt.sets,
                                    "KEY=VALUE: change an existing key, keeping its type; KEY:TYPE=VALUE: add a key "
                                    "(TYPE: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str). A key llama.cpp reads "
                                    "keeps llama.cpp's type, an existing key its own (--allow-type-change to force "
                                    "another); split.* keys are minfer split's and merge's. Repeatable");
    change_opt.del = sub.add_option("--delete", opt.deletes, "Remove a key (it must exist). Repeatable");
    change_opt.chat_template = sub.add_option("--chat-template", opt.chat_template,
                                              "Replace the chat template (every tokenizer.chat_template* key goes, "
                                              "named templates too)");
    change_opt.chat_template_file =
        sub.add_option("--chat-template-file", opt.chat_template_file,
                       "Replace the chat template with a file's contents (UTF-8; - reads standard input)")
            ->excludes(change_opt.chat_template);
    change_opt.chat_template->excludes(change_opt.chat_template_file);
    change_opt.special_token =
        sub.add_option("--special-token", opt.special_tokens,
                       "NAME TOKEN: set tokenizer.ggml.<NAME>_token_id (bos eos eot eom unk sep pad cls mask fim_pre "
                       "fim_suf fim_mid fim_pad fim_rep fim_sep, or a full key) to a token's id, given as the id or "
                       "the token's text. Repeatable")
            ->expected(2)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
            ->type_name("ARG");
    change_opt.name = sub.add_option("--name", opt.name, "Set general.name");
    change_opt.description = sub.add_option("--description", opt.description, "Set general.description");
    sub.add_flag("--dry-run", opt.dry_run,
                 "Print the changes and whether --in-place would fit; write nothing");
    sub.add_flag("-f,--force", opt.force, "Replace the output file if it exists (a regular file, or a link's target; never a FIFO, device or directory)");
    reserve_opt = sub.add_option("--reserve", opt.reserve,
                   "With -o: leave SIZE bytes of room (a minfer.padding key) so that later --in-place edits can "
                   "grow the metadata; K/M/G = 10^3.., KiB/MiB/GiB = 2^10..");
    sub.add_flag("--in-place", opt.in_place,
                 "Rewrite only the model's header and metadata, keeping its tensor data where it is (journaled; "
                 "refused when the new metadata does not fit)");
    sub.add_flag("--allow-type-change", opt.allow_type_change,
                 "Let --set KEY:TYPE=VALUE give a key another type than the one it must keep (the type llama.cpp "
                 "reads it as, or its current type); the diff marks such a line. Without it the edit is refused");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (errors and warnings still go to stderr)");
    sub.add_option("--recover", opt.recover,
                   "Resolve an interrupted --in-place edit of FILE from its undo journal, and nothing else")
        ->type_name("FILE")
        ->excludes("model")
        ->excludes("--output")
        ->excludes("--in-place")
        ->excludes("--dry-run");
    sub.add_option("--discard-journal", opt.discard_journal,
                   "Remove FILE's undo journal without using it, when --recover reports it damaged "
                   "[journal_invalid]; check the model first (minfer verify FILE)")
        ->type_name("FILE")
        ->excludes("model")
        ->excludes("--output")
        ->excludes("--in-place")
        ->excludes("--dry-run");
}

int edit_run() {
    return run_printing(run);
}

}  // namespace minfer::cli
