#include "learner/task_arena.h"

#include <c10/core/GradMode.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <cassert>
#include <chrono>
#include <string>

#include "common/errors.h"

// MKL's thread count for the calling thread only (0: the process-wide one), the C entry point
// of mkl_service.h, as LibTorch's MKL exports it; null without MKL (another BLAS keeps its own
// setting).
extern "C" int MKL_Set_Num_Threads_Local(int threads) __attribute__((weak));

namespace ringrl::learner {

namespace {

using Clock = std::chrono::steady_clock;

// What every task runs under (the file comment of task_arena.h): the caller's floating-point
// mode, BLAS on one thread, autograd off; the previous BLAS setting comes back afterwards.
class TaskScope {
 public:
  explicit TaskScope([[maybe_unused]] unsigned csr) {
#if defined(__SSE__)
    _mm_setcsr(csr);
#endif
    if (MKL_Set_Num_Threads_Local != nullptr) previous_ = MKL_Set_Num_Threads_Local(1);
  }
  ~TaskScope() {
    if (MKL_Set_Num_Threads_Local != nullptr) MKL_Set_Num_Threads_Local(previous_);
  }
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;

 private:
  c10::NoGradGuard no_grad_;
  int previous_ = 0;
};

unsigned caller_csr() {
#if defined(__SSE__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

}  // namespace

struct TaskArena::Impl {
  explicit Impl(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

TaskArena::TaskArena(int threads) : threads_(threads) {
  if (threads < 1 || threads > kMaxTaskThreads)
    throw UsageError("learner threads " + std::to_string(threads) + ": expected 1 to " +
                     std::to_string(kMaxTaskThreads));
  if (threads > 1) impl_ = std::make_unique<Impl>(threads);
  busy_.resize(static_cast<std::size_t>(threads));
}

TaskArena::~TaskArena() = default;

void TaskArena::run(int tasks, TaskFn task) {
  if (tasks <= 0) return;
  const unsigned csr = caller_csr();
  const int phase = phase_;
  const auto timed = [&](int i, int slot) {
    const auto t0 = Clock::now();
    task(i, slot);
    if (phase < learner::kNumPhases) {
      ThreadBusy& b = busy_[static_cast<std::size_t>(slot)].phase[static_cast<std::size_t>(phase)];
      b.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      ++b.tasks;
    }
  };
  if (!impl_ || tasks == 1) {
    const TaskScope scope(csr);
    for (int i = 0; i < tasks; ++i) timed(i, 0);
    return;
  }
  impl_->arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, tasks, 1),
        [&](const tbb::blocked_range<int>& range) {
          const int slot = tbb::this_task_arena::current_thread_index();
          assert(slot >= 0 && slot < threads_);
          const TaskScope scope(csr);
          for (int i = range.begin(); i < range.end(); ++i) timed(i, slot);
        },
        tbb::simple_partitioner());
  });
}

std::vector<ThreadBusy> TaskArena::busy(learner::Phase phase) const {
  std::vector<ThreadBusy> out;
  const auto p = static_cast<std::size_t>(phase);
  for (const SlotBusy& s : busy_) out.push_back(p < s.phase.size() ? s.phase[p] : ThreadBusy{});
  return out;
}

void TaskArena::reset_busy() {
  for (SlotBusy& s : busy_) s = SlotBusy{};
}

}  // namespace ringrl::learner
