// Test fixture: any MuJoCo warning reported during a test fails it (the process-wide
// counter of envs/maze/mujoco_model.h must not move). Tests that provoke a warning on
// purpose use a plain TEST instead.
#pragma once

#include <cstdint>

#include <gtest/gtest.h>

#include "envs/maze/mujoco_model.h"

namespace ringrl::envs::maze::testing {

class MujocoGuardedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    install_mujoco_handlers();
    warnings_at_start_ = mujoco_warning_count();
  }
  void TearDown() override {
    EXPECT_EQ(mujoco_warning_count(), warnings_at_start_) << "MuJoCo reported a warning: " << last_mujoco_message();
  }

 private:
  std::int64_t warnings_at_start_ = 0;
};

}  // namespace ringrl::envs::maze::testing
