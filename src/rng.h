/* rng.h: the project's one random-number source: a counter-based hash (splitmix64 of seed and index),
 * so the CPU and the GPU draw the SAME value for element idx of a given seed, in any order, in parallel.
 * Seed-like inputs (SEMANTICS.md): x ~ U[0,1), W and b ~ U(-1/sqrt(K), 1/sqrt(K)). */
#ifndef MG_RNG_H
#define MG_RNG_H
#include <stdint.h>

#ifdef __CUDACC__
#define MG_HD __host__ __device__ __forceinline__
#else
#define MG_HD static inline
#endif

MG_HD uint64_t mg_splitmix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1) with 24 random bits (exactly representable in fp32). stream separates x, W, b. */
MG_HD float mg_rng_u01(uint64_t seed, uint32_t stream, uint64_t idx) {
    uint64_t h = mg_splitmix64(mg_splitmix64(seed ^ ((uint64_t)stream << 56)) + idx);
    return (float)(h >> 40) * (1.0f / 16777216.0f);
}
/* Uniform in [lo, hi). */
MG_HD float mg_rng_uniform(uint64_t seed, uint32_t stream, uint64_t idx, float lo, float hi) {
    return lo + (hi - lo) * mg_rng_u01(seed, stream, idx);
}
/* A byte in [-127, 127] (the benchmark's int8 ceiling inputs: the range of the s8 slices of seed-like data).
 * Its mixing differs from mg_rng_u01's on purpose: one splitmix64 of seed ^ stream ^ idx, the hash of the host loop
 * it replaced, so that the ceiling's input bytes (and its measured rate) stay those of earlier runs; a test checks
 * the GPU fill against this function byte for byte. Not for new inputs: draw those through mg_rng_u01. */
MG_HD int8_t mg_rng_s8(uint64_t seed, uint32_t stream, uint64_t idx) {
    return (int8_t)((int)(mg_splitmix64(seed ^ ((uint64_t)stream << 56) ^ idx) % 255u) - 127);
}
enum { MG_RNG_X = 1, MG_RNG_W = 2, MG_RNG_B = 3 };
#endif
