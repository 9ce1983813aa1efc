// Atomic whole-file writes for run directories.
//
// Contract:
// * The target file is replaced all at once: readers see either the old contents or the new
//   ones, never a mix. Bytes go to `<path>.tmp.<pid>` in the same directory, are fsync'ed,
//   and the temp file is renamed over `path`; the directory is then fsync'ed so the rename
//   survives a crash.
// * On any failure the temp file is removed and `path` is left untouched.
// * OS failures throw std::system_error (errno) whose message names the path.
// * One writer per target path per process at a time (the temp name holds only the pid).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace ringrl::runfiles {

/// Replaces `path` with `bytes` atomically (see the contract above).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// fsyncs a directory so that entries created or renamed in it are durable.
void fsync_directory(const std::filesystem::path& dir);

/// Creates `dir` if needed and checks that a file can be written there (a probe file, written
/// and removed); returns "" when it can, else what went wrong, naming the directory.
std::string directory_problem(const std::filesystem::path& dir);

/// Streaming variant: create, write() any number of times, then commit(). Without commit()
/// the destructor removes the temp file and the target keeps its old contents.
class AtomicFile {
 public:
  /// Creates (truncates) the temp file next to `path`. Throws std::system_error.
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) = delete;

  /// Appends bytes to the temp file. On failure the temp file is removed and the object
  /// becomes closed (later calls throw std::logic_error).
  void write(std::string_view bytes);

  /// fsync + rename over the target + fsync of the directory. On failure the temp file is
  /// removed. Calling write() or commit() after commit() throws std::logic_error.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

 private:
  void discard() noexcept;
  void require_open(const char* what) const;

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
};

}  // namespace ringrl::runfiles
