// SPDX-License-Identifier: Apache-2.0
// recorder.cpp — per-thread records, merged.
#include "recorder.hpp"

#include "op_table.hpp"

namespace tandem::scenario::detail {

ThreadRecord& Recorder::add_thread() {
  threads_.push_back(std::make_unique<ThreadRecord>(ops_));
  return *threads_.back();
}

void Recorder::check(ThreadRecord& t, const Step& st, const char* what, ojson expected, ojson actual, bool ok,
                     std::uint64_t repetition) {
  t.checks.push_back({st.path, what, std::move(expected), std::move(actual), ok, repetition});
  t.checks_done.add(1);
  if (!ok && progress_ != nullptr) progress_->checks_failed.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::error(ThreadRecord& t, const Step& st, std::string code, std::string message,
                     std::uint64_t repetition) {
  t.errors.push_back({st.path, op_name(st.op), std::move(code), std::move(message), repetition});
  t.errors_seen.add(1);
  if (progress_ != nullptr) progress_->errors.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::note(std::string text) {
  base::Guard g(mu_);
  rec_.notes.push_back(std::move(text));
}

void Recorder::step_note(const Step& st, std::uint64_t repetition, ojson counters) {
  base::Guard g(mu_);
  rec_.step_notes.push_back({{"step", st.path},
                             {"repetition", repetition},
                             {"message", st.message},
                             {"counters", std::move(counters)}});
}

ojson Recorder::counters() const {
  std::uint64_t subs = 0, launches = 0, bytes = 0, checks = 0, errors = 0;
  for (const auto& t : threads_) {
    subs += t->submissions.get();
    launches += t->launches.get();
    bytes += t->bytes_moved.get();
    checks += t->checks_done.get();
    errors += t->errors_seen.get();
  }
  return {{"submissions", subs},
          {"launches", launches},
          {"bytes_moved", bytes},
          {"checks", checks},
          {"errors", errors}};
}

void Recorder::merge_repetition() {
  base::Guard g(mu_);
  for (const auto& t : threads_) {
    for (auto& c : t->checks) rec_.checks.push_back(std::move(c));
    for (auto& e : t->errors) rec_.errors.push_back(std::move(e));
    for (auto& s : t->skipped) rec_.skipped.push_back(std::move(s));
    t->checks.clear();
    t->errors.clear();
    t->skipped.clear();
  }
}

ojson Recorder::report(const LatencyHistogram* retire_ns, double ns_per_tick) {
  merge_repetition();
  base::Guard g(mu_);
  rec_.submissions = rec_.launches = rec_.bytes_moved = 0;
  for (const auto& t : threads_) {
    rec_.submissions += t->submissions.get();
    rec_.launches += t->launches.get();
    rec_.bytes_moved += t->bytes_moved.get();
    submit_ns_.add(t->submit_ns);
    for (std::size_t i = 0; i < ops_; ++i)
      if (t->step_ns[i]) step_ns_[i].add(*t->step_ns[i]);
  }
  rec_.step_latency_ns = ojson::object();
  for (std::size_t i = 0; i < ops_; ++i) {
    const LatencyHistogram& h = step_ns_[i];
    if (h.count() == 0) continue;
    auto ns = [ns_per_tick](std::uint64_t ticks) {
      return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick + 0.5);
    };
    rec_.step_latency_ns[op_name(static_cast<Op>(i))] = {{"p50", ns(h.quantile(0.50))},
                                                         {"p99", ns(h.quantile(0.99))},
                                                         {"max", ns(h.max())},
                                                         {"samples", h.count()}};
  }
  rec_.submit_ns = &submit_ns_;
  rec_.submit_ns_per_tick = ns_per_tick;
  rec_.retire_ns = retire_ns;
  if (!timeline_.samples().empty()) rec_.timeline = timeline_.json();
  return report_json(rec_);
}

}  // namespace tandem::scenario::detail
