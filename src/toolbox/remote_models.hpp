#pragma once
// Internal: the remote models of one toolbox command (assemble's sources given by URL). Two phases,
// so that the bytes fetched are the heads plus exactly the tensor bytes the command takes:
//   1. open(): a model's heads through minfer::remote's opener (the loader's checks and verdict, as
//      `minfer info URL`), under the command's budget and deadline (remote_settings);
//   2. start_tensors(planned): once the plan is known, the tensor bytes it takes (to_fetch: less what
//      the heads' ranges already brought, which is read from them) are checked against
//      what the budget leaves (fetch_budget_exceeded before anything is written), and every later
//      read draws on a budget of exactly that many bytes; tensor() and read() then fetch the ranges
//      (one range request per writer chunk, the size checked against the head's).
// Without minfer::remote in the build (no libcurl headers), open() refuses every URL.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/source.hpp"
#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::toolbox::detail {

class remote_models {
public:
    explicit remote_models(remote_settings settings);
    ~remote_models();
    remote_models(const remote_models&) = delete;
    remote_models& operator=(const remote_models&) = delete;

    /// Whether this build reads URLs at all.
    static bool available() noexcept;
    /// Open the model at `location` (a URL as the user gave it): heads only. The model must stay at
    /// the same address while this object reads it (tensor(), read() key on it). @returns
    /// unsupported_config (no remote support in this build), remote::resolve's bad_value_text, and
    /// model::open's errors over HTTP (fetch_budget_exceeded, transfer_failed, http_status, …).
    gguf::result<gguf::model> open(const std::string& location);
    /// The tensor bytes the plan takes from the remote models (each tensor counted once per time it
    /// is read). @returns fetch_budget_exceeded when the heads plus these exceed --max-fetch.
    gguf::result<void> start_tensors(std::uint64_t planned_bytes);
    /// A writer source for tensor `t` of remote model `m` (opened by open()): its bytes fetched a
    /// writer chunk at a time. Call after start_tensors.
    gguf::tensor_source tensor(const gguf::model& m, const gguf::tensor_ref& t);
    /// The bytes of tensor `t` of remote model `m` that reading it fetches: those its part's head
    /// (the last range of which may reach into the data) does not already hold.
    std::uint64_t to_fetch(const gguf::model& m, const gguf::tensor_ref& t) const;
    /// Bytes [offset, offset + out.size()) of tensor `t`'s data (from the head where it holds them).
    gguf::result<void> read(const gguf::model& m, const gguf::tensor_ref& t, std::uint64_t offset, std::span<std::byte> out);

    fetch_totals totals() const;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace minfer::toolbox::detail
