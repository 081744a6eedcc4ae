#pragma once
// The toolbox's own error codes: reshaping models (prune, assemble) and reading assembly configs.
// Constants of gguf::errc in domain gguf::domains::toolbox (the high byte), so that adding one changes
// this header only: src/toolbox/errors.cpp names and describes them, and the inline variable below
// registers them with the loader in every program that includes this header (docs/ERRORS.md lists them;
// toolbox/exit_code.cpp classifies each).
#include "minfer/gguf/error.hpp"

namespace minfer::toolbox {

namespace codes {
/// a list of layers or experts (or --mtp, --only-mtp) that does not parse, names one that does not exist,
/// or would remove every one; subject = the option ("layers", "experts", "mtp"), expected = how many
/// there are, found = the offending index, detail = why
inline constexpr gguf::errc bad_selection = gguf::make_code(gguf::domains::toolbox, 1);
/// a metadata key that counts or indexes layers (or experts) and that the change cannot keep consistent;
/// subject = the key, detail = why
inline constexpr gguf::errc key_not_adjustable = gguf::make_code(gguf::domains::toolbox, 2);
/// sources that do not fit together: another architecture, a tensor's shape or type, a missing tensor;
/// subject = the tensor (or key), detail = both sides
inline constexpr gguf::errc sources_incompatible = gguf::make_code(gguf::domains::toolbox, 3);
/// an assembly config that is not valid YAML or has a value of the wrong kind or range; file = the config,
/// offset = the byte where the value starts, subject = the key path (slices[0].sources[1].layer_range),
/// detail = why
inline constexpr gguf::errc bad_config = gguf::make_code(gguf::domains::toolbox, 4);
/// an assembly config that asks for a method, key or parameter minfer does not implement (named, never
/// ignored); file, offset and subject as bad_config, detail = what is supported
inline constexpr gguf::errc unsupported_config = gguf::make_code(gguf::domains::toolbox, 5);
}  // namespace codes

/// This library's codes as the loader's to_string and error::description see them.
const gguf::error_domain& errors_domain() noexcept;

namespace detail {
// Registered by every TU that includes this header (every TU that can name a code), before main: one
// atomic store each, with no static-library link order to get right. Internal linkage on purpose: an
// inline variable's guard is one symbol per process (STB_GNU_UNIQUE), so a second Python extension
// module holding its own copy of the loader's table would skip its registration.
[[maybe_unused]] static const bool error_domain_registered =
    (gguf::register_error_domain(errors_domain()), true);
}  // namespace detail

}  // namespace minfer::toolbox
