#include "mpi/weight_fanout.h"

#include "mpi/job_messages.h"

namespace ringrl::mpi {

WeightFanout::WeightFanout(Comm& comm, std::vector<int> ranks, int tag) : comm_(comm), tag_(tag) {
  for (int r : ranks) nodes_.push_back(Node{r, 0, false});
}

void WeightFanout::send_weights(std::size_t k, const Permits& permits) {
  Node& n = nodes_[k];
  std::string m = encode_weights(version_, permits(k), budget_, blob_.data(), blob_.size());
  ++weights_sent_;
  bytes_sent_ += m.size();
  n.ticket = comm_.post(n.rank, tag_, std::move(m));
  n.behind = false;
}

void WeightFanout::publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version,
                           std::uint64_t budget, const Permits& permits) {
  blob_.assign(blob, blob + bytes);
  version_ = channel_version;
  budget_ = budget;
  published_ = true;
  comm_.progress();
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (comm_.in_flight(nodes_[k].ticket))
      nodes_[k].behind = true;
    else
      send_weights(k, permits);
  }
}

void WeightFanout::grant(const Permits& permits) {
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (!nodes_[k].behind) comm_.post(nodes_[k].rank, tag_, encode_count(BridgeControlKind::kPermits, permits(k)));
}

void WeightFanout::pump(const Permits& permits) {
  if (!published_ || behind() == 0) return;
  comm_.progress();
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (nodes_[k].behind && !comm_.in_flight(nodes_[k].ticket)) send_weights(k, permits);
}

std::size_t WeightFanout::behind() const noexcept {
  std::size_t n = 0;
  for (const Node& node : nodes_) n += node.behind ? 1 : 0;
  return n;
}

std::size_t WeightFanout::weights_in_flight() const noexcept {
  std::size_t n = 0;
  for (const Node& node : nodes_) n += comm_.in_flight(node.ticket) ? 1 : 0;
  return n;
}

}  // namespace ringrl::mpi
