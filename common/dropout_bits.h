/* dropout_bits.h — the random bits of dropout's mask, one function for the CPU kernel
 * (cpu/cpu_nn.c) and the CUDA kernel (cuda/nn.cu), so both devices keep the same elements.
 *
 * 32 well-mixed bits from element i of the mask seeded by (s0, s1): a Weyl step i * golden + s0,
 * then murmur3's 32-bit finalizer (a bijection whose output bits each depend on every input
 * bit). Only 32-bit multiplies, so the CPU's mask loop vectorizes (16 lanes with AVX-512); the
 * splitmix64 it replaces needed 64-bit multiplies, which GCC left scalar. Counter-based: any
 * element's bits without the others', as a GPU thread needs. */
#ifndef AL_DROPOUT_BITS_H
#define AL_DROPOUT_BITS_H

#include <stdint.h>

#ifdef __CUDACC__
#define AL_HOST_DEVICE __host__ __device__
#else
#define AL_HOST_DEVICE
#endif

static inline AL_HOST_DEVICE uint32_t dropout_bits(uint32_t i, uint32_t s0, uint32_t s1) {
  uint32_t z = (i * 0x9e3779b9u + s0) ^ s1;
  z ^= z >> 16;
  z *= 0x85ebca6bu;
  z ^= z >> 13;
  z *= 0xc2b2ae35u;
  z ^= z >> 16;
  return z;
}

#endif
