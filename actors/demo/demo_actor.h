// The demo's actor (common/demo/demo_record.h): `ringrl actor --kind demo`, started by the run
// driver for `ringrl demo`. It waits for the first weights, then, until told to stop, reads the
// newest w between records and pushes one gradient record of ActorLaunch::params
// "record_floats" floats at a time, each with the version of the weights it read.
//
// Contract: returns the exit status: 0 when stopped, 3 when no weights came within 30 s, 4 when
// a record does not fit the ring. Noise is seeded from ActorLaunch::seed.
#pragma once

#include "common/actor_launch.h"

namespace ringrl::demo {

int run_demo_actor(const ActorLaunch& launch);

}  // namespace ringrl::demo
