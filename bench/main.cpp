// minfer-bench: open-time benchmark of minfer's GGUF loader against llama.cpp's gguf reader and a
// bare-walk floor, on generated fixtures shaped like Qwen2.5-0.5B-Instruct Q4_0 (see fixtures.hpp).
//
//   minfer-bench [our flags] [Google Benchmark flags]
//     --large              also write and time fixtures (c) 262,144-token vocab, (d) 100,000 tensors,
//                          (e) 1,000,000 KVs
//     --keep-fixtures      leave the scratch directory in place (its path is printed)
//     --no-rss             skip the peak-RSS / page-fault measurements
//   Helper modes (one measurement in a fresh process, used by the RSS table):
//     minfer-bench --rss-open FILE | --rss-floor FILE | --rss-llama FILE | --rss-baseline
//     minfer-bench --write-fixtures DIR [--large]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "alloc_count.hpp"
#include "fixtures.hpp"
#include "hostile.hpp"
#include "floor.hpp"
#include "llama_ref/llama_ref.hpp"
#include "minfer.h"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/split.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using minfer::bench::fixture;
using minfer::gguf::model;
using minfer::llama_ref::gguf_context;

// llama.cpp's GGUF reader (gguf_init_from_file, gguf_get_n_kv/_n_tensors, gguf_free) through the
// binding the tests use (tests/support/llama_ref): dlopen'ed at run time from $MINFER_LLAMA_LIB, so
// the benchmark builds and runs without it.
struct llama_counts {
    bool ok = false;
    std::int64_t n_kv = 0;
    std::int64_t n_tensors = 0;
};

class llama_gguf {
public:
    /// The process-wide instance; loads the library on first use.
    static const llama_gguf& get() {
        static const llama_gguf instance;
        return instance;
    }
    bool available() const noexcept { return lib_ != nullptr; }
    /// Why the library is unavailable (empty when available()).
    const std::string& why_unavailable() const noexcept { return why_; }
    const std::string& path() const noexcept { return lib_ != nullptr ? lib_->path() : why_; }  // why_ is "" then
    /// What llama.cpp logged since the last call, after ": " ("" when nothing): its account of a refusal.
    /// The binding collects the log instead of letting it reach stderr.
    std::string log() const {
        std::string l = lib_ != nullptr ? lib_->take_log() : std::string();
        while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) l.pop_back();
        return l.empty() ? l : ": " + l;
    }

    /// gguf_init_from_file(path, {no_alloc = true, ctx = nullptr}) or nullptr; release it with close().
    gguf_context* open(const char* path) const noexcept {
        return lib_ != nullptr ? lib_->api().gguf_init_from_file(path, {true, nullptr}) : nullptr;
    }
    llama_counts counts(const gguf_context* ctx) const noexcept {
        if (ctx == nullptr) return {};
        return {true, lib_->api().gguf_get_n_kv(ctx), lib_->api().gguf_get_n_tensors(ctx)};
    }
    void close(gguf_context* ctx) const noexcept {
        if (ctx != nullptr) lib_->api().gguf_free(ctx);
    }
    /// open, counts, close.
    llama_counts open_close(const char* path) const noexcept {
        gguf_context* ctx = open(path);
        const llama_counts c = counts(ctx);
        close(ctx);
        return c;
    }

private:
    llama_gguf() : lib_(minfer::llama_ref::llama_lib::require(minfer::llama_ref::part::gguf_read, why_)) {}
    std::string why_;  // declared before lib_: require() writes it
    const minfer::llama_ref::llama_lib* lib_;
};

// ---- small helpers --------------------------------------------------------------------------

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    const int n = std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return std::string(buf, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

// A time in ns, printed with a fitting unit.
std::string human_time(double ns) {
    if (std::isnan(ns)) return "n/a";
    if (ns >= 1e6) return fmt("%.3f ms", ns / 1e6);
    if (ns >= 1e3) return fmt("%.1f us", ns / 1e3);
    return fmt("%.1f ns", ns);
}

struct rusage_snapshot {
    long minflt = 0;
    long majflt = 0;
    long maxrss_kb = 0;
};
rusage_snapshot usage() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return {ru.ru_minflt, ru.ru_majflt, ru.ru_maxrss};
}

// Fields of /proc/self/status in kB (VmRSS, VmHWM, RssAnon, RssFile).
std::map<std::string, long> proc_status() {
    std::map<std::string, long> out;
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = line.substr(0, colon);
        if (key == "VmRSS" || key == "VmHWM" || key == "RssAnon" || key == "RssFile") out[key] = std::atol(line.c_str() + colon + 1);
    }
    return out;
}

// model::open into an optional (keeps result<>'s accessors out of the long functions below).
std::optional<model> open_model(const fs::path& path, std::string* why = nullptr) {
    auto r = model::open(path);
    if (!r) {
        if (why != nullptr) *why = r.error().message();
        return std::nullopt;
    }
    return std::optional<model>(std::move(r).value());
}

std::vector<fs::path> parts_of(const fs::path& entry) {
    auto parts = minfer::gguf::resolve_splits(entry);
    if (!parts) return {entry};
    return *parts;
}

// ---- the benchmarks -------------------------------------------------------------------------

void count_faults(benchmark::State& state, const rusage_snapshot& before) {
    const rusage_snapshot after = usage();
    state.counters["minflt"] = benchmark::Counter(static_cast<double>(after.minflt - before.minflt),
                                                  benchmark::Counter::kAvgIterations);
}

void bm_minfer_open(benchmark::State& state, const fixture* f) {
    const rusage_snapshot before = usage();
    minfer::bench::alloc_totals a;
    std::uint64_t metadata_bytes = 0;
    for (auto _ : state) {
        minfer::bench::alloc_count_start();
        auto m = model::open(f->entry);
        a = minfer::bench::alloc_count_stop();
        if (!m) {
            state.SkipWithError(m.error().message().c_str());
            break;
        }
        metadata_bytes = 0;
        for (const auto& p : m->parts()) metadata_bytes += p.view.data_offset();
        benchmark::DoNotOptimize(m->tensors().size());
    }
    count_faults(state, before);
    // Heap bytes one open allocates, and that per byte of metadata parsed.
    state.counters["alloc_bytes"] = static_cast<double>(a.bytes);
    state.counters["alloc_per_meta_byte"] =
        metadata_bytes > 0 ? static_cast<double>(a.bytes) / static_cast<double>(metadata_bytes) : 0.0;
}

// The C API's open (libminfer.so): minfer_gguf_init_from_file for one file, _from_split for a set
// (model::open opens every part too), and minfer_gguf_free. Issue 32: no more than the C++ open.
void bm_capi_open(benchmark::State& state, const fixture* f) {
    const minfer_gguf_init_params params{true, nullptr};
    const bool set = f->parts.size() > 1;
    const rusage_snapshot before = usage();
    for (auto _ : state) {
        minfer_gguf_context* ctx = set ? minfer_gguf_init_from_split(f->entry.c_str(), params)
                                       : minfer_gguf_init_from_file(f->entry.c_str(), params);
        if (ctx == nullptr) {
            state.SkipWithError(minfer_last_error_message());
            break;
        }
        benchmark::DoNotOptimize(minfer_gguf_get_n_tensors(ctx));
        minfer_gguf_free(ctx);
    }
    count_faults(state, before);
}

void bm_llama_open(benchmark::State& state, const fixture* f) {
    const llama_gguf& llama = llama_gguf::get();
    if (!llama.available()) {
        state.SkipWithError(llama.why_unavailable().c_str());
        return;
    }
    std::vector<std::string> parts;
    for (const fs::path& p : f->parts) parts.push_back(p.string());
    const rusage_snapshot before = usage();
    for (auto _ : state) {
        // llama_model_loader opens every part of a split set with gguf_init_from_file.
        for (const std::string& p : parts) {
            gguf_context* ctx = llama.open(p.c_str());
            if (ctx == nullptr) {
                state.SkipWithError(("gguf_init_from_file failed on " + p + llama.log()).c_str());
                break;
            }
            benchmark::DoNotOptimize(ctx);
            llama.close(ctx);
        }
    }
    count_faults(state, before);
}

// Fixtures llama.cpp is not timed on: its reader compares every key (and every tensor name) with
// every earlier one, so these opens take minutes (1e6 KVs: ~5e11 compares) or tens of seconds.
const char* llama_not_run_reason(const fixture& f) {
    if (f.name == "kv1m") return "not run: llama.cpp's duplicate-key scan is quadratic in n_kv (~5e11 compares at 10^6 keys)";
    if (f.name == "kv100k") return "not run: llama.cpp's duplicate-key scan is quadratic in n_kv (~5e9 compares at 10^5 keys)";
    if (f.name == "tensors100k")
        return "not repeated: llama.cpp's duplicate-name scan is quadratic in n_tensors (~5e9 compares; see the "
               "first-open time under verify)";
    return nullptr;
}

void bm_llama_not_run(benchmark::State& state, const fixture* f) { state.SkipWithError(llama_not_run_reason(*f)); }

void bm_floor(benchmark::State& state, const fixture* f) {
    std::vector<std::string> parts;
    for (const fs::path& p : f->parts) parts.push_back(p.string());
    const rusage_snapshot before = usage();
    for (auto _ : state) {
        for (const std::string& p : parts) {
            const auto r = minfer::bench::floor_open(p.c_str());
            if (!r.ok) {
                state.SkipWithError(("floor walk failed on " + p).c_str());
                break;
            }
            benchmark::DoNotOptimize(r.checksum);
        }
    }
    count_faults(state, before);
}

constexpr std::string_view lookup_keys[] = {
    "general.architecture", "qwen2.block_count", "qwen2.attention.head_count_kv",
    "tokenizer.ggml.tokens", "tokenizer.chat_template", "general.no_such_key"};

void bm_key_lookup(benchmark::State& state, const model* m) {
    for (auto _ : state) {
        for (std::string_view k : lookup_keys) benchmark::DoNotOptimize(m->find(k));
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(std::size(lookup_keys)));
}

void bm_tensor_lookup(benchmark::State& state, const model* m, const std::vector<std::string>* names) {
    for (auto _ : state) {
        for (const std::string& n : *names) benchmark::DoNotOptimize(m->find_tensor(n));
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(names->size()));
}

void bm_vocab_iterate(benchmark::State& state, const model* m) {
    const minfer::gguf::kv* tokens = m->find("tokenizer.ggml.tokens");
    if (tokens == nullptr || !tokens->is_array() || tokens->element_type != minfer::gguf::value_type::string) {
        state.SkipWithError("tokenizer.ggml.tokens missing");
        return;
    }
    const minfer::gguf::array_view arr = tokens->get<minfer::gguf::array_view>().value();
    for (auto _ : state) {
        std::size_t bytes = 0;
        for (std::string_view s : arr.strings()) bytes += s.size();
        benchmark::DoNotOptimize(bytes);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(arr.size()));
}

// ---- the reporter: console output plus medians for the summary ------------------------------

double ns_per(benchmark::TimeUnit u) {
    switch (u) {
        case benchmark::kNanosecond: return 1.0;
        case benchmark::kMicrosecond: return 1e3;
        case benchmark::kMillisecond: return 1e6;
        case benchmark::kSecond: return 1e9;
    }
    return 1.0;
}

struct stats {
    double median = NAN, min = NAN, max = NAN, mean = NAN, stddev = NAN;  // real time, ns per iteration
    double cpu_median = NAN;                                              // CPU time, ns per iteration
    std::vector<double> samples, cpu_samples;                             // individual repetitions
    std::map<std::string, double> counters;                               // of the median (or a run)
    std::string error;
    bool seen = false;

    void finish() {
        if (!std::isnan(median) || samples.empty()) return;
        // No aggregates (one repetition, or not requested): take them from the repetitions.
        auto median_of = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            const std::size_t n = v.size();
            return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        };
        median = median_of(samples);
        cpu_median = median_of(cpu_samples);
        min = *std::min_element(samples.begin(), samples.end());
        max = *std::max_element(samples.begin(), samples.end());
    }
    double cv() const { return mean > 0 ? stddev / mean : NAN; }
};

class summary_reporter : public benchmark::ConsoleReporter {
public:
    explicit summary_reporter(OutputOptions o) : ConsoleReporter(o) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            stats& s = by_name_[r.run_name.function_name];
            s.seen = true;
            if (r.error_occurred) {
                s.error = r.error_message;
                continue;
            }
            const double t = r.GetAdjustedRealTime() * ns_per(r.time_unit);
            const double cpu = r.GetAdjustedCPUTime() * ns_per(r.time_unit);
            auto keep_counters = [&] {
                s.counters.clear();
                for (const auto& [k, c] : r.counters) s.counters[k] = c.value;
            };
            if (r.run_type == Run::RT_Aggregate) {
                if (r.aggregate_name == "median") {
                    s.median = t;
                    s.cpu_median = cpu;
                    keep_counters();
                } else if (r.aggregate_name == "min") {
                    s.min = t;
                } else if (r.aggregate_name == "max") {
                    s.max = t;
                } else if (r.aggregate_name == "mean") {
                    s.mean = t;
                } else if (r.aggregate_name == "stddev") {
                    s.stddev = t;
                }
            } else {
                s.samples.push_back(t);
                s.cpu_samples.push_back(cpu);
                if (s.counters.empty()) keep_counters();
            }
        }
    }

    const stats* find(const std::string& name) {
        auto it = by_name_.find(name);
        if (it == by_name_.end()) return nullptr;
        it->second.finish();
        return &it->second;
    }

private:
    std::map<std::string, stats> by_name_;
};

std::string cell(const stats* s) {
    if (s == nullptr || !s->seen) return "not run";
    if (!s->error.empty()) return "skipped";
    if (std::isnan(s->median)) return "n/a";
    std::string out = human_time(s->median);
    if (!std::isnan(s->min) && !std::isnan(s->max) && s->max > s->min)
        out += fmt(" [%s..%s]", human_time(s->min).c_str(), human_time(s->max).c_str());
    return out;
}

std::string ratio(const stats* a, const stats* b) {
    if (a == nullptr || b == nullptr || !a->error.empty() || !b->error.empty() || std::isnan(a->median) ||
        std::isnan(b->median) || b->median <= 0)
        return "n/a";
    const double r = a->median / b->median;
    return r < 0.5 ? fmt("%.3fx (1/%.1f)", r, 1 / r) : fmt("%.2fx", r);
}

std::string cpu_ratio(const stats* a, const stats* b) {
    if (a == nullptr || b == nullptr || !a->error.empty() || !b->error.empty() || std::isnan(a->cpu_median) ||
        std::isnan(b->cpu_median) || b->cpu_median <= 0)
        return "n/a";
    return fmt("%.3f", a->cpu_median / b->cpu_median);
}

std::string cpu_cell(const stats* s) {
    return s == nullptr || !s->error.empty() ? "n/a" : human_time(s->cpu_median);
}

std::string counter(const stats* s, const char* name) {
    if (s == nullptr || !s->error.empty()) return "n/a";
    auto it = s->counters.find(name);
    return it == s->counters.end() ? "n/a" : fmt("%.0f", it->second);
}

void print_summary(summary_reporter& rep, const std::vector<fixture>& fixtures, int repetitions) {
    std::printf("\n== Open time, page cache warm: median of %d repetition(s) [min..max] ==\n", repetitions);
    std::printf("%-12s %-34s %-34s %-34s %-16s %-11s %s\n", "fixture", "minfer_open", "llama_gguf_init", "floor_walk",
                "ours/llama", "ours/floor", "minflt/open (ours, llama, floor)");
    for (const fixture& f : fixtures) {
        const stats* ours = rep.find("minfer_open/" + f.name);
        const stats* llama = rep.find("llama_gguf_init/" + f.name);
        const stats* fl = rep.find("floor_walk/" + f.name);
        std::printf("%-12s %-34s %-34s %-34s %-16s %-11s %s, %s, %s\n", f.name.c_str(), cell(ours).c_str(),
                    cell(llama).c_str(), cell(fl).c_str(), ratio(ours, llama).c_str(), ratio(ours, fl).c_str(),
                    counter(ours, "minflt").c_str(), counter(llama, "minflt").c_str(), counter(fl, "minflt").c_str());
        if (llama != nullptr && !llama->error.empty()) std::printf("  (llama_gguf_init/%s: %s)\n", f.name.c_str(), llama->error.c_str());
        if (ours != nullptr && ours->error.empty() && !std::isnan(ours->cpu_median))
            std::printf("  cpu-time medians: ours %s, llama %s, floor %s; ours/llama %s, ours/floor %s\n", cpu_cell(ours).c_str(),
                    cpu_cell(llama).c_str(), cpu_cell(fl).c_str(), cpu_ratio(ours, llama).c_str(), cpu_ratio(ours, fl).c_str());
        if (ours != nullptr && !std::isnan(ours->cv()))
            std::printf("  cv: ours %.1f%%%s%s\n", 100 * ours->cv(),
                        llama != nullptr && !std::isnan(llama->cv()) ? fmt(", llama %.1f%%", 100 * llama->cv()).c_str() : "",
                        fl != nullptr && !std::isnan(fl->cv()) ? fmt(", floor %.1f%%", 100 * fl->cv()).c_str() : "");
    }
    std::printf("\n== The C API's open (libminfer.so) against the C++ open ==\n");
    std::printf("%-12s %-34s %-34s %s\n", "fixture", "capi_open", "minfer_open", "capi/minfer_open");
    for (const fixture& f : fixtures) {
        const stats* c = rep.find("capi_open/" + f.name);
        const stats* ours = rep.find("minfer_open/" + f.name);
        std::printf("%-12s %-34s %-34s %s\n", f.name.c_str(), cell(c).c_str(), cell(ours).c_str(), ratio(c, ours).c_str());
    }
    std::printf("\n== Access on the open model (qwen) ==\n");
    struct row {
        const char* name;
        double per;
        const char* unit;
    };
    const row rows[] = {{"key_lookup/qwen", static_cast<double>(std::size(lookup_keys)), "find"},
                        {"tensor_lookup/qwen", static_cast<double>(fixtures.front().n_tensors), "find_tensor"},
                        {"vocab_iterate/qwen", static_cast<double>(minfer::bench::qwen_options{}.vocab), "string"}};
    for (const row& r : rows) {
        const stats* s = rep.find(r.name);
        std::printf("%-20s %-40s", r.name, cell(s).c_str());
        if (s != nullptr && s->error.empty() && !std::isnan(s->median))
            std::printf("  = %.2f ns per %s (%.0f per iteration)", s->median / r.per, r.unit, r.per);
        std::printf("\n");
    }
}

// ---- RSS / page faults in a fresh process ---------------------------------------------------

// Child side: snapshot, open and hold, snapshot, print one line of key=value.
int rss_child(std::string_view mode, const char* path) {
    const llama_gguf* llama = nullptr;
    if (mode == "--rss-llama") {
        llama = &llama_gguf::get();  // dlopen before the first snapshot: the library is not the loader's cost
        if (!llama->available()) {
            std::fprintf(stderr, "%s\n", llama->why_unavailable().c_str());
            return 2;
        }
    }
    const auto st0 = proc_status();
    const rusage_snapshot u0 = usage();
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<model> m;
    std::vector<std::pair<void*, std::size_t>> maps;
    std::vector<gguf_context*> ctxs;
    bool ok = true;
    if (mode == "--rss-open") {
        m = open_model(path);
        ok = m.has_value();
    } else if (mode == "--rss-floor") {
        for (const fs::path& p : parts_of(path)) {
            void* map = nullptr;
            std::size_t size = 0;
            ok = ok && minfer::bench::floor_open_hold(p.c_str(), &map, &size).ok;
            maps.emplace_back(map, size);
        }
    } else if (mode == "--rss-llama") {
        for (const fs::path& p : parts_of(path)) {
            gguf_context* ctx = llama->open(p.c_str());
            ok = ok && ctx != nullptr;
            ctxs.push_back(ctx);
        }
    }
    const auto t1 = std::chrono::steady_clock::now();
    const rusage_snapshot u1 = usage();
    const auto st1 = proc_status();
    for (auto& [map, size] : maps) minfer::bench::release_mapping(map, size);
    for (gguf_context* c : ctxs) llama->close(c);
    m.reset();
    if (!ok) {
        std::fprintf(stderr, "%s: open failed%s\n", std::string(mode).c_str(), llama != nullptr ? llama->log().c_str() : "");
        return 1;
    }
    auto get = [](const std::map<std::string, long>& s, const char* k) {
        auto it = s.find(k);
        return it == s.end() ? -1L : it->second;
    };
    std::printf("rss_before_kb=%ld rss_kb=%ld rss_anon_kb=%ld rss_file_kb=%ld anon_before_kb=%ld file_before_kb=%ld "
                "hwm_kb=%ld maxrss_kb=%ld minflt=%ld majflt=%ld open_us=%ld\n",
                get(st0, "VmRSS"), get(st1, "VmRSS"), get(st1, "RssAnon"), get(st1, "RssFile"), get(st0, "RssAnon"),
                get(st0, "RssFile"), get(st1, "VmHWM"), u1.maxrss_kb, u1.minflt - u0.minflt, u1.majflt - u0.majflt,
                static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
    return 0;
}

// Parent side: run this binary in a helper mode and parse its line.
std::optional<std::map<std::string, long>> run_rss_child(const std::string& mode, const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return std::nullopt;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    std::string exe = "/proc/self/exe";
    std::vector<char*> argv{exe.data(), const_cast<char*>(mode.c_str())};
    std::string p = path;
    if (!p.empty()) argv.push_back(p.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    std::string out;
    if (rc == 0) {
        char buf[512];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (rc != 0) return std::nullopt;
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    std::map<std::string, long> kv;
    std::istringstream in(out);
    std::string tok;
    while (in >> tok) {
        const auto eq = tok.find('=');
        if (eq != std::string::npos) kv[tok.substr(0, eq)] = std::atol(tok.c_str() + eq + 1);
    }
    return kv;
}

void print_rss(const fixture& f) {
    std::printf("\n== Memory and page faults of one open in a fresh process (%s, held open; growth = at hold "
                "minus before open) ==\n",
                f.name.c_str());
    // Peak RSS is VmHWM (per address space): ru_maxrss would carry over the parent's peak across exec.
    std::printf("%-10s %12s %14s %14s %14s %12s %8s %14s\n", "process", "peak RSS", "RSS growth", "anon growth",
                "file growth", "minflt(open)", "majflt", "first open");
    const std::pair<const char*, const char*> modes[] = {
        {"baseline", "--rss-baseline"}, {"floor", "--rss-floor"}, {"minfer", "--rss-open"}, {"llama.cpp", "--rss-llama"}};
    for (const auto& [label, mode] : modes) {
        auto kv = run_rss_child(mode, std::string(mode) == "--rss-baseline" ? std::string() : f.entry.string());
        if (!kv) {
            std::printf("%-10s (not measured%s)\n", label,
                        std::string(mode) == "--rss-llama" ? ": llama.cpp reference unavailable" : "");
            continue;
        }
        auto& m = *kv;
        std::printf("%-10s %9ld kB %11ld kB %11ld kB %11ld kB %12ld %8ld %11ld us\n", label, m["hwm_kb"],
                    m["rss_kb"] - m["rss_before_kb"], m["rss_anon_kb"] - m["anon_before_kb"],
                    m["rss_file_kb"] - m["file_before_kb"], m["minflt"], m["majflt"], m["open_us"]);
    }
}

// ---- startup: fixtures and correctness ------------------------------------------------------

bool verify(const fixture& f) {
    bool good = true;
    std::string why;
    const std::optional<model> m = open_model(f.entry, &why);
    if (!m) {
        std::printf("  %-12s minfer FAILED: %s\n", f.name.c_str(), why.c_str());
        return false;
    }
    const std::uint64_t our_kv = m->metadata().metadata().size();
    const std::uint64_t our_tensors = m->tensors().size();
    if (our_kv != f.n_kv || our_tensors != f.n_tensors) {
        std::printf("  %-12s minfer counts %llu KV / %llu tensors, the generator wrote %llu / %llu\n", f.name.c_str(),
                    static_cast<unsigned long long>(our_kv), static_cast<unsigned long long>(our_tensors),
                    static_cast<unsigned long long>(f.n_kv), static_cast<unsigned long long>(f.n_tensors));
        good = false;
    }
    std::uint64_t floor_tensors = 0, floor_kv = 0;
    for (std::size_t i = 0; i < f.parts.size(); ++i) {
        const auto w = minfer::bench::floor_open(f.parts[i].c_str());
        if (!w.ok) good = false;
        floor_tensors += w.n_tensors;
        if (i == 0) floor_kv = w.n_kv;
        const std::uint64_t ours_end = m->parts()[i].view.data_offset();
        // A file without tensors has no data section and no padding after its table.
        const std::uint64_t floor_end =
            w.n_tensors > 0 ? minfer::gguf::pad_to(w.table_end, m->parts()[i].view.alignment()) : w.table_end;
        if (w.ok && floor_end != ours_end) good = false;
    }
    if (floor_kv != our_kv || floor_tensors != our_tensors) good = false;

    std::string llama_note;
    const llama_gguf& llama = llama_gguf::get();
    if (llama.available()) {
        std::int64_t l_kv = -1, l_tensors = 0;
        double llama_once_ms = 0;
        for (std::size_t i = 0; i < f.parts.size(); ++i) {
            if (f.name == "kv1m" || f.name == "kv100k") {
                llama_note = llama_not_run_reason(f);
                break;
            }
            const auto t0 = std::chrono::steady_clock::now();
            const auto c = llama.open_close(f.parts[i].c_str());
            llama_once_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (!c.ok) {
                llama_note = "llama.cpp FAILED to open " + f.parts[i].string() + llama.log();
                good = false;
                break;
            }
            if (i == 0) l_kv = c.n_kv;
            l_tensors += c.n_tensors;
        }
        if (llama_note.empty()) {
            const bool same = l_kv == static_cast<std::int64_t>(our_kv) && l_tensors == static_cast<std::int64_t>(our_tensors);
            llama_note = fmt("llama.cpp %lld KV / %lld tensors: %s (first open: %.1f ms)",
                             static_cast<long long>(l_kv), static_cast<long long>(l_tensors), same ? "match" : "MISMATCH",
                             llama_once_ms);
            good = good && same;
        }
    } else {
        llama_note = "llama.cpp not checked (" + llama.why_unavailable() + ")";
    }
    struct stat st {};
    std::uint64_t disk = 0;
    for (const fs::path& p : f.parts)
        if (::stat(p.c_str(), &st) == 0) disk += static_cast<std::uint64_t>(st.st_blocks) * 512;
    std::printf("  %-12s %zu part(s), %llu bytes (%.1f MB on disk), data_offset %llu; minfer %llu KV / %llu tensors; "
                "floor %s; %s\n",
                f.name.c_str(), f.parts.size(), static_cast<unsigned long long>(f.file_bytes), static_cast<double>(disk) / 1e6,
                static_cast<unsigned long long>(m->metadata().data_offset()), static_cast<unsigned long long>(our_kv),
                static_cast<unsigned long long>(our_tensors),
                floor_kv == our_kv && floor_tensors == our_tensors ? "match" : "MISMATCH", llama_note.c_str());
    return good;
}

struct options {
    bool large = false;
    bool keep = false;
    bool rss = true;
};

// Remove our own flags from argv (Google Benchmark rejects flags it does not know).
options take_options(int& argc, char** argv) {
    options o;
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--large") o.large = true;
        else if (a == "--keep-fixtures") o.keep = true;
        else if (a == "--no-rss") o.rss = false;
        else argv[out++] = argv[i];
    }
    argc = out;
    argv[argc] = nullptr;
    return o;
}

int repetitions_flag(int argc, char** argv) {
    int reps = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        constexpr std::string_view flag = "--benchmark_repetitions=";
        if (a.substr(0, flag.size()) == flag) reps = std::atoi(argv[i] + flag.size());
    }
    return reps;
}

template <class B>
B* with_spread(B* b) {
    return b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); })
        ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
    // Helper modes.
    if (argc >= 2) {
        const std::string_view mode = argv[1];
        if (mode == "--rss-baseline") return rss_child(mode, "");
        if ((mode == "--rss-open" || mode == "--rss-floor" || mode == "--rss-llama") && argc == 3) return rss_child(mode, argv[2]);
        if (mode == "--write-fixtures" && argc >= 3) {
            const bool large = argc >= 4 && std::string_view(argv[3]) == "--large";
            fs::create_directories(argv[2]);
            for (const fixture& f : minfer::bench::write_all(argv[2], large)) std::printf("%s\n", f.entry.c_str());
            return 0;
        }
    }

    const options opt = take_options(argc, argv);
    const int reps = repetitions_flag(argc, argv);  // before Initialize(), which consumes the flag
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    fs::path dir;
    std::vector<fixture> fixtures;
    try {
        dir = minfer::bench::make_scratch_dir();
        const auto t0 = std::chrono::steady_clock::now();
        fixtures = minfer::bench::write_all(dir, opt.large);
        const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("fixtures written to %s in %.0f ms\n", dir.c_str(), ms);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "minfer-bench: fixture generation failed: %s\n", e.what());
        if (!dir.empty()) fs::remove_all(dir);
        return 1;
    }
    auto cleanup = [&] {
        if (opt.keep) std::printf("fixtures kept in %s\n", dir.c_str());
        else fs::remove_all(dir);
    };

    // Correctness once (this also warms the page cache for the metadata of every part).
    const llama_gguf& llama = llama_gguf::get();
    std::printf("llama.cpp reference: %s\n", llama.available() ? llama.path().c_str() : llama.why_unavailable().c_str());
    std::printf("verify:\n");
    bool good = true;
    for (const fixture& f : fixtures) good = verify(f) && good;
    {
        const fixture& a = fixtures.front();
        const std::optional<model> m = open_model(a.entry);
        if (m) {
            const std::uint64_t off = m->metadata().data_offset();
            std::printf("fixture (a) %s: data_offset %llu (real file: %llu), file size %llu (real file: %llu)\n",
                        a.entry.filename().c_str(), static_cast<unsigned long long>(off),
                        static_cast<unsigned long long>(minfer::bench::qwen_reference_data_offset),
                        static_cast<unsigned long long>(a.file_bytes),
                        static_cast<unsigned long long>(minfer::bench::qwen_reference_file_bytes));
        }
    }
    if (!good) {
        std::fprintf(stderr, "minfer-bench: verification failed\n");
        cleanup();
        return 1;
    }

    // The model the access benchmarks use stays open for the whole run.
    const std::optional<model> lookup_model = open_model(fixtures.front().entry);
    if (!lookup_model) {
        cleanup();
        return 1;
    }
    const model* qm = &*lookup_model;
    for (const fixture& f : fixtures) {
        const fixture* fp = &f;
        with_spread(benchmark::RegisterBenchmark(("minfer_open/" + f.name).c_str(), bm_minfer_open, fp))
            ->Unit(benchmark::kMicrosecond);
        auto* l = with_spread(benchmark::RegisterBenchmark(("llama_gguf_init/" + f.name).c_str(),
                                                           llama_not_run_reason(f) != nullptr ? bm_llama_not_run : bm_llama_open, fp))
                      ->Unit(benchmark::kMicrosecond);
        if (llama_not_run_reason(f) != nullptr) l->Iterations(1)->Repetitions(1);
        with_spread(benchmark::RegisterBenchmark(("floor_walk/" + f.name).c_str(), bm_floor, fp))
            ->Unit(benchmark::kMicrosecond);
        with_spread(benchmark::RegisterBenchmark(("capi_open/" + f.name).c_str(), bm_capi_open, fp))
            ->Unit(benchmark::kMicrosecond);
    }
    with_spread(benchmark::RegisterBenchmark("key_lookup/qwen", bm_key_lookup, qm))->Unit(benchmark::kNanosecond);
    with_spread(benchmark::RegisterBenchmark("tensor_lookup/qwen", bm_tensor_lookup, qm, &fixtures.front().tensor_names))
        ->Unit(benchmark::kMicrosecond);
    with_spread(benchmark::RegisterBenchmark("vocab_iterate/qwen", bm_vocab_iterate, qm))->Unit(benchmark::kMicrosecond);
    minfer::bench::register_hostile_benchmarks();

    summary_reporter rep(::isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                  : benchmark::ConsoleReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&rep);
    print_summary(rep, fixtures, reps);
    if (opt.rss) print_rss(fixtures.front());
    std::fflush(stdout);
    cleanup();
    benchmark::Shutdown();
    return 0;
}
