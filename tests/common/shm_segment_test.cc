#include "common/shm_segment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

#include <gtest/gtest.h>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include "common/errors.h"
#include "common/run_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

using testing::shm_exists;
using testing::unique_run_id;

std::string attach_error(const std::string& name, const AttachOptions& o = {}) {
  try {
    ShmSegment::attach(name, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ShmSegment, NameCarriesUidAndRunId) {
  EXPECT_EQ(segment_name("abc"), "ringrl-" + std::to_string(getuid()) + "-abc");
  EXPECT_THROW(segment_name(""), UsageError);
  EXPECT_THROW(segment_name("has/slash"), UsageError);
  EXPECT_THROW(segment_name(std::string(49, 'a')), UsageError);
  try {
    segment_name("a b");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'a b'"), std::string::npos);
  }
}

TEST(ShmSegment, CreatorUnlinksOnDestructionAndModeIs0600) {
  const std::string id = unique_run_id("own");
  const std::string name = segment_name(id);
  {
    ShmSegment s = ShmSegment::create(name, 4096, id);
    s.mark_ready();
    ASSERT_TRUE(shm_exists(name));
    struct stat st {};
    ASSERT_EQ(stat(("/dev/shm/" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ShmSegment moved = std::move(s);  // ownership moves; only one unlink
    EXPECT_TRUE(moved.is_owner());
    EXPECT_FALSE(s.is_owner());
  }
  EXPECT_FALSE(shm_exists(name));
}

TEST(ShmSegment, AttachSeesCreatorBytes) {
  const std::string id = unique_run_id("see");
  ShmSegment s = ShmSegment::create(segment_name(id), 8192, id);
  s.data()[5000] = std::byte{42};
  s.mark_ready();
  ShmSegment a = ShmSegment::attach(s.name());
  EXPECT_FALSE(a.is_owner());
  EXPECT_EQ(a.size(), 8192u);
  EXPECT_EQ(a.data()[5000], std::byte{42});
  EXPECT_STREQ(a.header().run_id, id.c_str());
}

TEST(ShmSegmentAttach, MissingSegment) {
  const std::string e = attach_error(segment_name(unique_run_id("missing")));
  EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
}

TEST(ShmSegmentAttach, BadMagic) {
  const std::string id = unique_run_id("magic");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  s.mark_ready();
  s.header().magic = 0x1234;
  const std::string e = attach_error(s.name());
  EXPECT_NE(e.find("bad magic"), std::string::npos) << e;
}

TEST(ShmSegmentAttach, BadVersion) {
  const std::string id = unique_run_id("version");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  s.mark_ready();
  s.header().layout_version = kSegmentLayoutVersion + 1;
  const std::string e = attach_error(s.name());
  EXPECT_NE(e.find("layout version " + std::to_string(kSegmentLayoutVersion + 1)), std::string::npos) << e;
}

TEST(ShmSegmentAttach, BadSize) {
  const std::string id = unique_run_id("size");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  s.mark_ready();
  s.header().total_bytes = 8192;
  std::string e = attach_error(s.name());
  EXPECT_NE(e.find("header says 8192 bytes but the segment has 4096"), std::string::npos) << e;
  s.header().total_bytes = 4096;
  AttachOptions o;
  o.expected_bytes = 1234;
  e = attach_error(s.name(), o);
  EXPECT_NE(e.find("size 4096 bytes, expected 1234"), std::string::npos) << e;
}

TEST(ShmSegmentAttach, WrongCreator) {
  const std::string id = unique_run_id("creator");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  s.mark_ready();
  AttachOptions o;
  o.expected_creator = getpid() + 100000;
  const std::string e = attach_error(s.name(), o);
  EXPECT_NE(e.find("creator pid"), std::string::npos) << e;
}

TEST(ShmSegment, LiveRunIsRefused) {
  const std::string id = unique_run_id("live");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  s.mark_ready();
  try {
    ShmSegment::create(segment_name(id), 4096, id);
    FAIL() << "second create of a live segment succeeded";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("live run"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(shm_exists(s.name()));
}

TEST(ShmSegment, StaleSegmentOfADeadCreatorIsReclaimed) {
  const std::string id = unique_run_id("stale");
  const std::string name = segment_name(id);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ShmSegment s = ShmSegment::create(name, 4096, id);
    s.mark_ready();
    _exit(0);  // no destructor: the segment is left behind, as after a crash
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(shm_exists(name));
  const std::string e = attach_error(name);
  EXPECT_NE(e.find("is not running"), std::string::npos) << e;
  ShmSegment s = ShmSegment::create(name, 8192, id);
  EXPECT_EQ(s.size(), 8192u);
  EXPECT_EQ(s.header().creator_pid, getpid());
}

TEST(ShmSegment, NewRunSweepsLeftoversOfDeadCreatorsOnly) {
  const std::string dead_id = unique_run_id("sweep-dead");
  const std::string dead = segment_name(dead_id);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ShmSegment s = ShmSegment::create(dead, 4096, dead_id);
    s.mark_ready();
    _exit(0);  // leaves the segment behind
  }
  waitpid(child, nullptr, 0);
  // Age it past the sweep's minimum age (an hour back).
  const timespec old[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, ("/dev/shm/" + dead).c_str(), old, 0), 0);
  const std::string live_id = unique_run_id("sweep-live");
  ShmSegment live = ShmSegment::create(segment_name(live_id), 4096, live_id);
  live.mark_ready();
  ASSERT_EQ(utimensat(AT_FDCWD, ("/dev/shm/" + live.name()).c_str(), old, 0), 0);  // old but alive
  ASSERT_TRUE(shm_exists(dead));
  RunLayoutOptions o;
  RunSegment run = RunSegment::create(unique_run_id("sweeper"), o);  // a different run id
  EXPECT_FALSE(shm_exists(dead)) << "the dead creator's segment was reclaimed";
  EXPECT_TRUE(shm_exists(live.name())) << "a live run's segment is kept";
}

TEST(ShmSegment, MoveAssignmentReleasesTheOldSegment) {
  const std::string id1 = unique_run_id("move-a");
  const std::string id2 = unique_run_id("move-b");
  ShmSegment a = ShmSegment::create(segment_name(id1), 4096, id1);
  ShmSegment b = ShmSegment::create(segment_name(id2), 8192, id2);
  const std::string old_name = a.name();
  a = std::move(b);
  EXPECT_FALSE(shm_exists(old_name)) << "the segment a owned was unmapped and removed";
  EXPECT_EQ(a.name(), segment_name(id2));
  EXPECT_EQ(a.size(), 8192u);
  EXPECT_TRUE(a.is_owner());
  EXPECT_EQ(b.data(), nullptr) << "a moved-from segment maps nothing";
  EXPECT_EQ(b.size(), 0u);
  EXPECT_FALSE(b.is_owner());
}

TEST(ShmSegment, OsFailureIsASystemErrorNamingTheSegment) {
  // A second '/' makes the name invalid for shm_open.
  const std::string bad = "ringrl-test/" + unique_run_id("bad");
  try {
    ShmSegment::create(bad, 4096, "x");
    FAIL() << "created a segment with an invalid name";
  } catch (const UsageError& e) {
    FAIL() << "an OS failure became a UsageError: " << e.what();
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EINVAL);
    EXPECT_NE(std::string(e.what()).find("create of shared-memory segment " + bad), std::string::npos) << e.what();
  }
}

TEST(ShmSegment, MappingFailureSaysWhatToDoAndLeavesNothingBehind) {
  // Far beyond any address space: the size is accepted, the mapping is not.
  const std::string id = unique_run_id("huge");
  const std::string name = segment_name(id);
  constexpr std::size_t kHuge = std::size_t{1} << 62;
  try {
    ShmSegment::create(name, kHuge, id);
    FAIL() << "mapped " << kHuge << " bytes";
  } catch (const std::system_error& e) {
    const int err = e.code().value();
    EXPECT_TRUE(err == ENOMEM || err == ENOSPC || err == EFBIG) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_NE(what.find("smaller rings"), std::string::npos) << "the message says what to do: " << what;
  }
  EXPECT_FALSE(shm_exists(name)) << "a failed create removes the name";
}

TEST(ShmSegment, UnfinishedLeftoverIsReclaimedAndCannotBeAttached) {
  // A leftover that never got its size (its creator died right after creating the name).
  namespace bip = boost::interprocess;
  const std::string id = unique_run_id("unfinished");
  const std::string name = segment_name(id);
  { const bip::shared_memory_object made(bip::create_only, name.c_str(), bip::read_write, bip::permissions(0600)); }
  ASSERT_TRUE(shm_exists(name));
  AttachOptions quick;
  quick.ready_timeout_s = 0.2;
  const std::string e = attach_error(name, quick);
  EXPECT_NE(e.find("has size 0"), std::string::npos) << e;
  ShmSegment s = ShmSegment::create(name, 4096, id);  // no header, so no live creator: reclaimed
  EXPECT_EQ(s.header().creator_pid, getpid());
}

TEST(ShmSegmentAttach, AttachDuringCreationWaitsForTheHeader) {
  // An attacher that finds the name before the creator has sized it and written the header
  // must wait for `ready` and then see every header field, never a half-written one.
  namespace bip = boost::interprocess;
  const std::string id = unique_run_id("midcreate");
  const std::string name = segment_name(id);
  bip::shared_memory_object shm(bip::create_only, name.c_str(), bip::read_write, bip::permissions(0600));
  std::string error;
  pid_t seen_creator = 0;
  std::thread attacher([&] {
    try {
      AttachOptions o;
      o.expected_creator = getpid();
      ShmSegment a = ShmSegment::attach(name, o);
      seen_creator = a.header().creator_pid;
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the attacher polls an unsized name
  shm.truncate(4096);
  bip::mapped_region r(shm, bip::read_write);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // ...then a zeroed, unready header
  auto* h = new (r.get_address()) SegmentHeader{};
  h->magic = kSegmentMagic;
  h->layout_version = kSegmentLayoutVersion;
  h->header_bytes = sizeof(SegmentHeader);
  h->total_bytes = 4096;
  h->creator_pid = getpid();
  h->ready.store(1, std::memory_order_release);
  attacher.join();
  bip::shared_memory_object::remove(name.c_str());
  EXPECT_EQ(error, "");
  EXPECT_EQ(seen_creator, getpid());
}

TEST(ShmSegmentAttach, CreatorThatNeverFinishesIsNamed) {
  const std::string id = unique_run_id("neverready");
  ShmSegment s = ShmSegment::create(segment_name(id), 4096, id);
  AttachOptions quick;
  quick.ready_timeout_s = 0.1;
  const std::string e = attach_error(s.name(), quick);
  EXPECT_NE(e.find("did not finish its layout within 0.1 s"), std::string::npos) << e;
}

TEST(ShmSegment, ForeignBytesAreNotTrustedAsAHeader) {
  // Header-sized garbage whose "creator pid" field happens to name a live process (this one).
  namespace bip = boost::interprocess;
  const std::string id = unique_run_id("foreign");
  const std::string name = segment_name(id);
  {
    bip::shared_memory_object shm(bip::create_only, name.c_str(), bip::read_write, bip::permissions(0600));
    shm.truncate(4096);
    bip::mapped_region r(shm, bip::read_write);
    std::memset(r.get_address(), 0x5a, r.get_size());
    const std::int32_t me = getpid();
    std::memcpy(static_cast<std::byte*>(r.get_address()) + offsetof(SegmentHeader, creator_pid), &me, sizeof me);
  }
  EXPECT_TRUE(ShmSegment::reclaim_if_stale(name)) << "wrong magic: not a live run's segment";
  EXPECT_FALSE(shm_exists(name));
  EXPECT_FALSE(ShmSegment::reclaim_if_stale(name)) << "nothing left to reclaim";
}

TEST(RunSegment, LayoutValidationNamesTheValue) {
  RunLayoutOptions o;
  o.num_actors = 0;
  EXPECT_THROW(compute_run_layout(o), UsageError);
  o.num_actors = 2;
  o.ring_capacity = 5000;
  try {
    compute_run_layout(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("5000"), std::string::npos);
  }
}

TEST(RunSegment, AttachFindsSameLayoutAndRejectsDamagedLayout) {
  RunLayoutOptions o;
  o.num_actors = 3;
  o.ring_capacity = 1 << 16;
  o.weight_capacity = 1000;
  RunSegment seg = RunSegment::create(unique_run_id("layout"), o);
  RunSegment a = RunSegment::attach(seg.name());
  EXPECT_EQ(a.num_actors(), 3u);
  EXPECT_EQ(a.ring(2)->capacity, 1u << 16);
  EXPECT_EQ(a.weights()->capacity, 1000u);
  EXPECT_THROW(a.slot(3), UsageError);
  // Damage the stored layout: attach must refuse it.
  auto* stored = reinterpret_cast<RunLayoutBlock*>(reinterpret_cast<std::byte*>(&seg.control()) -
                                                   (seg.layout().control_offset - sizeof(SegmentHeader)));
  stored->rings_offset += 64;
  EXPECT_THROW(RunSegment::attach(seg.name()), UsageError);
}

}  // namespace
}  // namespace ringrl
