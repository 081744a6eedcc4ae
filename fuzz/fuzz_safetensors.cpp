// convert::safetensors_file on arbitrary bytes. An input is a file as it is, or, when it starts with
// '{', a header text: the target writes the length prefix for it, and what follows a "\n#data\n" line
// becomes the data section (mutations of a header keep a right length, so the fuzzer reaches the
// header's checks instead of stopping at the prefix). A refusal is bad_safetensors (or out_of_memory) at an
// offset inside the file with a message that renders; an acceptance must hold every promise of the
// header: the tensors tile the data section exactly in by_offset() order, each one's byte range is its
// shape's size and lies in the file (tensor_data reads it, under ASan), names are unique and found by
// find(), by_name() is sorted, check_convertible refuses only what is not convertible. A broken
// promise traps.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/safetensors.hpp"

namespace {

namespace cv = minfer::convert;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_safetensors: %s\n", what);
    __builtin_trap();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

volatile std::uint64_t sink = 0;

void check_accepted(const cv::safetensors_file& f, std::size_t size) {
    require(f.file_size() == size, "file size");
    require(f.data_offset() == 8 + f.header_size() && f.data_offset() <= size, "data offset");
    const std::uint64_t data_size = size - f.data_offset();
    const auto tensors = f.tensors();
    require(f.by_offset().size() == tensors.size() && f.by_name().size() == tensors.size(), "index sizes");
    std::uint64_t covered = 0;
    for (std::uint32_t i : f.by_offset()) {
        require(i < tensors.size(), "by_offset index");
        const cv::tensor_entry& t = tensors[i];
        require(t.data_begin == covered, "tensors tile the data section");
        require(t.data_end >= t.data_begin && t.data_end <= data_size, "range within the data");
        covered = t.data_end;
    }
    require(covered == data_size, "the data section is covered to its end");
    for (const cv::tensor_entry& t : tensors) {
        require(t.shape.size() <= cv::safetensors_max_dims, "dimensions");
        // accepted: the element and bit counts fit 64 bits, and the bits are whole bytes
        std::uint64_t elements = 1;
        for (std::int64_t d : t.shape) {
            require(d >= 0, "dimension sign");
            require(!__builtin_mul_overflow(elements, static_cast<std::uint64_t>(d), &elements), "element count fits");
        }
        require(elements == t.n_elements, "element count");
        std::uint64_t bits = 0;
        require(!__builtin_mul_overflow(elements, std::uint64_t{cv::bit_size(t.dtype)}, &bits), "bit count fits");
        require(bits % 8 == 0 && bits / 8 == t.n_bytes(), "byte size");
        require(t.file_begin == f.data_offset() + t.data_begin && t.file_end == f.data_offset() + t.data_end,
                "absolute range");
        require(t.header_offset >= 8 && t.header_offset < f.data_offset(), "name inside the header");
        require(t.name.find('\0') == std::string::npos, "no NUL in names");
        const std::span<const std::byte> bytes = f.tensor_data(t);
        require(bytes.size() == t.n_bytes(), "tensor_data size");
        if (!bytes.empty()) sink = sink + static_cast<std::uint8_t>(bytes.front()) + static_cast<std::uint8_t>(bytes.back());
        require(f.find(t.name) == &t, "find");
        const auto convertible = f.check_convertible(t);
        require(convertible.has_value() == cv::is_convertible(t.dtype), "check_convertible of one tensor");
        if (!convertible) require(convertible.error().code == cv::codes::unsupported_dtype, "unsupported_dtype");
    }
    for (std::size_t k = 1; k < f.by_name().size(); ++k)
        require(tensors[f.by_name()[k - 1]].name < tensors[f.by_name()[k]].name, "by_name sorted, names unique");
    if (const auto all = f.check_convertible(); !all) {
        require(all.error().code == cv::codes::unsupported_dtype, "check_convertible's code");
        require(!all.error().message().empty(), "message");
    }
}

// The file an input stands for (see the top).
std::string file_of(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    if (input.empty() || input.front() != '{') return std::string(input);
    constexpr std::string_view separator = "\n#data\n";
    const std::size_t split = input.find(separator);
    const std::string_view header = input.substr(0, split);
    const std::string_view rest = split == std::string_view::npos ? std::string_view() : input.substr(split + separator.size());
    std::string file(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<char>((std::uint64_t{header.size()} >> (8 * i)) & 0xFFu);
    file += header;
    file += rest;
    return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t input_size) {
    const std::string file = file_of(data, input_size);
    const std::size_t size = file.size();
    auto buffer = std::make_unique<std::byte[]>(size);
    if (size > 0) std::memcpy(buffer.get(), file.data(), size);
    auto f = cv::safetensors_file::read(minfer::gguf::mapped_file::adopt(std::move(buffer), size), "fuzz.safetensors");
    if (f) {
        check_accepted(*f, size);
        return 0;
    }
    const minfer::gguf::error& e = f.error();
    require(e.code == cv::codes::bad_safetensors || e.code == minfer::gguf::errc::out_of_memory, "error code");
    require(e.offset <= size, "error offset inside the file");
    require(e.file == "fuzz.safetensors" || e.code == minfer::gguf::errc::out_of_memory, "error file");
    require(!e.message().empty(), "message");
    return 0;
}
