#pragma once
// The commands main.cpp's table knows. Each command file defines its two functions: one adds the
// command's options to its CLI11 subcommand, the other runs it after parsing and returns the exit code.
#include <CLI/CLI.hpp>

namespace minfer::cli {

void info_add_options(CLI::App& sub);
int info_run();

void edit_add_options(CLI::App& sub);
int edit_run();

void split_add_options(CLI::App& sub);
int split_run();

void merge_add_options(CLI::App& sub);
int merge_run();

void tensor_add_options(CLI::App& sub);
int tensor_run();

void diff_add_options(CLI::App& sub);
int diff_run();

void hash_add_options(CLI::App& sub);
int hash_run();

void verify_add_options(CLI::App& sub);
int verify_run();

void estimate_add_options(CLI::App& sub);
int estimate_run();

void quantize_add_options(CLI::App& sub);
int quantize_run();

void convert_add_options(CLI::App& sub);
int convert_run();
void prune_add_options(CLI::App& sub);
int prune_run();

void assemble_add_options(CLI::App& sub);
int assemble_run();

void report_add_options(CLI::App& sub);
int report_run();

}  // namespace minfer::cli
