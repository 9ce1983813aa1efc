#include "common/runfiles/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <system_error>

#include "tests/common/runfiles/temp_dir.h"

namespace ringrl::runfiles {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(AtomicFile, WriteCreatesFileWithContentsAndNoTemp) {
  TempDir dir;
  write_file_atomic(dir / "a.json", "{\"x\": 1}\n");
  EXPECT_EQ(read_file(dir / "a.json"), "{\"x\": 1}\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.json"});
}

TEST(AtomicFile, WriteReplacesExistingFile) {
  TempDir dir;
  write_file(dir / "a.txt", "old contents that are longer");
  write_file_atomic(dir / "a.txt", "new");
  EXPECT_EQ(read_file(dir / "a.txt"), "new");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.txt"});
}

TEST(AtomicFile, StreamingWritesThenCommit) {
  TempDir dir;
  AtomicFile f(dir / "out.bin");
  EXPECT_EQ(f.temp_path().filename().string(), "out.bin.tmp." + std::to_string(::getpid()));
  f.write("abc");
  f.write(std::string_view("\0def", 4));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.bin"));
  f.commit();
  EXPECT_EQ(read_file(dir / "out.bin"), std::string("abc\0def", 7));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.bin"});
  EXPECT_THROW(f.write("x"), std::logic_error);
  EXPECT_THROW(f.commit(), std::logic_error);
}

TEST(AtomicFile, DestructorWithoutCommitKeepsOldContentsAndRemovesTemp) {
  TempDir dir;
  write_file(dir / "keep.txt", "old");
  {
    AtomicFile f(dir / "keep.txt");
    f.write("new");
    EXPECT_TRUE(std::filesystem::exists(f.temp_path()));
  }
  EXPECT_EQ(read_file(dir / "keep.txt"), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"keep.txt"});
}

TEST(AtomicFile, MovedFromObjectDoesNotRemoveTheTemp) {
  TempDir dir;
  AtomicFile a(dir / "m.txt");
  a.write("1");
  AtomicFile b(std::move(a));
  b.write("2");
  b.commit();
  EXPECT_EQ(read_file(dir / "m.txt"), "12");
}

TEST(AtomicFile, MissingDirectoryThrowsSystemErrorNamingThePath) {
  TempDir dir;
  std::filesystem::path target = dir / "no_such_dir" / "x.json";
  try {
    write_file_atomic(target, "x");
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("no_such_dir"), std::string::npos) << e.what();
  }
}

TEST(AtomicFile, FailedRenameRemovesTempAndNamesTarget) {
  TempDir dir;
  // A non-empty directory cannot be replaced by a file.
  std::filesystem::create_directory(dir / "target");
  write_file(dir / "target" / "inside", "x");
  try {
    write_file_atomic(dir / "target", "bytes");
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("target"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"target"});
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target"));
}

}  // namespace
}  // namespace ringrl::runfiles
