// Record types carried by the actor rings. Each type's payload layout is defined by the
// component that produces it; this registry only keeps the numbers unique (1..kMaxRecordType).
#pragma once

#include <cstdint>

namespace ringrl {

enum RecordType : std::uint16_t {
  kRecordDemoGradient = 1,    // common/demo/demo_record.h: `ringrl demo`
  kRecordProgramEpisode = 2,  // program synthesis: one sampled and scored program
  kRecordTransition = 3,      // HIRO low level
  kRecordMetaTransition = 4,  // HIRO high level
  kRecordBench = 5,           // `ringrl bench ring`
  kRecordHiroEval = 6,        // HIRO evaluator: one evaluation's results (common/hiro/eval_record.h)
  kRecordGaFitness = 7,       // GA evaluator: the score of one requested genome (common/ga/fitness_record.h)
};

constexpr std::uint64_t record_type_bit(RecordType t) noexcept { return std::uint64_t{1} << t; }

}  // namespace ringrl
