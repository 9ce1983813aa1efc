// The BF machine: exact semantics of the original interpreter, run fast.
//
// What it is: `Program` is one code string prepared for running (bracket table, character
// classes); `Machine` runs programs on reusable buffers (tape, output, cycle snapshot, and
// the fused op stream it compiles lazily for programs that run long), so after warm-up a
// run allocates nothing. `evaluate()` is the one-shot convenience form that returns owning
// vectors. Semantics: shared/spec/brain_coder.md §1
// (cells wrap only at the base boundaries, the tape grows right on demand and clamps at the
// left edge, EOF reads 0, unmatched brackets are one-step no-ops without the syntax check,
// non-BF characters cost a step, the step limit is checked after each instruction).
// The fast paths and the argument for their exactness: docs/bf.md.
//
// Who may call what: a Program is immutable after compile() and may be shared read-only by
// any number of threads (each Program gets a process-unique id on compile). A Machine
// belongs to one thread. Results (output(), memory()) are views into the machine and stay
// valid until its next run.
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
  bool require_correct_syntax = false;                       // true: unmatched brackets fail with syntax-error
  double timeout_s = 0.0;                                    // wall-clock limit in seconds; <= 0 disables it
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

class Program;

namespace detail {

// Character classes of BF code; kEndClass marks the position past the last character.
enum CharClass : std::uint8_t {
  kForeign,
  kPlus,
  kMinus,
  kRight,
  kLeft,
  kOpenBracket,
  kCloseBracket,
  kDot,
  kComma,
  kEndClass,
};

// One fused operation of the compiled stream (see docs/bf.md).
enum class OpKind : std::uint8_t {
  kBlock,      // run of + - < > and no-op characters: per-cell deltas and a pointer shift
  kOpen,       // matched '[': jump past the matching ']' op if the cell is 0
  kLoop,       // '[' whose body is one pointer-neutral block: iterations solved in closed form
  kScan,       // '[' whose body only moves the pointer: jump to the next 0 cell
  kFlatOpen,   // '[' of any other loop without nested loops (has a Flat summary)
  kClose,      // matched ']': jump back to the op after the matching '[' if the cell is not 0
  kFlatClose,  // ']' of a flat loop
  kOut,        // '.'
  kIn,         // ','
  kEnd,        // end of code
};

struct Op {
  OpKind kind;
  std::int32_t cost;    // steps when executed whole (kFlatClose: its Flat's index; cost 1)
  std::int32_t target;  // kOpen/kFlatOpen: op after the loop; k*Close: first body op;
                        // kBlock: block index; kLoop: loop index; kScan: scan index
  std::int32_t src;     // code position of the op's first character
};

struct Delta {
  std::int32_t offset;  // cell offset from the block's starting pointer
  std::int64_t amount;  // net change, reduced into [0, base)
};

struct Block {
  std::int32_t first_delta;  // index into OpStream::deltas
  std::int32_t num_deltas;
  std::int32_t shift;    // pointer offset at the block's end
  std::int32_t min_pos;  // lowest pointer offset reached (< 0: may clamp at the left edge)
  std::int32_t max_pos;  // highest pointer offset reached (the tape grows to cover it)
};

struct Loop {
  std::int32_t block;      // the body (an empty block for "[]")
  std::int32_t exit;       // op after the loop's ']'
  std::int64_t iter_cost;  // steps per iteration: body + ']'
  std::int64_t step;       // change of the loop cell per iteration, in [0, base)
};

// A loop whose body only moves the pointer ("[>]", "[<<]"): find the next 0 cell.
struct Scan {
  std::int32_t exit;       // op after the loop's ']'
  std::int32_t shift;      // pointer offset per iteration (!= 0)
  std::int32_t min_pos;    // lowest pointer offset within an iteration
  std::int32_t max_pos;    // highest pointer offset within an iteration
  std::int64_t iter_cost;  // steps per iteration: body + ']'
};

// Effect of one iteration of a loop body without nested loops, with ',' read as EOF (0).
struct Flat {
  std::int32_t body_src;   // code position of the body's first character
  std::int32_t body_len;   // characters in the body
  bool has_io;             // contains ',' or '.'
  bool has_input;          // contains ','
  std::int32_t shift;      // pointer offset after one iteration
  std::int32_t min_pos;    // lowest pointer offset within an iteration
  std::int64_t iter_cost;  // steps per iteration: body + ']'
  bool cell0_set;          // a ',' writes the loop cell (offset 0)
  std::int64_t cell0;      // loop cell: amount added after the last ',' (or in total)
  bool march;              // shift > 0 and no written offset is k * shift with k >= 2
  std::int64_t exit_cell;  // value of the cell at offset `shift` after an iteration from 0
};

// Per-offset scratch for summarising loop bodies; every entry is 0 between uses.
struct OffsetScratch {
  std::vector<std::int64_t> acc;  // sums, indexed by offset + origin
  std::vector<std::int8_t> set;   // "written by ','", same indexing
  std::int32_t origin = 0;
  void fit(std::size_t code_size);  // origin = code_size, room for offsets in +-code_size
};

/// Summarises the loop body code[begin, end). False if it contains a bracket (a nested
/// loop). Requires `scratch` fitted to the code's size.
bool summarize_flat(std::string_view code, std::int32_t begin, std::int32_t end, std::int64_t base,
                    OffsetScratch& scratch, Flat* flat);

// The fused op stream of one program, built on demand by the Machine that runs it.
struct OpStream {
  void build(const Program& program);

  std::uint64_t program_id = 0;  // Program::id() it was built for; 0: none
  std::vector<Op> ops;
  std::vector<Block> blocks;
  std::vector<Delta> deltas;
  std::vector<Loop> loops;
  std::vector<Flat> flats;
  std::vector<Scan> scans;
  std::vector<std::int32_t> op_at;  // per code position: the op starting there, or -1

 private:
  struct OpenBracket {
    std::int32_t op;   // op index of the '['
    std::int32_t src;  // code position
    bool flat;         // no loop nested inside (so far)
  };
  void push_op(OpKind kind, std::int32_t cost, std::int32_t target, std::int32_t src) {
    op_at[static_cast<std::size_t>(src)] = static_cast<std::int32_t>(ops.size());
    Op& op = ops.emplace_back();  // fields written in place (no temporary)
    op.kind = kind;
    op.cost = cost;
    op.target = target;
    op.src = src;
  }
  void flush_block(std::int64_t base, std::int32_t cost, std::int32_t start, std::int32_t pos, std::int32_t min_pos,
                   std::int32_t max_pos);
  void close_loop(const Program& program, std::int32_t position);

  std::vector<OpenBracket> stack_;
  OffsetScratch scratch_;
};

}  // namespace detail

/// A code string prepared for one base. Reusable: compile() again to replace it.
class Program {
 public:
  Program() = default;
  Program(std::string_view code, std::int64_t base) { compile(code, base); }

  /// Prepares `code` for cells modulo `base` (>= 1): bracket table and character classes.
  /// Reuses storage; accepts any characters (unmatched brackets are recorded).
  void compile(std::string_view code, std::int64_t base);

  bool syntax_ok() const noexcept { return syntax_ok_; }      // no unmatched bracket
  std::size_t size() const noexcept { return code_.size(); }  // len(code)
  std::int64_t base() const noexcept { return base_; }
  std::string_view code() const noexcept { return code_; }
  std::uint64_t id() const noexcept { return id_; }  // unique per compile() in the process

 private:
  friend class Machine;
  friend struct detail::OpStream;

  std::string code_;
  std::int64_t base_ = kDefaultBase;
  bool syntax_ok_ = true;
  std::uint64_t id_ = 0;
  std::vector<std::int32_t> match_;          // at each bracket: its partner (itself if unmatched)
  std::vector<std::uint8_t> class_;          // per code position: CharClass; kEndClass at size()
  std::vector<std::int32_t> bracket_pos_;    // compile scratch: bracket positions
  std::vector<std::int32_t> bracket_stack_;  // compile scratch
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
  enum class LoopVerdict : std::uint8_t {
    kKeep,   // undecided; check again at the next back-edge
    kDone,   // undecided; no further checks for this loop entry
    kEnds,   // the loop ends within the step limit
    kNever,  // the run cannot end within the step limit
  };

  enum class ClosedForm : std::uint8_t {
    kNone,     // not applicable here: iterate normally
    kDone,     // the loop ran to its end
    kPartial,  // iterations up to just below the step limit were applied
    kNever,    // verdict mode: the loop cannot end within the step limit
  };

  void reset(const std::int64_t* input, std::size_t input_size, const std::vector<std::int64_t>& init_memory);
  // Source-level engine from code position 0; compiles the op stream and continues in
  // run_fast once `steps` reaches `switch_at` at a back-edge.
  RunSummary run_source(const Program& program, std::int64_t switch_at);
  // Op-stream engine from op `pc` on the current state.
  RunSummary run_fast(const Program& program, std::int32_t pc);
  // Reference interpreter from code position `ip` on the current state, to the end.
  RunSummary run_plain(const Program& program, std::size_t ip);
  // Verdict mode: can the flat loop `flat`, at a back-edge with the pointer at `dp`, still
  // end within the step limit? `steps` counts the ']' just executed.
  LoopVerdict check_flat(const Program& program, const detail::Flat& flat, std::int64_t dp, std::int64_t steps);
  // Brent's cycle detection at a back-edge: true if the whole state (program point, pointer,
  // tape, input position) equals the snapshot, or, in verdict mode, equals it shifted right
  // (docs/bf.md, "translated repeats"). `low` is the lowest cell visited since the snapshot;
  // it is reset when a new snapshot is taken at a power-of-two back-edge count.
  bool repeats(std::int32_t point, std::int64_t dp, std::int64_t steps, std::int64_t& low);
  void reset_cycle_detection();
  // A flat loop without ',' at a back-edge (pointer at `dp`, the ']' counted in `*steps`):
  // if one iteration from dp returns to dp (with clamping at the left edge), every later
  // iteration repeats it, so the iterations are solved in closed form; each '.' prints an
  // arithmetic progression mod base. May grow the tape.
  ClosedForm solve_neutral_loop(const Program& program, const detail::Flat& flat, std::int64_t dp, std::int64_t* steps,
                                std::int64_t* low);
  // Simulates one iteration of a flat loop's body from `dp`, clamping at the left edge as
  // the original does (',' read as EOF). Leaves the per-cell changes in clamp_acc_ /
  // clamp_set_ / clamp_touched_ and the '.'s in clamp_out_ (the caller clears them), sets
  // *top to the highest cell reached and returns the pointer position after the iteration.
  std::int64_t simulate_iteration(const Program& program, const detail::Flat& flat, std::int64_t dp, std::int64_t* top);
  void clear_clamp_scratch();
  void grow_tape(std::int64_t index);
  bool timed_out() const;
  RunSummary step_limit_verdict();

  RunOptions options_;
  std::int64_t step_limit_;  // max_steps, or the largest int64 without a limit
  bool verdict_only_;        // !exact_failure_state with a limit >= 1
  Program own_program_;
  detail::OpStream stream_;  // compiled op stream of the last program that ran long

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

  // Verdict mode: the flat loop being run still needs its non-termination check.
  bool flat_pending_ = false;
  // Source engine: '[' position of the loop entered last, and the cached summary of it.
  std::int32_t pending_open_ = -1;
  std::int32_t summary_open_ = -1;
  bool summary_flat_ = false;  // the loop at summary_open_ has no nested loop
  detail::Flat summary_{};
  detail::OffsetScratch summary_scratch_;

  // Back-edge cycle detection (Brent): a snapshot of the state at a power-of-two count.
  std::vector<std::int64_t> snap_tape_;
  std::int32_t snap_point_ = -1;
  std::int64_t snap_dp_ = 0;
  std::int64_t snap_len_ = 0;
  std::size_t snap_input_pos_ = 0;
  std::int64_t snap_steps_ = 0;
  std::size_t snap_output_len_ = 0;
  std::uint64_t cycle_power_ = 1;  // 0: detection off for the rest of the run
  std::uint64_t cycle_lambda_ = 0;

  // Scratch of simulate_iteration(), indexed by cell; every entry is 0 between uses.
  std::vector<std::int64_t> clamp_acc_;
  std::vector<std::int8_t> clamp_set_;
  std::vector<std::int64_t> clamp_touched_;
  struct PendingOutput {
    std::int64_t cell;     // absolute cell a '.' prints
    std::int64_t partial;  // change of that cell earlier in the iteration, in [0, base)
  };
  std::vector<PendingOutput> clamp_out_;
  std::vector<std::int64_t> out_value_;  // solve_neutral_loop scratch

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
RunResult evaluate(std::string_view code, const std::vector<std::int64_t>& input, const RunOptions& options = {},
                   const std::vector<std::int64_t>& init_memory = {});

}  // namespace ringrl::bf
