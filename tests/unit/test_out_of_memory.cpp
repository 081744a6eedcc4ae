// Under memory pressure every public function returns out_of_memory (or succeeds), as README and
// SECURITY.md promise: never std::terminate (a noexcept function whose error text throws
// bad_alloc), never a crash. The global operator new of this executable fails the k-th allocation
// made inside the call under test, for k = 0, 1, 2, … until a call makes no failed allocation; each
// outcome must be success or out_of_memory. A noexcept violation aborts the whole executable; the
// terminate handler then names the call and k.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

namespace {
std::atomic<long> fail_after{-1};  // allocations still allowed; -1: all
std::atomic<bool> failed_one{false};
const char* current_call = "";
long current_k = -1;

void* allocate(std::size_t n) {
    long left = fail_after.load(std::memory_order_relaxed);
    while (left >= 0) {
        if (left == 0) {
            failed_one.store(true, std::memory_order_relaxed);
            return nullptr;
        }
        if (fail_after.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) break;
    }
    return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

void* operator new(std::size_t n) {
    if (void* p = allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = allocate(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
// These deletes free what the operator news above took from malloc. GCC 12 at -O3 sees a delete
// expression inlined into free() and warns of a mismatch that is not there (the pairs are ours).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {
using namespace minfer::test;
namespace gg = minfer::gguf;
using gg::errc;

struct terminate_reporter {
    terminate_reporter() {
        std::set_terminate([] {
            std::fprintf(stderr, "std::terminate inside %s with allocation %ld failing\n", current_call, current_k);
            std::abort();
        });
    }
} reporter;

// Runs `call` (returning an errc) with the k-th allocation failing, for every k until the call
// makes no failed allocation; it must then succeed, and before that give ok or out_of_memory.
template <class Call>
void under_pressure(const char* what, Call call) {
    current_call = what;
    for (long k = 0; k < 200000; ++k) {
        current_k = k;
        failed_one = false;
        fail_after = k;
        errc got = errc::ok;
        bool threw = false;
        try {
            got = call();
        } catch (...) {
            threw = true;
        }
        fail_after = -1;
        ASSERT_FALSE(threw) << what << " threw with allocation " << k << " failing";
        if (!failed_one) {
            EXPECT_EQ(got, errc::ok) << what << " without a failed allocation: " << gg::to_string(got);
            return;
        }
        ASSERT_TRUE(got == errc::ok || got == errc::out_of_memory)
            << what << " with allocation " << k << " failing returned " << gg::to_string(got);
    }
    FAIL() << what << " allocates without end";
}

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

}  // namespace
