// tandem/kernel_params.hpp — the parameter ABI between launchers and kernels.
//
// Included by host code (g++/clang) and device code (nvcc) alike, so it uses
// nothing but <cstdint>. A SIMT kernel receives each buffer as a BufferParam;
// a Tile kernel receives each tensor as a TensorParam. Both lead with the
// device pointer (driver::ParamKind::pointer_led), which is what lets the
// simulated device translate them for host references.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TANDEM_HD __host__ __device__
#else
#define TANDEM_HD
#endif

namespace tandem {

inline constexpr int kMaxRank = 4;

// `len` elements starting at `data`.
template <class T>
struct BufferParam {
  T* data;
  std::uint64_t len;
};

// An N-dimensional strided view: element (i0, .., iN-1) lives at
// data[sum(ik * stride[k])]. Strides are in elements and non-negative.
template <class T, int R>
struct TensorParam {
  T* data;
  std::int64_t shape[R];
  std::int64_t stride[R];

  TANDEM_HD std::int64_t size() const {
    std::int64_t n = 1;
    for (int k = 0; k < R; ++k) n *= shape[k];
    return n;
  }
};

}  // namespace tandem
