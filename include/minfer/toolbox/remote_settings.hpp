#pragma once
// How a toolbox command fetches the models it names by URL (http://, https://, hf://): the options
// `minfer info` has (--max-fetch, --timeout) and the Hub token. Plain values: the toolbox's headers
// do not depend on minfer::remote, which is built only where libcurl's headers are.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minfer::toolbox {

/// Whether a model location names a remote model (http://, https:// or hf://, any case) rather than
/// a local path: the one test of the toolbox's commands, the CLI and Python. The same answer as
/// minfer::remote::is_remote (tests/toolbox/test_remote_location.cpp holds both to it), kept here
/// because the toolbox refuses URLs by name where minfer::remote is not built.
bool names_remote_model(std::string_view location) noexcept;

struct remote_settings {
    /// The most body bytes fetched over every remote model of the command: heads and tensors
    /// (--max-fetch). Unset: 64 MiB for the heads, then exactly the tensor bytes the plan takes.
    std::optional<std::uint64_t> max_fetch;
    /// The whole command's deadline in seconds, every request and retry included (--timeout).
    /// Unset: 60 s for the heads, then 60 s plus 1 s per MiB of tensor bytes to fetch.
    std::optional<double> timeout_s;
    /// Sent as "Authorization: Bearer …" to the Hugging Face Hub only (hf://, huggingface.co, hf.co).
    std::string hf_token;
};

/// What was fetched from remote models.
struct fetch_totals {
    std::uint64_t head_bytes = 0;     ///< bytes of the heads (metadata and tensor tables)
    std::uint64_t planned_bytes = 0;  ///< tensor bytes the plan takes from remote models
    std::uint64_t bytes = 0;          ///< body bytes received, heads and tensors
    std::uint64_t requests = 0;       ///< HTTP requests made (retries count)
    std::uint32_t files = 0;          ///< remote files read (the parts of every remote model)
};

}  // namespace minfer::toolbox
