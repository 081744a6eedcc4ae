// Writes a small GGUF file with minfer's writer, opens it with model::open and checks what it reads.
#include <cstdio>
#include <cstring>
#include <minfer/gguf.hpp>
#include <minfer/gguf_write/writer.hpp>
#include <minfer/quant/dequantize.hpp>

int main(int argc, char** argv) {
    using namespace minfer::gguf;
    const char* path = argc > 1 ? argv[1] : "consumer.gguf";
    writer w;
    w.set_string("general.architecture", "consumer").set_u32("consumer.block_count", 3);
    const float values[] = {1.f, 2.f, 3.f, 4.f};
    const std::int64_t ne[] = {4};
    w.add_tensor("w", tensor_type::f32, ne, std::as_bytes(std::span(values)));
    if (auto r = w.write(path); !r) {
        std::fprintf(stderr, "%s\n", r.error().message().c_str());
        return 1;
    }
    auto m = model::open(path);
    if (!m) {
        std::fprintf(stderr, "%s\n", m.error().message().c_str());
        return 1;
    }
    const auto blocks = m->get<std::uint32_t>("consumer.block_count");
    const tensor_ref* t = m->find_tensor("w");
    if (!blocks || *blocks != 3 || t == nullptr || m->tensor_data(*t).size() != sizeof values ||
        std::memcmp(m->tensor_data(*t).data(), values, sizeof values) != 0) {
        std::fprintf(stderr, "consumer: unexpected contents\n");
        return 1;
    }
    float back[4] = {};
    if (auto r = minfer::quant::dequantize(t->info->type, m->tensor_data(*t), back);
        !r || std::memcmp(back, values, sizeof values) != 0) {
        std::fprintf(stderr, "consumer: minfer::quant did not give the values back\n");
        return 1;
    }
    std::printf("consumer: ok (%s, %zu tensor)\n", std::string(to_string(t->info->type)).c_str(), m->tensors().size());
    return 0;
}
