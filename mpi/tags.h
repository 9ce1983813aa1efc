// The MPI tags of every ringrl message: the one list, so no two protocols can share a tag.
// MPI orders messages per (source, tag), so each ordered stream has a tag of its own.
#pragma once

namespace ringrl::mpi {

enum Tag : int {
  // The job protocol (mpi/job_messages.h): hello, welcome, start, exit, signal, finish.
  kHello = 101,
  kWelcome = 102,
  kStart = 103,
  kExit = 104,
  kSignal = 105,
  kFinish = 106,
  // The record link (mpi/record_link.h): record batches up, credits down.
  kRecordBatch = 201,
  kRecordCredit = 202,
  // The node bridge (mpi/node_bridge.cc). Rank 0 -> node messages share kBridgeControl, so
  // permits never overtake the weights they follow.
  kBridgeControl = 302,
  kBridgeStatus = 305,
  // `bench link` (app/link_bench_cmd.cc).
  kBenchReply = 401,  // a rank has the blob
  kBenchBlob = 402,   // the blob, sent to one rank
  kBenchDone = 403,   // rank 0 to the producers: stop
  kBenchFanout = 404, // the weight fan-out's messages (mpi/weight_fanout.h)
};

}  // namespace ringrl::mpi
