#include <gtest/gtest.h>
TEST(Quant, Placeholder) {}
