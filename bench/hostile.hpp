#pragma once
// Resource bounds on hostile input: tiny files that claim huge counts and lengths. Each must be
// refused in time and memory independent of the claim.
namespace minfer::bench {
/// Register the hostile_open/<case> benchmarks (time to refusal, bytes allocated per open).
void register_hostile_benchmarks();
}  // namespace minfer::bench
