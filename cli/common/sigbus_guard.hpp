#pragma once
// SIGBUS: a mapped file that shrinks (another process truncates it, a disk or network mount fails)
// raises SIGBUS on the next read of a page past its new end, and the default action kills the tool
// with "Bus error" and no word about which file. The guard replaces that with a message naming the
// file and exit code 3. The message is formatted before the file is mapped, because the handler
// may only call async-signal-safe functions (write(2), _exit(2)).
#include <string_view>

namespace minfer::cli {

/// Install the SIGBUS handler (once, at start-up).
void install_sigbus_guard() noexcept;

/// Name the file whose mapping is about to be read; the handler's message names it. `what` is a
/// short description added after the path ("or one of its split parts").
void sigbus_guard_file(std::string_view path, std::string_view what = {}) noexcept;

/// For a command without --no-mmap that maps several files (quantize: the model and its imatrix):
/// the message names each of them, and gives no advice about an option the command does not have.
void sigbus_guard_files(std::string_view model, std::string_view other, std::string_view other_what) noexcept;

}  // namespace minfer::cli
