// `minfer estimate`: what llama.cpp will allocate for a model (minfer::estimate), as a table for
// people or as JSON with every figure in bytes.
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/run_printing.hpp"
#include "../common/usage_error.hpp"
#include "../print/json_writer.hpp"
#include "commands.hpp"
#include "minfer/estimate/estimate.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::cli {
namespace {

struct estimate_options {
    std::string model;
    std::string ctx, batch, ubatch, parallel;
    std::string cache_type_k = "f16", cache_type_v = "f16";
    std::string flash_attn = "auto";
    bool json = false;
};
estimate_options opt;  // filled by CLI11, read by estimate_run()
remote_args remote_opt;  // --max-fetch, --timeout, --stats (for a URL)

// A whole number in [lo, hi], written in decimal digits only.
std::optional<std::uint64_t> parse_count(const std::string& s, std::uint64_t lo, std::uint64_t hi) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

std::optional<gguf::tensor_type> parse_cache_type(const std::string& s) {
    auto t = gguf::tensor_type_from_name(s);
    if (!t || !estimate::is_cache_type(*t)) return std::nullopt;
    return t;
}

std::string size_text(std::uint64_t bytes) {
    constexpr double mib = 1024.0 * 1024.0;
    if (bytes >= (std::uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (mib * 1024.0));
    return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / mib);
}

std::string opt_size(const std::optional<std::uint64_t>& v) { return v ? size_text(*v) : std::string("n/a"); }

const char* fa_name(estimate::flash_attn_mode m) {
    switch (m) {
        case estimate::flash_attn_mode::on: return "on";
        case estimate::flash_attn_mode::off: return "off";
        case estimate::flash_attn_mode::automatic: break;
    }
    return "auto";
}

void print_text(const estimate::figures& f, const estimate::params& p, out_buffer& out) {
    const auto& h = f.hp;
    out.print("Model: {}\n", gguf::escape(opt.model));
    if (h.known())
        out.print("Architecture: {}\n", h.architecture);
    else
        out.print("Architecture: {} (unknown to minfer estimate: weights only, no KV cache or compute buffer)\n",
                  gguf::escape(h.architecture));
    out.print("Parameters: ctx {} (training {}), batch {}, ubatch {}, parallel {}, cache k {} v {}, flash attention {} ({}), "
              "kv unified {}\n",
              f.n_ctx, h.n_ctx_train, f.n_batch, f.n_ubatch, f.n_seq_max, gguf::to_string(f.type_k), gguf::to_string(f.type_v),
              f.flash_attn ? "on" : "off", fa_name(p.flash_attn), f.kv_unified ? "yes" : "no");
    if (f.kv) {
        const auto& kv = *f.kv;
        if (h.recurrent()) {
            out.print("Recurrent state: {} layers, {} state row{} (one per sequence), {}\n", h.n_layer, kv.cells,
                      kv.cells == 1 ? "" : "s", size_text(kv.recurrent_state_bytes));
        } else {
            std::size_t n_swa = 0;
            for (const auto& l : kv.layers) n_swa += l.swa ? 1 : 0;
            out.print("KV cache: {} layers, {} cells", h.n_layer, kv.cells);
            if (n_swa > 0) out.print(" ({} sliding-window layers: {} cells, window {})", n_swa, kv.swa_cells, h.n_swa);
            out.print(", K {}, V {}{}\n", size_text(kv.k_bytes), size_text(kv.v_bytes), h.is_mla ? " (MLA: K only)" : "");
        }
    }
    out.print("\n{:<16}{:>14}  {}\n", "", "CPU only", "----- full GPU offload -----");
    out.print("{:<16}{:>14}  {:>14}{:>14}\n", "", "", "GPU", "host");
    const auto row = [&](const char* name, const std::string& a, const std::string& b, const std::string& c) {
        out.print("{:<16}{:>14}  {:>14}{:>14}\n", name, a, b, c);
    };
    row("weights", size_text(f.cpu_only.weights), size_text(f.gpu.weights), size_text(f.host.weights));
    row("KV cache", opt_size(f.cpu_only.kv), opt_size(f.gpu.kv), opt_size(f.host.kv));
    row("compute buffer", opt_size(f.cpu_only.compute), opt_size(f.gpu.compute), opt_size(f.host.compute));
    if (h.known())
        row("total", size_text(f.cpu_only.total()), size_text(f.gpu.total()), size_text(f.host.total()));
    else
        row("total", "n/a", "n/a", "n/a");
    out.print("\nWeights and KV cache are exact; the compute buffer is an approximation (about 10 %).\n"
              "Full offload keeps token_embd on the host{}. --json gives every figure in bytes.\n",
              f.output_tied ? " and copies it to the GPU as the tied output" : "");
}

void device_json(json_writer& j, const estimate::device& d, bool known) {
    j.begin_object();
    j.key("weights_bytes");
    j.number(d.weights);
    j.key("kv_cache_bytes");
    if (d.kv) j.number(*d.kv); else j.null();
    j.key("compute_buffer_bytes");
    if (d.compute) j.number(*d.compute); else j.null();
    j.key("total_bytes");
    if (known) j.number(d.total()); else j.null();
    j.end_object();
}

void print_json(const estimate::figures& f, const estimate::params& p, out_buffer& out) {
    const auto& h = f.hp;
    json_writer j(out);
    j.begin_object();
    j.key("model");
    j.string(opt.model);
    j.key("architecture");
    j.string(h.architecture);
    j.key("architecture_known");
    j.boolean(h.known());
    j.key("parameters");
    j.begin_object();
    j.key("ctx");
    j.number(f.n_ctx);
    j.key("ctx_train");
    j.number(std::uint64_t{h.n_ctx_train});
    j.key("ctx_per_sequence");
    j.number(f.n_ctx_seq);
    j.key("batch");
    j.number(std::uint64_t{f.n_batch});
    j.key("ubatch");
    j.number(std::uint64_t{f.n_ubatch});
    j.key("parallel");
    j.number(std::uint64_t{f.n_seq_max});
    j.key("cache_type_k");
    j.string(gguf::to_string(f.type_k));
    j.key("cache_type_v");
    j.string(gguf::to_string(f.type_v));
    j.key("flash_attn");
    j.boolean(f.flash_attn);
    j.key("flash_attn_requested");
    j.string(fa_name(p.flash_attn));
    j.key("kv_unified");
    j.boolean(f.kv_unified);
    j.end_object();
    j.key("weights_bytes");
    j.number(f.weights_bytes);
    j.key("kv_cache_bytes");
    if (f.kv) j.number(f.kv->total()); else j.null();
    j.key("kv_cache");
    if (f.kv) {
        const auto& kv = *f.kv;
        j.begin_object();
        j.key("cells");
        j.number(kv.cells);
        j.key("swa_cells");
        j.number(kv.swa_cells);
        j.key("k_bytes");
        j.number(kv.k_bytes);
        j.key("v_bytes");
        j.number(kv.v_bytes);
        j.key("recurrent_state_bytes");
        j.number(kv.recurrent_state_bytes);
        j.key("layers");
        j.begin_array();
        for (const auto& l : kv.layers) {
            j.begin_object(true);
            j.key("layer");
            j.number(std::uint64_t{l.layer});
            j.key("swa");
            j.boolean(l.swa);
            j.key("cells");
            j.number(l.cells);
            j.key("k_bytes");
            j.number(l.k_bytes);
            j.key("v_bytes");
            j.number(l.v_bytes);
            j.key("recurrent_state_bytes");
            j.number(l.r_bytes + l.s_bytes);
            j.end_object();
        }
        j.end_array();
        j.end_object();
    } else {
        j.null();
    }
    j.key("cpu_only");
    j.begin_object();
    j.key("cpu");
    device_json(j, f.cpu_only, h.known());
    j.end_object();
    j.key("full_gpu_offload");
    j.begin_object();
    j.key("gpu");
    device_json(j, f.gpu, h.known());
    j.key("host");
    device_json(j, f.host, h.known());
    j.end_object();
    j.end_object();
    j.finish();
}

int run(out_buffer& out) {
    estimate::params p;
    if (!opt.ctx.empty()) {
        auto v = parse_count(opt.ctx, 1, estimate::max_context);
        if (!v) return usage_error(fmt::format("--ctx '{}': expected a context size from 1 to {}", gguf::escape(opt.ctx), estimate::max_context));
        p.n_ctx = *v;
    }
    if (!opt.batch.empty()) {
        auto v = parse_count(opt.batch, 1, 0xFFFFFFFFu);
        if (!v) return usage_error(fmt::format("--batch '{}': expected a whole number from 1 to 4294967295", gguf::escape(opt.batch)));
        p.n_batch = static_cast<std::uint32_t>(*v);
    }
    if (!opt.ubatch.empty()) {
        auto v = parse_count(opt.ubatch, 1, 0xFFFFFFFFu);
        if (!v) return usage_error(fmt::format("--ubatch '{}': expected a whole number from 1 to 4294967295", gguf::escape(opt.ubatch)));
        p.n_ubatch = static_cast<std::uint32_t>(*v);
    }
    if (p.n_ubatch > p.n_batch)
        return usage_error(fmt::format("--ubatch {} is larger than --batch {}", p.n_ubatch, p.n_batch));
    if (!opt.parallel.empty()) {
        auto v = parse_count(opt.parallel, 1, estimate::max_sequences);
        if (!v) return usage_error(fmt::format("--parallel '{}': expected 1 to {} sequences", gguf::escape(opt.parallel), estimate::max_sequences));
        p.n_seq_max = static_cast<std::uint32_t>(*v);
    }
    auto tk = parse_cache_type(opt.cache_type_k);
    auto tv = parse_cache_type(opt.cache_type_v);
    if (!tk || !tv)
        return usage_error(fmt::format("{} '{}': expected one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1",
                                       !tk ? "--cache-type-k" : "--cache-type-v", gguf::escape(!tk ? opt.cache_type_k : opt.cache_type_v)));
    p.type_k = *tk;
    p.type_v = *tv;
    if (opt.flash_attn == "auto")
        p.flash_attn = estimate::flash_attn_mode::automatic;
    else if (opt.flash_attn == "on")
        p.flash_attn = estimate::flash_attn_mode::on;
    else if (opt.flash_attn == "off")
        p.flash_attn = estimate::flash_attn_mode::off;
    else
        return usage_error(fmt::format("--flash-attn '{}': expected auto, on or off", gguf::escape(opt.flash_attn)));

    auto m = open_model_at(opt.model, false, remote_opt);
    if (!m) {
        out.flush();
        return report_error(m.error());
    }
    auto f = estimate::estimate(*m, p);
    if (!f) {
        const gguf::error& e = f.error();
        out.flush();
        if (e.code == gguf::errc::out_of_memory) {
            std::fputs("Error: out of memory\n", stderr);
            return exit_io;
        }
        // Options llama.cpp refuses for this model: usage (exit 2). Hyperparameters: invalid model (exit 1).
        const bool usage = e.where == gguf::section::access;
        if (!e.detail.empty())
            fmt::print(stderr, "Error: {}{}\n", usage ? std::string() : gguf::escape(opt.model).append(": "), e.detail);
        else
            fmt::print(stderr, "Error: {}\n", e.message());
        return usage ? exit_usage : exit_parse;
    }
    if (opt.json)
        print_json(*f, p, out);
    else
        print_text(*f, p, out);
    return exit_ok;
}

}  // namespace

void estimate_add_options(CLI::App& sub) {
    sub.add_option("model", opt.model,
                   "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set; an http(s):// URL or "
                   "hf://OWNER/REPO/FILE[@REVISION] is read from its head with range requests")
        ->required();
    sub.add_option("--ctx", opt.ctx, "Context size in tokens (default: the model's training context); llama.cpp pads it to 256");
    sub.add_option("--batch", opt.batch, "Logical batch size (default 2048)");
    sub.add_option("--ubatch", opt.ubatch, "Physical batch size (default 512; at most --batch)");
    sub.add_option("--cache-type-k", opt.cache_type_k, "K cache type: f32, f16 (default), bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
    sub.add_option("--cache-type-v", opt.cache_type_v, "V cache type (as --cache-type-k; quantized types need flash attention)");
    sub.add_option("--parallel", opt.parallel, "Sequences (llama.cpp's n_seq_max, default 1): one KV stream each");
    sub.add_option("--flash-attn", opt.flash_attn, "Flash attention: auto (default: on where the device runs it), on, off");
    sub.add_flag("--json", opt.json, "Print one JSON document with every figure in bytes");
    add_remote_options(sub, remote_opt);
}

int estimate_run() {
    const int rc = run_printing(run);
    print_fetch_stats(remote_opt);  // after the output, on stderr (a URL only)
    return rc;
}

}  // namespace minfer::cli
