// The BF machine and scorer for Python (ringrl._ringrl; wrapped by python/ringrl/bf.py):
// run() is `ringrl bf run`, score() is `ringrl bf score` over many programs at once, on a
// oneTBB arena with the GIL released (one Scorer per worker thread: a Scorer is
// single-threaded, and scoring is a pure function of the program, so the thread count never
// changes a result), tasks() is `ringrl bf tasks`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "common/errors.h"
#include "envs/bf/machine.h"
#include "envs/bf/scorer.h"
#include "envs/bf/tasks.h"
#include "python/src/module.h"

namespace ringrl::python {
namespace {

namespace nb = nanobind;
using namespace nb::literals;

constexpr std::size_t kScoreGrain = 256;  // programs per arena task
constexpr int kMaxThreads = 1024;

template <class T>
nb::object owned_vector(std::size_t n, T** data) {
  T* p = new T[n == 0 ? 1 : n]();
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<T*>(q); });
  *data = p;
  const std::size_t shape[1] = {n};
  return nb::cast(nb::ndarray<nb::numpy, T>(p, 1, shape, owner));
}

nb::dict run(const std::string& code, const std::vector<std::int64_t>& input, std::int64_t base,
             std::optional<std::int64_t> max_steps, bool require_correct_syntax) {
  bf::RunOptions o;
  o.base = base;
  o.max_steps = max_steps;
  o.require_correct_syntax = require_correct_syntax;
  bf::validate(o);
  const bf::RunResult r = bf::evaluate(code, input, o);
  nb::dict d;
  d["output"] = r.output;
  d["success"] = r.success;
  d["failure_reason"] = std::string(bf::to_string(r.reason));
  d["steps"] = r.steps;
  d["memory"] = r.memory;
  return d;
}

// (rewards float64 [N], correct bool [N], reasons uint8 [N]) for `programs` on `task`.
nb::tuple score(const std::vector<std::string>& programs, const std::string& task, const std::string& variant,
                int threads) {
  if (threads < 0 || threads > kMaxThreads)
    throw UsageError(fmt::format("threads {}: expected 0 (every core) to {}", threads, kMaxThreads));
  const bf::Variant v = bf::parse_variant(variant);
  const bf::Scorer prototype = bf::make_task(task, v);  // validates the name (UsageError)
  const std::size_t n = programs.size();
  double* reward = nullptr;
  bool* correct = nullptr;
  std::uint8_t* reason = nullptr;
  nb::object reward_obj = owned_vector(n, &reward);
  nb::object correct_obj = owned_vector(n, &correct);
  nb::object reason_obj = owned_vector(n, &reason);
  {
    nb::gil_scoped_release nogil;
    const auto one = [&](bf::Scorer& s, std::size_t k) {
      const bf::ScoreResult r = s.score(programs[k]);
      reward[k] = r.total_reward;
      correct[k] = r.correct;
      reason[k] = static_cast<std::uint8_t>(r.reason);
    };
    const int workers = threads == 0 ? tbb::this_task_arena::max_concurrency() : threads;
    if (workers == 1 || n <= kScoreGrain) {
      bf::Scorer s = prototype;
      for (std::size_t k = 0; k < n; ++k) one(s, k);
    } else {
      tbb::enumerable_thread_specific<bf::Scorer> scorers([&] { return prototype; });
      tbb::task_arena arena(workers);
      arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kScoreGrain),
                          [&](const tbb::blocked_range<std::size_t>& r) {
                            bf::Scorer& s = scorers.local();
                            for (std::size_t k = r.begin(); k != r.end(); ++k) one(s, k);
                          });
      });
    }
  }
  return nb::make_tuple(reward_obj, correct_obj, reason_obj);
}

nb::list tasks() {
  nb::list out;
  for (const bf::TaskInfo& t : bf::task_table()) {
    nb::dict d;
    d["name"] = std::string(t.name);
    d["base"] = t.base;
    d["num_cases"] = t.num_cases;
    d["description"] = std::string(t.description);
    d["paper"] = t.paper;
    out.append(d);
  }
  return out;
}

nb::list task_cases(const std::string& name) {
  nb::list out;
  for (const bf::TestCase& c : bf::make_task_cases(name).cases) {
    nb::dict d;
    d["input"] = c.input;
    d["output"] = c.output;
    out.append(d);
  }
  return out;
}

std::vector<std::string> reason_names() {
  std::vector<std::string> names;
  for (auto r : {bf::ScoreReason::kCorrect, bf::ScoreReason::kWrong, bf::ScoreReason::kStepLimit,
                 bf::ScoreReason::kSyntaxError, bf::ScoreReason::kTimeout})
    names.emplace_back(bf::to_string(r));
  return names;
}

}  // namespace

void bind_bf(nb::module_& m) {
  m.def("bf_run", &run, "code"_a, "input"_a, "base"_a, "max_steps"_a.none(), "require_correct_syntax"_a);
  m.def("bf_score", &score, "programs"_a, "task"_a, "variant"_a, "threads"_a);
  m.def("bf_tasks", &tasks);
  m.def("bf_task_cases", &task_cases, "name"_a);
  m.def("bf_reason_names", &reason_names, "Score reasons by code: correct, wrong, step-limit, ...");
}

}  // namespace ringrl::python
