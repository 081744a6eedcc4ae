// minfer::toolbox: the pieces both frontends (the CLI and the Python module) call.
#include <gtest/gtest.h>

#include "minfer/toolbox/exit_code.hpp"

namespace tb = minfer::toolbox;
using minfer::gguf::errc;

TEST(ToolboxExitCode, IoCodesAreExit3AndKindIo) {
    for (errc c : {errc::io_error, errc::split_part_missing, errc::out_of_memory, errc::fetch_budget_exceeded,
                   errc::http_status, errc::range_ignored, errc::bad_content_range, errc::transfer_failed}) {
        EXPECT_EQ(tb::exit_code_for(c), 3) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::io) << minfer::gguf::to_string(c);
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
    }
}

TEST(ToolboxExitCode, CommandLineValuesAreUsage) {
    for (errc c : {errc::bad_value_text, errc::model_incomplete, errc::output_not_regular})
        EXPECT_EQ(tb::exit_code_for(c), 2) << minfer::gguf::to_string(c);
    EXPECT_EQ(tb::kind_of(errc::bad_value_text), tb::error_kind::request);
}

TEST(ToolboxExitCode, ParseFailuresAreInvalidFilesAndRequestsAreNot) {
    EXPECT_TRUE(tb::is_parse_failure(errc::bad_magic));
    EXPECT_TRUE(tb::is_parse_failure(errc::split_bad_name));
    EXPECT_EQ(tb::kind_of(errc::bad_magic), tb::error_kind::invalid_file);
    EXPECT_EQ(tb::exit_code_for(errc::bad_magic), 1);
    for (errc c : {errc::key_not_found, errc::type_mismatch, errc::tensor_not_found, errc::index_out_of_range,
                   errc::value_out_of_range}) {
        EXPECT_FALSE(tb::is_parse_failure(c)) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::kind_of(c), tb::error_kind::request) << minfer::gguf::to_string(c);
        EXPECT_EQ(tb::exit_code_for(c), 1) << minfer::gguf::to_string(c);
    }
    // a valid file whose model llama.cpp cannot load: an invalid file, though not a parse failure
    EXPECT_FALSE(tb::is_parse_failure(errc::bad_hyperparameter));
    EXPECT_EQ(tb::kind_of(errc::bad_hyperparameter), tb::error_kind::invalid_file);
    EXPECT_EQ(tb::to_string(tb::error_kind::invalid_file), "invalid");
    EXPECT_EQ(tb::to_string(tb::error_kind::request), "request");
    EXPECT_EQ(tb::to_string(tb::error_kind::io), "io");
}
