#pragma once
// The CLI's JSON output: toolbox::json_writer (the one JSON writer, shared with the report document)
// writing into an out_buffer, which is a toolbox::text_sink.
#include "../common/out_buffer.hpp"
#include "minfer/toolbox/json_writer.hpp"

namespace minfer::cli {

using toolbox::hex_bytes;
using toolbox::json_text;
using toolbox::json_writer;
using toolbox::string_member;
using toolbox::valid_utf8;

}  // namespace minfer::cli
