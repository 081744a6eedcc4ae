// toolbox::quantize (`minfer quantize`) against llama.cpp's own quantizer, llama_model_quantize of
// the reference build (what llama-quantize calls), byte for byte: the same input and options must
// give files with the same SHA-256. The inputs are written here (quantize_ref_model.hpp): a llama
// model wide enough for every block size, as F32, F16 and BF16, a MoE variant, a split set, a Q8_0
// requantization input, and GGUF importance matrices whose weights llama.cpp is handed directly
// (computed here as llama-quantize's loader computes them, independently of minfer's reader), with
// the quantize.imatrix.* overrides the llama-quantize tool adds. Every TYPE is run on both sides:
// where llama.cpp refuses (a type that needs an importance matrix) minfer must refuse too, and where
// it writes, minfer must write the same bytes. On a difference the message says where: the first
// differing byte, then the first differing key, tensor record or tensor (and the byte in it).
// Skipped, with the reason, without MINFER_LLAMA_LIB.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "llama_model_ref.hpp"
#include "llama_ref/llama_ref.hpp"
#include "minfer/check/digest.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/convert.hpp"
#include "minfer/toolbox/prune.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "minfer/quant/errors.hpp"
#include "../convert/checkpoint_writer.hpp"
#include "quantize_ref_model.hpp"
#include "sample_model.hpp"

namespace minfer_quantize_ref {
namespace {

namespace lr = minfer::llama_ref;
namespace tb = minfer::toolbox;
namespace q = minfer::quant;
namespace gguf = minfer::gguf;
using gguf::tensor_type;
using lr::llama_lib;

constexpr unsigned needed_parts = lr::part::llama_quant | lr::part::llama_model | lr::part::gguf_read;

// ---- files --------------------------------------------------------------------------------------

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class temp_dir {
public:
    explicit temp_dir(const std::string& tag) {
        static int counter = 0;
        path_ = fs::temp_directory_path() /
                ("minfer_qref." + tag + "." + std::to_string(::getpid()) + "." + std::to_string(counter++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& leaf) const { return path_ / leaf; }

private:
    fs::path path_;
};

std::string sha256_of(const fs::path& p) {
    const std::string bytes = slurp(p);
    auto d = minfer::check::hash_bytes(minfer::check::hash_kind::sha256,
                                       std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    return d ? d->text() : std::string("(hash failed: ") + d.error().message() + ")";
}

// The inputs, each written when a test first asks for it (a test process runs one test: only what it uses).
class inputs {
public:
    const fs::path& dense_f32() const { return model("dense-f32", dense_options(tensor_type::f32)); }
    const fs::path& dense_f16() const { return model("dense-f16", dense_options(tensor_type::f16)); }
    const fs::path& dense_bf16() const { return model("dense-bf16", dense_options(tensor_type::bf16)); }
    const fs::path& moe_f16() const { return model("moe-f16", moe_options()); }
    /// 3 layers, n_ff 320: ffn_down's rows (320) are not whole 256-blocks.
    const fs::path& odd_f16() const { return model("odd-f16", odd_options()); }
    /// 8 layers (n_ff 256): the rules for the first eighth / sixteenth of the layers apply.
    const fs::path& deep_f16() const { return model("deep-f16", deep_options()); }
    const imatrix_spec& im_deep() const { return spec("deep", deep_options()); }
    const fs::path& imatrix_deep() const { return imatrix("deep", deep_options()); }
    const imatrix_spec& im_dense() const { return spec("dense", dense_options(tensor_type::f32)); }
    const imatrix_spec& im_moe() const { return spec("moe", moe_options()); }
    const imatrix_spec& im_odd() const { return spec("odd", odd_options()); }
    const fs::path& imatrix_dense() const { return imatrix("dense", dense_options(tensor_type::f32)); }
    const fs::path& imatrix_moe() const { return imatrix("moe", moe_options()); }
    const fs::path& imatrix_odd() const { return imatrix("odd", odd_options()); }

private:
    static model_options dense_options(tensor_type store) {
        model_options o;
        o.store = store;
        return o;
    }
    static model_options moe_options() {
        model_options o;
        o.moe = true;
        o.store = tensor_type::f16;
        return o;
    }
    static model_options odd_options() {
        model_options o;
        o.store = tensor_type::f16;
        o.n_layer = 3;
        o.n_ff = 320;
        return o;
    }
    static model_options deep_options() {
        model_options o;
        o.store = tensor_type::f16;
        o.n_layer = 8;
        o.n_ff = 256;
        return o;
    }
    const fs::path& model(const std::string& name, const model_options& o) const {
        auto it = files_.find(name);
        if (it != files_.end()) return it->second;
        const fs::path p = dir_ / (name + ".gguf");
        if (auto r = write_model(p, o); !r) throw std::runtime_error(name + ": " + r.error().message());
        return files_.emplace(name, p).first->second;
    }
    const imatrix_spec& spec(const std::string& name, const model_options& o) const {
        auto it = specs_.find(name);
        if (it != specs_.end()) return it->second;
        return specs_.emplace(name, make_imatrix(o)).first->second;
    }
    const fs::path& imatrix(const std::string& name, const model_options& o) const {
        const std::string key = name + ".imatrix";
        auto it = files_.find(key);
        if (it != files_.end()) return it->second;
        const fs::path p = dir_ / (key + ".gguf");
        if (auto r = write_imatrix(p, spec(name, o)); !r) throw std::runtime_error(key + ": " + r.error().message());
        return files_.emplace(key, p).first->second;
    }
    temp_dir dir_{"inputs"};
    mutable std::map<std::string, fs::path> files_;
    mutable std::map<std::string, imatrix_spec> specs_;
};

const inputs& fixtures() {
    static const inputs in;
    return in;
}

// ---- llama.cpp's side, as the llama-quantize tool drives it -------------------------------------

lr::llama_model_kv_override kv_int(const char* key, std::int64_t v) {
    lr::llama_model_kv_override o{};
    o.tag = lr::kv_override_int;
    std::snprintf(o.key, sizeof o.key, "%s", key);
    o.val_i64 = v;
    return o;
}
lr::llama_model_kv_override kv_float(const char* key, double v) {
    lr::llama_model_kv_override o{};
    o.tag = lr::kv_override_float;
    std::snprintf(o.key, sizeof o.key, "%s", key);
    o.val_f64 = v;
    return o;
}
lr::llama_model_kv_override kv_bool(const char* key, bool v) {
    lr::llama_model_kv_override o{};
    o.tag = lr::kv_override_bool;
    std::snprintf(o.key, sizeof o.key, "%s", key);
    o.val_bool = v;
    return o;
}
lr::llama_model_kv_override kv_str(const char* key, const std::string& v) {
    lr::llama_model_kv_override o{};
    o.tag = lr::kv_override_str;
    std::snprintf(o.key, sizeof o.key, "%s", key);
    std::snprintf(o.val_str, sizeof o.val_str, "%s", v.c_str());  // strncpy(…, 127) as the tool does
    return o;
}

struct run_result {
    bool ok = false;
    std::vector<fs::path> outputs;  ///< in part order
    std::string why;                ///< llama.cpp's log or minfer's error message
    std::optional<gguf::errc> code; ///< minfer's error code
    std::string types;              ///< minfer's plan: "q4_K x7, q6_K x2, …" (for the timing lines)
};

// An importance matrix as the llama-quantize tool hands it to llama_model_quantize: the weights per
// tensor after its --include-weights / --exclude-weights filter, and what it writes as overrides.
struct tool_imatrix {
    std::vector<std::pair<std::string, std::vector<float>>> entries;
    std::optional<std::string> dataset;  ///< the first dataset named
    std::int64_t chunks = 0;             ///< written when > 0
};

// The tool's prepare_imatrix filter: drop names containing an excluded pattern; keep only names
// containing an included one (the tool refuses both at once).
void tool_filter(tool_imatrix& t, const q::importance_filter& f) {
    auto contains_any = [](const std::string& name, const std::vector<std::string>& pats) {
        return std::any_of(pats.begin(), pats.end(), [&](const std::string& p) { return name.find(p) != std::string::npos; });
    };
    std::erase_if(t.entries, [&](const auto& e) {
        return contains_any(e.first, f.exclude) || (!f.include.empty() && !contains_any(e.first, f.include));
    });
}

// From a GGUF imatrix: weights = sums / count per matrix (imatrix_weights), chunks = imatrix.chunk_count.
tool_imatrix tool_view(const imatrix_spec& spec, const q::importance_filter& f = {}) {
    tool_imatrix t;
    for (const imatrix_entry& e : spec.entries) t.entries.emplace_back(e.name, imatrix_weights(e));
    if (!spec.datasets.empty()) t.dataset = spec.datasets.front();
    t.chunks = spec.chunk_count;
    tool_filter(t, f);
    return t;
}

// A legacy .dat imatrix of the same entries: per entry i32 name length, the name, i32 ncall, i32 nval,
// nval f32 values (weight * ncall, so that the loader's value / ncall is close to the weight); then
// i32 chunks, i32 dataset length, the dataset. Returns what the tool derives from it: value / ncall.
tool_imatrix write_legacy_imatrix(const fs::path& path, const imatrix_spec& spec, std::int32_t ncall) {
    std::string out;
    auto i32 = [&out](std::int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
    tool_imatrix t;
    i32(static_cast<std::int32_t>(spec.entries.size()));
    for (const imatrix_entry& e : spec.entries) {
        std::vector<float> v = imatrix_weights(e);
        for (float& x : v) x *= static_cast<float>(ncall);
        i32(static_cast<std::int32_t>(e.name.size()));
        out += e.name;
        i32(ncall);
        i32(static_cast<std::int32_t>(v.size()));
        out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
        for (float& x : v) x = x / static_cast<float>(ncall);
        t.entries.emplace_back(e.name, std::move(v));
    }
    i32(static_cast<std::int32_t>(spec.chunk_count));
    i32(static_cast<std::int32_t>(spec.datasets.front().size()));
    out += spec.datasets.front();
    std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
    t.dataset = spec.datasets.front();
    t.chunks = spec.chunk_count;
    return t;
}

// What the test gives llama.cpp besides the request: the importance matrix (as the tool's
// prepare_imatrix makes it from the file) and the --override-kv overrides as the tool parses them.
struct llama_extra {
    std::optional<tool_imatrix> imatrix;
    std::vector<lr::llama_model_kv_override> kv;
};

// The parts "<prefix>-%05d-of-%05d.gguf" found in prefix's directory, in order.
std::vector<fs::path> parts_of(const fs::path& prefix) {
    std::vector<fs::path> v;
    const std::string stem = prefix.filename().string() + "-";
    for (const auto& e : fs::directory_iterator(prefix.parent_path())) {
        const std::string n = e.path().filename().string();
        if (n.rfind(stem, 0) == 0 && n.size() == stem.size() + 19) v.push_back(e.path());
    }
    std::sort(v.begin(), v.end());
    return v;
}

run_result run_llama(const llama_lib& lib, const tb::quantize_request& rq, const llama_extra& x) {
    const auto& a = lib.api();
    lr::llama_model_quantize_params p = a.llama_model_quantize_default_params();
    p.nthread = static_cast<std::int32_t>(rq.threads);
    p.ftype = static_cast<std::int32_t>(rq.type.ftype);
    p.only_copy = rq.type.copy;
    if (rq.output_tensor_type) p.output_tensor_type = static_cast<std::int32_t>(*rq.output_tensor_type);
    if (rq.token_embedding_type) p.token_embedding_type = static_cast<std::int32_t>(*rq.token_embedding_type);
    p.allow_requantize = rq.allow_requantize;
    p.quantize_output_tensor = !rq.leave_output_tensor;
    p.pure = rq.pure;
    p.keep_split = rq.keep_split;

    std::vector<lr::llama_tensor_type_override> tt;
    for (const q::type_override& o : rq.tensor_types) tt.push_back({o.pattern.c_str(), static_cast<std::int32_t>(o.type)});
    tt.push_back({nullptr, static_cast<std::int32_t>(lib.type_count())});
    if (!rq.tensor_types.empty()) p.tt_overrides = tt.data();

    std::vector<lr::llama_model_kv_override> kv = x.kv;
    std::vector<lr::llama_model_imatrix_data> im;
    if (x.imatrix && !x.imatrix->entries.empty()) {  // the tool passes nothing when the filter left nothing
        for (const auto& [name, w] : x.imatrix->entries) im.push_back({name.c_str(), w.data(), w.size()});
        im.push_back({nullptr, nullptr, 0});
        p.imatrix = im.data();
        // tools/quantize/quantize.cpp: after the user's overrides, file, dataset (the first), entries
        // and chunks (when > 0).
        kv.push_back(kv_str("quantize.imatrix.file", rq.imatrix->string()));
        if (x.imatrix->dataset) kv.push_back(kv_str("quantize.imatrix.dataset", *x.imatrix->dataset));
        kv.push_back(kv_int("quantize.imatrix.entries_count", static_cast<std::int64_t>(x.imatrix->entries.size())));
        if (x.imatrix->chunks > 0) kv.push_back(kv_int("quantize.imatrix.chunks_count", x.imatrix->chunks));
    }
    if (!kv.empty()) {
        kv.emplace_back();
        kv.back().key[0] = 0;
        p.kv_overrides = kv.data();
    }

    // The tool strips ".gguf" for --keep-split; llama then names the parts "<out>-%05d-of-%05d.gguf".
    std::string out = rq.output.string();
    if (rq.keep_split && out.size() > 5 && out.compare(out.size() - 5, 5, ".gguf") == 0) out.resize(out.size() - 5);
    (void)lib.take_log();
    const std::uint32_t rc = a.llama_model_quantize(rq.input.c_str(), out.c_str(), &p);
    run_result r;
    r.why = lib.take_log();
    r.ok = rc == 0;
    if (r.ok) {
        if (rq.keep_split) {
            r.outputs = parts_of(out);
            // One input part gives one output, named like a part all the same.
        } else {
            r.outputs = {rq.output};
        }
    }
    return r;
}

run_result run_minfer(const tb::quantize_request& rq) {
    run_result r;
    auto rep = tb::quantize(rq);
    if (!rep) {
        r.why = rep.error().message();
        r.code = rep.error().code;
        return r;
    }
    r.ok = true;
    for (const tb::quantize_output& o : rep->outputs) r.outputs.push_back(o.path);
    std::map<std::string, int> n;
    for (const q::tensor_choice& t : rep->plan.tensors) ++n[std::string(gguf::to_string(t.to))];
    for (const auto& [name, count] : n) r.types += (r.types.empty() ? "" : ", ") + name + " x" + std::to_string(count);
    return r;
}

// ---- where two files differ -----------------------------------------------------------------

std::string hex_bytes(const std::string& s, std::size_t at, std::size_t n) {
    std::string out;
    char buf[4];
    for (std::size_t i = at; i < std::min(s.size(), at + n); ++i) {
        std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(s[i]));
        out += buf;
    }
    return out;
}

std::string describe_kv(const gguf::kv& k) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Werror=restrict) on `"lit" + std::string(...)`.
    std::string s = "'";
    s.append(k.key).append("' ").append(gguf::to_string(k.type));
    if (k.is_array()) {
        s.append("[").append(gguf::to_string(k.element_type)).append(" x ").append(std::to_string(k.count)).append("]");
    }
    return s;
}

// The first difference between llama.cpp's file `ref` and minfer's `ours`, in words.
std::string describe_difference(const fs::path& ref, const fs::path& ours) {
    const std::string a = slurp(ref);
    const std::string b = slurp(ours);
    std::ostringstream os;
    std::size_t first = 0;
    while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
    os << "sizes " << a.size() << " (llama.cpp) / " << b.size() << " (minfer); first differing byte at " << first
       << " (llama " << hex_bytes(a, first, 8) << ", minfer " << hex_bytes(b, first, 8) << ")";
    auto va = gguf::file_view::parse(std::as_bytes(std::span<const char>(a.data(), a.size())));
    auto vb = gguf::file_view::parse(std::as_bytes(std::span<const char>(b.data(), b.size())));
    if (!va || !vb) {
        os << "; cannot parse: " << (va ? std::string("minfer's: ") + vb.error().message()
                                         : std::string("llama's: ") + va.error().message());
        return os.str();
    }
    // The first metadata difference, then (the data is compared per tensor, so a shifted data
    // section does not matter) the first tensor record and the first tensor's bytes that differ.
    const auto ka = va->metadata();
    const auto kb = vb->metadata();
    for (std::size_t i = 0; i < std::max(ka.size(), kb.size()); ++i) {
        if (i >= ka.size() || i >= kb.size()) {
            os << "; kv #" << i << ": " << (i < ka.size() ? "llama has " + describe_kv(ka[i]) : "llama has none")
               << ", " << (i < kb.size() ? "minfer has " + describe_kv(kb[i]) : "minfer has none");
            break;
        }
        const bool same_payload = ka[i].payload.size() == kb[i].payload.size() &&
                                  std::equal(ka[i].payload.begin(), ka[i].payload.end(), kb[i].payload.begin());
        if (ka[i].key != kb[i].key || ka[i].type != kb[i].type || ka[i].element_type != kb[i].element_type ||
            ka[i].count != kb[i].count || !same_payload) {
            os << "; kv #" << i << ": llama " << describe_kv(ka[i]) << ", minfer " << describe_kv(kb[i])
               << (same_payload ? "" : " (values differ)");
            break;
        }
    }
    const auto ta = va->tensors();
    const auto tbs = vb->tensors();
    for (std::size_t i = 0; i < std::max(ta.size(), tbs.size()); ++i) {
        if (i >= ta.size() || i >= tbs.size()) {
            os << "; tensor counts " << ta.size() << " / " << tbs.size();
            return os.str();
        }
        const gguf::tensor_info& x = ta[i];
        const gguf::tensor_info& y = tbs[i];
        if (x.name != y.name || x.type != y.type || x.ne != y.ne || x.offset != y.offset) {
            os << "; tensor #" << i << ": llama '" << x.name << "' " << gguf::to_string(x.type) << " at " << x.offset
               << ", minfer '" << y.name << "' " << gguf::to_string(y.type) << " at " << y.offset;
            return os.str();
        }
    }
    if (va->data_offset() != vb->data_offset()) os << "; data offsets " << va->data_offset() << " / " << vb->data_offset();
    for (const gguf::tensor_info& x : ta) {
        const auto da = va->tensor_data(x);
        const auto db = vb->tensor_data(*vb->find_tensor(x.name));
        if (da.size() == db.size() && std::equal(da.begin(), da.end(), db.begin())) continue;
        std::size_t k = 0;
        while (k < da.size() && k < db.size() && da[k] == db[k]) ++k;
        const gguf::type_traits* tr = gguf::traits(x.type);
        const std::uint64_t row_bytes = tr != nullptr && tr->block_elems > 0
                                            ? static_cast<std::uint64_t>(x.ne[0]) / tr->block_elems * tr->block_bytes
                                            : 1;
        std::size_t n_diff = 0;
        for (std::size_t j = 0; j < std::min(da.size(), db.size()); ++j) n_diff += da[j] != db[j] ? 1u : 0u;
        os << "; tensor '" << x.name << "' (" << gguf::to_string(x.type) << ", ne " << x.ne[0] << "x" << x.ne[1] << "x"
           << x.ne[2] << ") differs first at its byte " << k << " (row " << k / row_bytes << ", block "
           << (tr != nullptr && tr->block_bytes > 0 ? (k % row_bytes) / tr->block_bytes : 0) << "), " << n_diff
           << " bytes differ";
        return os.str();
    }
    os << "; tensors' bytes equal";
    return os.str();
}

// llama.cpp's result and minfer's must agree: both refuse, or both write the same files.
void expect_same(const run_result& ref, const run_result& ours, const std::string& label) {
    SCOPED_TRACE(label);
    if (!ref.ok) {
        EXPECT_FALSE(ours.ok) << "llama.cpp refused but minfer wrote " << ours.outputs.size()
                              << " file(s); llama.cpp said:\n" << ref.why.substr(0, 2000);
        return;
    }
    ASSERT_TRUE(ours.ok) << "llama.cpp wrote the file, minfer refused: " << ours.why;
    ASSERT_EQ(ref.outputs.size(), ours.outputs.size());
    for (std::size_t i = 0; i < ref.outputs.size(); ++i) {
        EXPECT_EQ(ref.outputs[i].filename(), ours.outputs[i].filename());
        const std::string ha = sha256_of(ref.outputs[i]);
        const std::string hb = sha256_of(ours.outputs[i]);
        if (ha != hb)
            ADD_FAILURE() << ours.outputs[i].filename() << ": SHA-256 " << hb << " (minfer) != " << ha
                          << " (llama.cpp): " << describe_difference(ref.outputs[i], ours.outputs[i]);
    }
}

// One case: the request run by both, in two directories, and compared; the outputs then removed.
struct case_dirs {
    temp_dir dir{"case"};
    fs::path llama_out, minfer_out;
};

struct compared {
    run_result ref, ours;
};

// What llama.cpp is expected to do with a case (so that two refusals cannot pass for a comparison).
enum class expect { writes, refuses, either };

// `inspect` (optional) looks at the outputs before they are removed.
compared compare(const llama_lib& lib, tb::quantize_request rq, const llama_extra& x, const std::string& label,
                 const std::function<void(const compared&)>& inspect = {}, expect want = expect::writes) {
    const std::string out_name = "out.gguf";
    case_dirs d;
    fs::create_directories(d.dir / "llama");
    fs::create_directories(d.dir / "minfer");
    compared c;
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    rq.output = d.dir / "llama" / out_name;
    c.ref = run_llama(lib, rq, x);
    const auto t1 = clock::now();
    rq.output = d.dir / "minfer" / out_name;
    c.ours = run_minfer(rq);
    const auto t2 = clock::now();
    if (std::getenv("MINFER_QREF_TIMES") != nullptr)
        std::printf("[ time     ] %-60s llama %6.0f ms, minfer %6.0f ms  %s\n", label.c_str(),
                    std::chrono::duration<double, std::milli>(t1 - t0).count(),
                    std::chrono::duration<double, std::milli>(t2 - t1).count(), c.ours.types.c_str());
    expect_same(c.ref, c.ours, label);
    if (want == expect::writes) {
        EXPECT_TRUE(c.ref.ok) << label << ": llama.cpp refused:\n" << c.ref.why.substr(0, 2000);
    } else if (want == expect::refuses) {
        EXPECT_FALSE(c.ref.ok) << label << ": llama.cpp wrote it";
    }
    if (inspect) inspect(c);
    return c;
}

tb::quantize_request request(const fs::path& in, std::string_view type, unsigned threads) {
    tb::quantize_request rq;
    rq.input = in;
    auto t = q::parse_file_type(type);
    if (!t) throw std::runtime_error("parse_file_type(" + std::string(type) + "): " + t.error().message());
    rq.type = *t;
    rq.threads = threads;
    return rq;
}

// Every TYPE name llama-quantize accepts, aliases (Q4_K for Q4_K_M, …) left out.
std::vector<std::string> all_types() {
    std::vector<std::string> v;
    for (const q::file_type_name& n : q::file_type_names())
        if (n.copy || q::to_string(n.ftype) == n.name) v.emplace_back(n.name);
    return v;
}

bool needs_imatrix_in_llama(const run_result& ref) {
    return !ref.ok && ref.why.find("requires an imatrix") != std::string::npos;
}

// ---- the inputs and the binding, on llama.cpp's side alone -------------------------------------

// The generated models are models llama.cpp loads and decodes (finite logits), so that the
// comparisons below are made on inputs llama-quantize would be given.
TEST(QuantizeRef, InputsDecodeInLlama) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    for (const fs::path& p : {in.dense_f32(), in.dense_f16(), in.dense_bf16(), in.moe_f16(), in.odd_f16(), in.deep_f16()}) {
        SCOPED_TRACE(p.filename().string());
        std::string why;
        auto m = minfer_toolbox_test::llama_loaded::load(*lib, p.string(), why);
        ASSERT_TRUE(m) << why;
        const std::vector<float> l = m->last_logits({1, 100, 200, 300}, why);
        ASSERT_EQ(l.size(), 512u) << why;
        EXPECT_TRUE(std::all_of(l.begin(), l.end(), [](float v) { return std::isfinite(v); }));
    }
}

// The imatrix array's layout by behaviour: an entry one value too long is refused with its name and
// both sizes in the message (name, data and size read where declared).
TEST(QuantizeRef, ImatrixLayoutReachesLlama) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("imatrix_layout");
    imatrix_spec bad;
    bad.entries.push_back({"blk.0.attn_q.weight", std::vector<float>(n_embd + 1, 2.0f), {1.0f}});
    llama_extra x;
    x.imatrix = tool_view(bad);
    tb::quantize_request rq = request(fixtures().dense_f32(), "Q4_K_M", 1);
    rq.imatrix = d / "unused.imatrix.gguf";  // only its name reaches llama.cpp (quantize.imatrix.file)
    rq.output = d / "out.gguf";
    const run_result r = run_llama(*lib, rq, x);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.why.find("imatrix size 257 is different from tensor size 256 for blk.0.attn_q.weight"), std::string::npos)
        << r.why.substr(0, 3000);
}

// ---- every TYPE ---------------------------------------------------------------------------------

// Every TYPE from the F32 model, one thread: where llama.cpp writes, the same bytes; where it refuses
// for want of an importance matrix, minfer refuses with importance_required.
TEST(QuantizeRef, EveryTypeFromF32) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    std::vector<std::string> written, refused;
    for (const std::string& type : all_types()) {
        const compared c = compare(*lib, request(in.dense_f32(), type, 1), {}, "f32 -> " + type + ", 1 thread", {}, expect::either);
        (c.ref.ok ? written : refused).push_back(type);
        if (!c.ref.ok && !c.ours.ok) {
            if (needs_imatrix_in_llama(c.ref))
                EXPECT_EQ(c.ours.code, minfer::quant::codes::importance_required) << type << ": " << c.ours.why;
            else
                ADD_FAILURE() << type << ": llama.cpp refused for another reason than a missing imatrix:\n"
                              << c.ref.why.substr(0, 2000) << "\nminfer: " << c.ours.why;
        }
    }
    std::string w, r;
    for (const auto& t : written) w += " " + t;
    for (const auto& t : refused) r += " " + t;
    std::printf("[ written  ]%s\n[ refused  ]%s\n", w.c_str(), r.c_str());
    EXPECT_GE(written.size(), 20u);
}

// Finite weights that a type cannot hold: 1e5 is above f16's largest value (65504), and 1e7 makes a
// q8_0 block's scale (its largest magnitude / 127) overflow f16. llama.cpp validates every chunk it
// writes and refuses both ("quantized data validation failed"); minfer refuses both, naming the
// tensor and the row, and leaves no output. The same types from a model without the outlier write.
TEST(QuantizeRef, OverflowingOutputsAreRefusedByBoth) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    struct overflow_case {
        float outlier;
        const char* type;
    };
    for (const overflow_case oc : {overflow_case{1e5f, "F16"}, overflow_case{1e7f, "Q8_0"}, overflow_case{1e7f, "Q4_0"}}) {
        const std::string label = std::string("outlier ") + std::to_string(oc.outlier) + " -> " + oc.type;
        SCOPED_TRACE(label);
        temp_dir d("overflow");
        model_options o;
        o.outlier = oc.outlier;
        const fs::path in = d / "outlier-f32.gguf";
        ASSERT_TRUE(write_model(in, o));
        const compared c = compare(*lib, request(in, oc.type, 1), {}, label, {}, expect::refuses);
        EXPECT_NE(c.ref.why.find("quantized data validation failed"), std::string::npos) << c.ref.why.substr(0, 2000);
        EXPECT_EQ(c.ours.code, minfer::quant::codes::quantize_failed) << c.ours.why;
        EXPECT_NE(c.ours.why.find("blk.0.attn_q.weight"), std::string::npos) << c.ours.why;
        EXPECT_NE(c.ours.why.find("row 0"), std::string::npos) << c.ours.why;
    }
    // The control: the same types from the same model without the outlier are written, identically.
    for (const char* type : {"F16", "Q8_0"}) (void)compare(*lib, request(fixtures().dense_f32(), type, 1), {}, std::string("no outlier -> ") + type);
}

// ---- llama-quantize's command lines ------------------------------------------------------------

extern "C" char** environ;

// `minfer quantize <args…>` in `cwd`, stdout and stderr to files there: the exit status.
int run_minfer_cli(const std::vector<std::string>& args, const fs::path& cwd, std::string& err) {
    std::vector<std::string> argv_s{MINFER_EXE, "quantize"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const fs::path out = cwd / ".stdout", errf = cwd / ".stderr";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errf.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const fs::path here = fs::current_path();
    fs::current_path(cwd);  // posix_spawn has no chdir action in glibc 2.36's public API
    pid_t pid = -1;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    fs::current_path(here);
    posix_spawn_file_actions_destroy(&fa);
    if (sp != 0) return -1000;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1000;
    err = slurp(errf);
    fs::remove(out);
    fs::remove(errf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// The forms of llama-quantize's usage line, "[options] model-f32.gguf [model-quant.gguf] type
// [nthreads]", with options before the positionals and one value per option, as its main() reads
// them: the request each means (written out here from llama-quantize's argument loop: the output
// named after the TYPE beside the input when the second positional is a TYPE, the TYPE's listed
// name for a number) goes to llama_model_quantize, the same words to the minfer binary, and the
// files must be the same, under the same name, with nothing else written (no file named "Q4_K_M").
TEST(QuantizeRef, LlamaQuantizeCommandLines) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    struct line {
        std::vector<std::string> args;  // IN is "in.gguf", the imatrix "im.gguf", in the run directory
        std::string output;             // the file llama-quantize writes, in the run directory
        std::string type;
        unsigned threads = 0;
        std::function<void(tb::quantize_request&)> options;
    };
    const std::vector<line> lines{
        {{"in.gguf", "out.gguf", "Q4_K_M"}, "out.gguf", "Q4_K_M", 0, {}},
        {{"in.gguf", "out.gguf", "q4_k_m", "2"}, "out.gguf", "Q4_K_M", 2, {}},
        {{"in.gguf", "Q4_K_M"}, "ggml-model-Q4_K_M.gguf", "Q4_K_M", 0, {}},
        {{"in.gguf", "q8_0", "2"}, "ggml-model-Q8_0.gguf", "Q8_0", 2, {}},
        {{"in.gguf", "15"}, "ggml-model-Q4_K.gguf", "Q4_K_M", 0, {}},
        {{"in.gguf", "out.gguf", "Q4_K_M", "100000"}, "out.gguf", "Q4_K_M", 100000, {}},
        {{"--tensor-type", "attn_v=q8_0", "--tensor-type", "ffn_down=q5_k", "in.gguf", "out.gguf", "Q4_K_M", "2"},
         "out.gguf", "Q4_K_M", 2,
         [](tb::quantize_request& rq) {
             rq.tensor_types = {{"attn_v", tensor_type::q8_0}, {"ffn_down", tensor_type::q5_k}};
         }},
        {{"--leave-output-tensor", "--pure", "in.gguf", "out.gguf", "Q5_K_S"}, "out.gguf", "Q5_K_S", 0,
         [](tb::quantize_request& rq) {
             rq.leave_output_tensor = true;
             rq.pure = true;
         }},
        {{"--output-tensor-type", "q8_0", "--token-embedding-type", "q4_0", "in.gguf", "out.gguf", "Q4_K_S"},
         "out.gguf", "Q4_K_S", 0,
         [](tb::quantize_request& rq) {
             rq.output_tensor_type = tensor_type::q8_0;
             rq.token_embedding_type = tensor_type::q4_0;
         }},
        {{"--allow-requantize", "--override-kv", "general.name=str:renamed", "in.gguf", "Q8_0", "1"},
         "ggml-model-Q8_0.gguf", "Q8_0", 1,
         [](tb::quantize_request& rq) { rq.allow_requantize = true; }},
        {{"--keep-split", "in.gguf", "Q6_K"}, "ggml-model-Q6_K-00001-of-00001.gguf", "Q6_K", 0,
         [](tb::quantize_request& rq) { rq.keep_split = true; }},
    };
    const fs::path source = fixtures().dense_f32();
    for (const line& l : lines) {
        std::string label = "llama-quantize";
        for (const std::string& a : l.args) label += " " + a;
        SCOPED_TRACE(label);
        temp_dir d("cmdline");
        const fs::path ours = d / "minfer", theirs = d / "llama";
        fs::create_directories(ours);
        fs::create_directories(theirs);
        fs::copy_file(source, ours / "in.gguf");
        // llama.cpp's side: the request llama-quantize's main() makes of these words.
        tb::quantize_request rq = request(source, l.type, std::min(l.threads, 4u));
        if (l.options) l.options(rq);
        rq.output = theirs / l.output;
        if (rq.keep_split) rq.output = theirs / "ggml-model-Q6_K";  // main() strips nothing: no ".gguf" given
        llama_extra x;
        for (std::size_t i = 0; i + 1 < l.args.size(); ++i)
            if (l.args[i] == "--override-kv") x.kv.push_back(kv_str("general.name", "renamed"));
        const run_result ref = run_llama(*lib, rq, x);
        ASSERT_TRUE(ref.ok) << ref.why.substr(0, 2000);
        // minfer's side: the same words.
        std::string err;
        const int rc = run_minfer_cli(l.args, ours, err);
        ASSERT_EQ(rc, 0) << err;
        std::vector<std::string> written;
        for (const auto& e : fs::directory_iterator(ours))
            if (e.path().filename() != "in.gguf") written.push_back(e.path().filename().string());
        EXPECT_EQ(written, std::vector<std::string>{l.output});
        ASSERT_EQ(ref.outputs.size(), 1u);
        EXPECT_EQ(ref.outputs[0].filename().string(), l.output);
        EXPECT_EQ(sha256_of(ours / l.output), sha256_of(ref.outputs[0]))
            << describe_difference(ref.outputs[0], ours / l.output);
    }
}

// Words llama-quantize's usage refuses, or that name nothing: minfer says so (exit 2) and writes
// nothing (the repeatable options take one value each, so a positional is never swallowed).
TEST(QuantizeRef, CommandLinesThatAreRefused) {
    temp_dir d("cmdline_refused");
    fs::copy_file(fixtures().dense_f32(), d / "in.gguf");
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"in.gguf"},
             {"in.gguf", "out.gguf"},
             {"in.gguf", "out.gguf", "Q9_Z"},
             {"in.gguf", "out.gguf", "Q4_K_M", "2", "extra"},
             {"--tensor-type", "in.gguf", "out.gguf", "Q4_K_M"},
         }) {
        std::string label;
        for (const std::string& a : args) label += " " + a;
        SCOPED_TRACE(label);
        std::string err;
        EXPECT_EQ(run_minfer_cli(args, d.path(), err), 2) << err;
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(d.path())) files.push_back(e.path().filename().string());
        EXPECT_EQ(files, std::vector<std::string>{"in.gguf"});
    }
}

// A model without tensors (a vocabulary-only file, as convert_hf_to_gguf.py --vocab-only writes):
// llama.cpp's writer pads the end of the tensor table to the alignment even then, and so does
// quantize's output (it was 23 bytes short), byte for byte.
TEST(QuantizeRef, VocabularyOnlyInput) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("vocab_only");
    const fs::path in = d / "vocab-only.gguf";
    {
        const auto full = gguf::model::open(fixtures().dense_f32());
        ASSERT_TRUE(full) << full.error().message();
        // The same metadata, no tensor.
        auto src = gguf::model_source::open(*full);
        ASSERT_TRUE(src);
        auto w = gguf::rewrite(*full, *src, {}, {});
        ASSERT_TRUE(w) << w.error().message();
        ASSERT_TRUE(w->write(in));
    }
    for (const char* type : {"Q8_0", "Q4_K_M", "COPY"}) (void)compare(*lib, request(in, type, 1), {}, std::string("vocab only -> ") + type);
}

// A representative subset from every input type and at two threads (the bytes never depend on the
// threads; F16 and BF16 inputs are converted to f32 first on both sides).
const std::vector<std::string> subset = {"Q4_0", "Q5_1",  "Q8_0",   "Q2_K",   "Q3_K_M", "Q4_K_M", "Q5_K_S",
                                         "Q6_K", "IQ4_NL", "IQ4_XS", "TQ1_0", "MXFP4_MOE", "F16", "BF16",
                                         "F32",  "COPY"};

TEST(QuantizeRef, SubsetFromF32TwoThreads) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    for (const std::string& type : subset) compare(*lib, request(fixtures().dense_f32(), type, 2), {}, "f32 -> " + type + ", 2 threads");
}

TEST(QuantizeRef, SubsetFromF16) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    for (const std::string& type : subset) compare(*lib, request(fixtures().dense_f16(), type, 1), {}, "f16 -> " + type + ", 1 thread");
}

TEST(QuantizeRef, SubsetFromBF16TwoThreads) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    for (const std::string& type : subset) compare(*lib, request(fixtures().dense_bf16(), type, 2), {}, "bf16 -> " + type + ", 2 threads");
}

// The MoE model: experts are 3-D tensors, quantized matrix by matrix, with MoE rules (MXFP4_MOE puts
// the experts, and only them, in mxfp4; attn_v and ffn_down get more bits with 4 experts).
TEST(QuantizeRef, SubsetMoE) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    for (const char* type : {"MXFP4_MOE", "Q2_K", "Q3_K_L", "Q4_K_M", "Q5_K_M", "Q8_0", "IQ4_XS", "COPY"})
        compare(*lib, request(fixtures().moe_f16(), type, 2), {}, std::string("moe f16 -> ") + type + ", 2 threads");
}

// ffn_down rows of 320 values: the k-quants and the i-quants fall back to a legacy type there (and
// llama.cpp counts the fallbacks), with and without an importance matrix.
TEST(QuantizeRef, FallbackTypes) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    for (const char* type : {"Q2_K", "Q3_K_M", "Q4_K_S", "Q5_K_M", "Q6_K", "IQ4_XS", "TQ2_0", "MXFP4_MOE"})
        compare(*lib, request(in.odd_f16(), type, 1), {}, std::string("odd f16 -> ") + type);
    llama_extra x;
    x.imatrix = tool_view(in.im_odd());
    for (const char* type : {"IQ2_XXS", "IQ3_S", "Q4_K_M"}) {
        tb::quantize_request rq = request(in.odd_f16(), type, 2);
        rq.imatrix = in.imatrix_odd();
        compare(*lib, rq, x, std::string("odd f16 + imatrix -> ") + type);
    }
}

// 8 layers: attn_v / ffn_down get more bits in the first eighth of the layers (and every third), and with
// an imatrix Q4_0 / Q5_0 put the first eighth of ffn_down in q4_1 / q5_1.
TEST(QuantizeRef, LayerRulesDeep) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    for (const char* type : {"Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "IQ3_M"})
        compare(*lib, request(in.deep_f16(), type, 2), {}, std::string("deep f16 -> ") + type);
    llama_extra x;
    x.imatrix = tool_view(in.im_deep());
    for (const char* type : {"Q4_0", "Q5_0", "IQ4_NL", "Q4_K_M"}) {
        tb::quantize_request rq = request(in.deep_f16(), type, 2);
        rq.imatrix = in.imatrix_deep();
        compare(*lib, rq, x, std::string("deep f16 + imatrix -> ") + type);
    }
}

// ---- importance matrices ------------------------------------------------------------------------

// Every type that needs (or uses) an importance matrix, on the dense model or on the MoE one (IQ2_XS
// and IQ2_M there, and IQ1_S in a test of its own: ggml's one-time grid set-up for iq1_s alone takes
// about 10 s, so it runs beside the others).
const std::vector<std::string> imatrix_types_dense = {"IQ2_XXS", "IQ2_S", "IQ3_XXS", "IQ3_XS", "IQ3_S",
                                                      "IQ3_M",   "Q2_K_S", "Q4_K_M", "IQ4_XS"};
const std::vector<std::string> imatrix_types_moe = {"IQ2_XXS", "IQ2_XS", "IQ2_M", "IQ3_XXS", "Q4_K_M"};

TEST(QuantizeRef, ImatrixTypesDense) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    llama_extra x;
    x.imatrix = tool_view(in.im_dense());
    for (const std::string& type : imatrix_types_dense) {
        tb::quantize_request rq = request(in.dense_f32(), type, 2);
        rq.imatrix = in.imatrix_dense();
        const compared c = compare(*lib, rq, x, "f32 + imatrix -> " + type);
        EXPECT_TRUE(c.ref.ok) << type << ": llama.cpp refused with an imatrix:\n" << c.ref.why.substr(0, 2000);
    }
    // An imatrix without one tensor's entry: llama.cpp stops at that tensor ("Missing importance matrix
    // for tensor …"); minfer must refuse too, naming it.
    temp_dir d("imatrix_missing");
    imatrix_spec partial = in.im_dense();
    const auto gone = std::find_if(partial.entries.begin(), partial.entries.end(),
                                   [](const imatrix_entry& e) { return e.name == "blk.1.ffn_up.weight"; });
    ASSERT_NE(gone, partial.entries.end());
    partial.entries.erase(gone);
    ASSERT_TRUE(write_imatrix(d / "partial.imatrix.gguf", partial));
    llama_extra xp;
    xp.imatrix = tool_view(partial);
    tb::quantize_request rq = request(in.dense_f32(), "IQ2_XXS", 2);
    rq.imatrix = d / "partial.imatrix.gguf";
    const compared c = compare(*lib, rq, xp, "f32 + imatrix without blk.1.ffn_up -> IQ2_XXS", {}, expect::refuses);
    EXPECT_FALSE(c.ref.ok);
    EXPECT_NE(c.ref.why.find("Missing importance matrix for tensor blk.1.ffn_up.weight"), std::string::npos)
        << c.ref.why.substr(0, 2000);
    EXPECT_EQ(c.ours.code, minfer::quant::codes::importance_required) << c.ours.why;
    EXPECT_NE(c.ours.why.find("blk.1.ffn_up.weight"), std::string::npos) << c.ours.why;
}

TEST(QuantizeRef, ImatrixTypesMoE) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    llama_extra x;
    x.imatrix = tool_view(in.im_moe());
    for (const std::string& type : imatrix_types_moe) {
        tb::quantize_request rq = request(in.moe_f16(), type, 2);
        rq.imatrix = in.imatrix_moe();
        const compared c = compare(*lib, rq, x, "moe f16 + imatrix -> " + type);
        EXPECT_TRUE(c.ref.ok) << type << ": llama.cpp refused with an imatrix:\n" << c.ref.why.substr(0, 2000);
    }
    // Without the imatrix both refuse the IQ2 type.
    compare(*lib, request(in.moe_f16(), "IQ2_XXS", 2), {}, "moe f16, no imatrix -> IQ2_XXS", {}, expect::refuses);
}

TEST(QuantizeRef, ImatrixIQ1_SMoE) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    llama_extra x;
    x.imatrix = tool_view(in.im_moe());
    tb::quantize_request rq = request(in.moe_f16(), "IQ1_S", 2);
    rq.imatrix = in.imatrix_moe();
    const compared c = compare(*lib, rq, x, "moe f16 + imatrix -> IQ1_S");
    EXPECT_TRUE(c.ref.ok) << "llama.cpp refused with an imatrix:\n" << c.ref.why.substr(0, 2000);
    compare(*lib, request(in.moe_f16(), "IQ1_S", 2), {}, "moe f16, no imatrix -> IQ1_S", {}, expect::refuses);
}

// The legacy .dat format, the tool's --include-weights / --exclude-weights filter (entries_count
// counts what is left; nothing left: no imatrix and no quantize.imatrix.* keys at all), and a
// token_embd entry of the wrong size (let through without weights by both).
TEST(QuantizeRef, ImatrixFormsAndFilters) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    temp_dir d("imatrix_forms");
    const fs::path dat = d / "dense.imatrix.dat";
    llama_extra x;
    x.imatrix = write_legacy_imatrix(dat, in.im_dense(), 7);
    std::string with, without;  // llama.cpp's IQ4_XS with and without importance weights
    for (const char* type : {"Q4_K_M", "IQ4_XS"}) {
        tb::quantize_request rq = request(in.dense_f32(), type, 2);
        rq.imatrix = dat;
        compare(*lib, rq, x, std::string("f32 + legacy imatrix -> ") + type, [&](const compared& c) {
            if (c.ref.ok) with = sha256_of(c.ref.outputs.front());
        });
    }
    compare(*lib, request(in.dense_f32(), "IQ4_XS", 2), {}, "f32 -> IQ4_XS", [&](const compared& c) {
        if (c.ref.ok) without = sha256_of(c.ref.outputs.front());
    });
    EXPECT_NE(with, without) << "the importance weights change nothing: these comparisons would prove nothing";
    const std::vector<q::importance_filter> filters = {
        {{}, {"attn_"}}, {{"ffn_down", "output"}, {}}, {{}, {"blk.", "output"}}};
    for (const q::importance_filter& f : filters) {
        std::string label = "f32 + imatrix";
        for (const auto& p : f.include) label += " --include-weights " + p;
        for (const auto& p : f.exclude) label += " --exclude-weights " + p;
        x.imatrix = tool_view(in.im_dense(), f);
        tb::quantize_request rq = request(in.dense_f32(), "IQ4_XS", 2);
        rq.imatrix = in.imatrix_dense();
        rq.imatrix_filter = f;
        compare(*lib, rq, x, label + " -> IQ4_XS");
    }
    // User overrides of the keys llama_model_quantize and the tool set themselves: the tool's imatrix
    // keys come after the user's (a key set again moves to the end), general.file_type and
    // general.quantization_version are overridden after llama.cpp set them.
    {
        x.imatrix = tool_view(in.im_dense());
        x.kv = {kv_int("quantize.imatrix.entries_count", 5), kv_int("general.file_type", 3),
                kv_int("general.quantization_version", 7), kv_str("quantize.imatrix.dataset", "user")};
        tb::quantize_request rq = request(in.dense_f32(), "Q4_K_M", 2);
        rq.imatrix = in.imatrix_dense();
        for (const char* text : {"quantize.imatrix.entries_count=int:5", "general.file_type=int:3",
                                 "general.quantization_version=int:7", "quantize.imatrix.dataset=str:user"}) {
            auto o = tb::parse_kv_override(text);
            ASSERT_TRUE(o) << text << ": " << o.error().message();
            rq.kv_overrides.push_back(*o);
        }
        compare(*lib, rq, x, "f32 + imatrix + overrides of the quantization keys -> Q4_K_M");
        x.kv.clear();
    }
    imatrix_spec with_embd = in.im_dense();
    with_embd.entries.push_back({"token_embd.weight", std::vector<float>(100, 3.0f), {2.0f}});
    std::sort(with_embd.entries.begin(), with_embd.entries.end(),
              [](const imatrix_entry& a, const imatrix_entry& b) { return a.name < b.name; });
    ASSERT_TRUE(write_imatrix(d / "embd.imatrix.gguf", with_embd));
    x.imatrix = tool_view(with_embd);
    tb::quantize_request rq = request(in.dense_f32(), "Q4_K_M", 2);
    rq.imatrix = d / "embd.imatrix.gguf";
    compare(*lib, rq, x, "f32 + imatrix with a token_embd entry of 100 -> Q4_K_M");
}

// IQ1_M given an importance matrix: the same file as llama.cpp's. Its iq1_m search is not the published
// one (quantize_iq1.cpp says how it differs), and the tensors of this model are large enough that the
// two searches would disagree somewhere. ggml sets up its iq1 grids once per process (most of llama.cpp's
// 19 s here), so this is one case. Without an imatrix both refuse (EveryTypeFromF32).
TEST(QuantizeRef, ImatrixIQ1_MDense) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const inputs& in = fixtures();
    ASSERT_TRUE(q::can_quantize(tensor_type::iq1_m));
    llama_extra x;
    x.imatrix = tool_view(in.im_dense());
    tb::quantize_request rq = request(in.dense_f32(), "IQ1_M", 2);
    rq.imatrix = in.imatrix_dense();
    const compared c = compare(*lib, rq, x, "f32 + imatrix -> IQ1_M");
    EXPECT_TRUE(c.ref.ok) << "llama.cpp refused with an imatrix:\n" << c.ref.why.substr(0, 2000);
}

// ---- options ------------------------------------------------------------------------------------

TEST(QuantizeRef, OutputAndTokenEmbeddingTypes) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    tb::quantize_request rq = request(fixtures().dense_f32(), "Q4_K_M", 1);
    rq.output_tensor_type = tensor_type::q8_0;
    rq.token_embedding_type = tensor_type::q4_0;
    compare(*lib, rq, {}, "Q4_K_M --output-tensor-type q8_0 --token-embedding-type q4_0");
    rq = request(fixtures().dense_f16(), "IQ4_XS", 2);
    rq.output_tensor_type = tensor_type::f16;
    rq.token_embedding_type = tensor_type::q6_k;
    compare(*lib, rq, {}, "IQ4_XS --output-tensor-type f16 --token-embedding-type q6_K");
}

TEST(QuantizeRef, TensorTypePatterns) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    tb::quantize_request rq = request(fixtures().dense_f32(), "Q4_K_M", 2);
    rq.tensor_types = {{"blk\\.1\\.attn_.*", tensor_type::q8_0}, {"ffn_(up|gate)", tensor_type::iq4_nl}};
    compare(*lib, rq, {}, "Q4_K_M --tensor-type blk\\.1\\.attn_.*=q8_0 --tensor-type ffn_(up|gate)=iq4_nl");
    // A pattern that changes a tensor to a type it cannot hold in whole blocks falls back.
    rq = request(fixtures().dense_f32(), "Q5_0", 1);
    rq.tensor_types = {{"attn_k", tensor_type::q6_k}, {"output", tensor_type::q2_k}};
    compare(*lib, rq, {}, "Q5_0 --tensor-type attn_k=q6_K --tensor-type output=q2_K");
}

TEST(QuantizeRef, LeaveOutputTensorAndPure) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    tb::quantize_request rq = request(fixtures().dense_f32(), "Q4_K_M", 1);
    rq.leave_output_tensor = true;
    compare(*lib, rq, {}, "Q4_K_M --leave-output-tensor");
    rq = request(fixtures().dense_f32(), "Q3_K_M", 1);
    rq.pure = true;
    compare(*lib, rq, {}, "Q3_K_M --pure");
    rq = request(fixtures().dense_bf16(), "IQ4_NL", 1);
    rq.pure = true;
    rq.leave_output_tensor = true;
    compare(*lib, rq, {}, "IQ4_NL --pure --leave-output-tensor from bf16");
}

TEST(QuantizeRef, OverrideKv) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    // Each as text for minfer (its parser) and as the struct the tool's parser fills for llama.cpp.
    const std::vector<std::pair<std::string, lr::llama_model_kv_override>> overrides = {
        {"minfer.test.int=int:-42", kv_int("minfer.test.int", -42)},
        {"minfer.test.float=float:0.1", kv_float("minfer.test.float", 0.1)},
        {"minfer.test.bool=bool:true", kv_bool("minfer.test.bool", true)},
        {"minfer.test.str=str:hello world", kv_str("minfer.test.str", "hello world")},
        {"general.name=str:renamed by override", kv_str("general.name", "renamed by override")},
        {"llama.context_length=int:4096", kv_int("llama.context_length", 4096)},
    };
    tb::quantize_request rq = request(fixtures().dense_f32(), "Q4_0", 1);
    llama_extra x;
    for (const auto& [text, ko] : overrides) {
        auto o = tb::parse_kv_override(text);
        ASSERT_TRUE(o) << text << ": " << o.error().message();
        rq.kv_overrides.push_back(*o);
        x.kv.push_back(ko);
    }
    // The overrides reached llama.cpp's file as given (the struct layout: key at 4, value at 136).
    compare(*lib, rq, x, "Q4_0 --override-kv x6", [](const compared& c) {
        ASSERT_TRUE(c.ref.ok);
        auto m = gguf::model::open(c.ref.outputs.front());
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->get<std::uint32_t>("minfer.test.int").value_or(0), 42u);
        EXPECT_EQ(m->get<float>("minfer.test.float").value_or(0), 0.1f);
        EXPECT_EQ(m->get<bool>("minfer.test.bool").value_or(false), true);
        EXPECT_EQ(m->get<std::string_view>("minfer.test.str").value_or(""), "hello world");
        EXPECT_EQ(m->get<std::string_view>("general.name").value_or(""), "renamed by override");
        EXPECT_EQ(m->get<std::uint32_t>("llama.context_length").value_or(0), 4096u);
    });
}

TEST(QuantizeRef, KeepSplitAndSplitInput) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("split_in");
    // 21 tensors, at most 8 per part: 3 parts, split by minfer's split.
    auto parts = split_model(fixtures().dense_f32(), d / "in", 8);
    ASSERT_TRUE(parts) << parts.error().message();
    ASSERT_EQ(parts->size(), 3u);
    tb::quantize_request rq = request(parts->front(), "Q4_K_M", 2);
    rq.keep_split = true;
    const compared c = compare(*lib, rq, {}, "split input, Q4_K_M --keep-split");
    EXPECT_EQ(c.ref.outputs.size(), 3u);
    EXPECT_EQ(c.ours.outputs.size(), 3u);
    rq.keep_split = false;
    compare(*lib, rq, {}, "split input, Q4_K_M into one file");
    rq = request(parts->front(), "COPY", 1);
    rq.keep_split = true;
    compare(*lib, rq, {}, "split input, COPY --keep-split");
    // --keep-split of a single file: one output, named as part 1 of 1 by llama.cpp.
    rq = request(fixtures().dense_f32(), "Q8_0", 1);
    rq.keep_split = true;
    compare(*lib, rq, {}, "single input, Q8_0 --keep-split");
}

TEST(QuantizeRef, RequantizeFromQ8_0) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("requant");
    // The Q8_0 input: llama.cpp's own quantization of the F32 model.
    tb::quantize_request base = request(fixtures().dense_f32(), "Q8_0", 2);
    base.output = d / "q8_0.gguf";
    const run_result q8 = run_llama(*lib, base, {});
    ASSERT_TRUE(q8.ok) << q8.why;
    for (const char* type : {"Q4_K_M", "Q4_0", "IQ4_XS", "F16"}) {
        tb::quantize_request rq = request(base.output, type, 2);
        compare(*lib, rq, {}, std::string("Q8_0 -> ") + type + " without --allow-requantize", {}, expect::refuses);
        rq.allow_requantize = true;
        compare(*lib, rq, {}, std::string("Q8_0 -> ") + type + " --allow-requantize");
    }
    compare(*lib, request(base.output, "COPY", 1), {}, "Q8_0 -> COPY");
    // A quantized type, same as the input's: nothing converted, no requantize needed.
    compare(*lib, request(base.output, "Q8_0", 1), {}, "Q8_0 -> Q8_0");
}

// --dry-run: minfer's exact sizes are those of the files llama.cpp writes, and nothing is written
// (llama.cpp's own dry run only estimates the tensors' bytes, so its files are the reference).
TEST(QuantizeRef, DryRunSizesAreLlamaFileSizes) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("dry_run");
    auto parts = split_model(fixtures().dense_f32(), d / "in", 8);
    ASSERT_TRUE(parts) << parts.error().message();
    struct dry_case {
        fs::path in;
        const char* type;
        bool keep_split;
    };
    for (const dry_case& k : {dry_case{fixtures().dense_f32(), "Q4_K_M", false}, dry_case{fixtures().moe_f16(), "IQ4_XS", false},
                              dry_case{parts->front(), "Q5_K_S", true}, dry_case{fixtures().dense_bf16(), "COPY", false}}) {
        const std::string label = k.in.filename().string() + " -> " + k.type + (k.keep_split ? " --keep-split" : "");
        SCOPED_TRACE(label);
        temp_dir out("dry_run_out");
        tb::quantize_request rq = request(k.in, k.type, 2);
        rq.keep_split = k.keep_split;
        rq.output = out / "llama.gguf";
        const run_result ref = run_llama(*lib, rq, {});
        ASSERT_TRUE(ref.ok) << ref.why.substr(0, 2000);
        rq.output = out / "dry.gguf";
        rq.dry_run = true;
        auto rep = tb::quantize(rq);
        ASSERT_TRUE(rep) << rep.error().message();
        EXPECT_FALSE(rep->written);
        ASSERT_EQ(rep->outputs.size(), ref.outputs.size());
        for (std::size_t i = 0; i < ref.outputs.size(); ++i) {
            EXPECT_EQ(rep->outputs[i].file_size, fs::file_size(ref.outputs[i])) << ref.outputs[i].filename();
            EXPECT_FALSE(fs::exists(rep->outputs[i].path)) << rep->outputs[i].path << " written by a dry run";
        }
    }
}

// ---- other models: a real one and one with quantized tensors --------------------------------------

// stories260K (../shared: a real llama model in f32, 64 wide: every k-quant falls back) and the sample
// model (qwen2 with biases, its tensors in q4_0, q8_0 and f32: a requantization of mixed types).
TEST(QuantizeRef, RealAndSampleModels) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const fs::path stories = fs::path(MINFER_SHARED_DIR) / "fixtures/real/cozy-genworker__stories260K__a945bfc.gguf";
    if (fs::exists(stories)) {
        for (const char* type : {"Q4_0", "Q2_K", "Q4_K_M", "Q6_K", "IQ4_NL", "TQ1_0", "BF16", "COPY"})
            compare(*lib, request(stories, type, 2), {}, std::string("stories260K -> ") + type);
    } else {
        std::printf("[ note     ] %s absent: stories260K not compared\n", stories.c_str());
    }
    temp_dir d("sample");
    auto made = minfer::sample::make_sample_model(d / "sample.gguf");
    ASSERT_TRUE(made) << made.error().message();
    for (const char* type : {"Q8_0", "Q4_0", "Q5_K_M", "F16", "COPY"}) {
        tb::quantize_request rq = request(d / "sample.gguf", type, 1);
        compare(*lib, rq, {}, std::string("sample (q4_0/q8_0) -> ") + type, {}, expect::either);
        rq.allow_requantize = true;
        compare(*lib, rq, {}, std::string("sample (q4_0/q8_0) -> ") + type + " --allow-requantize");
    }
}

// ---- llama.cpp decodes minfer's outputs -----------------------------------------------------------

TEST(QuantizeRef, LlamaDecodesOurOutputs) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const std::vector<std::int32_t> tokens{1, 100, 200, 300, 50, 7, 411, 13};
    for (const char* type : {"Q4_K_M", "Q8_0"}) {
        SCOPED_TRACE(type);
        case_dirs d;
        fs::create_directories(d.dir / "llama");
        fs::create_directories(d.dir / "minfer");
        tb::quantize_request rq = request(fixtures().dense_f32(), type, 2);
        rq.output = d.dir / "llama" / "out.gguf";
        const run_result ref = run_llama(*lib, rq, {});
        ASSERT_TRUE(ref.ok) << ref.why;
        rq.output = d.dir / "minfer" / "out.gguf";
        const run_result ours = run_minfer(rq);
        ASSERT_TRUE(ours.ok) << ours.why;
        std::string why;
        auto mr = minfer_toolbox_test::llama_loaded::load(*lib, ref.outputs.front().string(), why);
        ASSERT_TRUE(mr) << why;
        auto mo = minfer_toolbox_test::llama_loaded::load(*lib, ours.outputs.front().string(), why);
        ASSERT_TRUE(mo) << why;
        const std::vector<float> lr_ = mr->last_logits(tokens, why);
        ASSERT_FALSE(lr_.empty()) << why;
        const std::vector<float> lo = mo->last_logits(tokens, why);
        ASSERT_FALSE(lo.empty()) << why;
        ASSERT_EQ(lr_.size(), lo.size());
        std::size_t differing = 0;
        bool finite = true;
        for (std::size_t i = 0; i < lr_.size(); ++i) {
            differing += std::memcmp(&lr_[i], &lo[i], sizeof(float)) != 0 ? 1u : 0u;
            finite = finite && std::isfinite(lo[i]);
        }
        EXPECT_TRUE(finite);
        EXPECT_EQ(differing, 0u) << "of " << lr_.size() << " logits";
    }
}

// ---- prune --layers against llama-quantize --prune-layers ----------------------------------------

// Where llama-quantize's --prune-layers writes a file llama.cpp loads (a scalar block count, the input
// already in the requested type so nothing is converted), `minfer prune --layers --no-provenance`
// writes the same bytes. The input is stories260K as llama_model_quantize itself writes it (ALL_F32:
// its key order, its tensor order); this build's prune_layers is an int32 array ended by -1, sorted
// (llama-quantize's own parser sorts and deduplicates the list; remap_layer takes the first as the
// smallest). Our list is given in any order.
TEST(QuantizeRef, PruneLayersIsLlamaQuantizePruneLayers) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    const fs::path stories = fs::path(MINFER_SHARED_DIR) / "fixtures/real/cozy-genworker__stories260K__a945bfc.gguf";
    if (!fs::exists(stories)) GTEST_SKIP() << stories << " absent: skipped";
    temp_dir d("prune_ref");
    const auto& a = lib->api();
    auto llama_quantize = [&](const fs::path& in, const fs::path& out, const std::vector<std::int32_t>* prune) {
        lr::llama_model_quantize_params p = a.llama_model_quantize_default_params();
        p.nthread = 1;
        p.ftype = 0;  // LLAMA_FTYPE_ALL_F32: every tensor is already f32, so every one is copied
        std::vector<std::int32_t> list;
        if (prune != nullptr) {
            list = *prune;
            std::sort(list.begin(), list.end());
            list.push_back(-1);
            p.prune_layers = list.data();
        }
        (void)lib->take_log();
        const std::uint32_t rc = a.llama_model_quantize(in.c_str(), out.c_str(), &p);
        return rc == 0 ? std::string() : "llama_model_quantize failed: " + lib->take_log();
    };
    const fs::path base = d / "stories-f32.gguf";
    ASSERT_EQ(llama_quantize(stories, base, nullptr), "");
    for (const std::vector<std::int32_t>& layers : {std::vector<std::int32_t>{1, 3}, std::vector<std::int32_t>{4, 0},
                                                    std::vector<std::int32_t>{2}}) {
        std::string name;
        for (std::int32_t l : layers) name += "-" + std::to_string(l);
        const fs::path theirs = d / ("llama" + name + ".gguf"), ours = d / ("minfer" + name + ".gguf");
        ASSERT_EQ(llama_quantize(base, theirs, &layers), "") << name;
        tb::prune_request rq;
        rq.input = base;
        rq.output = ours;
        for (std::int32_t l : layers) rq.layers.push_back(static_cast<std::uint32_t>(l));
        rq.provenance = false;
        auto r = tb::prune(rq);
        ASSERT_TRUE(r.has_value()) << r.error().message();
        EXPECT_EQ(sha256_of(ours), sha256_of(theirs)) << name << ": prune --layers differs from llama-quantize --prune-layers";
        if (const char* keep = std::getenv("MINFER_KEEP_PRUNE_REF")) {  // for a look with minfer diff
            std::error_code ec;
            fs::create_directories(keep, ec);
            fs::copy_file(theirs, fs::path(keep) / theirs.filename(), fs::copy_options::overwrite_existing, ec);
            fs::copy_file(ours, fs::path(keep) / ours.filename(), fs::copy_options::overwrite_existing, ec);
            fs::copy_file(base, fs::path(keep) / base.filename(), fs::copy_options::overwrite_existing, ec);
        }
        EXPECT_EQ(fs::file_size(ours), fs::file_size(theirs)) << name;
    }
}


// ---- convert: a checkpoint straight to a llama-quantize type -----------------------------------
//
// `minfer convert --outtype TYPE` must write the file llama_model_quantize writes from the f32
// conversion (which is convert_hf_to_gguf.py's f32 file: tests/convert compares those byte for byte),
// without writing that f32 file. The checkpoint is written here: a Llama of rows that fill K-quant
// blocks (256 values), its weights F32 or BF16 draws of a normal distribution, a SentencePiece
// tokenizer.model.

// An importance matrix for every 2-D weight but token_embd, by GGUF name (what llama-imatrix collects).
imatrix_spec llama_ckpt_imatrix() {
    imatrix_spec spec;
    spec.datasets = {"convert-test.txt"};
    spec.chunk_count = 10;
    std::uint64_t state = 12345;
    auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>((state >> 40) % 1000 + 1) / 100.0f;
    };
    auto add = [&](const std::string& name, std::size_t columns) {
        imatrix_entry e;
        e.name = name;
        for (std::size_t i = 0; i < columns; ++i) e.sums.push_back(next() * (i % 7 == 0 ? 50.0f : 1.0f));
        e.counts = {10.0f};
        spec.entries.push_back(std::move(e));
    };
    add("output.weight", 256);
    for (int l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"}) add(b + n + ".weight", 256);
        add(b + "ffn_down.weight", 512);
    }
    return spec;
}

TEST(ConvertQuantizeRef, OnePassEqualsTheF32ConversionThroughLlamaQuantize) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, needed_parts);
    temp_dir d("convert");
    const fs::path imatrix = d / "imatrix.gguf";
    const imatrix_spec spec = llama_ckpt_imatrix();
    ASSERT_TRUE(write_imatrix(imatrix, spec).has_value());
    for (const bool bf16 : {false, true}) {
        const std::string tag = bf16 ? "bf16" : "f32";
        SCOPED_TRACE("checkpoint " + tag);
        const fs::path ckpt = minfer::test::write_llama_checkpoint(d / ("Tiny-Llama-" + tag), bf16);
        tb::convert_request f32;
        f32.input = ckpt;
        f32.output = d / (tag + "-converted-f32.gguf");
        f32.outtype = "f32";
        f32.model_name = "minfer convert test";
        auto base = tb::convert(f32);
        ASSERT_TRUE(base.has_value()) << base.error().message();
        struct type_case {
            const char* type;
            bool imatrix;
        };
        for (const type_case c : {type_case{"Q4_K_M", false}, {"Q5_K_S", false}, {"Q6_K", false}, {"Q4_0", false},
                                  {"Q3_K_L", false}, {"IQ4_XS", true}, {"IQ2_XS", true}, {"Q2_K", true}}) {
            SCOPED_TRACE(std::string(c.type) + (c.imatrix ? " with an imatrix" : ""));
            tb::quantize_request rq = request(f32.output, c.type, 1);
            rq.output = d / (tag + "-llama-" + c.type + ".gguf");
            llama_extra x;
            if (c.imatrix) {
                rq.imatrix = imatrix;
                x.imatrix = tool_view(spec);
            }
            const run_result ref = run_llama(*lib, rq, x);
            ASSERT_TRUE(ref.ok) << ref.why.substr(0, 2000);

            tb::convert_request one;
            one.input = ckpt;
            one.output = d / (tag + "-minfer-" + c.type + ".gguf");
            one.outtype = c.type;
            one.model_name = "minfer convert test";
            one.threads = 2;
            if (c.imatrix) one.imatrix = imatrix;
            auto ours = tb::convert(one);
            ASSERT_TRUE(ours.has_value()) << ours.error().message();
            EXPECT_EQ(ours->file_type, c.type);
            EXPECT_EQ(sha256_of(one.output), sha256_of(rq.output)) << "minfer convert --outtype " << c.type
                                                                   << " differs from convert f32 + llama_model_quantize";
            std::string why;
            auto m = minfer_toolbox_test::llama_loaded::load(*lib, one.output.string(), why);
            ASSERT_TRUE(m) << why;
            const std::vector<float> logits = m->last_logits({1, 100, 200, 300}, why);
            ASSERT_EQ(logits.size(), 320u) << why;
            EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
            fs::remove(one.output);
            fs::remove(rq.output);
        }
    }
}

// The type that needs an importance matrix is refused without one, before anything is written.
TEST(ConvertQuantizeRef, AnImatrixTypeWithoutOneIsRefused) {
    temp_dir d("convert_noim");
    const fs::path ckpt = minfer::test::write_llama_checkpoint(d / "Tiny-Llama", false);
    tb::convert_request rq;
    rq.input = ckpt;
    rq.output = d / "out.gguf";
    rq.outtype = "IQ2_XS";
    auto r = tb::convert(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, q::codes::importance_required) << r.error().message();
    EXPECT_FALSE(fs::exists(rq.output));
}

}  // namespace
}  // namespace minfer_quantize_ref
