#include "envs/bf/tasks.h"

#include <algorithm>
#include <stdexcept>

#include "common/errors.h"
#include "envs/bf/machine.h"
#include "envs/bf/py_random.h"

namespace ringrl::bf {
namespace {

using Cells = std::vector<std::int64_t>;
using Cases = std::vector<TestCase>;

constexpr std::int64_t kByteBase = 256;   // base of most tasks
constexpr std::int64_t kLetterBase = 27;  // 0 plus the letters 1..26
constexpr std::int64_t kBoolBase = 2;
constexpr std::size_t kKnownCodeCases = 16;  // n that make_task passes to KC tasks
constexpr std::size_t kSeededCases = 16;     // reverse, remove-char, count-char
constexpr std::size_t kSort3Cases = 150;
constexpr int kSort3Values = 3;
constexpr std::size_t kEchoCases = 25;
constexpr std::size_t kArithmeticCases = 100;  // multiply, divmod
constexpr std::size_t kCircleRouteCases = 109;
constexpr std::int64_t kKnownCodeMaxSteps = 5000;
constexpr std::int64_t kNumpySeedBound = 2147483647;  // dedup: randrange(2**31 - 1)
constexpr std::int64_t kSpace = 27;                   // split: the separator "letter"
constexpr std::size_t kSplitGroup = 3;
constexpr char kQuote = '"';

// --- Case generators -------------------------------------------------------------------

Cells reversed_plus_zero(Cells x) {
  std::reverse(x.begin(), x.end());
  x.push_back(0);
  return x;
}

Cases make_reverse() {
  Py2Random rng(kTaskSeed);
  Cases cases;
  for (std::size_t c = 0; c < kSeededCases; ++c) {
    const std::int64_t length = rng.randrange(1, 7);
    Cells input;
    for (std::int64_t k = 0; k < length; ++k) input.push_back(rng.randrange(1, 256));
    cases.push_back({input, reversed_plus_zero(input)});
  }
  return cases;
}

Cases make_remove_char() {
  Py2Random rng(kTaskSeed);
  Cases cases;
  for (std::size_t c = 0; c < kSeededCases; ++c) {
    const std::int64_t length = rng.randrange(1, 7);
    const std::int64_t pos = rng.randrange(0, length);
    Cells input;
    for (std::int64_t k = 0; k < length; ++k) input.push_back(rng.randrange(1, 256));
    input[static_cast<std::size_t>(pos)] = 1;
    Cells output = input;
    output.erase(output.begin() + pos);
    output.push_back(0);
    cases.push_back({input, output});
  }
  return cases;
}

Cases make_count_char() {
  Cases cases = {
      {{10, 0}, {0}}, {{1, 0}, {1}}, {{1, 1, 0}, {2}}, {{9, 4, 19, 11, 5, 0}, {0}}, {{24, 11, 26, 1, 15, 0}, {1}},
  };
  Py2Random rng(kTaskSeed);
  Cells others;
  for (std::int64_t v = 2; v < kLetterBase; ++v) others.push_back(v);
  const auto num_others = static_cast<std::int64_t>(others.size());
  while (cases.size() < kSeededCases) {
    const std::int64_t length = rng.randrange(2, 7);
    const std::int64_t count = rng.randrange(0, 7);
    Cells input(static_cast<std::size_t>(count), 1);
    input.resize(static_cast<std::size_t>(count + std::max<std::int64_t>(length - count, 0)), 0);
    rng.shuffle(input);
    for (std::int64_t& v : input) {
      if (v == 0) v = others[static_cast<std::size_t>(rng.randrange(num_others))];
    }
    cases.push_back({input, {count}});
  }
  return cases;
}

Cases make_add() {
  return {{{4, 0}, {4, 0}},       {{0, 5}, {5, 0}},     {{1, 2}, {3, 0}},
          {{67, 21}, {88, 0}},    {{55, 56}, {111, 0}}, {{128, 33}, {161, 0}},
          {{221, 251}, {216, 0}}, {{130, 127}, {1, 0}}, {{255, 1}, {0, 0}}};
}

Cases make_bool_logic() {
  Cases cases;
  for (std::int64_t x = 0; x < kBoolBase; ++x) {
    for (std::int64_t y = 0; y < kBoolBase; ++y) {
      for (std::int64_t z = 0; z < kBoolBase; ++z) {
        const bool f = (x && !z) || (!y && !z) || (!x && y && z);
        cases.push_back({{x, y, z}, {f ? 1 : 0}});
      }
    }
  }
  return cases;
}

Cases make_print_hello() { return {{{}, {8, 5, 12, 12, 15}}}; }
Cases make_print() { return {{{}, {1, 2, 3, 4, 5}}}; }

Cases make_echo() {
  NumpyRandomState rng(kEchoNumpySeed);
  Cases cases;
  for (std::size_t c = 0; c < kEchoCases; ++c) {
    const std::int64_t length = rng.randint(1, 7);
    Cells input;
    for (std::int64_t k = 0; k < length; ++k) input.push_back(rng.randint(1, kLetterBase));
    input.push_back(0);
    cases.push_back({input, input});
  }
  return cases;
}

Cases make_reverse_tune() {
  return {{{7, 0}, {7, 0}},
          {{6, 2, 0}, {2, 6, 0}},
          {{5, 1, 10, 0}, {10, 1, 5, 0}},
          {{8, 6, 5, 15, 0}, {15, 5, 6, 8, 0}},
          {{10, 12, 5, 2, 7, 0}, {7, 2, 5, 12, 10, 0}}};
}

Cases make_remove_char_tune() {
  return {{{1, 0}, {0}},
          {{20, 1, 0}, {20, 0}},
          {{1, 13, 0}, {13, 0}},
          {{6, 1, 17, 0}, {6, 17, 0}},
          {{1, 11, 24, 0}, {11, 24, 0}},
          {{2, 16, 21, 1, 0}, {2, 16, 21, 0}},
          {{18, 1, 12, 26, 7, 0}, {18, 12, 26, 7, 0}},
          {{9, 10, 22, 1, 4, 0}, {9, 10, 22, 4, 0}}};
}

Cases make_prefix() {
  return {{{12, 24, 18, 0, 12, 5, 0}, {12, 0}},
          {{1, 2, 3, 0, 1, 2, 17, 14, 0}, {1, 2, 0}},
          {{15, 2, 1, 9, 2, 0, 15, 2, 1, 25, 8, 14, 0}, {15, 2, 1, 0}},
          {{14, 9, 7, 8, 6, 16, 0, 14, 9, 7, 8, 8, 6, 8, 26, 0}, {14, 9, 7, 8, 0}},
          {{12, 4, 16, 22, 1, 17, 0, 12, 4, 16, 22, 1, 8, 10, 0}, {12, 4, 16, 22, 1, 0}}};
}

Cases make_find() {
  const std::vector<Cells> no = {{1, 1, 23, 0}, {21, 3, 2, 0}, {2, 1, 19, 0}, {2, 24, 15, 3, 0}, {24, 6, 10, 16, 4, 0}};
  const std::vector<Cells> yes = {{1, 2, 12, 0},    {7, 1, 2, 0},        {1, 2, 11, 3, 0},     {1, 1, 2, 18, 0},
                                  {7, 25, 1, 2, 0}, {3, 1, 2, 11, 8, 0}, {15, 16, 20, 1, 2, 0}};
  Cases cases;
  for (const Cells& input : no) cases.push_back({input, {0}});
  for (const Cells& input : yes) cases.push_back({input, {1}});
  return cases;
}

Cases make_sort3() {
  Py2Random rng(kTaskSeed);
  Cases cases;
  for (std::size_t c = 0; c < kSort3Cases; ++c) {
    Cells input;
    for (int k = 0; k < kSort3Values; ++k) input.push_back(rng.randrange(1, kLetterBase));
    Cells output = input;
    std::sort(output.begin(), output.end());
    cases.push_back({input, output});
  }
  return cases;
}

Cases make_fib() {
  constexpr std::int64_t kFibCases = 14;
  Cases cases;
  std::int64_t a = 0;  // F(k)
  std::int64_t b = 1;  // F(k+1)
  for (std::int64_t k = 0; k < kFibCases; ++k) {
    cases.push_back({{k}, {a % kByteBase, b % kByteBase}});
    const std::int64_t next = a + b;
    a = b;
    b = next;
  }
  return cases;
}

Cases make_count_down() {
  constexpr std::int64_t kMaxCount = 6;
  Cases cases;
  for (std::int64_t k = 1; k <= kMaxCount; ++k) {
    Cells output;
    for (std::int64_t v = k; v >= 1; --v) {
      output.push_back(v);
      output.push_back(0);
    }
    cases.push_back({{k}, output});
  }
  return cases;
}

Cells letters(std::string_view word) {
  Cells cells;
  for (const char ch : word) cells.push_back(ch - 'a' + 1);
  return cells;
}

Cases make_split() {
  Cases cases;
  for (const std::string_view word : {"hello", "orange", "spaghetti", "wins", "one"}) {
    const Cells input = letters(word);
    Cells output;
    for (std::size_t k = 0; k < input.size(); ++k) {
      if (k > 0 && k % kSplitGroup == 0) output.push_back(kSpace);
      output.push_back(input[k]);
    }
    cases.push_back({input, output});
  }
  return cases;
}

Cases make_trim_left() {
  Cases cases;
  for (const std::string_view text :
       {"a \"inside\" over", "xy \"test\" rights", "ca6 \"foresting\" service", "abc\"def\"yz.", "A\"B\""}) {
    Cells input(text.begin(), text.end());
    Cells output(text.begin() + static_cast<std::ptrdiff_t>(text.find(kQuote)), text.end());
    cases.push_back({input, output});
  }
  return cases;
}

Cases make_circle_route() {
  constexpr std::int64_t kUp = 1, kRight = 2, kDown = 3, kLeft = 4;
  constexpr std::int64_t kMaxMoves = 33;  // randrange(1, 33)
  Cases cases = {{{0}, {1}},    {{4, 2, 0}, {1}}, {{2, 4, 0}, {1}}, {{3, 1, 0}, {1}}, {{1, 3, 0}, {1}},
                 {{1, 0}, {0}}, {{2, 0}, {0}},    {{3, 0}, {0}},    {{4, 0}, {0}}};
  Py2Random rng(kTaskSeed);
  while (cases.size() < kCircleRouteCases) {
    const bool balanced = rng.randrange(2) != 0;
    std::int64_t length = rng.randrange(1, kMaxMoves);
    std::int64_t count[kLeft + 1] = {0, 0, 0, 0, 0};  // indexed by move code
    if (balanced) {
      length &= ~std::int64_t{1};
      const std::int64_t p = rng.randrange(length + 1) & ~std::int64_t{1};
      count[kUp] = count[kDown] = p / 2;
      count[kRight] = count[kLeft] = (length - p) / 2;
    } else {
      std::int64_t cuts[3];
      for (std::int64_t& cut : cuts) cut = rng.randrange(length + 1);
      std::sort(std::begin(cuts), std::end(cuts));
      const std::int64_t bounds[5] = {0, cuts[0], cuts[1], cuts[2], length};
      for (std::int64_t m = kUp; m <= kLeft; ++m) count[m] = bounds[m] - bounds[m - 1];
      if (count[kUp] == count[kDown] && count[kRight] == count[kLeft]) {
        // Accidentally balanced: move one step between a neighbouring pair of directions.
        const std::int64_t b = 1 + 2 * rng.randrange(2);
        std::int64_t a = b + 1;
        std::int64_t c = b;
        if (rng.randrange(2) != 0) {
          a = b;
          c = b + 1;
        }
        if (count[a] == length || count[c] == 0) std::swap(a, c);
        ++count[a];
        --count[c];
      }
    }
    Cells input;
    for (std::int64_t m = kUp; m <= kLeft; ++m) input.insert(input.end(), count[m], m);
    rng.shuffle(input);
    input.push_back(0);
    const bool home = count[kUp] == count[kDown] && count[kRight] == count[kLeft];
    cases.push_back({input, {home ? 1 : 0}});
  }
  return cases;
}

Cases make_multiply() {
  Py2Random rng(kTaskSeed);
  Cases cases;
  for (std::size_t c = 0; c < kArithmeticCases; ++c) {
    const std::int64_t v = rng.randrange(kByteBase);
    std::int64_t a = 0;
    std::int64_t b = 0;
    if (v == 0) {
      b = rng.randrange(kByteBase);
    } else {
      // Divisors up to sqrt(v), listed in the order a CPython 2.7 set iterates them.
      Cells divisors;
      for (std::int64_t d = 1; d * d <= v; ++d) {
        if (v % d == 0) divisors.push_back(d);
      }
      const Cells factors = py2_set_order(divisors);
      a = factors[static_cast<std::size_t>(rng.randrange(static_cast<std::int64_t>(factors.size())))];
      b = v / a;
    }
    if (rng.randrange(2) != 0) std::swap(a, b);
    cases.push_back({{a, b}, {v}});
  }
  return cases;
}

Cases make_divmod() {
  Py2Random rng(kTaskSeed);
  Cases cases;
  for (std::size_t c = 0; c < kArithmeticCases; ++c) {
    const std::int64_t x = rng.randrange(0, kByteBase);
    const std::int64_t k = rng.randrange(1, kByteBase);
    cases.push_back({{x, k}, {x / k, x % k}});
  }
  return cases;
}

// --- Known-code tasks --------------------------------------------------------------------

// How a known-code task draws its inputs.
enum class InputGen {
  kDefault,  // L = randrange(lo, hi + 1) values randrange(value_bound)
  kEchoSecondSeq,
  kEchoNthSeq,
  kSubstring,
  kDivide2,
  kDedup,
  kRemoveTargetChar,
  kListIndex,
};

struct KnownCode {
  std::string_view code;
  InputGen gen = InputGen::kDefault;
  std::int64_t max_length = 6;     // "max m"
  std::int64_t value_bound = 256;  // "in-base b"
};

void append_values(Py2Random& rng, Cells& cells, std::int64_t count, std::int64_t bound) {
  for (std::int64_t k = 0; k < count; ++k) cells.push_back(rng.randrange(bound));
}

Cells known_code_input(Py2Random& rng, const KnownCode& kc) {
  Cells input;
  switch (kc.gen) {
    case InputGen::kDefault: {
      const std::int64_t length = rng.randrange(1, kc.max_length + 1);
      append_values(rng, input, length, kc.value_bound);
      break;
    }
    case InputGen::kEchoSecondSeq: {
      Cells x, y;
      append_values(rng, x, rng.randrange(1, 6), kByteBase);
      append_values(rng, y, rng.randrange(1, 6), kByteBase);
      input = x;
      input.push_back(0);
      input.insert(input.end(), y.begin(), y.end());
      input.push_back(0);
      break;
    }
    case InputGen::kEchoNthSeq: {
      const std::int64_t k = rng.randrange(1, 7);
      const std::int64_t m = rng.randrange(1, k + 1);
      input.push_back(m);
      for (std::int64_t s = 0; s < k; ++s) {
        append_values(rng, input, rng.randrange(0, 4), kByteBase);
        input.push_back(0);
      }
      break;
    }
    case InputGen::kSubstring: {
      const std::int64_t length = rng.randrange(2, 16);
      const std::int64_t a = rng.randrange(length);
      const std::int64_t b = rng.randrange(length);
      const std::int64_t i = std::min(a, b);
      const std::int64_t j = std::max(a, b);
      input = {i, j - i};
      append_values(rng, input, length, kByteBase);
      input.push_back(0);
      break;
    }
    case InputGen::kDivide2:
      input.push_back(rng.randrange(kByteBase));
      break;
    case InputGen::kDedup: {
      constexpr std::int64_t kDistinctValues = 6;
      NumpyRandomState np(static_cast<std::uint32_t>(rng.randrange(kNumpySeedBound)));
      const std::int64_t unique = rng.randrange(1, 5);
      for (const std::int64_t v : np.choice_without_replacement(kDistinctValues, unique)) {
        input.insert(input.end(), static_cast<std::size_t>(rng.randrange(1, 5)), v + 1);
      }
      input.push_back(0);
      break;
    }
    case InputGen::kRemoveTargetChar: {
      constexpr std::int64_t kValueBound = 255;
      const std::int64_t target = rng.randrange(1, 6);
      const std::int64_t length = rng.randrange(1, 8);
      Cells values;
      for (std::int64_t k = 0; k < length; ++k) {
        const std::int64_t x = rng.randrange(1, kValueBound);
        values.push_back(x >= target ? x + 1 : x);
      }
      std::vector<std::size_t> index(static_cast<std::size_t>(length));
      for (std::size_t k = 0; k < index.size(); ++k) index[k] = k;
      rng.shuffle(index);
      const std::int64_t hits = rng.randrange(0, length);
      for (std::int64_t k = 0; k < hits; ++k) values[index[static_cast<std::size_t>(k)]] = target;
      input.push_back(target);
      input.insert(input.end(), values.begin(), values.end());
      input.push_back(0);
      break;
    }
    case InputGen::kListIndex: {
      const std::int64_t length = rng.randrange(1, 16);
      input.push_back(rng.randrange(length));
      append_values(rng, input, length, kByteBase);
      input.push_back(0);
      break;
    }
  }
  return input;
}

Cases make_known_code(const KnownCode& kc) {
  Py2Random rng(kTaskSeed);
  RunOptions options;
  options.base = kByteBase;
  options.max_steps = kKnownCodeMaxSteps;
  options.require_correct_syntax = false;
  Machine machine(options);
  Program program(kc.code, kByteBase);
  Cases cases;
  for (std::size_t c = 0; c < kKnownCodeCases; ++c) {
    Cells input = known_code_input(rng, kc);
    const RunSummary run = machine.run(program, input.data(), input.size());
    if (!run.success) {
      throw std::logic_error("bf: reference program " + std::string(kc.code) + " failed (" +
                             std::string(to_string(run.reason)) + ")");
    }
    cases.push_back({std::move(input), machine.output()});
  }
  return cases;
}

// --- The registry ------------------------------------------------------------------------

struct Entry {
  TaskInfo info;
  Cases (*make)();  // fixed or seeded generator; null for known-code tasks
  KnownCode known;  // used when make is null
};

Entry generated(TaskInfo info, Cases (*make)()) { return Entry{info, make, KnownCode{}}; }
Entry known(TaskInfo info, KnownCode code) { return Entry{info, nullptr, code}; }

const std::vector<Entry>& entries() {
  using G = InputGen;
  static const std::vector<Entry> table = {
      // The 26 tasks of the ICLR paper, in the paper's order.
      generated({"reverse", 256, 16, "reverse the input, then print 0", true}, make_reverse),
      generated({"remove-char", 256, 16, "drop the one forced 1 from the input, then print 0", true}, make_remove_char),
      generated({"count-char", 27, 16, "print the number of 1s in the input", true}, make_count_char),
      generated({"add", 256, 9, "print (a + b) mod 256, then 0", true}, make_add),
      generated({"bool-logic", 2, 8, "print (x and not z) or (not y and not z) or (not x and y and z)", true},
                make_bool_logic),
      generated({"print-hello", 27, 1, "print 'hello' as letters 1..26", true}, make_print_hello),
      known({"echo-twice", 256, 16, "known code: echo the input twice", true}, {">,.[>,.]<[<]>[.>]."}),
      known({"echo-thrice", 256, 16, "known code: echo the input three times", true}, {">,.[>,.]<[<]>[.>].<[<]>[.>]."}),
      known({"copy-reverse", 256, 16, "known code: echo, reverse, echo", true}, {">,.[>,.]<[.<].>[.>]."}),
      known({"zero-cascade", 256, 16, "known code: value k followed by k-1 zeros", true},
            {",[.>[->+>.<<]>+[-<+>]<<,]"}),
      known({"cascade", 256, 16, "known code: value k printed k times, then 0", true},
            {",>>+<<[>>[-<+>]<[->+<<.>]>+<<,].", G::kDefault, 6, 20}),
      known({"shift-left", 256, 16, "known code: rotate left by one, then 0", true}, {",>,[.,]<.,."}),
      known({"shift-right", 256, 16, "known code: rotate right by one, then 0", true}, {">,[>,]<.[-]<[<]>[.>]."}),
      known({"riffle", 256, 16, "known code: last, first, 2nd-last, 2nd, ...", true},
            {">,[>,]<[.[-]<[<]>.[-]>[>]<]", G::kDefault, 8, 20}),
      known({"unriffle", 256, 16, "known code: odd positions, then even positions reversed", true},
            {">,[>,[.[-]],]<[.<].", G::kDefault, 8, 20}),
      known({"middle-char", 256, 16, "known code: the middle value of an odd-length input", true},
            {">,[>,]<<[[>]<[,<[<]>,>[>]][>]<<]>.", G::kDefault, 10, 256}),
      known({"remove-last", 256, 16, "known code: drop the last value, then 0", true},
            {",>,[[<.[-]>[-<+>]],].", G::kDefault, 6, 20}),
      known({"remove-last-two", 256, 16, "known code: drop the last two values, then 0", true},
            {",>,>,[[<<.[-]>[-<+>]>[-<+>]],].", G::kDefault, 6, 10}),
      known({"echo-alternating", 256, 16, "known code: even indices, then odd indices, then 0", true},
            {">,[.,>,]<<[<]>[.>].", G::kDefault, 8, 20}),
      known({"echo-half", 256, 16, "known code: the first half of the input, then 0", true},
            {">>+>,[[<]>+[>],]<[<]>-[-[-<<+>]<[>]>]<<[->+<]>[[>]>.,<+[<]>-].", G::kDefault, 9, 20}),
      known({"length", 256, 16, "known code: print the input's length", true},
            {">+>,[[<]>+[>],]<[<]>-.", G::kDefault, 14, 256}),
      known({"echo-second-seq", 256, 16, "known code: echo the second 0-terminated list", true},
            {",[,],[.,].", G::kEchoSecondSeq}),
      known({"echo-nth-seq", 256, 16, "known code: echo the m-th 0-terminated list", true},
            {",-[->,[,]<],[.,].", G::kEchoNthSeq}),
      known({"substring", 256, 16, "known code: print len values from index i", true},
            {">,<,>[->,<]>,<<[->>.,<<]", G::kSubstring}),
      known({"divide-2", 256, 16, "known code: print v div 2", true}, {",[-[->>+<]>[<]<]>>.", G::kDivide2}),
      known({"dedup", 256, 16, "known code: collapse runs of equal values, then 0", true},
            {">>,.[[-<+<+>>],[-<->]<[[-<->]<.>]<[->>+<<]>>]", G::kDedup}),
      // The other registered tasks.
      generated({"print", 256, 1, "print 1, 2, 3, 4, 5", false}, make_print),
      generated({"echo", 27, 25, "echo the 0-terminated input", false}, make_echo),
      generated({"reverse-tune", 256, 5, "reverse a 0-terminated list (tuning set)", false}, make_reverse_tune),
      generated({"remove-char-tune", 27, 8, "remove the 1 from a 0-terminated list (tuning set)", false},
                make_remove_char_tune),
      generated({"prefix", 27, 5, "common prefix of two 0-terminated lists, then 0", false}, make_prefix),
      generated({"find", 27, 12, "print 1 iff the input contains 1, 2 adjacent", false}, make_find),
      generated({"sort3", 27, 150, "sort three values ascending", false}, make_sort3),
      generated({"fib", 256, 14, "print F(k), F(k+1) mod 256", false}, make_fib),
      generated({"count-down", 256, 6, "print k, 0, k-1, 0, ..., 1, 0", false}, make_count_down),
      generated({"split", 256, 5, "insert 27 after every third letter", false}, make_split),
      generated({"trim-left", 256, 5, "print the suffix from the first quote", false}, make_trim_left),
      generated({"circle-route", 256, 109, "print 1 iff the U/R/D/L walk returns home", false}, make_circle_route),
      generated({"multiply", 256, 100, "print a * b", false}, make_multiply),
      generated({"divmod", 256, 100, "print x div k, x mod k", false}, make_divmod),
      known({"remove-target-char", 256, 16, "known code: drop every copy of the target value", false},
            {",>>>,[<<<[->+>+<<]>>[->->+<<]>[>[-<+>]<.[-]]>[-]<<<[-<+>]>>,].", G::kRemoveTargetChar}),
      known({"list-index", 256, 16, "known code: print the value at index i", false}, {",[->,<]>,.", G::kListIndex}),
  };
  return table;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<TaskInfo>& task_table() {
  static const std::vector<TaskInfo> infos = [] {
    std::vector<TaskInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

std::vector<std::string_view> closest_task_names(std::string_view name, std::size_t limit) {
  std::vector<std::pair<std::size_t, std::string_view>> ranked;
  for (const Entry& e : entries()) ranked.emplace_back(edit_distance(name, e.info.name), e.info.name);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string_view> names;
  for (std::size_t k = 0; k < ranked.size() && k < limit; ++k) names.push_back(ranked[k].second);
  return names;
}

Task make_task_cases(std::string_view name) {
  constexpr std::size_t kSuggestions = 3;
  for (const Entry& e : entries()) {
    if (e.info.name != name) continue;
    Task task;
    task.name = std::string(e.info.name);
    task.base = e.info.base;
    task.description = std::string(e.info.description);
    task.paper = e.info.paper;
    task.cases = e.make != nullptr ? e.make() : make_known_code(e.known);
    return task;
  }
  std::string message = "bf: unknown task '" + std::string(name) + "'; closest:";
  for (const std::string_view close : closest_task_names(name, kSuggestions)) {
    message += " " + std::string(close);
  }
  message += " (`ringrl bf tasks` lists all)";
  throw UsageError(message);
}

}  // namespace ringrl::bf
