// Replays files and directories through a fuzz target without libFuzzer, so the corpus runs in
// every normal build and CI run. Prints "N passed, 0 failed" (a crash aborts the process instead).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
std::size_t run(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return 1;
}
}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg(argv[i]);
        if (std::filesystem::is_directory(arg)) {
            std::vector<std::filesystem::path> files;
            for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
                if (e.is_regular_file()) files.push_back(e.path());
            for (const auto& f : files) n += run(f);
        } else if (std::filesystem::is_regular_file(arg)) {
            n += run(arg);
        }
    }
    std::printf("replay: %zu passed, 0 failed\n", n);
    return n > 0 ? 0 : 1;
}
