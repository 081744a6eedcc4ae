// minfer._toolbox.estimate: `minfer estimate --json` (cli/cmd/estimate.cpp) over minfer::estimate:
// what llama.cpp allocates for a model (weights, KV cache, compute buffers), from a file or a URL
// (only the head is fetched). The estimate runs without the GIL.
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "minfer/estimate/estimate.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/remote/fetch_options.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/url.hpp"
#include "toolbox_common.hpp"

namespace minfer::python::toolbox {
namespace {

gguf::model open_at(const std::string& location, std::optional<std::uint64_t> max_fetch, std::optional<double> timeout) {
    if (!remote::is_remote(location)) return open_local(location, true);
    remote::fetch_options fo;
    if (max_fetch) fo.max_fetch = *max_fetch;
    auto url = remote::resolve(location);
    if (!url) raise_error(url.error());
    if (timeout && *timeout > 0) {
        fo.timeout_s = *timeout;  // the whole open's deadline, every request and retry included
    }
    if (remote::is_hub(*url))
        if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) fo.bearer_token = token;
    return unwrap(without_gil([&] {
        remote::http_opener opener(fo);
        return gguf::model::open(opener, *url);
    }));
}

py::dict device_dict(const estimate::device& d, bool known) {
    py::dict r;
    r["weights_bytes"] = d.weights;
    r["kv_cache_bytes"] = d.kv ? py::object(py::int_(*d.kv)) : py::object(py::none());
    r["compute_buffer_bytes"] = d.compute ? py::object(py::int_(*d.compute)) : py::object(py::none());
    r["total_bytes"] = known ? py::object(py::int_(d.total())) : py::object(py::none());
    return r;
}

py::dict estimate_(const std::string& location, std::optional<std::uint64_t> ctx, std::uint32_t batch,
                   std::uint32_t ubatch, const std::string& cache_type_k, const std::string& cache_type_v,
                   std::uint32_t parallel, const std::string& flash_attn, std::optional<std::uint64_t> max_fetch,
                   std::optional<double> timeout) {
    estimate::params p;
    if (ctx) {
        if (*ctx < 1 || *ctx > estimate::max_context)
            raise_usage(std::string("ctx ") + std::to_string(*ctx) + ": expected a context size from 1 to " +
                        std::to_string(estimate::max_context));
        p.n_ctx = *ctx;
    }
    if (batch < 1) raise_usage("batch: expected a whole number from 1 to 4294967295");
    if (ubatch < 1) raise_usage("ubatch: expected a whole number from 1 to 4294967295");
    p.n_batch = batch;
    p.n_ubatch = ubatch;
    if (p.n_ubatch > p.n_batch)
        raise_usage(std::string("ubatch ") + std::to_string(ubatch) + " is larger than batch " + std::to_string(batch));
    if (parallel < 1 || parallel > estimate::max_sequences)
        raise_usage(std::string("parallel ") + std::to_string(parallel) + ": expected 1 to " + std::to_string(estimate::max_sequences) +
                    " sequences");
    p.n_seq_max = parallel;
    const auto cache_type = [](const std::string& s, const char* which) {
        auto t = gguf::tensor_type_from_name(s);
        if (!t || !estimate::is_cache_type(*t))
            raise_usage(std::string(which).append(" '").append(gguf::escape(s)).append(
                "': expected one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"));
        return *t;
    };
    p.type_k = cache_type(cache_type_k, "cache_type_k");
    p.type_v = cache_type(cache_type_v, "cache_type_v");
    if (flash_attn == "auto") {
        p.flash_attn = estimate::flash_attn_mode::automatic;
    } else if (flash_attn == "on") {
        p.flash_attn = estimate::flash_attn_mode::on;
    } else if (flash_attn == "off") {
        p.flash_attn = estimate::flash_attn_mode::off;
    } else {
        raise_usage(std::string("flash_attn '") + gguf::escape(flash_attn) + "': expected auto, on or off");
    }
    if (max_fetch && *max_fetch == 0) raise_usage("max_fetch must be at least 1 byte");

    gguf::model m = open_at(location, max_fetch, timeout);
    const gguf::result<estimate::figures> made = without_gil([&] { return estimate::estimate(m, p); });
    if (!made) {
        const gguf::error& e = made.error();
        // Options llama.cpp refuses for this model are usage errors (exit 2), as in the tool.
        if (e.where == gguf::section::access) raise_error_exit(e, 2);
        // Hyperparameters llama.cpp cannot use (a required key missing too): the model is invalid
        // for this purpose, as the tool's exit code 1 says.
        if (e.code == gguf::errc::out_of_memory) raise_error(e);
        raise_error_as(e, "invalid", 1);
    }
    const estimate::figures& f = *made;
    const auto& h = f.hp;
    const char* fa = p.flash_attn == estimate::flash_attn_mode::on    ? "on"
                     : p.flash_attn == estimate::flash_attn_mode::off ? "off"
                                                                      : "auto";
    py::dict r;
    r["model"] = text(location);
    r["architecture"] = text(h.architecture);
    r["architecture_known"] = h.known();
    py::dict params;
    params["ctx"] = f.n_ctx;
    params["ctx_train"] = h.n_ctx_train;
    params["ctx_per_sequence"] = f.n_ctx_seq;
    params["batch"] = f.n_batch;
    params["ubatch"] = f.n_ubatch;
    params["parallel"] = f.n_seq_max;
    params["cache_type_k"] = std::string(gguf::to_string(f.type_k));
    params["cache_type_v"] = std::string(gguf::to_string(f.type_v));
    params["flash_attn"] = f.flash_attn;
    params["flash_attn_requested"] = fa;
    params["kv_unified"] = f.kv_unified;
    r["parameters"] = params;
    r["weights_bytes"] = f.weights_bytes;
    if (f.kv) {
        const auto& kv = *f.kv;
        r["kv_cache_bytes"] = kv.total();
        py::dict c;
        c["cells"] = kv.cells;
        c["swa_cells"] = kv.swa_cells;
        c["k_bytes"] = kv.k_bytes;
        c["v_bytes"] = kv.v_bytes;
        c["recurrent_state_bytes"] = kv.recurrent_state_bytes;
        py::list layers;
        for (const auto& l : kv.layers) {
            py::dict d;
            d["layer"] = l.layer;
            d["swa"] = l.swa;
            d["cells"] = l.cells;
            d["k_bytes"] = l.k_bytes;
            d["v_bytes"] = l.v_bytes;
            d["recurrent_state_bytes"] = l.r_bytes + l.s_bytes;
            layers.append(std::move(d));
        }
        c["layers"] = layers;
        r["kv_cache"] = c;
    } else {
        r["kv_cache_bytes"] = py::none();
        r["kv_cache"] = py::none();
    }
    py::dict cpu_only, offload;
    cpu_only["cpu"] = device_dict(f.cpu_only, h.known());
    offload["gpu"] = device_dict(f.gpu, h.known());
    offload["host"] = device_dict(f.host, h.known());
    r["cpu_only"] = cpu_only;
    r["full_gpu_offload"] = offload;
    return r;
}

}  // namespace

void register_estimate(py::module_& m) {
    m.def("estimate", &estimate_, py::arg("location"), py::arg("ctx"), py::arg("batch"), py::arg("ubatch"),
          py::arg("cache_type_k"), py::arg("cache_type_v"), py::arg("parallel"), py::arg("flash_attn"),
          py::arg("max_fetch"), py::arg("timeout"), "Estimate llama.cpp's memory for a model (minfer estimate --json).");
}

}  // namespace minfer::python::toolbox
