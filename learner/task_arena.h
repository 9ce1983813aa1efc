// TaskArena: a learner's threads (learner_threads): a oneTBB arena of N threads, the caller being
// one of them, that runs a list of independent tasks. The fused TD3 kernel (learner/td3/td3_fused.h)
// and the PQT policy pass's row shards (learner/pqt/policy_pass.h) run on it.
//
// Contract:
// * run(n, task) calls task(i, slot) once for every i in [0, n) and returns when all have run.
//   `slot` in [0, threads()) names the thread that runs it (its scratch space); no two tasks
//   run on one slot at once. With threads() == 1 or n == 1 every task runs on the calling
//   thread, in order; otherwise the tasks are taken as threads come free, so a thread that an
//   actor process preempts holds up only the task it has.
// * Every task runs in the caller's floating-point mode (subnormals flushed or not), with BLAS
//   (MKL) single-threaded in its thread and autograd off. A task therefore computes the same
//   bits on any thread: callers cut their work into tasks that do not depend on the thread
//   count, and then neither do their results.
// * Busy time: each task's wall time is added to (phase, slot), the phase being the last one
//   set_phase() named; busy() reads the totals (the per-thread table of `ringrl profile
//   learner --algo hiro`). reset_busy() zeroes them.
// * One thread (the learner's) calls run(), set_phase(), busy() and reset_busy(); a task must
//   not call run(). oneTBB stays out of this header (task_arena.cc).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "learner/profile.h"

namespace ringrl::learner {

/// The most threads one arena takes (the learner_threads config keys stop here too).
inline constexpr int kMaxTaskThreads = 256;

/// A non-owning reference to a callable `void(int task, int slot)`; it must outlive the call.
class TaskFn {
 public:
  template <class F>
  TaskFn(const F& f) noexcept  // NOLINT(google-explicit-constructor): a view, as std::function_ref
      : object_(&f), call_([](const void* o, int task, int slot) { (*static_cast<const F*>(o))(task, slot); }) {}
  void operator()(int task, int slot) const { call_(object_, task, slot); }

 private:
  const void* object_;
  void (*call_)(const void*, int, int);
};

/// Tasks one thread ran in one phase, and their wall time.
struct ThreadBusy {
  double seconds = 0;
  std::uint64_t tasks = 0;
};

class TaskArena {
 public:
  /// `threads` in [1, kMaxTaskThreads] (UsageError otherwise).
  explicit TaskArena(int threads);
  ~TaskArena();
  TaskArena(const TaskArena&) = delete;
  TaskArena& operator=(const TaskArena&) = delete;

  int threads() const noexcept { return threads_; }

  /// Runs task(i, slot) for i in [0, tasks) (contract above).
  void run(int tasks, TaskFn task);

  /// The phase the following tasks count under.
  void set_phase(learner::Phase phase) noexcept { phase_ = static_cast<int>(phase); }
  /// Per slot (threads() entries): the tasks run in `phase` and their wall time.
  std::vector<ThreadBusy> busy(learner::Phase phase) const;
  void reset_busy();

 private:
  struct Impl;  // the oneTBB arena
  // One slot's totals, a cache line of its own (written by the slot's thread only).
  struct alignas(64) SlotBusy {
    std::array<ThreadBusy, learner::kNumPhases> phase{};
  };

  int threads_;
  int phase_ = static_cast<int>(learner::Phase::kCount);  // none yet: counted nowhere
  std::unique_ptr<Impl> impl_;                            // null with one thread
  std::vector<SlotBusy> busy_;
};

}  // namespace ringrl::learner
