#pragma once
// How every command runs its body: stdout goes through one out_buffer; running out of memory is a
// message and exit 3, never an abort; and stdout that could not be written (a closed pipe, a full
// disk) is exit 3 too, even when the body succeeded — a truncated listing must not look complete.
#include <cstdio>
#include <new>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "out_buffer.hpp"

namespace minfer::cli {

/// body(out) -> exit code.
template <class Body>
int run_printing(Body&& body) {
    out_buffer out;
    int code = exit_ok;
    try {
        code = body(out);
    } catch (const std::bad_alloc&) {
        out.flush();
        std::fputs("Error: out of memory\n", stderr);
        return exit_io;
    }
    if (!out.flush()) {
        fmt::print(stderr, "Error: cannot write to standard output\n");
        return exit_io;
    }
    return code;
}

}  // namespace minfer::cli
