// SPDX-License-Identifier: Apache-2.0
#include <limits>
#include <string>

#include "allocation_state.hpp"
#include "context_state.hpp"
#include "record_hook.hpp"
#include "recorded_values.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "submit.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/context.hpp"
#include "tandem/errors.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"
#include "view_factory.hpp"

namespace tandem {

namespace {

std::string alloc_name(const detail::AllocationState* a) { return "allocation " + std::to_string(a->id); }

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Product of a shape; Error(out_of_range) for a bad rank, a negative
// dimension or an overflow.
std::uint64_t checked_product(std::span<const std::int64_t> shape) {
  if (shape.empty() || shape.size() > static_cast<std::size_t>(kMaxRank)) {
    throw Error(ErrorCode::out_of_range, "a tensor shape needs 1 to " + std::to_string(kMaxRank) +
                                             " dimensions, got " + std::to_string(shape.size()));
  }
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error(ErrorCode::out_of_range, "negative dimension in shape " + shape_text(shape));
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d)) {
      throw Error(ErrorCode::out_of_range, "shape " + shape_text(shape) + " overflows 64 bits");
    }
    n *= static_cast<std::uint64_t>(d);
  }
  return n;
}

// Runs a derivation and tells the Recorder, if one is installed, what it
// made or the error it failed with (the source's key is taken first: a
// consuming conversion empties it).
template <class Make>
View recorded(ViewOrigin origin, const View& parent, const DeriveArgs& args, Make&& make) {
  Recorder* r = detail::active_recorder();
  if (r == nullptr) [[likely]]
    return make();
  if (!parent.valid()) {  // moved from: the recording cannot name it
    try {
      return make();
    } catch (const Error& e) {
      r->on_use_refused(detail::recorded::derive_op(origin), e.code());
      throw;
    }
  }
  const ViewKey key = ViewKey::of(parent);
  try {
    // Paused: a view the derivation makes and drops on the way (a failed
    // tensor_view's half-made result) is no call of the user's.
    View v = [&] {
      const detail::RecordPause pause;
      return make();
    }();
    r->on_view_derived(origin, &key, v, args, nullptr);
    return v;
  } catch (const Error& e) {
    r->on_derive_failed(origin, key, args, e.code());
    throw;
  }
}

}  // namespace

View make_view(detail::AllocationState* a, DType dtype, std::uint64_t offset, std::uint64_t count) {
  View v;
  v.alloc_ = a;
  v.dtype_ = dtype;
  v.offset_ = offset;
  v.set_buffer(count);
  return v;
}

View::View(View&& o) noexcept
    : alloc_(std::exchange(o.alloc_, nullptr)),
      offset_(o.offset_),
      dtype_(o.dtype_),
      rank_(o.rank_),
      tensor_(o.tensor_),
      atomic_(o.atomic_),
      shape_(o.shape_),
      strides_(o.strides_) {}

View& View::operator=(View&& o) noexcept {
  if (this != &o) {
    View old(std::move(*this));
    alloc_ = std::exchange(o.alloc_, nullptr);
    offset_ = o.offset_;
    dtype_ = o.dtype_;
    rank_ = o.rank_;
    tensor_ = o.tensor_;
    atomic_ = o.atomic_;
    shape_ = o.shape_;
    strides_ = o.strides_;
  }
  return *this;
}

View::~View() {
  if (alloc_) {
    if (Recorder* r = detail::active_recorder()) [[unlikely]]
      r->on_view_dropped(*this);
    alloc_->drop_view();
  }
}

void View::set_buffer(std::uint64_t len) noexcept {
  rank_ = 1;
  tensor_ = false;
  shape_ = {static_cast<std::int64_t>(len), 0, 0, 0};
  strides_ = {1, 0, 0, 0};
}

void View::set_contiguous_shape(std::span<const std::int64_t> shape) noexcept {
  rank_ = static_cast<std::int8_t>(shape.size());
  std::int64_t stride = 1;
  for (int k = rank_ - 1; k >= 0; --k) {
    shape_[k] = shape[k];
    strides_[k] = stride;
    stride *= shape[k] == 0 ? 1 : shape[k];
  }
}

void View::require_valid(const char* what) const {
  if (!alloc_) throw Error(ErrorCode::invalid_handle, std::string(what) + " on an empty or moved-from view");
}

void View::require_unique(const char* what) const {
  require_valid(what);
  if (base::mutant(base::Mutant::transfer_ignores_aliases)) return;
  alloc_->ctx->uniqueness_checks.add();
  if (!alloc_->is_unique()) {  // not is_unique(): the runtime's own check is no program query to record
    throw Error(ErrorCode::aliased, std::string(what) + " needs the only view of " + alloc_name(alloc_) +
                                        ", which has " + std::to_string(alloc_->views()) + " views and " +
                                        std::to_string(alloc_->graphs()) + " graph references");
  }
}

View View::derive(std::uint64_t offset, bool tensor) const {
  alloc_->add_view();
  View v;
  v.alloc_ = alloc_;
  v.offset_ = offset;
  v.dtype_ = dtype_;
  v.rank_ = rank_;
  v.tensor_ = tensor;
  v.atomic_ = atomic_;
  v.shape_ = shape_;
  v.strides_ = strides_;
  return v;
}

std::uint64_t View::allocation_id() const {
  require_valid("allocation_id");
  return alloc_->id;
}

std::uint64_t View::element_count() const noexcept {
  if (rank_ == 0) return 0;
  std::uint64_t n = 1;
  for (int k = 0; k < rank_; ++k) n *= static_cast<std::uint64_t>(shape_[k]);
  return n;
}

bool View::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (int k = rank_ - 1; k >= 0; --k) {
    if (shape_[k] == 0) return true;
    if (shape_[k] != 1 && strides_[k] != expected) return false;
    expected *= shape_[k];
  }
  return true;
}

driver::DevicePtr View::device_ptr() const {
  require_valid("device_ptr");
  return alloc_->base + offset_;
}

bool View::is_unique() const {
  require_valid("is_unique");
  alloc_->ctx->uniqueness_checks.add();
  const bool unique = alloc_->is_unique();
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_view_query(*this, ViewQuery::unique, unique ? 1 : 0);
  return unique;
}

std::uint64_t View::view_count() const {
  require_valid("view_count");
  const std::uint64_t n = alloc_->views();
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_view_query(*this, ViewQuery::views, n);
  return n;
}

View View::share() const {
  require_valid("share");
  return derive(offset_, tensor_);
}

View View::slice(std::uint64_t offset, std::uint64_t len) const {
  return recorded(ViewOrigin::slice, *this, DeriveArgs{.offset = offset, .len = len}, [&]() -> View {
    require_valid("slice");
    if (tensor_) throw Error(ErrorCode::unsupported, "slice of a tensor: use a tensor view with ranges");
    const std::uint64_t count = element_count();
    if (offset > count || len > count - offset) {
      throw Error(ErrorCode::out_of_range, "slice [" + std::to_string(offset) + ", " +
                                               std::to_string(offset) + " + " + std::to_string(len) +
                                               ") of a " + std::to_string(count) + "-element view of " +
                                               alloc_name(alloc_));
    }
    View v = derive(offset_ + offset * element_size(), false);
    v.set_buffer(len);
    return v;
  });
}

View View::peel(std::uint64_t index) const {
  return recorded(ViewOrigin::peel, *this, DeriveArgs{.index = index}, [&]() -> View {
    require_valid("peel");
    if (index >= element_count()) {
      throw Error(ErrorCode::out_of_range, "peel of element " + std::to_string(index) + " of a " +
                                               std::to_string(element_count()) + "-element view of " +
                                               alloc_name(alloc_));
    }
    View v;
    {
      const detail::RecordPause pause;  // recorded as the peel it is, not as a slice
      v = slice(index, 1);
    }
    if (base::mutant(base::Mutant::peeled_leased_as_writer)) v.atomic_ = true;
    return v;
  });
}

View View::atomic() const {
  return recorded(ViewOrigin::atomic, *this, DeriveArgs{}, [&]() -> View {
    require_valid("atomic");
    View v = derive(offset_, tensor_);
    v.atomic_ = true;
    return v;
  });
}

std::pair<View, View> View::split_at(std::uint64_t k) && {
  require_valid("split_at");
  if (tensor_) throw Error(ErrorCode::unsupported, "split_at of a tensor: convert it to a buffer first");
  const std::uint64_t count = element_count();
  if (k > count) {
    if (Recorder* r = detail::active_recorder()) [[unlikely]] {
      r->on_derive_failed(ViewOrigin::split_low, ViewKey::of(*this), DeriveArgs{.index = k},
                          ErrorCode::out_of_range);
    }
    throw Error(ErrorCode::out_of_range, "split at " + std::to_string(k) + " of a " + std::to_string(count) +
                                             "-element view of " + alloc_name(alloc_));
  }
  View second = derive(offset_ + k * element_size(), false);
  second.set_buffer(count - k);
  Recorder* r = detail::active_recorder();
  const std::optional<ViewKey> parent = r ? std::optional(ViewKey::of(*this)) : std::nullopt;
  View first(std::move(*this));
  first.set_buffer(k);
  if (r != nullptr) {
    r->on_view_derived(ViewOrigin::split_low, &*parent, first, DeriveArgs{.index = k}, nullptr);
    r->on_view_derived(ViewOrigin::split_high, nullptr, second, DeriveArgs{.index = k}, nullptr);
  }
  return {std::move(first), std::move(second)};
}

View View::to_tensor(std::span<const std::int64_t> shape) && {
  return recorded(ViewOrigin::to_tensor, *this, DeriveArgs{.shape = shape}, [&]() -> View {
    require_valid("to_tensor");
    if (tensor_) throw Error(ErrorCode::unsupported, "to_tensor of a view that is already a tensor");
    if (!is_contiguous()) throw Error(ErrorCode::non_contiguous, "to_tensor of a strided view");
    const std::uint64_t n = checked_product(shape);
    if (n != element_count()) {
      throw Error(ErrorCode::out_of_range, "to_tensor with shape " + shape_text(shape) + " (" +
                                               std::to_string(n) + " elements) of a " +
                                               std::to_string(element_count()) + "-element buffer of " +
                                               alloc_name(alloc_));
    }
    require_unique("to_tensor (an ownership transfer)");
    View t(std::move(*this));
    t.tensor_ = true;
    t.set_contiguous_shape(shape);
    return t;
  });
}

View View::into_buffer() && {
  return recorded(ViewOrigin::into_buffer, *this, DeriveArgs{}, [&]() -> View {
    require_valid("into_buffer");
    if (!tensor_) throw Error(ErrorCode::unsupported, "into_buffer of a view that is not a tensor");
    if (!is_contiguous()) {
      throw Error(ErrorCode::non_contiguous, "into_buffer of a non-contiguous tensor view of " +
                                                 alloc_name(alloc_) + " with shape " + shape_text(shape()));
    }
    require_unique("into_buffer (an ownership transfer)");
    const std::uint64_t n = element_count();
    View b(std::move(*this));
    b.set_buffer(n);
    return b;
  });
}

View View::as_buffer() const {
  return recorded(ViewOrigin::as_buffer, *this, DeriveArgs{}, [&]() -> View {
    require_valid("as_buffer");
    if (!tensor_) throw Error(ErrorCode::unsupported, "as_buffer of a view that is not a tensor");
    if (!is_contiguous()) {
      throw Error(ErrorCode::non_contiguous, "as_buffer of a non-contiguous tensor view of " +
                                                 alloc_name(alloc_) + " with shape " + shape_text(shape()));
    }
    View b = derive(offset_, false);
    b.set_buffer(element_count());
    return b;
  });
}

View View::tensor_view(std::optional<std::span<const std::int64_t>> shape,
                       std::optional<std::span<const DimRange>> ranges) const {
  return recorded(
      ViewOrigin::tensor_view, *this,
      DeriveArgs{.shape = shape.value_or(std::span<const std::int64_t>{}),
                 .ranges = ranges.value_or(std::span<const DimRange>{})},
      [&]() -> View {
        require_valid("tensor_view");
        if (!tensor_) throw Error(ErrorCode::unsupported, "tensor_view of a view that is not a tensor");
        View v = derive(offset_, true);
        if (shape) {
          if (!is_contiguous()) {
            throw Error(ErrorCode::non_contiguous,
                        "reshape of a non-contiguous tensor view with shape " + shape_text(this->shape()));
          }
          if (checked_product(*shape) != element_count()) {
            throw Error(ErrorCode::out_of_range, "reshape from " + shape_text(this->shape()) + " to " +
                                                     shape_text(*shape) + " changes the element count");
          }
          v.set_contiguous_shape(*shape);
        }
        if (ranges) {
          if (ranges->size() != static_cast<std::size_t>(v.rank_)) {
            throw Error(ErrorCode::out_of_range, "tensor view with " + std::to_string(ranges->size()) +
                                                     " ranges of a rank-" + std::to_string(v.rank_) +
                                                     " tensor");
          }
          std::uint64_t offset = v.offset_;
          for (int k = 0; k < v.rank_; ++k) {
            const DimRange r = (*ranges)[k];
            if (r.begin < 0 || r.end < r.begin || r.end > v.shape_[k]) {
              throw Error(ErrorCode::out_of_range,
                          "range [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                              ") of dimension " + std::to_string(k) + " (size " +
                              std::to_string(v.shape_[k]) + ") of " + alloc_name(alloc_));
            }
            offset += static_cast<std::uint64_t>(r.begin * v.strides_[k]) * element_size();
            v.shape_[k] = r.end - r.begin;
          }
          v.offset_ = offset;
        }
        return v;
      });
}

View View::reinterpret(DType to) && {
  return recorded(ViewOrigin::reinterpret, *this, DeriveArgs{.dtype = to}, [&]() -> View {
    require_valid("reinterpret");
    if (to == DType::boolean) {
      throw Error(ErrorCode::invalid_dtype,
                  "reinterpret to bool: bytes must be validated, use to_bool_checked");
    }
    if (!is_contiguous()) throw Error(ErrorCode::non_contiguous, "reinterpret of a strided view");
    const std::uint64_t bytes = element_count() * element_size();
    const std::uint32_t size = dtype_size(to);
    const std::int64_t last = shape_[rank_ - 1] * element_size();
    if (bytes % size != 0 || offset_ % size != 0 || last % size != 0) {
      throw Error(ErrorCode::out_of_range,
                  "reinterpret of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset_) +
                      " of " + alloc_name(alloc_) + " as " + std::string(dtype_name(to)) + " (" +
                      std::to_string(size) +
                      "-byte elements): the length and offset must be multiples of the new size");
    }
    require_unique("reinterpret (a change of element type)");
    std::array<std::int64_t, kMaxRank> shape = shape_;
    shape[rank_ - 1] = last / size;
    View v(std::move(*this));
    v.dtype_ = to;
    v.set_contiguous_shape({shape.data(), static_cast<std::size_t>(v.rank_)});
    return v;
  });
}

View View::to_bool_checked(StreamRef stream) && {
  DeriveArgs args;  // recorded as the reinterpret to bool it is in a scenario
  args.dtype = DType::boolean;
  return recorded(ViewOrigin::reinterpret, *this, args, [&]() -> View {
    require_valid("to_bool_checked");
    if (dtype_ != DType::u8 && dtype_ != DType::i8) {
      throw Error(ErrorCode::invalid_dtype,
                  "a bool view is made from u8 or i8 bytes, not " + std::string(dtype_name(dtype_)));
    }
    require_unique("conversion to bool (a change of element type)");
    std::vector<std::byte> bytes;
    {
      const detail::RecordPause pause;  // part of the conversion, which a replay repeats
      bytes = read_back(stream, *this);
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto b = std::to_integer<unsigned>(bytes[i]);
      if (b > 1) {
        throw Error(ErrorCode::invalid_dtype, "byte " + std::to_string(i) + " of " + alloc_name(alloc_) +
                                                  " is " + std::to_string(b) +
                                                  ", not 0 or 1: not a valid bool");
      }
    }
    View v(std::move(*this));
    v.dtype_ = DType::boolean;
    return v;
  });
}

Context View::context() const {
  require_valid("context");
  return Context(detail::Ref<detail::ContextState>(alloc_->ctx));
}

int View::device_ordinal() const {
  require_valid("device_ordinal");
  return alloc_->ctx->ordinal;
}

View adopt(const Context& ctx, driver::DevicePtr ptr, DType dtype, std::uint64_t count,
           std::function<void()> owner) {
  detail::ContextState& c = *ctx.state();
  if (count > std::numeric_limits<std::uint64_t>::max() / dtype_size(dtype)) {
    throw Error(ErrorCode::out_of_range, "adopting " + std::to_string(count) + " elements of " +
                                             std::string(dtype_name(dtype)) +
                                             ": the byte size overflows 64 bits");
  }
  const std::uint64_t bytes = count * dtype_size(dtype);
  if (bytes > detail::Lease::kMaxBytes) {  // a lease's range is 48 bits (submission.hpp)
    throw Error(ErrorCode::out_of_range,
                "adopting " + std::to_string(bytes) + " bytes: tandem tracks allocations below 2^48 bytes");
  }
  if (ptr == 0 && bytes != 0) throw Error(ErrorCode::invalid_handle, "adopting a null device pointer");
  View v =
      make_view(detail::AllocationState::create(c, ptr, bytes, detail::Origin::foreign, std::move(owner)),
                dtype, 0, count);
  if (Recorder* r = detail::active_recorder()) [[unlikely]] {
    DeriveArgs a;
    a.len = count;
    r->on_view_derived(ViewOrigin::adopt, nullptr, v, a, nullptr);
  }
  return v;
}

}  // namespace tandem
