// Parse any bytes. A failure must come with a message; a success must keep every view in bounds.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    auto v = gguf::file_view::parse(std::as_bytes(std::span(data, size)));
    if (!v) {
        fuzz::require(v.error().code != gguf::errc::ok && !v.error().message().empty());
        return 0;
    }
    fuzz::consume(fuzz::touch_all(*v));
    return 0;
}
