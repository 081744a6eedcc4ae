// `minfer convert MODEL_DIR --outfile OUT`: a Hugging Face checkpoint to GGUF as convert_hf_to_gguf.py
// writes it (toolbox::convert: the same keys, tensors and bytes; streamed, one write protocol). The
// options keep the reference's names; -o is --outfile. --dry-run prints the plan: every output tensor
// with its source and type, and every file's exact size.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/model_output.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/plural.hpp"
#include "../common/progress.hpp"
#include "../common/run_printing.hpp"
#include "../common/sizes.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/toolbox/convert.hpp"

namespace minfer::cli {
namespace {

struct convert_cli_options {
    std::string input;
    std::string outfile;
    std::string outtype = "auto";
    std::string model_name;
    std::string pre;
    std::string imatrix;
    bool vocab_only = false;
    std::string split_max_size, split_max_tensors;
    unsigned threads = 0;
    bool dry_run = false;
    bool json = false;
    bool force = false;
    bool quiet = false;
};

convert_cli_options opt;  // filled by CLI11 during parsing, read by run()
remote_args remote_opt;   // --max-fetch, --timeout, --stats (for a checkpoint given by URL)

bool any_remote(const toolbox::fetch_totals& f) { return f.files > 0; }

void print_json(out_buffer& out, const toolbox::convert_report& r) {
    json_writer j(out);
    j.begin_object();
    j.key("written");
    j.boolean(r.written);
    j.key("architecture");
    j.string(r.architecture);
    j.key("gguf_architecture");
    j.string(r.gguf_architecture);
    j.key("file_type");
    j.string(r.file_type);
    j.key("input_tensor_bytes");
    j.number(r.input_bytes);
    j.key("output_tensor_bytes");
    j.number(r.output_tensor_bytes);
    if (any_remote(r.fetched)) {
        j.key("fetched");
        j.begin_object(true);
        j.key("head_bytes");
        j.number(r.fetched.head_bytes);
        j.key("tensor_bytes_planned");
        j.number(r.fetched.planned_bytes);
        j.key("bytes");
        j.number(r.fetched.bytes);
        j.key("requests");
        j.number(r.fetched.requests);
        j.end_object();
    }
    outputs_json(j, r.outputs);
    j.key("tensors");
    j.begin_array();
    for (const toolbox::converted_tensor& t : r.tensors) {
        j.begin_object(true);
        j.key("name");
        j.string(t.name);
        j.key("source");
        if (t.source_name.empty()) j.null(); else j.string(t.source_name);
        j.key("source_dtype");
        if (t.source_dtype.empty()) j.null(); else j.string(t.source_dtype);
        j.key("type");
        j.string(gguf::to_string(t.type));
        j.key("ne");
        j.begin_array(true);
        for (std::int64_t n : t.ne) j.number(n);
        j.end_array();
        j.key("bytes");
        j.number(t.n_bytes);
        j.end_object();
    }
    j.end_array();
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : r.warnings) j.string(w);
    j.end_array();
    j.end_object();
    j.finish();
}

void print_text(out_buffer& out, const toolbox::convert_report& r) {
    if (!r.written) {
        out.print("Plan: {} ({}) -> {}, {}, {} of tensor data\n", gguf::escape(r.architecture), r.gguf_architecture, r.file_type,
                  plural(r.tensors.size(), "tensor", "tensors"), r.output_tensor_bytes);
        for (const toolbox::converted_tensor& t : r.tensors)
            out.print("  {:<32} {:<6} {:<22} {:>12}  <- {}{}\n", gguf::escape(t.name), gguf::to_string(t.type), shape_text(t.ne),
                      t.n_bytes, t.source_name.empty() ? std::string("(computed)") : gguf::escape(t.source_name),
                      t.source_dtype.empty() ? std::string() : " " + t.source_dtype);
        if (any_remote(r.fetched))
            out.print("Remote: {} bytes of files and headers fetched; {} bytes of tensors to fetch\n", r.fetched.head_bytes,
                      r.fetched.planned_bytes);
    }
    outputs_text(out, r.outputs, r.written);
}

int run(out_buffer& out) {
    if (opt.outfile.empty()) return usage_error("the output file name is empty (--outfile OUT)");
    toolbox::convert_request rq;
    rq.input = opt.input;
    rq.output = opt.outfile;
    rq.outtype = opt.outtype;
    if (!opt.model_name.empty()) rq.model_name = opt.model_name;
    rq.pre = opt.pre;
    rq.vocab_only = opt.vocab_only;
    if (!opt.imatrix.empty()) rq.imatrix = opt.imatrix;
    rq.threads = opt.threads;
    rq.dry_run = opt.dry_run;
    rq.overwrite = opt.force;
    if (auto rc = read_split_limits(opt.split_max_size, opt.split_max_tensors, rq.split_max_bytes, rq.split_max_tensors)) return *rc;
    if (auto rc = read_remote_settings(remote_opt, rq.remote)) return *rc;

    auto r = [&] {
        progress bar("converting into " + gguf::escape(opt.outfile), opt.quiet || opt.dry_run || opt.json);
        toolbox::convert_events ev;
        ev.progress = bar.callback();
        return toolbox::convert(rq, ev);
    }();
    if (!r) {
        const gguf::error& e = r.error();
        if (auto rc = output_refusal(e, "one of the checkpoint's files: convert never writes over its input")) return *rc;
        if (e.code == gguf::errc::bad_value_text && e.subject == "outtype") return usage_error("--outtype " + opt.outtype + ": " + e.detail);
        return report_error(e);
    }
    for (const std::string& w : r->warnings) fmt::print(stderr, "Warning: {}\n", w);
    print_fetch_totals(remote_opt, r->fetched, "files and headers");
    if (opt.json) {
        print_json(out, *r);
    } else if (!opt.quiet || opt.dry_run) {
        print_text(out, *r);
    }
    return exit_ok;
}

}  // namespace

void convert_add_options(CLI::App& sub) {
    sub.add_option("model", opt.input,
                   "The Hugging Face checkpoint directory (config.json, model.safetensors or its shards with "
                   "model.safetensors.index.json, tokenizer.model and/or tokenizer.json, tokenizer_config.json), "
                   "or its URL: http(s)://…/ or hf://OWNER/REPO[@REVISION], read with range requests (each byte "
                   "needed fetched once, through a spool directory beside the output that holds one tensor's "
                   "inputs at a time)")
        ->required();
    sub.add_option("-o,--outfile", opt.outfile,
                   "The GGUF file to write (with a split limit: <OUT without .gguf>-0000N-of-0000M.gguf)")
        ->required();
    sub.add_option("--outtype", opt.outtype,
                   "f32, f16, bf16, q8_0 or auto (as convert_hf_to_gguf.py: auto keeps BF16 as BF16, else F16)")
        ->capture_default_str();
    sub.add_option("--model-name", opt.model_name, "general.name (default: from the model card or the directory's name)");
    sub.add_option("--pre", opt.pre,
                   "The BPE pre-tokenizer (tokenizer.ggml.pre) when its check hash is not a known one: llama-bpe, qwen2, smaug-bpe");
    sub.add_flag("--vocab-only", opt.vocab_only, "Write the metadata and vocabulary only, no tensors");
    sub.add_option("--imatrix", opt.imatrix, "Importance matrix (GGUF or legacy .dat) for a llama-quantize --outtype that needs one");
    sub.add_option("--split-max-size", opt.split_max_size, "Write a split set, each part file at most this size (e.g. 4G, 500M)");
    sub.add_option("--split-max-tensors", opt.split_max_tensors, "Write a split set, at most this many tensors per part");
    sub.add_option("-t,--threads", opt.threads, "Quantizing threads (default: one per core; the bytes do not depend on it)");
    sub.add_flag("--dry-run", opt.dry_run, "Print the plan (every tensor, its source and type, every file's exact size); write nothing");
    sub.add_flag("--json", opt.json, "Print the plan or the result as JSON");
    sub.add_flag("-f,--force", opt.force, "Replace the output if it exists (never an input file, a FIFO, device or directory)");
    sub.add_flag("--quiet", opt.quiet, "No progress line and no summary (warnings and errors are still printed)");
    add_remote_options(sub, remote_opt, "the checkpoint: every small file under its cap, the headers, then the tensors read",
                       "60 for the files and headers, then 60 plus 1 per MiB of tensors");
}

int convert_run() { return run_printing(run); }

}  // namespace minfer::cli
