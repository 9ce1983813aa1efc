// mpi/comm_none.cc, the stand-in of a build without MPI (compiled into this test in every
// build): the cluster paths say in one line that this build has no MPI.
#include <string>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "mpi/comm.h"

namespace ringrl::mpi {
namespace {

TEST(CommWithoutMpi, InitSaysInOneLineThatThisBuildHasNoMpi) {
  EXPECT_FALSE(built_with_mpi());
  try {
    (void)Comm::init();
    FAIL() << "init() without MPI returned";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, kNoMpi);
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("this build has no MPI"), std::string::npos);
  }
}

}  // namespace
}  // namespace ringrl::mpi
