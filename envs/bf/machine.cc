#include "envs/bf/machine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "common/errors.h"

namespace ringrl::bf {
namespace {

using detail::Block;
using detail::Delta;
using detail::Loop;
using detail::Op;
using detail::OpKind;

constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();
// The fast engine multiplies iteration counts (< base) by deltas (< base) in 64 bits.
constexpr std::int64_t kMaxFastBase = std::int64_t{1} << 31;
// Code positions and op indices are 32-bit.
constexpr std::size_t kMaxCodeSize = std::numeric_limits<std::int32_t>::max() / 2;
// Steps between two reads of the clock when a timeout is set.
constexpr std::int64_t kClockCheckInterval = 4096;
// Initial tape capacity in cells (grown by doubling on demand).
constexpr std::size_t kInitialTapeCells = 1024;

bool is_io_or_bracket(char c) { return c == '[' || c == ']' || c == '.' || c == ','; }

std::int64_t gcd(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Inverse of a modulo m for gcd(a, m) == 1 (extended Euclid); m == 1 gives 0.
std::int64_t mod_inverse(std::int64_t a, std::int64_t m) {
  std::int64_t old_r = a % m, r = m, old_s = 1, s = 0;
  while (r != 0) {
    const std::int64_t q = old_r / r;
    std::int64_t t = old_r - q * r;
    old_r = r;
    r = t;
    t = old_s - q * s;
    old_s = s;
    s = t;
  }
  const std::int64_t inv = old_s % m;
  return inv < 0 ? inv + m : inv;
}

// cell + amount for in-range operands (both in [0, base)).
inline std::int64_t add_in_range(std::int64_t cell, std::int64_t amount, std::int64_t base) {
  const std::int64_t sum = cell + amount;
  return sum >= base ? sum - base : sum;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view to_string(FailureReason reason) noexcept {
  switch (reason) {
    case FailureReason::kSuccess: return "success";
    case FailureReason::kStepLimit: return "step-limit";
    case FailureReason::kSyntaxError: return "syntax-error";
    case FailureReason::kTimeout: return "timeout";
  }
  return "success";
}

void validate(const RunOptions& options) {
  if (options.base < 1) {
    throw UsageError("bf: base must be >= 1, got " + std::to_string(options.base));
  }
}

// ---------------------------------------------------------------------------------------
// Compilation

void Program::compile(std::string_view code, std::int64_t base) {
  if (base < 1) throw UsageError("bf: base must be >= 1, got " + std::to_string(base));
  if (code.size() > kMaxCodeSize) {
    throw UsageError("bf: program too long (" + std::to_string(code.size()) + " characters)");
  }
  code_.assign(code.data(), code.size());
  base_ = base;
  const auto n = static_cast<std::int32_t>(code.size());

  // Bracket table: one pass with a stack; unmatched brackets map to themselves.
  syntax_ok_ = true;
  match_.resize(code.size());
  stack_.clear();
  for (std::int32_t i = 0; i < n; ++i) {
    match_[i] = i;
    if (code[i] == '[') {
      stack_.push_back(i);
    } else if (code[i] == ']') {
      if (stack_.empty()) {
        syntax_ok_ = false;
      } else {
        const std::int32_t open = stack_.back();
        stack_.pop_back();
        match_[i] = open;
        match_[open] = i;
      }
    }
  }
  if (!stack_.empty()) syntax_ok_ = false;

  // Op stream. Unmatched brackets are no-ops here, so they join blocks.
  ops_.clear();
  blocks_.clear();
  deltas_.clear();
  loops_.clear();
  stack_.clear();
  const std::int64_t minus_one = base - 1;  // -1 reduced into [0, base)
  const auto joins_block = [&](std::int32_t k) {
    return !is_io_or_bracket(code[k]) || (match_[k] == k && (code[k] == '[' || code[k] == ']'));
  };
  std::int32_t i = 0;
  while (i < n) {
    const char c = code[i];
    const bool matched_bracket = (c == '[' || c == ']') && match_[i] != i;
    if (matched_bracket && c == '[') {
      stack_.push_back(static_cast<std::int32_t>(ops_.size()));
      ops_.push_back(Op{OpKind::kOpen, 1, -1, i});
      ++i;
    } else if (matched_bracket) {
      const std::int32_t open = stack_.back();
      stack_.pop_back();
      ops_.push_back(Op{OpKind::kClose, 1, open + 1, i});
      ops_[open].target = static_cast<std::int32_t>(ops_.size());
      ++i;
    } else if (c == '.') {
      ops_.push_back(Op{OpKind::kOut, 1, 0, i});
      ++i;
    } else if (c == ',') {
      ops_.push_back(Op{OpKind::kIn, 1, 0, i});
      ++i;
    } else {
      // Maximal run of + - < > and no-op characters.
      Block block{static_cast<std::int32_t>(deltas_.size()), 0, 0, 0, 0};
      const std::int32_t start = i;
      std::int32_t pos = 0;
      for (; i < n && joins_block(i); ++i) {
        const char ch = code[i];
        if (ch == '>') {
          block.max_pos = std::max(block.max_pos, ++pos);
        } else if (ch == '<') {
          block.min_pos = std::min(block.min_pos, --pos);
        } else if (ch == '+' || ch == '-') {
          const std::int64_t step = ch == '+' ? 1 % base : minus_one;
          auto it = std::find_if(deltas_.begin() + block.first_delta, deltas_.end(),
                                 [pos](const Delta& d) { return d.offset == pos; });
          if (it == deltas_.end()) {
            deltas_.push_back(Delta{pos, step});
          } else {
            it->amount = add_in_range(it->amount, step, base);
          }
        }
      }
      // Drop deltas that cancelled out (e.g. "+-").
      deltas_.erase(std::remove_if(deltas_.begin() + block.first_delta, deltas_.end(),
                                   [](const Delta& d) { return d.amount == 0; }),
                    deltas_.end());
      block.num_deltas = static_cast<std::int32_t>(deltas_.size()) - block.first_delta;
      block.shift = pos;
      ops_.push_back(Op{OpKind::kBlock, i - start, static_cast<std::int32_t>(blocks_.size()),
                        start});
      blocks_.push_back(block);
    }
  }
  ops_.push_back(Op{OpKind::kEnd, 0, 0, n});

  // Loops whose body is one pointer-neutral block (or empty) are solved in closed form.
  for (std::size_t k = 0; k + 1 < ops_.size(); ++k) {
    if (ops_[k].kind != OpKind::kOpen) continue;
    const auto open = static_cast<std::int32_t>(k);
    std::int32_t block_index = -1;
    std::int32_t close = -1;
    if (ops_[k + 1].kind == OpKind::kClose && ops_[k + 1].target == open + 1) {
      // "[]": give it an empty body block.
      block_index = static_cast<std::int32_t>(blocks_.size());
      blocks_.push_back(Block{static_cast<std::int32_t>(deltas_.size()), 0, 0, 0, 0});
      close = open + 1;
    } else if (ops_[k + 1].kind == OpKind::kBlock && k + 2 < ops_.size() &&
               ops_[k + 2].kind == OpKind::kClose && ops_[k + 2].target == open + 1 &&
               blocks_[ops_[k + 1].target].shift == 0) {
      block_index = ops_[k + 1].target;
      close = open + 2;
    } else {
      continue;
    }
    const Block& body = blocks_[block_index];
    std::int64_t step = 0;
    for (std::int32_t d = 0; d < body.num_deltas; ++d) {
      const Delta& delta = deltas_[body.first_delta + d];
      if (delta.offset == 0) step = delta.amount;
    }
    Loop loop{};
    loop.block = block_index;
    loop.exit = close + 1;
    loop.step = step;
    loop.gcd = gcd(step, base);
    loop.modulus = base / loop.gcd;
    loop.inverse = mod_inverse(step / loop.gcd, loop.modulus);
    loop.iter_cost = (close == open + 1 ? 0 : ops_[k + 1].cost) + 1;
    ops_[k].kind = OpKind::kLoop;
    ops_[k].target = static_cast<std::int32_t>(loops_.size());
    loops_.push_back(loop);
  }
}

// ---------------------------------------------------------------------------------------
// Running

Machine::Machine(RunOptions options) : options_(options) {
  validate(options_);
  step_limit_ = options_.max_steps ? *options_.max_steps : kNoLimit;
  tape_.assign(kInitialTapeCells, 0);
}

void Machine::grow_tape(std::int64_t index) {
  std::size_t size = tape_.size();
  while (static_cast<std::int64_t>(size) <= index) size *= 2;
  tape_.resize(size, 0);
}

bool Machine::timed_out() const {
  const double elapsed_s = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  return elapsed_s > options_.timeout_s;
}

void Machine::reset(const std::int64_t* input, std::size_t input_size,
                    const std::vector<std::int64_t>& init_memory) {
  // Cells past tape_len_ are already 0; clear the ones the previous run used.
  std::fill(tape_.begin(), tape_.begin() + tape_len_, 0);
  const std::int64_t base = options_.base;
  in_range_ = base <= kMaxFastBase;
  if (init_memory.empty()) {
    tape_len_ = 1;
  } else {
    if (init_memory.size() > tape_.size()) grow_tape(static_cast<std::int64_t>(init_memory.size()));
    std::copy(init_memory.begin(), init_memory.end(), tape_.begin());
    tape_len_ = static_cast<std::int64_t>(init_memory.size());
    for (const std::int64_t v : init_memory) in_range_ = in_range_ && v >= 0 && v < base;
  }
  for (std::size_t k = 0; k < input_size; ++k) {
    in_range_ = in_range_ && input[k] >= 0 && input[k] < base;
  }
  dp_ = 0;
  steps_ = 0;
  input_ = input;
  input_size_ = input_size;
  input_pos_ = 0;
  output_.clear();
  syntax_failed_ = false;
  snap_pc_ = -1;
  cycle_power_ = 1;
  cycle_lambda_ = 0;
  if (options_.timeout_s > 0) {
    start_ns_ = now_ns();
    next_clock_check_ = kClockCheckInterval;
  } else {
    next_clock_check_ = kNoLimit;
  }
}

RunSummary Machine::run(std::string_view code, const std::vector<std::int64_t>& input) {
  own_program_.compile(code, options_.base);
  return run(own_program_, input.data(), input.size());
}

RunSummary Machine::run(const Program& program, const std::int64_t* input,
                        std::size_t input_size, const std::vector<std::int64_t>& init_memory) {
  if (program.base() != options_.base) {
    throw UsageError("bf: program compiled for base " + std::to_string(program.base()) +
                     ", machine runs base " + std::to_string(options_.base));
  }
  reset(input, input_size, init_memory);
  if (options_.require_correct_syntax && !program.syntax_ok()) {
    syntax_failed_ = true;
    return RunSummary{false, FailureReason::kSyntaxError, 0};
  }
  if (options_.engine == Engine::kPlain || !in_range_) return run_plain(program, 0);
  return run_fast(program);
}

std::vector<std::int64_t> Machine::memory() const {
  if (syntax_failed_) return {};
  return std::vector<std::int64_t>(tape_.begin(), tape_.begin() + tape_len_);
}

RunSummary Machine::run_plain(const Program& program, std::size_t ip) {
  const char* code = program.code_.data();
  const std::size_t n = program.code_.size();
  const std::int32_t* match = program.match_.data();
  const std::int64_t base = options_.base;
  const std::int64_t limit = step_limit_;
  std::int64_t dp = dp_;
  std::int64_t steps = steps_;
  std::int64_t* tape = tape_.data();
  RunSummary result;
  while (ip < n) {
    std::int64_t& cell = tape[dp];
    switch (code[ip]) {
      case '>':
        ++dp;
        if (dp == tape_len_) {
          if (dp >= static_cast<std::int64_t>(tape_.size())) {
            grow_tape(dp);
            tape = tape_.data();
          }
          ++tape_len_;
        }
        break;
      case '<':
        if (dp > 0) --dp;
        break;
      case '+':
        cell = cell < base - 1 ? cell + 1 : 0;
        break;
      case '-':
        cell = cell > 0 ? cell - 1 : base - 1;
        break;
      case '[':
        if (cell == 0) ip = static_cast<std::size_t>(match[ip]);
        break;
      case ']':
        if (cell != 0) ip = static_cast<std::size_t>(match[ip]);
        break;
      case '.':
        output_.push_back(cell);
        break;
      case ',':
        cell = input_pos_ < input_size_ ? input_[input_pos_++] : 0;
        break;
      default:
        break;
    }
    ++ip;
    ++steps;
    if (steps >= next_clock_check_) {
      next_clock_check_ = steps + kClockCheckInterval;
      if (timed_out()) {
        result = RunSummary{false, FailureReason::kTimeout, steps};
        break;
      }
    }
    if (steps >= limit) {
      result = RunSummary{false, FailureReason::kStepLimit, steps};
      break;
    }
  }
  if (result.success) result.steps = steps;
  dp_ = dp;
  steps_ = steps;
  return result;
}

RunSummary Machine::run_fast(const Program& program) {
  const Op* ops = program.ops_.data();
  const Block* blocks = program.blocks_.data();
  const Delta* deltas = program.deltas_.data();
  const Loop* loops = program.loops_.data();
  const std::int64_t base = options_.base;
  const std::int64_t limit = step_limit_;
  const bool limited = limit != kNoLimit;
  // A limit below 1 stops the run after its first instruction, which the plain path handles.
  const bool verdict_only = !options_.exact_failure_state && limited && limit >= 1;
  std::int64_t* tape = tape_.data();
  std::int64_t dp = 0;
  std::int64_t steps = 0;
  std::int32_t pc = 0;

  // Makes `index` part of the grown tape (the original appends cells as '>' reaches them).
  const auto ensure_cell = [&](std::int64_t index) {
    if (index >= tape_len_) {
      if (index >= static_cast<std::int64_t>(tape_.size())) {
        grow_tape(index);
        tape = tape_.data();
      }
      tape_len_ = index + 1;
    }
  };

  for (;;) {
    const Op& op = ops[pc];
    switch (op.kind) {
      case OpKind::kBlock: {
        if (steps + op.cost >= limit) goto handoff;
        const Block& b = blocks[op.target];
        if (dp + b.min_pos < 0) {
          // The pointer may clamp at the left edge: step through the characters exactly.
          const char* code = program.code_.data();
          for (std::int32_t k = op.src, end = op.src + op.cost; k < end; ++k) {
            switch (code[k]) {
              case '>': ensure_cell(++dp); break;
              case '<': if (dp > 0) --dp; break;
              case '+': tape[dp] = add_in_range(tape[dp], 1 % base, base); break;
              case '-': tape[dp] = add_in_range(tape[dp], base - 1, base); break;
              default: break;
            }
          }
        } else {
          ensure_cell(dp + b.max_pos);
          for (const Delta* d = deltas + b.first_delta, *e = d + b.num_deltas; d != e; ++d) {
            std::int64_t& cell = tape[dp + d->offset];
            cell = add_in_range(cell, d->amount, base);
          }
          dp += b.shift;
        }
        steps += op.cost;
        ++pc;
        break;
      }
      case OpKind::kOpen:
        if (steps + 1 >= limit) goto handoff;
        ++steps;
        pc = tape[dp] == 0 ? op.target : pc + 1;
        break;
      case OpKind::kLoop: {
        if (steps + 1 >= limit) goto handoff;
        const Loop& loop = loops[op.target];
        const std::int64_t v = tape[dp];
        if (v == 0) {
          ++steps;
          pc = loop.exit;
          break;
        }
        const Block& b = blocks[loop.block];
        if (dp + b.min_pos < 0) {
          // Clamping body: run it as an ordinary loop.
          ++steps;
          ++pc;
          break;
        }
        // Iterations until the loop cell is 0: smallest n >= 1 with v + n*step = 0 (mod base).
        const std::int64_t need = base - v;
        bool finite = loop.step != 0 && need % loop.gcd == 0;
        std::int64_t n = 0;
        if (finite) {
          n = loop.step == base - 1 ? v
              : loop.step == 1     ? need
                                   : (need / loop.gcd) * loop.inverse % loop.modulus;
        }
        const std::int64_t after_open = steps + 1;
        const std::int64_t room = limit - 1 - after_open;  // steps that stay below the limit
        std::int64_t times = 0;
        if (finite && n <= room / loop.iter_cost) {
          times = n;
        } else if (verdict_only) {
          steps_ = limit;
          return RunSummary{false, FailureReason::kStepLimit, limit};
        } else if (!limited) {
          // Never ends and nothing stops it but a timeout: iterate normally.
          ++steps;
          ++pc;
          break;
        } else {
          times = room / loop.iter_cost;  // the limit falls inside iteration times + 1
        }
        ensure_cell(dp + b.max_pos);
        const std::int64_t reps = times % base;
        for (const Delta* d = deltas + b.first_delta, *e = d + b.num_deltas; d != e; ++d) {
          std::int64_t& cell = tape[dp + d->offset];
          cell = (cell + reps * d->amount) % base;
        }
        steps = after_open + times * loop.iter_cost;
        pc = times == n && finite ? loop.exit : pc + 1;
        break;
      }
      case OpKind::kClose:
        if (steps + 1 >= limit) goto handoff;
        ++steps;
        if (tape[dp] == 0) {
          ++pc;
          break;
        }
        pc = op.target;
        if (steps >= next_clock_check_) {
          next_clock_check_ = steps + kClockCheckInterval;
          if (timed_out()) {
            dp_ = dp;
            steps_ = steps;
            return RunSummary{false, FailureReason::kTimeout, steps};
          }
        }
        if (cycle_power_ != 0) {
          // Brent's cycle detection on the whole state at back-edges.
          if (pc == snap_pc_ && dp == snap_dp_ && input_pos_ == snap_input_pos_ &&
              tape_len_ == snap_len_ &&
              std::memcmp(tape, snap_tape_.data(),
                          static_cast<std::size_t>(tape_len_) * sizeof(std::int64_t)) == 0) {
            // The state repeats: the run loops forever with period `period` steps.
            cycle_power_ = 0;
            if (verdict_only) {
              steps_ = limit;
              return RunSummary{false, FailureReason::kStepLimit, limit};
            }
            if (limited) {
              const std::int64_t period = steps - snap_steps_;
              const std::int64_t skip = (limit - 1 - steps) / period;
              const std::size_t cycle_begin = snap_output_len_;
              const std::size_t cycle_end = output_.size();
              if (cycle_end > cycle_begin) {
                output_.reserve(cycle_end +
                                static_cast<std::size_t>(skip) * (cycle_end - cycle_begin));
                for (std::int64_t r = 0; r < skip; ++r) {
                  for (std::size_t k = cycle_begin; k < cycle_end; ++k) {
                    output_.push_back(output_[k]);
                  }
                }
              }
              steps += skip * period;
            }
          } else if (++cycle_lambda_ == cycle_power_) {
            snap_pc_ = pc;
            snap_dp_ = dp;
            snap_len_ = tape_len_;
            snap_input_pos_ = input_pos_;
            snap_steps_ = steps;
            snap_output_len_ = output_.size();
            snap_tape_.assign(tape, tape + tape_len_);
            cycle_power_ <<= 1;
            cycle_lambda_ = 0;
          }
        }
        break;
      case OpKind::kOut:
        if (steps + 1 >= limit) goto handoff;
        ++steps;
        output_.push_back(tape[dp]);
        ++pc;
        break;
      case OpKind::kIn:
        if (steps + 1 >= limit) goto handoff;
        ++steps;
        tape[dp] = input_pos_ < input_size_ ? input_[input_pos_++] : 0;
        ++pc;
        break;
      case OpKind::kEnd:
        dp_ = dp;
        steps_ = steps;
        return RunSummary{true, FailureReason::kSuccess, steps};
    }
  }

handoff:
  // The step limit falls within the next op: finish instruction by instruction.
  dp_ = dp;
  steps_ = steps;
  if (verdict_only) {
    steps_ = limit;
    return RunSummary{false, FailureReason::kStepLimit, limit};
  }
  return run_plain(program, static_cast<std::size_t>(ops[pc].src));
}

RunResult evaluate(std::string_view code, const std::vector<std::int64_t>& input,
                   const RunOptions& options, const std::vector<std::int64_t>& init_memory) {
  Machine machine(options);
  Program program(code, options.base);
  const RunSummary summary = machine.run(program, input.data(), input.size(), init_memory);
  RunResult result;
  result.output = machine.output();
  result.success = summary.success;
  result.reason = summary.reason;
  result.steps = summary.steps;
  result.memory = machine.memory();
  return result;
}

}  // namespace ringrl::bf
