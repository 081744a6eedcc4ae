#pragma once
// The printers of `minfer info`: each writes one view of an opened model (or of a directory) to
// stdout through an out_buffer and returns an exit code.
#include <filesystem>

#include "../cmd/info_options.hpp"
#include "../common/out_buffer.hpp"
#include "minfer/gguf/model.hpp"

namespace minfer::cli {

/// Header, metadata, tensor table, per-type summary and totals, as text.
int print_text(const gguf::model& m, const info_options& opt, out_buffer& out);
/// The same facts as one JSON document, streamed.
int print_json(const gguf::model& m, const info_options& opt, out_buffer& out);
/// One value, raw (--key). exit_parse with a message when the key is absent.
int print_key(const gguf::model& m, const info_options& opt, out_buffer& out);
/// `minfer info <directory>`: the model files in it with each one's verdict. Returns exit_usage.
int list_directory(const std::filesystem::path& dir, const info_options& opt, out_buffer& out);

}  // namespace minfer::cli
