// SPDX-License-Identifier: Apache-2.0
// tandem/base/param_abi.hpp — the parameter ABI between launchers and kernels.
//
// Included by host code (g++/clang) and device code (nvcc) alike, so it uses
// nothing but <cstddef> and <cstdint>. A SIMT kernel receives each buffer as a BufferParam;
// a Tile kernel receives each tensor as a TensorParam. Both lead with the
// device pointer (driver::ParamKind::pointer_led), which is what lets the
// simulated device translate them for host references.
#pragma once

#include <cstddef>
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

// --- slot sizes and offsets, from the structs themselves ----------------------
// The launchers (kernels::pack_params, the catalog's ParamSlot table) write
// parameters byte by byte; these are the only numbers they may use, so a
// change to the structs above cannot leave a literal size behind.
// Element type does not matter (every T* is one pointer); std::byte stands in.
using ParamPointee = std::byte;
using AnyBufferParam = BufferParam<ParamPointee>;
template <int R>
using AnyTensorParam = TensorParam<ParamPointee, R>;

inline constexpr std::size_t kBufferParamBytes = sizeof(AnyBufferParam);
inline constexpr std::size_t kBufferParamLenOffset = offsetof(AnyBufferParam, len);
inline constexpr std::size_t kTensorParamShapeOffset = offsetof(AnyTensorParam<1>, shape);

template <int R>
inline constexpr std::size_t kTensorParamBytes = sizeof(AnyTensorParam<R>);

static_assert(kMaxRank == 4, "param_bytes and tensor_param_stride_offset list every rank");

// sizeof(TensorParam<T, rank>) for a rank known only at run time; rank 0 is
// a BufferParam (a SIMT buffer). 0 for a rank above kMaxRank.
constexpr std::size_t param_bytes(int rank) noexcept {
  switch (rank) {
    case 0:
      return kBufferParamBytes;
    case 1:
      return kTensorParamBytes<1>;
    case 2:
      return kTensorParamBytes<2>;
    case 3:
      return kTensorParamBytes<3>;
    case 4:
      return kTensorParamBytes<4>;
    default:
      return 0;
  }
}

// Where TensorParam<T, rank>'s stride[0] lives (shape[] is at
// kTensorParamShapeOffset for every rank).
constexpr std::size_t tensor_param_stride_offset(int rank) noexcept {
  switch (rank) {
    case 1:
      return offsetof(AnyTensorParam<1>, stride);
    case 2:
      return offsetof(AnyTensorParam<2>, stride);
    case 3:
      return offsetof(AnyTensorParam<3>, stride);
    case 4:
      return offsetof(AnyTensorParam<4>, stride);
    default:
      return 0;
  }
}

// The largest parameter: a slot that holds any of them.
inline constexpr std::size_t kParamSlotBytes = kTensorParamBytes<kMaxRank>;

static_assert(offsetof(AnyBufferParam, data) == 0 && offsetof(AnyTensorParam<1>, data) == 0,
              "the driver's ParamKind::pointer_led: the device pointer comes first");
static_assert(sizeof(std::int64_t) * 2 * kMaxRank + kTensorParamShapeOffset == kParamSlotBytes);

}  // namespace tandem
