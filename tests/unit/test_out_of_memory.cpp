// Under memory pressure every public function returns out_of_memory (or succeeds), as README and
// SECURITY.md promise: never std::terminate (a noexcept function whose error text throws
// bad_alloc), never a crash. alloc_fail.hpp's operator new fails the k-th allocation made inside
// the call under test, for k = 0, 1, 2, … until a call makes no failed allocation; each outcome
// must be success or out_of_memory.
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alloc_fail.hpp"
#include "gguf_bytes.hpp"
#include "minfer/check/model_hash.hpp"
#include "minfer/check/value_check.hpp"
#include "minfer/compare/tensor_diff.hpp"
#include "minfer/core/tensor.hpp"
#include "minfer/estimate/estimate.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/metadata_edit.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/assemble_config.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "minfer/toolbox/verify.hpp"
#include "minfer/toolbox/edit_steps.hpp"
#include "minfer/toolbox/hash_line.hpp"
#include "minfer/toolbox/part_of.hpp"
#include "minfer/toolbox/sha256_text.hpp"
#include "minfer/toolbox/size_text.hpp"

namespace {
using namespace minfer::test;
using minfer::test::alloc_fail::under_pressure;
namespace gg = minfer::gguf;
using gg::errc;

template <class R>
errc code_of(const R& r) {
    return r ? errc::ok : r.error().code;
}

bytes small_model(std::uint32_t seed) {
    gg::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "pressure");
    w.set_u32("llama.block_count", 1).set_u32("llama.context_length", 64).set_u32("llama.embedding_length", 32);
    w.set_u32("llama.feed_forward_length", 64).set_u32("llama.attention.head_count", 4);
    const std::vector<std::byte> zeros(512);
    w.set_array(gg::in_place_padding_key, gg::value_type::u8, std::span<const std::byte>(zeros));
    std::vector<std::string> vocab;
    for (int i = 0; i < 40; ++i) vocab.push_back(std::string("tok").append(std::to_string(i)));
    w.set_strings("tokenizer.ggml.tokens", vocab);
    const std::int64_t ne[] = {32, 8};
    w.add_tensor("a", gg::tensor_type::f32, ne, random_bytes(32 * 8 * 4, seed));
    w.add_tensor("b", gg::tensor_type::f16, ne, random_bytes(32 * 8 * 2, seed + 1));
    return to_bytes(w);
}

struct fixture {
    temp_dir dir;
    std::filesystem::path file = dir / "m.gguf";
    std::filesystem::path other = dir / "n.gguf";
    fixture() {
        write_file(file, small_model(1));
        write_file(other, small_model(2));
    }
};

TEST(OutOfMemory, Loader) {
    fixture f;
    under_pressure("mapped_file::open", [&] { return code_of(gg::mapped_file::open(f.file)); });
    under_pressure("mapped_file::open(read)", [&] { return code_of(gg::mapped_file::open(f.file, gg::load_mode::read)); });
    const bytes b = read_file(f.file);
    under_pressure("file_view::parse", [&] { return code_of(gg::file_view::parse(std::span<const std::byte>(b))); });
    under_pressure("model::open", [&] { return code_of(gg::model::open(f.file)); });
    // The error path too: a file that does not exist, and one that is not GGUF.
    const std::filesystem::path absent = f.dir / "absent.gguf", bad = f.dir / "bad.gguf";
    under_pressure("model::open(missing)", [&] {
        const errc c = code_of(gg::model::open(absent));
        return c == errc::io_error ? errc::ok : c;
    });
    write_file(bad, random_bytes(100, 3));
    under_pressure("model::open(bad magic)", [&] {
        const errc c = code_of(gg::model::open(bad));
        return c == errc::bad_magic ? errc::ok : c;
    });
}

TEST(OutOfMemory, Writers) {
    fixture f;
    auto m = gg::model::open(f.file);
    ASSERT_TRUE(m);
    // Paths are made before each call: the allocations counted are the library's.
    const std::filesystem::path atomic = f.dir / "atomic.gguf", out_path = f.dir / "out.gguf";
    under_pressure("atomic_file::create+commit", [&] {
        auto out = gg::atomic_file::create(atomic);
        if (!out) return out.error().code;
        return code_of(out->commit());
    });
    under_pressure("model_source::open", [&] { return code_of(gg::model_source::open(*m)); });
    auto src = gg::model_source::open(*m);
    ASSERT_TRUE(src);
    std::vector<gg::tensor_ref> refs(m->tensors().begin(), m->tensors().end());
    under_pressure("rewrite+write", [&] {
        std::vector<gg::metadata_change> changes;
        try {
            changes.push_back(gg::metadata_change::set_string("general.name", "x"));
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;  // building the request is the caller's allocation
        }
        auto w = gg::rewrite(*m, *src, changes, refs);
        if (!w) return w.error().code;
        return code_of(w->write(out_path));
    });
    std::vector<gg::metadata_edit> edits(1);
    edits[0].what = gg::metadata_edit::op::set;
    edits[0].key = "general.name";
    edits[0].text = "renamed";
    under_pressure("plan_metadata_edit", [&] { return code_of(gg::plan_metadata_edit(*m, edits)); });
    under_pressure("split_plan::make", [&] {
        gg::split_options o;
        o.max_tensors = 1;
        return code_of(gg::split_plan::make(*m, o));
    });
}

TEST(OutOfMemory, InPlace) {
    fixture f;
    under_pressure("plan_in_place+apply_in_place", [&] {
        auto m = gg::model::open(f.file);
        if (!m) return m.error().code;
        gg::writer w;
        w.set_string("general.architecture", "llama");
        auto src = gg::model_source::open(*m);
        if (!src) return src.error().code;
        std::vector<gg::metadata_change> changes;
        std::vector<gg::tensor_ref> refs;
        try {
            changes.push_back(gg::metadata_change::set_string("general.name", "renamed in place"));
            refs.assign(m->tensors().begin(), m->tensors().end());
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;
        }
        auto rw = gg::rewrite(*m, *src, changes, refs);
        if (!rw) return rw.error().code;
        auto plan = gg::plan_in_place(*m, 0, *rw);
        if (!plan) return plan.error().code;
        return code_of(gg::apply_in_place(*plan, std::move(*m)));
    });
    under_pressure("recover_in_place", [&] { return code_of(gg::recover_in_place(f.file)); });
}

TEST(OutOfMemory, Consumers) {
    fixture f;
    auto m = gg::model::open(f.file);
    auto n = gg::model::open(f.other);
    ASSERT_TRUE(m && n);
    under_pressure("core::borrow", [&] { return code_of(minfer::core::borrow(*m, "a")); });
    under_pressure("core::tensor::owned", [&] {
        const std::int64_t ne[] = {32, 4};
        return code_of(minfer::core::tensor::owned("t", gg::tensor_type::f32, ne));
    });
    under_pressure("quant::dequantize_parallel", [&] {
        const gg::tensor_ref* t = m->find_tensor("b");
        std::vector<float> out;
        try {
            out.resize(static_cast<std::size_t>(t->info->n_elements));
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;
        }
        return code_of(minfer::quant::dequantize_parallel(t->info->type, m->tensor_data(*t), out, 4));
    });
    minfer::check::hash_options hash;
    hash.kinds = {minfer::check::hash_kind::xxh64, minfer::check::hash_kind::sha256};
    hash.file_sha256 = true;
    minfer::check::walk_options walk;
    walk.threads = 2;
    under_pressure("check::hash_model", [&] { return code_of(minfer::check::hash_model(*m, hash, walk)); });
    under_pressure("check::check_values", [&] {
        minfer::check::value_check_options o;
        o.values = true;
        return code_of(minfer::check::check_values(*m, o, {}));
    });
    under_pressure("estimate", [&] { return code_of(minfer::estimate::estimate(*m, {})); });
    under_pressure("compare::diff_tensors", [&] {
        minfer::compare::tensor_counts counts;
        try {  // documented to throw std::bad_alloc
            return code_of(minfer::compare::diff_tensors(*m, *n, true, counts));
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;
        }
    });
}

TEST(OutOfMemory, Importance) {
    temp_dir dir;
    gg::writer w;
    w.set_strings("imatrix.datasets", std::vector<std::string>{"calibration.txt"});
    w.set_u32("imatrix.chunk_count", 4).set_u32("imatrix.chunk_size", 512);
    const std::int64_t sums_ne[] = {32, 2}, counts_ne[] = {1, 2};
    w.add_tensor("blk.0.ffn_down_exps.weight.in_sum2", gg::tensor_type::f32, sums_ne, bytes(32 * 2 * 4));
    w.add_tensor("blk.0.ffn_down_exps.weight.counts", gg::tensor_type::f32, counts_ne, bytes(2 * 4));
    write_file(dir / "im.gguf", to_bytes(w));
    // the legacy .dat: one entry "w" (ncall 1, 2 values), then the chunk count and dataset "d"
    const std::int32_t words[] = {1, 1, 0 /* 'w' patched below */, 1, 2, 0, 0, 7, 1, 0};
    bytes dat(sizeof words);
    std::memcpy(dat.data(), words, sizeof words);
    dat.erase(dat.begin() + 8, dat.begin() + 12);
    dat.insert(dat.begin() + 8, std::byte{'w'});
    dat.erase(dat.end() - 4, dat.end());
    dat.push_back(std::byte{'d'});
    write_file(dir / "im.dat", dat);
    minfer::quant::importance_filter f;
    f.exclude = {"attn"};
    const std::filesystem::path gguf_file = dir / "im.gguf", dat_file = dir / "im.dat";
    under_pressure("quant::read_importance(gguf)", [&] { return code_of(minfer::quant::read_importance(gguf_file, f)); });
    under_pressure("quant::read_importance(dat)", [&] { return code_of(minfer::quant::read_importance(dat_file)); });
}

// The quantizers: the row functions (one thread and several; each type family, the codebook
// lattices of the IQ types built on the first call, which this test may be) and the type plan.
TEST(OutOfMemory, Quant) {
    std::vector<float> values(256 * 4), importance(256, 1.0f);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
    for (const gg::tensor_type t : {gg::tensor_type::q8_0, gg::tensor_type::q4_k, gg::tensor_type::iq2_xxs,
                                    gg::tensor_type::iq3_s, gg::tensor_type::iq1_m, gg::tensor_type::iq4_xs}) {
        std::vector<std::byte> out(minfer::quant::bytes_for(t, values.size()));
        const std::string parallel = "quant::quantize_rows_parallel " + std::string(minfer::gguf::to_string(t));
        const std::string single = "quant::quantize_rows " + std::string(minfer::gguf::to_string(t));
        under_pressure(parallel.c_str(), [&] {
            return code_of(minfer::quant::quantize_rows_parallel(t, values, 256, importance, out, 2));
        });
        under_pressure(single.c_str(), [&] {
            return code_of(minfer::quant::quantize_rows(t, values, 256, importance, out));
        });
    }
    minfer::quant::model_facts facts;
    facts.arch = "llama";
    facts.n_layer = 2;
    facts.n_head = facts.n_head_kv = 4;
    for (const char* name : {"token_embd.weight", "blk.0.attn_v.weight", "blk.1.ffn_down.weight", "output.weight"})
        facts.tensors.push_back({name, gg::tensor_type::f16, {256, 64, 1, 1}});
    minfer::quant::plan_options po;
    po.ftype = minfer::quant::file_type::q4_k_m;
    po.overrides.push_back({"attn_.*", gg::tensor_type::q8_0});
    under_pressure("quant::plan_types", [&] { return code_of(minfer::quant::plan_types(facts, po)); });
}

// Every entry point of minfer::toolbox that writes or checks a model.
TEST(OutOfMemory, Toolbox) {
    fixture f;
    auto m = gg::model::open(f.file);
    ASSERT_TRUE(m);
    const std::filesystem::path out = f.dir / "q.gguf", dir = f.file.parent_path();
    // A model whose weights quantize: llama-shaped names, small finite values.
    const std::filesystem::path weights = f.dir / "w.gguf";
    {
        gg::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 1).set_u32("llama.attention.head_count", 4);
        std::vector<float> v(32 * 4);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) / 13.0f - 0.5f;
        const std::int64_t ne[] = {32, 4};
        for (const char* name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight"})
            w.add_tensor(name, gg::tensor_type::f32, ne, std::as_bytes(std::span<const float>(v)));
        ASSERT_TRUE(w.write(weights));
    }
    minfer::toolbox::quantize_request rq;
    rq.input = weights;
    rq.output = out;
    rq.overwrite = true;
    rq.threads = 2;
    under_pressure("toolbox::quantize", [&] { return code_of(minfer::toolbox::quantize(rq)); });
    rq.split_max_tensors = 1;
    under_pressure("toolbox::quantize (split)", [&] { return code_of(minfer::toolbox::quantize(rq)); });
    under_pressure("toolbox::verify", [&] {
        minfer::toolbox::verify_request vr;
        vr.values = true;
        vr.threads = 2;
        return code_of(minfer::toolbox::verify(*m, vr));
    });
    // The rest of minfer::toolbox is not noexcept: a std::bad_alloc counts as the out-of-memory
    // outcome; the result under no failure must be the documented one, and nothing may terminate.
    auto thrown = [](auto&& call) {
        try {
            return call();
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;
        }
    };
    under_pressure("toolbox::refuse_journal", [&] { return thrown([&] { return code_of(minfer::toolbox::refuse_journal(f.file)); }); });
    under_pressure("toolbox::plan_in_place_edit", [&] {
        return thrown([&] {
            gg::metadata_edit_plan plan;
            plan.changes.push_back(gg::metadata_change::set_string("general.name", "p"));
            return code_of(minfer::toolbox::plan_in_place_edit(*m, plan));
        });
    });
    under_pressure("toolbox::part_of", [&] {
        return thrown([&] { return minfer::toolbox::part_of(*m, f.file) ? errc::ok : errc::io_error; });
    });
    under_pressure("toolbox::parse_size/parse_count", [&] {
        return thrown([&] {
            std::string why;
            return minfer::toolbox::parse_size("1.5GiB", why) && minfer::toolbox::parse_count("17") ? errc::ok
                                                                                                     : errc::bad_value_text;
        });
    });
    under_pressure("toolbox::parse_sha256+hash_line", [&] {
        return thrown([&] {
            const std::string hex(64, 'a');
            std::string why;
            if (!minfer::toolbox::parse_sha256(hex, &why)) return errc::bad_value_text;
            return minfer::toolbox::hash_line(minfer::check::hash_kind::sha256, hex, "m.gguf", "ok").empty()
                       ? errc::bad_value_text
                       : errc::ok;
        });
    });
    under_pressure("toolbox::parse_kv_override+parse_tensor_type", [&] {
        return thrown([&] {
            if (!minfer::toolbox::parse_kv_override("general.name=str:a longer name than sso")) return errc::bad_value_text;
            return code_of(minfer::toolbox::parse_tensor_type("blk\\.[0-9]+\\.attn_v=q8_0"));
        });
    });
    under_pressure("toolbox::write_parts", [&] {
        return thrown([&] {
            std::vector<gg::writer> writers(2);
            const std::int64_t ne[] = {8};
            const std::vector<std::byte> v(32, std::byte{1});
            writers[0].set_string("general.architecture", "llama").add_tensor("a", gg::tensor_type::f32, ne, v);
            writers[1].add_tensor("b", gg::tensor_type::f32, ne, v);
            const std::vector<std::string> targets{(dir / "wp-1.gguf").string(), (dir / "wp-2.gguf").string()};
            minfer::toolbox::split_write_options wo;
            wo.overwrite = true;
            const auto failed = minfer::toolbox::write_parts(writers, targets, wo);
            return failed ? failed->error.code : errc::ok;
        });
    });
    // write_split and write_parts are not noexcept: they may throw std::bad_alloc, which counts as
    // the out-of-memory outcome; they must never terminate or leave a part behind.
    under_pressure("toolbox::write_split", [&] {
        try {
            gg::split_options so;
            so.max_tensors = 1;
            auto plan = gg::split_plan::make(*m, so);
            if (!plan) return plan.error().code;
            std::vector<std::string> targets;
            for (std::uint32_t i = 0; i < plan->part_count(); ++i)
                targets.push_back(plan->part_name((dir / "s").string(), i));
            minfer::toolbox::split_write_options wo;
            wo.overwrite = true;
            const auto failed = minfer::toolbox::write_split(*m, *plan, targets, wo);
            return failed ? failed->error.code : errc::ok;
        } catch (const std::bad_alloc&) {
            return errc::out_of_memory;
        }
    });
}

// The assembly config reader (yaml-cpp's parser, the tree, the checks, the regexes) and the lookups
// the assembler makes per tensor.
TEST(OutOfMemory, AssembleConfig) {
    const std::string config = R"(merge_method: ties
base_model: {model: {path: "base+x.gguf"}}
slices:
  - sources:
      - {model: {model: {path: "base+x.gguf"}}, layer_range: [0, 4]}
      - model: hf://org/repo/a-model-with-a-long-name-00001-of-00002.gguf
        layer_range: [4, 8]
        parameters:
          weight: [{filter: self_attn, value: [0, 0.5, 1]}, {value: 0.3}]
          density: "0.5"
    parameters: {normalize: yes, lambda: 1.5e0}
parameters: {int8_mask: off}
dtype: torch.bfloat16
tokenizer: {source: base}
tensors:
  - {name: "blk\\.(1[0-9])\\.ffn_.*", model: "https://example.com/a-model-with-a-long-name.gguf"}
)";
    under_pressure("toolbox::parse_assemble_config", [&] { return code_of(minfer::toolbox::parse_assemble_config(config, "c.yml")); });
    const std::string refused = config + "unknown_key_of_a_long_name: 1\n";
    under_pressure("toolbox::parse_assemble_config (refused)",
                   [&] { return code_of(minfer::toolbox::parse_assemble_config(refused, "c.yml")); },
                   minfer::toolbox::codes::unsupported_config);
    under_pressure("toolbox::parse_assemble_config (not YAML)",
                   [&] { return code_of(minfer::toolbox::parse_assemble_config("merge_method: [a long enough name\n", "c.yml")); },
                   minfer::toolbox::codes::bad_config);
    auto c = minfer::toolbox::parse_assemble_config(config, "c.yml");
    ASSERT_TRUE(c);
    under_pressure("toolbox::parameter_value", [&] {
        const minfer::toolbox::tensor_site site{"blk.1.attn_q.weight", "blk.5.attn_q.weight", "llama", 0, 1, 4};
        // self_attn (mergekit's name of blk.5.attn_q): [0, 0.5, 1] at t = 1/3 is (2/3)·0.5
        const auto v = minfer::toolbox::parameter_value(*c, "weight", site, 1);
        return v && std::abs(*v - 1.0 / 3) < 1e-12 ? errc::ok : errc::bad_value_text;
    });
    under_pressure("toolbox::find_tensor_rule", [&] {
        auto r = minfer::toolbox::find_tensor_rule(*c, "blk.12.ffn_up.weight");
        if (!r) return r.error().code;
        return *r == &c->tensors[0] ? errc::ok : errc::bad_value_text;
    });
}

}  // namespace
