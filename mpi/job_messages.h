// The job protocol: how rank 0 hands whole runs (tune's trials, train's repetitions) to the
// other ranks of an MPI job, and how their results come back.
//
// Rank 0 is the dispatcher; every other rank is a worker that runs child processes of this
// binary (each a complete single-node `ringrl train ...`) in its node directory.
//   all           a broadcast of rank 0's session token, which rank 0 wrote into its session
//                 directory: a worker that finds it in its node directory shares that directory
//   worker -> 0   kHello    version, settings fingerprint, host, its run slots (devices), shared
//   0 -> worker   kWelcome  accepted, or the one-line reason the job is refused
//   0 -> worker   kStart    job id, slot, the child's arguments, its run directory (relative to
//                           the node directory) and the files rank 0 already holds for it
//   worker -> 0   kExit     job id, the child's wait status, the files of its run directory
//   0 -> worker   kSignal   forward this signal to the job's child (SIGINT/SIGTERM: checkpoint, stop)
//   0 -> worker   kFinish   no more jobs: the worker exits
//
// Contract:
// * encode_*() and decode_*() are pure; decode_*() reads only inside the bytes it is given and
//   throws CorruptData("<what>: <why>") for anything malformed: a wrong magic, protocol
//   version or kind, a length beyond the end or beyond its bound, trailing bytes, or a file
//   name that would leave its directory (see is_plain_file_name()).
// * read_run_files()/write_run_files() move the regular files of one run directory (not its
//   subdirectories); write_run_files() writes each file atomically and only under `dir`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mpi/tags.h"

namespace ringrl::mpi {

inline constexpr std::uint32_t kJobMagic = 0x424f4a52;  // "RJOB"
inline constexpr std::uint16_t kJobProtocolVersion = 4;  // 2: the node bridge's messages joined; 3: a failed bridge's error, a rank's own error in its hello; 4: lost units by ticket
inline constexpr std::uint64_t kMaxTextChars = 1 << 16;      // one argument, name, host, error
inline constexpr std::uint64_t kMaxListItems = 1 << 12;      // arguments, slots, files
inline constexpr std::uint64_t kMaxFileNameChars = 255;      // a file name (no directories)

/// One file of a run directory: its name inside the directory and its bytes.
struct FileBlob {
  std::string name;
  std::string bytes;
};

struct Hello {
  std::string version;            // ringrl's version string
  std::uint64_t fingerprint = 0;  // of the command line every rank must share
  std::string host;
  std::vector<std::string> slots;  // one device per run slot: "cpu", "cuda:0", ...
  bool shared = false;             // its node directory is rank 0's session directory
  std::string error;               // a check of its own failed (a per-host preflight): rank 0 refuses the job
};

struct Welcome {
  std::string error;  // empty: accepted
};

struct StartJob {
  std::uint64_t job = 0;
  std::uint32_t slot = 0;
  std::vector<std::string> args;  // after the executable; "--run-dir" is followed by `dir`
  std::string dir;                // relative to the worker's node directory
  std::vector<FileBlob> seeds;    // written where the worker has no such file
};

struct JobExit {
  std::uint64_t job = 0;
  std::int32_t wait_status = 0;  // as waitpid() gave it
  std::vector<FileBlob> files;   // the run directory (empty when rank 0 shares it)
};

struct SignalJobs {
  std::uint64_t job = 0;
  std::int32_t signal = 0;
};

/// Rank 0 -> a node bridge, on kBridgeControl (mpi/node_bridge.h): what a message carries.
enum class BridgeControlKind : std::uint16_t { kPlan = 7, kWeights = 8, kPermits = 9, kBudget = 10, kStop = 11 };

/// What a node runs: its segment's shape, its actors' launches and the run's resolved config.
struct BridgePlan {
  std::uint32_t actors = 0;
  std::uint64_t ring_capacity = 0, blob_bytes = 0, record_mask = 0;
  std::string budget_counter;                      // "npe" or "env_steps": the control-block counter
  std::string config;                              // the run's resolved config.json, as text
  std::vector<std::vector<std::string>> launches;  // per actor: ActorLaunch::to_args() (common/actor_launch.h)
};

/// One control message. kWeights: channel_version, count (the node's permits), budget and
/// blob (a view into the decoded bytes); kPermits, kBudget: count; kPlan: plan; kStop: nothing.
struct BridgeControl {
  BridgeControlKind kind = BridgeControlKind::kStop;
  BridgePlan plan;
  std::uint64_t channel_version = 0, count = 0, budget = 0;
  std::string_view blob;
};

/// A node bridge -> rank 0, on kBridgeStatus.
struct BridgeStatus {
  std::uint32_t running = 0, restarts = 0;
  bool failed = false;   // every actor of the node is down for good
  bool final = false;    // the bridge's last word
  std::int32_t signal = 0;  // on the final status: the signal that stopped the bridge, or 0
  /// Node-local tickets of the units its actors died holding (common/lost_work.h), since its
  /// previous status.
  std::vector<std::uint64_t> lost_units;
  std::string error;        // on the final status: why the bridge failed ("" when it did not)
};

std::string encode(const BridgePlan& m);
std::string encode_weights(std::uint64_t channel_version, std::uint64_t permits, std::uint64_t budget,
                           const std::byte* blob, std::size_t bytes);
std::string encode_count(BridgeControlKind kind, std::uint64_t count);  // kPermits or kBudget
std::string encode_stop();
std::string encode(const BridgeStatus& m);

std::string encode(const Hello& m);
std::string encode(const Welcome& m);
std::string encode(const StartJob& m);
std::string encode(const JobExit& m);
std::string encode(const SignalJobs& m);
std::string encode_finish();

/// Each throws CorruptData naming `from` (e.g. "rank 2") and the message.
Hello decode_hello(std::string_view bytes, const std::string& from);
Welcome decode_welcome(std::string_view bytes, const std::string& from);
StartJob decode_start(std::string_view bytes, const std::string& from);
JobExit decode_exit(std::string_view bytes, const std::string& from);
SignalJobs decode_signal(std::string_view bytes, const std::string& from);
void decode_finish(std::string_view bytes, const std::string& from);
/// A control message of any kind; the blob of a kWeights message is a view into `bytes`.
BridgeControl decode_control(std::string_view bytes, const std::string& from);
BridgeStatus decode_status(std::string_view bytes, const std::string& from);

/// This build's version (the project version and kJobProtocolVersion).
std::string build_version();
/// Why rank `rank`'s hello does not fit rank 0's own (`mine`), as one line; empty when it fits.
std::string refusal(const Hello& got, const Hello& mine, int rank);

/// A name that stays in its directory: 1 to 255 characters, no '/', no NUL, not "." or "..".
bool is_plain_file_name(std::string_view name) noexcept;
/// A relative path of plain names ("trial_3/reverse-tune"): never absolute, never "..".
bool is_plain_relative_path(std::string_view path) noexcept;

/// The regular files directly in `dir`, by name, without temporaries (".tmp." in the name);
/// a file that would take the total past `max_total_bytes` is left out and named in `left_out`.
std::vector<FileBlob> read_run_files(const std::filesystem::path& dir, std::uint64_t max_total_bytes,
                                     std::vector<std::string>* left_out = nullptr);
/// Writes each file into `dir` (created), atomically; with `only_missing`, leaves existing files.
void write_run_files(const std::filesystem::path& dir, const std::vector<FileBlob>& files, bool only_missing);

/// FNV-1a of the strings (with their lengths): a command line's fingerprint.
std::uint64_t fingerprint(const std::vector<std::string>& parts) noexcept;

}  // namespace ringrl::mpi
