// `verify`'s checks: the vocabulary, one walk for the values and the hashes, the download checks,
// the tallies. What `minfer verify` and the Python module's verify() print or convert.
#include "minfer/toolbox/verify.hpp"

#include <new>
#include <utility>

#include "minfer/check/data_walk.hpp"
#include "minfer/check/model_hash.hpp"

namespace minfer::toolbox {

namespace {

gguf::result<verify_report> run(const gguf::model& m, const verify_request& rq) {
    verify_report rep;
    const std::size_t n_parts = m.parts().size();
    if (!rq.file_sha256.empty() && rq.file_sha256.size() != n_parts) {
        gguf::error e;
        e.code = gguf::errc::buffer_size_mismatch;
        e.expected = n_parts;
        e.found = rq.file_sha256.size();
        e.detail = "file SHA-256s (one per part file)";
        return gguf::unexpected(std::move(e));
    }
    std::optional<check::hash_kind> man_kind;
    if (rq.manifest != nullptr) {
        man_kind = rq.manifest->strongest();
        if (!man_kind) {
            gguf::error e;
            e.code = gguf::errc::bad_value_text;
            e.file = rq.manifest->path;
            e.detail = "the manifest has no line of a known hash type (xxh64, xxh3, sha1, sha256, uuid)";
            return gguf::unexpected(std::move(e));
        }
    }

    // The vocabulary as llama.cpp loads it (metadata only, before the walk over the bytes).
    auto vocab = check::check_vocab(m.metadata());
    if (!vocab) return gguf::unexpected(std::move(vocab).error());
    rep.vocabulary = std::move(*vocab);

    // One walk: the value checks, and the hashes the download checks need.
    auto values = check::value_consumer::make(m, check::value_check_options{rq.values, rq.max_examples});
    if (!values) return gguf::unexpected(std::move(values).error());
    std::vector<check::data_consumer*> consumers{&*values};
    std::optional<check::hash_consumer> hashes;
    if (man_kind || !rq.file_sha256.empty()) {
        check::hash_options ho;
        ho.kinds.clear();
        if (man_kind) ho.kinds.push_back(*man_kind);
        ho.per_tensor = man_kind.has_value() && *man_kind != check::hash_kind::uuid;
        ho.file_sha256 = !rq.file_sha256.empty();
        auto h = check::hash_consumer::make(m, ho);
        if (!h) return gguf::unexpected(std::move(h).error());
        hashes.emplace(std::move(*h));
        consumers.push_back(&*hashes);
    }
    check::walk_options wo;
    wo.threads = rq.threads;
    wo.whole_files = !rq.file_sha256.empty();
    wo.progress = rq.progress;
    if (auto w = check::walk_model_data(m, consumers, wo); !w) return gguf::unexpected(std::move(w).error());
    auto verdicts = values->take();
    if (!verdicts) return gguf::unexpected(std::move(verdicts).error());
    rep.verdicts = std::move(*verdicts);
    std::optional<check::model_digests> digests;
    if (hashes) {
        auto d = hashes->take();
        if (!d) return gguf::unexpected(std::move(d).error());
        digests.emplace(std::move(*d));
    }

    const auto tensors = m.tensors();
    for (const check::tensor_verdict& v : rep.verdicts) {
        rep.bytes += tensors[v.tensor].info->n_bytes;
        rep.by_scope[static_cast<int>(v.scope)] += 1;
        rep.values_checked += v.values_checked ? 1u : 0u;
        rep.findings += v.findings();
        rep.tensors_with_findings += v.findings() > 0 ? 1u : 0u;
        rep.warnings += v.all_zero ? 1u : 0u;
    }
    for (const check::vocab_finding& f : rep.vocabulary) (f.warning ? rep.vocab_warnings : rep.vocab_findings) += 1;

    if (rq.manifest != nullptr) {
        rep.manifest.emplace(check::check_manifest(*rq.manifest, m, rq.file_name, *digests));
        rep.manifest_ok = rep.manifest->outcome == check::check_outcome::success;
    }
    for (std::size_t p = 0; p < rq.file_sha256.size(); ++p) {
        file_check f;
        f.part = static_cast<std::uint32_t>(p);
        f.path = m.parts()[p].path.string();
        f.ours = p < digests->files.size() ? digests->files[p] : check::digest{};
        f.expected = rq.file_sha256[p];
        f.match = f.ours == f.expected;
        rep.files_ok = rep.files_ok && f.match;
        rep.files.push_back(std::move(f));
    }
    return rep;
}

}  // namespace

gguf::result<verify_report> verify(const gguf::model& m, const verify_request& request) noexcept {
    try {
        return run(m, request);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("verifying"));
    }
}

}  // namespace minfer::toolbox
