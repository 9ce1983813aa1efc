// The BF machine: exact semantics of the original interpreter, run fast.
//
// What it is: `Program` is the precompiled form of one code string (bracket table plus a
// fused op stream); `Machine` runs programs on reusable buffers (tape, output, cycle
// snapshot), so after warm-up a run allocates nothing. `evaluate()` is the one-shot
// convenience form that returns owning vectors. Semantics: shared/spec/brain_coder.md §1
// (cells wrap only at the base boundaries, the tape grows right on demand and clamps at the
// left edge, EOF reads 0, unmatched brackets are one-step no-ops without the syntax check,
// non-BF characters cost a step, the step limit is checked after each instruction).
// The fast paths and the argument for their exactness: docs/bf.md.
//
// Who may call what: a Program is immutable after compile() and may be shared read-only by
// any number of threads; a Machine belongs to one thread. Results (output(), memory()) are
// views into the machine and stay valid until its next run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringrl::bf {

/// Why a run ended (spec §1.1). `kSuccess` is the only successful one.
enum class FailureReason : std::uint8_t { kSuccess, kStepLimit, kSyntaxError, kTimeout };

/// "success", "step-limit", "syntax-error" or "timeout" (the original's strings).
std::string_view to_string(FailureReason reason) noexcept;

inline constexpr std::int64_t kDefaultBase = 256;       // cell modulus of most tasks
inline constexpr std::int64_t kDefaultMaxSteps = 5000;  // the scorer's step limit

/// Which interpreter runs the program. Both give identical results (the fast one falls back
/// to the plain one wherever its fast paths do not apply); kPlain exists for tests.
enum class Engine : std::uint8_t { kFast, kPlain };

/// Settings of one run. The defaults are the scorer's (base 256, 5000 steps, syntax check
/// off, no timeout), not the original evaluate()'s (unlimited steps, syntax check on, 1 s).
struct RunOptions {
  std::int64_t base = kDefaultBase;                          // cell modulus, >= 1
  std::optional<std::int64_t> max_steps = kDefaultMaxSteps;  // nullopt: no step limit
  bool require_correct_syntax = false;  // true: unmatched brackets fail with syntax-error
  double timeout_s = 0.0;               // wall-clock limit in seconds; <= 0 disables it
  /// false: on a step-limit failure only success/reason/steps are exact; output and memory
  /// are unspecified. Lets the machine stop as soon as it proves the program cannot finish
  /// within the limit (what the scorer wants: it discards failed runs).
  bool exact_failure_state = true;
  Engine engine = Engine::kFast;
};

/// Throws UsageError unless base >= 1.
void validate(const RunOptions& options);

/// The part of a run's result that is not a buffer.
struct RunSummary {
  bool success = true;
  FailureReason reason = FailureReason::kSuccess;
  std::int64_t steps = 0;  // instructions executed (== max_steps on a step-limit failure)
};

namespace detail {

// One fused operation of the precompiled stream (see docs/bf.md).
enum class OpKind : std::uint8_t {
  kBlock,  // run of + - < > and no-op characters: per-cell deltas and a pointer shift
  kOpen,   // matched '[': jump past the matching ']' op if the cell is 0
  kLoop,   // '[' whose body is one pointer-neutral block: iterations solved in closed form
  kClose,  // matched ']': jump back to the op after the matching '[' if the cell is not 0
  kOut,    // '.'
  kIn,     // ','
  kEnd,    // end of code
};

struct Op {
  OpKind kind;
  std::int32_t cost;    // steps when executed whole
  std::int32_t target;  // kOpen: op after the loop; kClose: first body op; kBlock/kLoop: index
  std::int32_t src;     // code position of the op's first character
};

struct Delta {
  std::int32_t offset;  // cell offset from the block's starting pointer
  std::int64_t amount;  // net change, reduced into [0, base)
};

struct Block {
  std::int32_t first_delta;  // index into Program::deltas_
  std::int32_t num_deltas;
  std::int32_t shift;    // pointer offset at the block's end
  std::int32_t min_pos;  // lowest pointer offset reached (< 0: may clamp at the left edge)
  std::int32_t max_pos;  // highest pointer offset reached (the tape grows to cover it)
};

struct Loop {
  std::int32_t block;       // the body (an empty block for "[]")
  std::int32_t exit;        // op after the loop's ']'
  std::int64_t step;        // change of the loop cell per iteration, in [0, base)
  std::int64_t gcd;         // gcd(step, base)
  std::int64_t modulus;     // base / gcd
  std::int64_t inverse;     // (step / gcd)^-1 mod modulus
  std::int64_t iter_cost;   // steps per iteration: body + ']'
};

}  // namespace detail

/// A code string compiled for one base. Reusable: compile() again to replace it.
class Program {
 public:
  Program() = default;
  Program(std::string_view code, std::int64_t base) { compile(code, base); }

  /// Compiles `code` for cells modulo `base` (>= 1). Reuses storage; never throws on odd
  /// code (every character is valid, unmatched brackets are recorded).
  void compile(std::string_view code, std::int64_t base);

  bool syntax_ok() const noexcept { return syntax_ok_; }   // no unmatched bracket
  std::size_t size() const noexcept { return code_.size(); }  // len(code)
  std::int64_t base() const noexcept { return base_; }
  std::string_view code() const noexcept { return code_; }

 private:
  friend class Machine;

  std::string code_;
  std::int64_t base_ = kDefaultBase;
  bool syntax_ok_ = true;
  std::vector<std::int32_t> match_;  // per code position: matching bracket (self if unmatched)
  std::vector<detail::Op> ops_;
  std::vector<detail::Block> blocks_;
  std::vector<detail::Delta> deltas_;
  std::vector<detail::Loop> loops_;
  std::vector<std::int32_t> stack_;  // compile scratch
};

/// Runs programs. One per thread; reuse it across runs.
class Machine {
 public:
  explicit Machine(RunOptions options = {});

  const RunOptions& options() const noexcept { return options_; }

  /// Compiles `code` into the machine's own program and runs it on `input`.
  RunSummary run(std::string_view code, const std::vector<std::int64_t>& input);
  /// Runs a program compiled for options().base (else throws UsageError) on
  /// input[0, input_size). `init_memory`, if non-empty, replaces the initial tape [0].
  RunSummary run(const Program& program, const std::int64_t* input, std::size_t input_size,
                 const std::vector<std::int64_t>& init_memory = {});

  /// Values written by '.' in the last run (partial on failure; see exact_failure_state).
  const std::vector<std::int64_t>& output() const noexcept { return output_; }
  /// Final tape of the last run: cells 0..furthest reached; empty after a syntax error.
  std::vector<std::int64_t> memory() const;

 private:
  struct CycleSnapshot;

  void reset(const std::int64_t* input, std::size_t input_size,
             const std::vector<std::int64_t>& init_memory);
  RunSummary run_fast(const Program& program);
  // Reference interpreter from code position `ip` on the current state, to the end.
  RunSummary run_plain(const Program& program, std::size_t ip);
  void grow_tape(std::int64_t index);
  bool timed_out() const;

  RunOptions options_;
  std::int64_t step_limit_;  // max_steps, or the largest int64 without a limit
  Program own_program_;

  // Machine state of the current run.
  std::vector<std::int64_t> tape_;  // cells; every cell at index >= tape_len_ is 0
  std::int64_t tape_len_ = 1;       // len(cells) in the original
  std::int64_t dp_ = 0;
  std::int64_t steps_ = 0;
  const std::int64_t* input_ = nullptr;
  std::size_t input_size_ = 0;
  std::size_t input_pos_ = 0;
  std::vector<std::int64_t> output_;
  bool syntax_failed_ = false;
  bool in_range_ = true;  // every cell is in [0, base): the fast paths' precondition

  // Back-edge cycle detection (Brent): a snapshot of the state at a power-of-two count.
  std::vector<std::int64_t> snap_tape_;
  std::int32_t snap_pc_ = -1;
  std::int64_t snap_dp_ = 0;
  std::int64_t snap_len_ = 0;
  std::size_t snap_input_pos_ = 0;
  std::int64_t snap_steps_ = 0;
  std::size_t snap_output_len_ = 0;
  std::uint64_t cycle_power_ = 1;
  std::uint64_t cycle_lambda_ = 0;

  // Timeout bookkeeping (only when options_.timeout_s > 0).
  std::int64_t next_clock_check_ = 0;
  std::int64_t start_ns_ = 0;
};

/// Full result of one run, owning its buffers (CLI and tests; allocates).
struct RunResult {
  std::vector<std::int64_t> output;
  bool success = true;
  FailureReason reason = FailureReason::kSuccess;
  std::int64_t steps = 0;
  std::vector<std::int64_t> memory;  // final tape; [] after a syntax error
};

/// One-shot run of `code` on `input`, with memory.
RunResult evaluate(std::string_view code, const std::vector<std::int64_t>& input,
                   const RunOptions& options = {},
                   const std::vector<std::int64_t>& init_memory = {});

}  // namespace ringrl::bf
