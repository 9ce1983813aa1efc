// The Algorithm interface: how an algorithm plugs into the run driver (learner/run_driver.h).
// An algorithm is five small parts, each an interface of its own: its actor plan (identity,
// sizing, the work gate), its remote hooks (actors on other nodes), its learning, its state,
// and its reporting. Every call comes from the learner process's main thread, in this order per
// repetition: begin_repetition, optionally load (resume), then any interleaving of on_record /
// ready / step / write_blob / reporting, then result. Torch-free: a wing's class may hold
// tensors, the interface does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/actor_launch.h"
#include "common/checkpoint.h"
#include "common/spsc_ring.h"

namespace ringrl::learner {

/// What the driver tells an algorithm when it asks for a metrics row or a progress line.
struct DriverTick {
  std::uint32_t rep = 0;                   // repetition index (global)
  std::uint32_t repetitions = 0;           // repetitions in the run
  std::uint64_t budget = 0;                // budget used in this repetition
  double budget_per_s = 0;                 // since the previous tick
  double updates_per_s = 0;                // learner steps per second since the previous tick
  std::uint64_t lag_p50 = 0, lag_max = 0;  // over the records drained since the previous tick
  double seconds = 0;                      // of this repetition, resumed time included
};

/// What the driver sizes and launches from: constant for a run.
class ActorPlan {
 public:
  virtual ~ActorPlan() = default;

  // --- identity and sizing (constant for a run)
  /// Short name: the checkpoint's algorithm field and the actors' kind, e.g. "pqt".
  virtual std::string name() const = 0;
  /// record_type_bit() of every record type its actors push.
  virtual std::uint64_t record_mask() const = 0;
  /// Data bytes each actor ring needs (the driver rounds up to a power of two).
  virtual std::uint64_t ring_bytes() const = 0;
  /// Bytes of the weight blob.
  virtual std::size_t blob_bytes() const = 0;
  /// The budget's name in results.jsonl and the control-block counter it is mirrored into
  /// ("npe", "env_steps"; any other name, the demo's "records", goes to npe).
  virtual const char* budget_key() const = 0;
  /// Adds kind-specific settings to an actor's launch (kind, segment, slot, seed, config are set).
  virtual void fill_launch(ActorLaunch& /*launch*/) const {}

  // --- the work gate (common/work_gate.h): a bound on what actors sample ahead of the learner
  /// Units of actor work (a unit: records_per_unit() records, e.g. one sampled batch) that
  /// actors may have claimed beyond the units it retired; 0 (the default) = no gate. The driver
  /// feeds gated units in ticket order and grants the units retired (their records all left
  /// the algorithm, or the driver discarded or skipped them) + units_ahead() permits, after
  /// each publication (learner/unit_order.h).
  virtual std::uint64_t units_ahead() const { return 0; }
  /// Records in one unit of actor work (>= 1).
  virtual std::uint64_t records_per_unit() const { return 1; }
  /// Records taken through on_record() that it no longer holds (trained on or discarded),
  /// counted over its whole life in this process (every repetition, never reset).
  virtual std::uint64_t records_retired() const { return 0; }
};

/// Actors on other nodes (RunSettings::remote; learner/actor_source.h).
class RemoteHooks {
 public:
  virtual ~RemoteHooks() = default;

  // --- actors on other nodes (options.remote; learner/actor_source.h)
  /// Actors each remote node runs, given the driver's own slot count (default: as many).
  virtual std::uint32_t actors_per_node(std::uint32_t local_slots) const { return local_slots; }
  /// Called once, before the first repetition, when remote actors join: their slots are
  /// [first, first + count), after the driver's own.
  virtual void add_remote_slots(std::uint32_t /*first*/, std::uint32_t /*count*/) {}
};

/// One repetition: records in, updates, weights out.
class Learning {
 public:
  virtual ~Learning() = default;

  // --- one repetition
  /// Starts repetition `rep` from scratch (a fresh model seeded for `rep`).
  virtual void begin_repetition(std::uint32_t rep) = 0;
  /// Updates made in this repetition (the learner version).
  virtual std::uint64_t version() const = 0;
  /// Takes one record from actor `actor`'s ring, made with learner version `version`. The
  /// bytes are valid only during the call. Throws std::runtime_error for a malformed record.
  virtual void on_record(std::uint32_t actor, const RecordView& record, std::uint64_t version) = 0;
  /// False while it holds as many records as it will take for now: the driver stops draining,
  /// and full rings hold the actors back.
  virtual bool wants_records() const { return true; }
  /// True when step() should run now.
  virtual bool ready() const = 0;
  /// One update (or several: version() counts them); returns true when the weights should be
  /// published now.
  virtual bool step() = 0;
  /// Writes the current weights (blob_bytes() bytes).
  virtual void write_blob(std::byte* dst) const = 0;
  /// Budget used in this repetition, resumed part included.
  virtual std::uint64_t budget_used() const = 0;
  /// The repetition reached the algorithm's success criterion.
  virtual bool solved() const = 0;
};

/// Checkpoints and final models.
class Persistent {
 public:
  virtual ~Persistent() = default;

  // --- state (checkpoints and the final model)
  /// Writes its sections (any names but "run", which is the driver's).
  virtual void save(CheckpointWriter& out) const = 0;
  /// Restores what save() wrote, after begin_repetition(rep) of the same repetition.
  virtual void load(CheckpointReader& in) = 0;
};

/// Metrics rows, the progress line and the results line.
class Reporting {
 public:
  virtual ~Reporting() = default;

  // --- reporting
  /// Column names of its metrics rows; the first is "rep".
  virtual std::vector<std::string> metric_columns() const = 0;
  /// One metrics row, in metric_columns() order.
  virtual std::vector<double> metric_row(const DriverTick& tick) const = 0;
  /// The fields of the progress line.
  virtual std::vector<std::pair<std::string, std::string>> progress_fields(const DriverTick& tick) const = 0;
  /// Its fields of the repetition's results.jsonl line (the driver adds global_rep,
  /// max_global_repetitions, seconds, the budget, solved, summary, budget_key and the identity).
  virtual nlohmann::json result() const = 0;
  /// One human line for the log at the end of a repetition.
  virtual std::string describe_result() const = 0;
};

/// An algorithm: every part. A wing implements one class of this type.
class Algorithm : public ActorPlan, public RemoteHooks, public Learning, public Persistent, public Reporting {};

}  // namespace ringrl::learner
