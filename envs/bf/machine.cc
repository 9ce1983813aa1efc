#include "envs/bf/machine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "common/errors.h"

#if !defined(__GNUC__)
#error "the BF engines use computed goto (GCC and Clang)"
#endif

namespace ringrl::bf {
namespace {

using detail::Block;
using detail::CharClass;
using detail::Delta;
using detail::Flat;
using detail::Loop;
using detail::Op;
using detail::OpKind;
using detail::Scan;

constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();
// The fast paths multiply iteration counts (< base) by deltas (< base) in 64 bits.
constexpr std::int64_t kMaxFastBase = std::int64_t{1} << 31;
// Code positions and op indices are 32-bit.
constexpr std::size_t kMaxCodeSize = std::numeric_limits<std::int32_t>::max() / 2;
// Steps between two reads of the clock when a timeout is set.
constexpr std::int64_t kClockCheckInterval = 4096;
// Initial tape capacity in cells (grown by doubling on demand).
constexpr std::size_t kInitialTapeCells = 1024;
// A run that is still going after this many steps (at a back-edge) moves to the compiled op
// stream; shorter runs never pay for compiling it.
constexpr std::int64_t kCompileAfterSteps = 400;

constexpr std::uint8_t kLastBlockClass = detail::kLeft;              // classes 0..4 join blocks
constexpr std::int32_t kMoveOf[] = {0, 0, 0, 1, -1, 0, 0, 0, 0, 0};  // pointer change
constexpr std::int64_t kAddOf[] = {0, 1, -1, 0, 0, 0, 0, 0, 0, 0};   // cell change
constexpr std::size_t kNumChars = 256;

struct ClassTable {
  std::uint8_t of[kNumChars] = {};
  constexpr ClassTable() {
    of[static_cast<unsigned char>('+')] = detail::kPlus;
    of[static_cast<unsigned char>('-')] = detail::kMinus;
    of[static_cast<unsigned char>('>')] = detail::kRight;
    of[static_cast<unsigned char>('<')] = detail::kLeft;
    of[static_cast<unsigned char>('[')] = detail::kOpenBracket;
    of[static_cast<unsigned char>(']')] = detail::kCloseBracket;
    of[static_cast<unsigned char>('.')] = detail::kDot;
    of[static_cast<unsigned char>(',')] = detail::kComma;
  }
};
constexpr ClassTable kClasses;

std::atomic<std::uint64_t> g_next_program_id{1};

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

// A raw count (any sign) reduced into [0, base).
std::int64_t reduce(std::int64_t count, std::int64_t base) {
  const std::int64_t r = (count > -base && count < base) ? count : count % base;
  return r < 0 ? r + base : r;
}

// Smallest n >= 1 with v + n * step = 0 (mod base), for v in [1, base); false if none.
inline bool iterations_to_zero(std::int64_t step, std::int64_t v, std::int64_t base, std::int64_t* n) {
  if (step == 0) return false;
  if (step == base - 1) {  // "-" per iteration
    *n = v;
    return true;
  }
  if (step == 1) {  // "+" per iteration
    *n = base - v;
    return true;
  }
  const std::int64_t need = base - v;
  const std::int64_t g = gcd(step, base);
  if (need % g != 0) return false;
  const std::int64_t m = base / g;
  *n = (need / g) * mod_inverse(step / g, m) % m;
  return true;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view to_string(FailureReason reason) noexcept {
  switch (reason) {
    case FailureReason::kSuccess:
      return "success";
    case FailureReason::kStepLimit:
      return "step-limit";
    case FailureReason::kSyntaxError:
      return "syntax-error";
    case FailureReason::kTimeout:
      return "timeout";
  }
  return "success";
}

void validate(const RunOptions& options) {
  if (options.base < 1) {
    throw UsageError("bf: base must be >= 1, got " + std::to_string(options.base));
  }
}

// ---------------------------------------------------------------------------------------
// Preparing a program

void Program::compile(std::string_view code, std::int64_t base) {
  if (base < 1) throw UsageError("bf: base must be >= 1, got " + std::to_string(base));
  if (code.size() > kMaxCodeSize) {
    throw UsageError("bf: program too long (" + std::to_string(code.size()) + " characters)");
  }
  code_.assign(code.data(), code.size());
  base_ = base;
  id_ = g_next_program_id.fetch_add(1, std::memory_order_relaxed);  // only uniqueness matters
  const auto n = static_cast<std::int32_t>(code.size());
  if (bracket_stack_.size() < code.size() + 2) {
    match_.resize(code.size() + 1);
    class_.resize(code.size() + 1);
    bracket_pos_.resize(code.size() + 1);
    bracket_stack_.resize(code.size() + 2);
  }
  // Character classes, and the positions of all brackets (compacted without branches).
  // match[] is only defined at brackets.
  const char* text = code_.data();
  std::int32_t* match = match_.data();
  std::uint8_t* cls = class_.data();
  std::int32_t* brackets = bracket_pos_.data();
  std::int32_t num_brackets = 0;
  for (std::int32_t i = 0; i < n; ++i) {
    const std::uint8_t c = kClasses.of[static_cast<unsigned char>(text[i])];
    cls[i] = c;
    brackets[num_brackets] = i;
    num_brackets += static_cast<std::int32_t>(c == detail::kOpenBracket || c == detail::kCloseBracket);
  }
  cls[n] = detail::kEndClass;
  // Bracket table over the brackets only, with a stack and again without data-dependent
  // branches (random code makes them unpredictable). The stack's top lives in `top`, the
  // rest in stack[0, depth); match[n] is a dummy slot for the conditional second store.
  std::int32_t* stack = bracket_stack_.data();
  std::int32_t top = 0;
  std::int32_t depth = 0;
  std::int32_t unmatched_close = 0;
  for (std::int32_t k = 0; k < num_brackets; ++k) {
    const std::int32_t i = brackets[k];
    const bool open = cls[i] == detail::kOpenBracket;
    const bool pop = !open && depth > 0;
    const bool stray = !open && depth == 0;  // unmatched ']': a one-step no-op
    unmatched_close += static_cast<std::int32_t>(stray);
    cls[i] = stray ? static_cast<std::uint8_t>(detail::kForeign) : cls[i];
    match[i] = pop ? top : i;
    match[pop ? top : n] = i;
    stack[depth] = top;
    const std::int32_t below = stack[depth > 0 ? depth - 1 : 0];
    top = open ? i : pop ? below : top;
    depth += static_cast<std::int32_t>(open) - static_cast<std::int32_t>(pop);
  }
  syntax_ok_ = depth == 0 && unmatched_close == 0;
  if (depth > 0) {
    // '[' left open (unmatched) are one-step no-ops too: the top and stack[1, depth).
    cls[top] = detail::kForeign;
    for (std::int32_t k = 1; k < depth; ++k) cls[stack[k]] = detail::kForeign;
  }
}

// ---------------------------------------------------------------------------------------
// Loop summaries and the op stream

void detail::OffsetScratch::fit(std::size_t code_size) {
  const std::size_t window = 2 * code_size + 1;
  if (acc.size() < window) {
    acc.assign(window, 0);
    set.assign(window, 0);
  }
  origin = static_cast<std::int32_t>(code_size);
}

bool detail::summarize_flat(std::string_view code, std::int32_t begin, std::int32_t end, std::int64_t base,
                            OffsetScratch& scratch, Flat* flat) {
  std::int64_t* acc = scratch.acc.data() + scratch.origin;  // indexed by offset
  std::int8_t* set = scratch.set.data() + scratch.origin;
  Flat f{};
  f.body_src = begin;
  f.body_len = end - begin;
  f.iter_cost = f.body_len + 1;
  std::int32_t pos = 0;
  std::int32_t high = 0;
  bool nested = false;
  for (std::int32_t k = begin; k < end && !nested; ++k) {
    switch (code[static_cast<std::size_t>(k)]) {
      case '+':
        acc[pos] = add_in_range(acc[pos], 1 % base, base);
        break;
      case '-':
        acc[pos] = add_in_range(acc[pos], base - 1, base);
        break;
      case '>':
        high = std::max(high, ++pos);
        break;
      case '<':
        f.min_pos = std::min(f.min_pos, --pos);
        break;
      case '.':
        f.has_io = true;
        break;
      case ',':
        f.has_io = true;
        f.has_input = true;
        acc[pos] = 0;
        set[pos] = 1;
        break;
      case '[':
      case ']':
        nested = true;
        break;
      default:
        break;
    }
  }
  f.shift = pos;
  f.cell0 = acc[0];
  f.cell0_set = set[0] != 0;
  f.exit_cell = acc[pos];
  f.march = pos > 0;
  for (std::int32_t at = f.min_pos; at <= high; ++at) {
    const bool written = acc[at] != 0 || set[at] != 0;
    if (written && f.march && at % pos == 0 && at / pos >= 2) f.march = false;
    acc[at] = 0;
    set[at] = 0;
  }
  *flat = f;
  return !nested;
}

void detail::OpStream::flush_block(std::int64_t base, std::int32_t cost, std::int32_t start, std::int32_t pos,
                                   std::int32_t min_pos, std::int32_t max_pos) {
  std::int64_t* acc = scratch_.acc.data() + scratch_.origin;  // indexed by offset
  Block& block = blocks.emplace_back();
  block.first_delta = static_cast<std::int32_t>(deltas.size());
  block.shift = pos;
  block.min_pos = min_pos;
  block.max_pos = max_pos;
  for (std::int32_t offset = min_pos; offset <= max_pos; ++offset) {
    const std::int64_t count = acc[offset];
    if (count == 0) continue;
    acc[offset] = 0;
    const std::int64_t amount = reduce(count, base);
    if (amount == 0) continue;
    Delta& d = deltas.emplace_back();
    d.offset = offset;
    d.amount = amount;
  }
  block.num_deltas = static_cast<std::int32_t>(deltas.size()) - block.first_delta;
  push_op(OpKind::kBlock, cost, static_cast<std::int32_t>(blocks.size()) - 1, start);
}

void detail::OpStream::close_loop(const Program& program, std::int32_t position) {
  const OpenBracket open_bracket = stack_.back();
  stack_.pop_back();
  if (!stack_.empty()) stack_.back().flat = false;
  const std::int32_t open = open_bracket.op;
  const auto close = static_cast<std::int32_t>(ops.size());
  push_op(OpKind::kClose, 1, open + 1, position);
  ops[open].target = close + 1;
  if (!open_bracket.flat) return;

  const bool empty_body = close == open + 1;
  const bool block_body = close == open + 2 && ops[open + 1].kind == OpKind::kBlock;
  const Block* body = block_body ? &blocks[ops[open + 1].target] : nullptr;
  if (empty_body || (block_body && body->shift == 0)) {
    // "[]" and "[block]" with a pointer-neutral block: closed form.
    Loop& loop = loops.emplace_back();
    if (empty_body) {
      loop.block = static_cast<std::int32_t>(blocks.size());
      blocks.push_back(Block{static_cast<std::int32_t>(deltas.size()), 0, 0, 0, 0});
      loop.step = 0;
    } else {
      loop.block = ops[open + 1].target;
      body = &blocks[loop.block];
      loop.step = 0;
      for (std::int32_t d = 0; d < body->num_deltas; ++d) {
        if (deltas[body->first_delta + d].offset == 0) {
          loop.step = deltas[body->first_delta + d].amount;
        }
      }
    }
    loop.exit = close + 1;
    loop.iter_cost = (empty_body ? 0 : ops[open + 1].cost) + 1;
    ops[open].kind = OpKind::kLoop;
    ops[open].target = static_cast<std::int32_t>(loops.size()) - 1;
    return;
  }
  if (block_body && body->num_deltas == 0) {
    // "[>]", "[<<]", ...: only moves.
    Scan& scan = scans.emplace_back();
    scan.exit = close + 1;
    scan.shift = body->shift;
    scan.min_pos = body->min_pos;
    scan.max_pos = body->max_pos;
    scan.iter_cost = ops[open + 1].cost + 1;
    ops[open].kind = OpKind::kScan;
    ops[open].target = static_cast<std::int32_t>(scans.size()) - 1;
    return;
  }
  // Any other loop without nested loops: its one-iteration summary.
  Flat& flat = flats.emplace_back();
  summarize_flat(program.code(), open_bracket.src + 1, position, program.base(), scratch_, &flat);
  ops[open].kind = OpKind::kFlatOpen;
  ops[close].kind = OpKind::kFlatClose;
  ops[close].cost = static_cast<std::int32_t>(flats.size()) - 1;
}

void detail::OpStream::build(const Program& program) {
  const auto n = static_cast<std::int32_t>(program.size());
  const std::int64_t base = program.base();
  program_id = program.id();
  ops.clear();
  blocks.clear();
  deltas.clear();
  loops.clear();
  flats.clear();
  scans.clear();
  stack_.clear();
  ops.reserve(program.size() + 1);
  blocks.reserve(program.size() + 1);
  deltas.reserve(program.size());
  op_at.assign(program.size() + 1, -1);
  scratch_.fit(program.size());

  // Blocks accumulate until a matched bracket or an I/O character (unmatched brackets are
  // classed as foreign characters, so they join blocks).
  const std::uint8_t* cls = program.class_.data();
  std::int64_t* acc = scratch_.acc.data() + scratch_.origin;  // indexed by offset
  std::int32_t i = 0;
  while (i < n) {
    std::uint8_t c = cls[i];
    if (c <= kLastBlockClass) {
      const std::int32_t start = i;
      std::int32_t pos = 0, min_pos = 0, max_pos = 0;
      do {
        acc[pos] += kAddOf[c];
        pos += kMoveOf[c];
        min_pos = std::min(min_pos, pos);
        max_pos = std::max(max_pos, pos);
        c = cls[++i];
      } while (c <= kLastBlockClass);
      flush_block(base, i - start, start, pos, min_pos, max_pos);
      if (i == n) break;
    }
    switch (c) {
      case detail::kOpenBracket: {
        OpenBracket& open = stack_.emplace_back();
        open.op = static_cast<std::int32_t>(ops.size());
        open.src = i;
        open.flat = true;
        push_op(OpKind::kOpen, 1, -1, i);
        break;
      }
      case detail::kCloseBracket:
        close_loop(program, i);
        break;
      case detail::kDot:
        push_op(OpKind::kOut, 1, 0, i);
        break;
      default:
        push_op(OpKind::kIn, 1, 0, i);
        break;
    }
    ++i;
  }
  push_op(OpKind::kEnd, 0, 0, n);
}

// ---------------------------------------------------------------------------------------
// Machine

Machine::Machine(RunOptions options) : options_(options) {
  validate(options_);
  step_limit_ = options_.max_steps ? *options_.max_steps : kNoLimit;
  // A limit below 1 stops a run after its first instruction; no shortcuts are needed there.
  verdict_only_ = !options_.exact_failure_state && options_.max_steps && step_limit_ >= 1;
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

RunSummary Machine::step_limit_verdict() {
  steps_ = step_limit_;
  return RunSummary{false, FailureReason::kStepLimit, step_limit_};
}

void Machine::reset_cycle_detection() {
  snap_point_ = -1;
  cycle_power_ = 1;
  cycle_lambda_ = 0;
}

void Machine::reset(const std::int64_t* input, std::size_t input_size, const std::vector<std::int64_t>& init_memory) {
  // Cells past tape_len_ are already 0; clear the ones the previous run used.
  std::fill(tape_.begin(), tape_.begin() + tape_len_, 0);
  const std::int64_t base = options_.base;
  in_range_ = base <= kMaxFastBase;
  if (init_memory.empty()) {
    tape_len_ = 1;
  } else {
    if (init_memory.size() >= tape_.size()) {
      grow_tape(static_cast<std::int64_t>(init_memory.size()));
    }
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
  flat_pending_ = false;
  pending_open_ = -1;
  summary_open_ = -1;
  reset_cycle_detection();
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

RunSummary Machine::run(const Program& program, const std::int64_t* input, std::size_t input_size,
                        const std::vector<std::int64_t>& init_memory) {
  if (program.base() != options_.base) {
    throw UsageError("bf: program compiled for base " + std::to_string(program.base()) + ", machine runs base " +
                     std::to_string(options_.base));
  }
  reset(input, input_size, init_memory);
  if (options_.require_correct_syntax && !program.syntax_ok()) {
    syntax_failed_ = true;
    return RunSummary{false, FailureReason::kSyntaxError, 0};
  }
  if (options_.engine == Engine::kPlain || !in_range_) return run_plain(program, 0);
  // A program whose op stream is already built (it ran long before) starts there.
  if (stream_.program_id == program.id()) return run_fast(program, 0);
  return run_source(program, kCompileAfterSteps);
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

bool Machine::repeats(std::int32_t point, std::int64_t dp, std::int64_t steps, std::int64_t& low) {
  if (point == snap_point_ && input_pos_ == snap_input_pos_) {
    const std::int64_t* now = tape_.data();
    const std::int64_t* then = snap_tape_.data();
    if (dp == snap_dp_ && tape_len_ == snap_len_ && now[dp] == then[dp] &&
        std::memcmp(now, then, static_cast<std::size_t>(tape_len_) * sizeof(std::int64_t)) == 0) {
      return true;
    }
    if (verdict_only_ && dp > snap_dp_ && low > 0) {
      // Translated repeat: since the snapshot the run stayed at cells >= low (so it never
      // clamped) and consumed no input (',' at EOF reads a constant 0). If the tape from low
      // up, shifted by delta, is what it was, the run from here is the same run shifted
      // right, forever.
      const std::int64_t delta = dp - snap_dp_;
      const std::int64_t shared = std::min(snap_len_, tape_len_ - delta);  // both stored
      bool same = shared >= low && now[dp] == then[snap_dp_] &&
                  std::memcmp(now + low + delta, then + low,
                              static_cast<std::size_t>(shared - low) * sizeof(std::int64_t)) == 0;
      for (std::int64_t x = shared; same && x < snap_len_; ++x) same = then[x] == 0;
      for (std::int64_t x = shared + delta; same && x < tape_len_; ++x) same = now[x] == 0;
      if (same) return true;
    }
  }
  if (++cycle_lambda_ == cycle_power_) {
    snap_point_ = point;
    snap_dp_ = dp;
    snap_len_ = tape_len_;
    snap_input_pos_ = input_pos_;
    snap_steps_ = steps;
    snap_output_len_ = output_.size();
    snap_tape_.assign(tape_.data(), tape_.data() + tape_len_);
    cycle_power_ <<= 1;
    cycle_lambda_ = 0;
    low = dp;
  }
  return false;
}

std::int64_t Machine::simulate_iteration(const Program& program, const Flat& flat, std::int64_t dp, std::int64_t* top) {
  const char* code = program.code_.data() + flat.body_src;
  const std::int64_t base = options_.base;
  const auto need = static_cast<std::size_t>(dp + flat.body_len + 1);
  if (clamp_acc_.size() < need) {
    clamp_acc_.resize(need, 0);
    clamp_set_.resize(need, 0);
  }
  std::int64_t pos = dp;
  std::int64_t high = dp;
  const auto add = [&](std::int64_t amount) {
    std::int64_t& slot = clamp_acc_[static_cast<std::size_t>(pos)];
    if (slot == 0) clamp_touched_.push_back(pos);
    slot = add_in_range(slot, amount, base);
  };
  for (std::int32_t k = 0; k < flat.body_len; ++k) {
    switch (code[k]) {
      case '>':
        high = std::max(high, ++pos);
        break;
      case '<':
        if (pos > 0) --pos;
        break;
      case '+':
        add(1 % base);
        break;
      case '-':
        add(base - 1);
        break;
      case ',':
        clamp_acc_[static_cast<std::size_t>(pos)] = 0;
        clamp_set_[static_cast<std::size_t>(pos)] = 1;
        clamp_touched_.push_back(pos);
        break;
      case '.':
        clamp_out_.push_back(PendingOutput{pos, clamp_acc_[static_cast<std::size_t>(pos)]});
        break;
      default:
        break;
    }
  }
  *top = high;
  return pos;
}

void Machine::clear_clamp_scratch() {
  for (const std::int64_t p : clamp_touched_) {
    clamp_acc_[static_cast<std::size_t>(p)] = 0;
    clamp_set_[static_cast<std::size_t>(p)] = 0;
  }
  clamp_touched_.clear();
  clamp_out_.clear();
}

Machine::ClosedForm Machine::solve_neutral_loop(const Program& program, const Flat& f, std::int64_t dp,
                                                std::int64_t* steps, std::int64_t* low) {
  std::int64_t top = 0;
  if (simulate_iteration(program, f, dp, &top) != dp) {
    clear_clamp_scratch();
    return ClosedForm::kNone;
  }
  const std::int64_t base = options_.base;
  std::int64_t n = 0;
  const bool finite =
      iterations_to_zero(clamp_acc_[static_cast<std::size_t>(dp)], tape_[static_cast<std::size_t>(dp)], base, &n);
  const std::int64_t room = step_limit_ - 1 - *steps;  // steps that stay below the limit
  const bool fits = finite && n <= room / f.iter_cost;
  std::int64_t times = n;
  if (!fits) {
    if (verdict_only_ || step_limit_ == kNoLimit) {
      clear_clamp_scratch();
      return verdict_only_ ? ClosedForm::kNever : ClosedForm::kNone;
    }
    times = room / f.iter_cost;  // the limit falls inside iteration times + 1
  }
  if (top >= tape_len_) {
    if (top >= static_cast<std::int64_t>(tape_.size())) grow_tape(top);
    tape_len_ = top + 1;
  }
  *low = std::min(*low, std::max<std::int64_t>(dp + f.min_pos, 0));
  if (!clamp_out_.empty() && times > 0) {
    // The k-th iteration's j-th '.' prints cell_j + partial_j + k * change_j (mod base).
    const std::size_t dots = clamp_out_.size();
    out_value_.resize(dots);
    for (std::size_t j = 0; j < dots; ++j) {
      const PendingOutput& o = clamp_out_[j];
      out_value_[j] = add_in_range(tape_[static_cast<std::size_t>(o.cell)], o.partial, base);
    }
    output_.reserve(output_.size() + static_cast<std::size_t>(times) * dots);
    for (std::int64_t k = 0; k < times; ++k) {
      for (std::size_t j = 0; j < dots; ++j) {
        output_.push_back(out_value_[j]);
        out_value_[j] = add_in_range(out_value_[j], clamp_acc_[static_cast<std::size_t>(clamp_out_[j].cell)], base);
      }
    }
  }
  clamp_out_.clear();
  const std::int64_t reps = times % base;
  for (const std::int64_t p : clamp_touched_) {
    std::int64_t& amount = clamp_acc_[static_cast<std::size_t>(p)];
    std::int64_t& cell = tape_[static_cast<std::size_t>(p)];
    cell = (cell + reps * amount) % base;
    amount = 0;
  }
  clamp_touched_.clear();
  *steps += times * f.iter_cost;
  return fits ? ClosedForm::kDone : ClosedForm::kPartial;
}

Machine::LoopVerdict Machine::check_flat(const Program& program, const Flat& f, std::int64_t dp, std::int64_t steps) {
  // ',' is only a constant (0) once the input is used up.
  if (f.has_input && input_pos_ < input_size_) return LoopVerdict::kKeep;
  const std::int64_t base = options_.base;
  const std::int64_t room = step_limit_ - 1 - steps;  // steps that stay below the limit
  const std::int64_t v = tape_[static_cast<std::size_t>(dp)];
  if (dp + f.min_pos < 0) {
    // The next iteration clamps at the left edge. If it ends where it started, every later
    // iteration repeats it (moves do not depend on cell values).
    std::int64_t top = 0;
    const bool neutral = simulate_iteration(program, f, dp, &top) == dp;
    const auto at = static_cast<std::size_t>(dp);
    std::int64_t n = 1;
    const bool finite = clamp_set_[at] != 0 ? clamp_acc_[at] == 0 : iterations_to_zero(clamp_acc_[at], v, base, &n);
    clear_clamp_scratch();
    if (!neutral) return LoopVerdict::kKeep;
    return finite && n <= room / f.iter_cost ? LoopVerdict::kEnds : LoopVerdict::kNever;
  }
  if (f.shift == 0) {
    std::int64_t n = 1;
    const bool finite = f.cell0_set ? f.cell0 == 0 : iterations_to_zero(f.cell0, v, base, &n);
    return finite && n <= room / f.iter_cost ? LoopVerdict::kEnds : LoopVerdict::kNever;
  }
  if (f.shift < 0 || !f.march) return LoopVerdict::kDone;
  // Marching right: once the exit cell lies in untouched tape, every later exit test sees
  // exit_cell (no iteration writes a later exit cell).
  if (dp + f.shift < tape_len_) return LoopVerdict::kKeep;
  return f.exit_cell != 0 ? LoopVerdict::kNever : LoopVerdict::kEnds;
}

// ---------------------------------------------------------------------------------------
// Source engine: one dispatch per instruction on the character classes, with the verdict
// checks at back-edges. Every run starts here; long runs move to the op stream.

RunSummary Machine::run_source(const Program& program, std::int64_t switch_at) {
  static_assert(detail::kEndClass == 9, "dispatch table follows CharClass");
  static const void* const kDispatch[] = {&&c_foreign, &&c_plus,  &&c_minus, &&c_right, &&c_left,
                                          &&c_open,    &&c_close, &&c_dot,   &&c_comma, &&c_end};
#define RINGRL_BF_DISPATCH() goto* kDispatch[cls[ip]]
#define RINGRL_BF_STEP()                 \
  do {                                   \
    ++ip;                                \
    if (++steps >= check_at) goto check; \
    RINGRL_BF_DISPATCH();                \
  } while (0)

  const std::uint8_t* cls = program.class_.data();
  const std::int32_t* match = program.match_.data();
  const std::int64_t base = options_.base;
  const std::int64_t limit = step_limit_;
  const bool verdict = verdict_only_;
  std::int64_t* tape = tape_.data();
  std::int64_t dp = 0;
  std::int64_t steps = 0;
  std::int32_t ip = 0;
  std::int64_t check_at = std::min(limit, next_clock_check_);
  std::int32_t ends_open = -1;  // '[' of the loop known to end within the limit
  std::int64_t low = 0;         // lowest cell visited since the last cycle snapshot

  RINGRL_BF_DISPATCH();

c_foreign:
  RINGRL_BF_STEP();
c_plus:
  tape[dp] = tape[dp] < base - 1 ? tape[dp] + 1 : 0;
  RINGRL_BF_STEP();
c_minus:
  tape[dp] = tape[dp] > 0 ? tape[dp] - 1 : base - 1;
  RINGRL_BF_STEP();
c_right:
  if (++dp == tape_len_) {
    if (dp >= static_cast<std::int64_t>(tape_.size())) {
      grow_tape(dp);
      tape = tape_.data();
    }
    ++tape_len_;
  }
  RINGRL_BF_STEP();
c_left:
  dp -= static_cast<std::int64_t>(dp > 0);
  low = std::min(low, dp);
  RINGRL_BF_STEP();
c_dot:
  output_.push_back(tape[dp]);
  RINGRL_BF_STEP();
c_comma:
  tape[dp] = input_pos_ < input_size_ ? input_[input_pos_++] : 0;
  RINGRL_BF_STEP();
c_open:  // always matched (unmatched brackets are classed foreign)
  if (tape[dp] == 0) {
    ip = match[ip];
  } else {
    pending_open_ = ip;
    ends_open = -1;
  }
  RINGRL_BF_STEP();
c_close:
  if (tape[dp] == 0) RINGRL_BF_STEP();
  {
    // Taken back-edge. Its limit check comes first; `check` resumes at the body.
    const std::int32_t open = match[ip];
    ip = open + 1;
    if (++steps >= check_at) goto check;
    if (pending_open_ == open && summary_open_ != open) {
      summary_scratch_.fit(program.size());
      summary_flat_ = detail::summarize_flat(program.code(), open + 1, match[open], base, summary_scratch_, &summary_);
      summary_open_ = open;
    }
    const bool flat = summary_open_ == open && summary_flat_;
    if (flat && !summary_.has_input && (summary_.shift == 0 || dp + summary_.min_pos < 0)) {
      const ClosedForm solved = solve_neutral_loop(program, summary_, dp, &steps, &low);
      tape = tape_.data();
      switch (solved) {
        case ClosedForm::kNone:
          break;
        case ClosedForm::kDone:
          ip = match[open] + 1;
          RINGRL_BF_DISPATCH();
        case ClosedForm::kPartial:
          RINGRL_BF_DISPATCH();
        case ClosedForm::kNever:
          return step_limit_verdict();
      }
    }
    if (verdict && ends_open != open) {
      if (pending_open_ == open) {
        if (!flat) {
          pending_open_ = -1;  // has nested loops: Brent only
        } else {
          switch (check_flat(program, summary_, dp, steps)) {
            case LoopVerdict::kKeep:
              break;
            case LoopVerdict::kDone:
              pending_open_ = -1;
              break;
            case LoopVerdict::kEnds:
              pending_open_ = -1;
              ends_open = open;
              break;
            case LoopVerdict::kNever:
              return step_limit_verdict();
          }
        }
      }
      if (ends_open != open && cycle_power_ != 0 && repeats(ip, dp, steps, low)) {
        return step_limit_verdict();
      }
    }
    if (steps >= switch_at) {
      // Long run: continue on the compiled op stream from the body's first op.
      if (stream_.program_id != program.id()) stream_.build(program);
      dp_ = dp;
      steps_ = steps;
      flat_pending_ = true;
      reset_cycle_detection();
      return run_fast(program, stream_.op_at[static_cast<std::size_t>(ip)]);
    }
    RINGRL_BF_DISPATCH();
  }

check:
  // steps reached check_at after the instruction at ip: timeout first, then the step limit.
  if (steps >= next_clock_check_) {
    next_clock_check_ = steps + kClockCheckInterval;
    if (timed_out()) {
      dp_ = dp;
      steps_ = steps;
      return RunSummary{false, FailureReason::kTimeout, steps};
    }
  }
  if (steps >= limit) {
    dp_ = dp;
    steps_ = steps;
    return RunSummary{false, FailureReason::kStepLimit, steps};
  }
  check_at = std::min(limit, next_clock_check_);
  RINGRL_BF_DISPATCH();

c_end:
  dp_ = dp;
  steps_ = steps;
  return RunSummary{true, FailureReason::kSuccess, steps};
#undef RINGRL_BF_STEP
#undef RINGRL_BF_DISPATCH
}

// ---------------------------------------------------------------------------------------
// Op-stream engine

RunSummary Machine::run_fast(const Program& program, std::int32_t pc) {
  static_assert(static_cast<int>(OpKind::kEnd) == 9, "dispatch table follows OpKind");
  static const void* const kDispatch[] = {&&op_block, &&op_open,       &&op_loop, &&op_scan, &&op_flat_open,
                                          &&op_close, &&op_flat_close, &&op_out,  &&op_in,   &&op_end};
#define RINGRL_BF_NEXT() goto* kDispatch[static_cast<std::size_t>(ops[pc].kind)]

  const Op* ops = stream_.ops.data();
  const Block* blocks = stream_.blocks.data();
  const Delta* deltas = stream_.deltas.data();
  const Loop* loops = stream_.loops.data();
  const Flat* flats = stream_.flats.data();
  const Scan* scans = stream_.scans.data();
  const std::int64_t base = options_.base;
  const std::int64_t limit = step_limit_;
  const bool limited = limit != kNoLimit;
  const bool verdict_only = verdict_only_;
  std::int64_t* tape = tape_.data();
  std::int64_t dp = dp_;
  std::int64_t steps = steps_;
  bool flat_ends = false;  // the flat loop being run is known to end within the limit
  std::int64_t low = 0;    // lowest cell visited since the last cycle snapshot (or lower)

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

  RINGRL_BF_NEXT();

op_block : {
  const Op& op = ops[pc];
  if (steps + op.cost >= limit) goto handoff;
  const Block& b = blocks[op.target];
  low = std::min(low, dp + b.min_pos);
  if (dp + b.min_pos < 0) {
    // The pointer may clamp at the left edge: step through the characters exactly.
    const char* code = program.code_.data();
    for (std::int32_t k = op.src, end = op.src + op.cost; k < end; ++k) {
      switch (code[k]) {
        case '>':
          ensure_cell(++dp);
          break;
        case '<':
          if (dp > 0) --dp;
          break;
        case '+':
          tape[dp] = add_in_range(tape[dp], 1 % base, base);
          break;
        case '-':
          tape[dp] = add_in_range(tape[dp], base - 1, base);
          break;
        default:
          break;
      }
    }
  } else {
    ensure_cell(dp + b.max_pos);
    for (const Delta *d = deltas + b.first_delta, *e = d + b.num_deltas; d != e; ++d) {
      std::int64_t& cell = tape[dp + d->offset];
      cell = add_in_range(cell, d->amount, base);
    }
    dp += b.shift;
  }
  steps += op.cost;
  ++pc;
  RINGRL_BF_NEXT();
}

op_open:
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  pc = tape[dp] == 0 ? ops[pc].target : pc + 1;
  RINGRL_BF_NEXT();

op_flat_open:
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  if (tape[dp] == 0) {
    pc = ops[pc].target;
  } else {
    ++pc;
    flat_pending_ = true;
    flat_ends = false;
  }
  RINGRL_BF_NEXT();

op_loop : {
  if (steps + 1 >= limit) goto handoff;
  const Loop& loop = loops[ops[pc].target];
  const std::int64_t v = tape[dp];
  if (v == 0) {
    ++steps;
    pc = loop.exit;
    RINGRL_BF_NEXT();
  }
  const Block& b = blocks[loop.block];
  if (dp + b.min_pos < 0) {
    // Clamping body: run it as an ordinary loop.
    ++steps;
    ++pc;
    RINGRL_BF_NEXT();
  }
  std::int64_t n = 0;
  const bool finite = iterations_to_zero(loop.step, v, base, &n);
  const std::int64_t after_open = steps + 1;
  const std::int64_t room = limit - 1 - after_open;  // steps that stay below the limit
  std::int64_t times = 0;
  if (finite && n <= room / loop.iter_cost) {
    times = n;
  } else if (verdict_only) {
    return step_limit_verdict();
  } else if (!limited) {
    // Never ends and nothing stops it but a timeout: iterate normally.
    ++steps;
    ++pc;
    RINGRL_BF_NEXT();
  } else {
    times = room / loop.iter_cost;  // the limit falls inside iteration times + 1
  }
  ensure_cell(dp + b.max_pos);
  low = std::min(low, dp + b.min_pos);
  const std::int64_t reps = times % base;
  for (const Delta *d = deltas + b.first_delta, *e = d + b.num_deltas; d != e; ++d) {
    std::int64_t& cell = tape[dp + d->offset];
    cell = (cell + reps * d->amount) % base;
  }
  steps = after_open + times * loop.iter_cost;
  pc = finite && times == n ? loop.exit : pc + 1;
  RINGRL_BF_NEXT();
}

op_scan : {
  if (steps + 1 >= limit) goto handoff;
  const Scan& scan = scans[ops[pc].target];
  if (tape[dp] == 0) {
    ++steps;
    pc = scan.exit;
    RINGRL_BF_NEXT();
  }
  // Iterations that fit below the limit, each moving by scan.shift, until a 0 cell; stop
  // before an iteration that would clamp at the left edge.
  const std::int64_t after_open = steps + 1;
  const std::int64_t max_iters = (limit - 1 - after_open) / scan.iter_cost;
  std::int64_t p = dp;
  std::int64_t k = 0;
  bool found = false;
  if (scan.shift > 0) {
    if (p + scan.min_pos >= 0) {
      while (k < max_iters) {
        p += scan.shift;
        ++k;
        if (p >= tape_len_ || tape[p] == 0) {  // cells past the grown tape are 0
          found = true;
          break;
        }
      }
    }
  } else {
    while (k < max_iters && p + scan.min_pos >= 0) {
      p += scan.shift;
      ++k;
      if (tape[p] == 0) {
        found = true;
        break;
      }
    }
  }
  if (k == 0) {
    ++steps;
    ++pc;
    RINGRL_BF_NEXT();
  }
  ensure_cell((scan.shift > 0 ? p - scan.shift : dp) + scan.max_pos);
  low = std::min(low, (scan.shift > 0 ? dp : p - scan.shift) + scan.min_pos);
  steps = after_open + k * scan.iter_cost;
  dp = p;
  if (found) {
    pc = scan.exit;
  } else {
    if (verdict_only && k == max_iters) return step_limit_verdict();  // the next crosses it
    ++pc;
  }
  RINGRL_BF_NEXT();
}

op_flat_close : {
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  if (tape[dp] == 0) {
    ++pc;
    RINGRL_BF_NEXT();
  }
  const std::int32_t exit = pc + 1;
  const Flat& f = flats[ops[pc].cost];
  pc = ops[pc].target;
  if (!f.has_input && (f.shift == 0 || dp + f.min_pos < 0)) {
    // No ',' and the iteration may be pointer-neutral: if it is, solve it.
    const ClosedForm solved = solve_neutral_loop(program, f, dp, &steps, &low);
    tape = tape_.data();
    switch (solved) {
      case ClosedForm::kNone:
        goto back_edge;
      case ClosedForm::kDone:
        pc = exit;
        RINGRL_BF_NEXT();
      case ClosedForm::kPartial:
        RINGRL_BF_NEXT();
      case ClosedForm::kNever:
        return step_limit_verdict();
    }
  }
  if (verdict_only && flat_pending_) {
    switch (check_flat(program, f, dp, steps)) {
      case LoopVerdict::kKeep:
        break;
      case LoopVerdict::kDone:
        flat_pending_ = false;
        break;
      case LoopVerdict::kEnds:
        flat_pending_ = false;
        flat_ends = true;
        break;
      case LoopVerdict::kNever:
        return step_limit_verdict();
    }
  }
  if (flat_ends) RINGRL_BF_NEXT();
  goto back_edge;
}

op_close:
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  if (tape[dp] == 0) {
    ++pc;
    RINGRL_BF_NEXT();
  }
  pc = ops[pc].target;
back_edge:
  if (steps >= next_clock_check_) {
    next_clock_check_ = steps + kClockCheckInterval;
    if (timed_out()) {
      dp_ = dp;
      steps_ = steps;
      return RunSummary{false, FailureReason::kTimeout, steps};
    }
  }
  if (cycle_power_ != 0 && repeats(pc, dp, steps, low)) {
    // The state repeats: the run loops forever with a period of `period` steps.
    cycle_power_ = 0;
    if (verdict_only) return step_limit_verdict();
    if (limited) {
      const std::int64_t period = steps - snap_steps_;
      const std::int64_t skip = (limit - 1 - steps) / period;
      const std::size_t cycle_begin = snap_output_len_;
      const std::size_t cycle_end = output_.size();
      if (cycle_end > cycle_begin) {
        output_.reserve(cycle_end + static_cast<std::size_t>(skip) * (cycle_end - cycle_begin));
        for (std::int64_t r = 0; r < skip; ++r) {
          for (std::size_t k = cycle_begin; k < cycle_end; ++k) output_.push_back(output_[k]);
        }
      }
      steps += skip * period;
    }
  }
  RINGRL_BF_NEXT();

op_out:
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  output_.push_back(tape[dp]);
  ++pc;
  RINGRL_BF_NEXT();

op_in:
  if (steps + 1 >= limit) goto handoff;
  ++steps;
  tape[dp] = input_pos_ < input_size_ ? input_[input_pos_++] : 0;
  ++pc;
  RINGRL_BF_NEXT();

op_end:
  dp_ = dp;
  steps_ = steps;
  return RunSummary{true, FailureReason::kSuccess, steps};

handoff:
  // The step limit falls within the next op: finish instruction by instruction.
  dp_ = dp;
  steps_ = steps;
  if (verdict_only) return step_limit_verdict();
  return run_plain(program, static_cast<std::size_t>(ops[pc].src));
#undef RINGRL_BF_NEXT
}

RunResult evaluate(std::string_view code, const std::vector<std::int64_t>& input, const RunOptions& options,
                   const std::vector<std::int64_t>& init_memory) {
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
