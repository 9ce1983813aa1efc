#include "common/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace ringrl {

// The format stores values in host byte order and calls it little-endian (see the header).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoint files are little-endian");

namespace {

constexpr char kMagic[8] = {'R', 'I', 'N', 'G', 'R', 'L', 'C', 'K'};
constexpr char kEndMagic[8] = {'R', 'I', 'N', 'G', 'R', 'L', 'E', 'N'};
/// The PQT trainer's checkpoints before format version 1 started with these bytes.
constexpr char kPreVersion1Magic[8] = {'R', 'R', 'L', 'P', 'Q', 'T', 'C', '1'};

/// magic + u32 format version: the bytes every format version starts with.
constexpr std::uint64_t kFixedHeaderBytes = sizeof(kMagic) + sizeof(std::uint32_t);
/// u64 table offset, u64 file bytes, u64 checksum, end magic.
constexpr std::uint64_t kEndRecordBytes = 3 * sizeof(std::uint64_t) + sizeof(kEndMagic);
/// The checksum field and the end magic: the end-record bytes the checksum does not cover.
constexpr std::uint64_t kUnhashedTailBytes = sizeof(std::uint64_t) + sizeof(kEndMagic);
/// Smallest valid file: a one-byte algorithm name, an empty section table, the end record.
constexpr std::uint64_t kMinFileBytes =
    kFixedHeaderBytes + sizeof(std::uint64_t) + 1 + sizeof(std::uint64_t) + kEndRecordBytes;
/// Smallest table entry: a one-byte name and its length.
constexpr std::uint64_t kMinTableEntryBytes = sizeof(std::uint64_t) + 1 + sizeof(std::uint64_t);

constexpr mode_t kFileMode = 0644;  // further restricted by the process umask

/// FNV-1a 64 (offset basis and prime of the FNV reference). Every step is a bijection of the
/// state for a fixed input byte, so a single changed byte always changes the result.
class Fnv1a64 {
 public:
  void update(const void* data, std::size_t n) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t h = h_;
    for (std::size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= kPrime;
    }
    h_ = h;
  }
  std::uint64_t value() const noexcept { return h_; }

 private:
  static constexpr std::uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t h_ = kOffsetBasis;
};

[[noreturn]] void throw_errno(int err, const std::string& what, const std::filesystem::path& p) {
  throw std::system_error(err, std::generic_category(), what + " " + p.string());
}

std::string hex64(std::uint64_t v) {
  char buf[2 + 16 + 1];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
  std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(errno, "open checkpoint directory", dir);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw_errno(err, "fsync checkpoint directory", dir);
  }
  ::close(fd);
}

void check_name(const std::string& name, const char* what) {
  if (name.empty() || name.size() > kCheckpointMaxNameBytes) {
    throw std::invalid_argument(std::string("checkpoint ") + what + " '" + name + "': expected 1.." +
                                std::to_string(kCheckpointMaxNameBytes) + " bytes");
  }
}

/// Reads up to `n` bytes at `offset`; fewer only at the end of the file.
std::size_t pread_some(int fd, void* dst, std::size_t n, std::uint64_t offset, const std::filesystem::path& path) {
  auto* p = static_cast<char*>(dst);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, p + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "read checkpoint", path);
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

/// Buffered, checksummed appends to a file descriptor.
class FileSink final : public ByteSink {
 public:
  FileSink(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) { buf_.reserve(kCheckpointIoBytes); }

  void write(const void* data, std::size_t n) override {
    hash_.update(data, n);
    write_raw(data, n);
  }
  /// Appends without updating the checksum (the checksum field and the end magic).
  void write_raw(const void* data, std::size_t n) {
    if (failed_) throw std::logic_error("checkpoint " + path_.string() + ": write after a failed write");
    offset_ += n;
    if (buf_.size() + n <= kCheckpointIoBytes) {
      const auto* p = static_cast<const char*>(data);
      buf_.insert(buf_.end(), p, p + n);
      return;
    }
    flush();
    if (n >= kCheckpointIoBytes) {
      write_all(data, n);  // large payloads skip the buffer
    } else {
      const auto* p = static_cast<const char*>(data);
      buf_.assign(p, p + n);
    }
  }
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }
  /// Bytes appended so far (buffered ones included): the offset of the next byte.
  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t checksum() const noexcept { return hash_.value(); }
  bool failed() const noexcept { return failed_; }

 private:
  void write_all(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        failed_ = true;
        throw_errno(errno, "write checkpoint", path_);
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  int fd_;
  std::filesystem::path path_;
  std::vector<char> buf_;  // at most kCheckpointIoBytes pending bytes
  Fnv1a64 hash_;
  std::uint64_t offset_ = 0;
  bool failed_ = false;
};

/// Buffered reads of the byte range [begin, end) of a file descriptor.
class RegionSource final : public ByteSource {
 public:
  RegionSource(int fd, std::uint64_t begin, std::uint64_t end, const std::filesystem::path& path, std::string what)
      : fd_(fd), next_(begin), end_(end), path_(path), what_(std::move(what)) {
    buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kCheckpointIoBytes, end - begin)));
  }

  std::uint64_t remaining() const override { return end_ - next_ + (fill_ - pos_); }

  void read(void* dst, std::size_t n) override {
    auto* out = static_cast<char*>(dst);
    // Buffered bytes first; then large reads go straight to `dst`, small ones refill.
    const std::size_t from_buf = std::min(n, fill_ - pos_);
    std::memcpy(out, buf_.data() + pos_, from_buf);
    pos_ += from_buf;
    out += from_buf;
    n -= from_buf;
    if (n == 0) return;
    if (n >= buf_.size()) {
      read_exact(out, n);
      return;
    }
    const auto refill = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), end_ - next_));
    read_exact(buf_.data(), refill);
    fill_ = refill;
    std::memcpy(out, buf_.data(), n);
    pos_ = n;
  }

 private:
  void read_exact(char* dst, std::size_t n) {
    const std::size_t got = pread_some(fd_, dst, n, next_, path_);
    if (got != n) {
      throw CorruptData(what_ + ": the file ended at byte " + std::to_string(next_ + got) +
                        " while being read (changed underneath?)");
    }
    next_ += n;
  }

  int fd_;
  std::uint64_t next_;  // file offset of the first byte not yet in the buffer
  std::uint64_t end_;
  const std::filesystem::path& path_;
  std::string what_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;   // next unread byte in buf_
  std::size_t fill_ = 0;  // valid bytes in buf_
};

}  // namespace

// ---------------------------------------------------------------------------------------
// CheckpointWriter

struct CheckpointWriter::Impl {
  struct Section {
    std::string name;
    std::uint64_t bytes = 0;
  };

  std::filesystem::path path;
  std::filesystem::path temp;
  int fd = -1;
  std::optional<FileSink> sink;
  std::optional<ByteWriter> writer;  // the open section's
  std::vector<Section> sections;
  std::uint64_t section_start = 0;
  bool temp_created = false;
  bool commit_started = false;  // commit() ran, whether or not it succeeded
  bool committed = false;       // the temp file became `path`

  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (temp_created && !committed) ::unlink(temp.c_str());
  }

  void require_writable(const char* call) const {
    if (commit_started) {
      throw std::logic_error("checkpoint " + path.string() + ": " + call + " after commit()");
    }
    if (sink->failed()) {
      throw std::logic_error("checkpoint " + path.string() + ": " + call + " after a failed write");
    }
  }

  void end_section() {
    if (!writer) return;
    sections.back().bytes = sink->offset() - section_start;
    writer.reset();
  }
};

CheckpointWriter::CheckpointWriter(std::filesystem::path path, std::string algorithm)
    : impl_(std::make_unique<Impl>()) {
  check_name(algorithm, "algorithm name");
  if (path.filename().empty()) {
    throw std::system_error(std::make_error_code(std::errc::is_a_directory), "checkpoint " + path.string());
  }
  Impl& m = *impl_;
  m.path = std::move(path);
  m.temp = m.path;
  m.temp += ".tmp";
  m.fd = ::open(m.temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kFileMode);
  if (m.fd < 0) throw_errno(errno, "create checkpoint", m.temp);
  m.temp_created = true;
  m.sink.emplace(m.fd, m.temp);
  ByteWriter header(*m.sink);
  header.put_bytes(kMagic, sizeof kMagic);
  header.put<std::uint32_t>(kCheckpointFormatVersion);
  header.put_string(algorithm);
}

CheckpointWriter::~CheckpointWriter() = default;

ByteWriter& CheckpointWriter::section(const std::string& name) {
  Impl& m = *impl_;
  m.require_writable("section()");
  check_name(name, "section name");
  for (const auto& s : m.sections) {
    if (s.name == name) {
      throw std::invalid_argument("checkpoint " + m.path.string() + ": section '" + name + "' written twice");
    }
  }
  m.end_section();
  m.sections.push_back({name, 0});
  m.section_start = m.sink->offset();
  m.writer.emplace(*m.sink);
  return *m.writer;
}

void CheckpointWriter::commit() {
  Impl& m = *impl_;
  m.require_writable("commit()");
  m.commit_started = true;
  m.end_section();

  // Section table and end record; the checksum covers every byte before its own field.
  FileSink& sink = *m.sink;
  const std::uint64_t table_offset = sink.offset();
  ByteWriter tail(sink);
  tail.put<std::uint64_t>(m.sections.size());
  for (const auto& s : m.sections) {
    tail.put_string(s.name);
    tail.put<std::uint64_t>(s.bytes);
  }
  const std::uint64_t file_bytes = sink.offset() + kEndRecordBytes;
  tail.put<std::uint64_t>(table_offset);
  tail.put<std::uint64_t>(file_bytes);
  const std::uint64_t checksum = sink.checksum();
  sink.write_raw(&checksum, sizeof checksum);
  sink.write_raw(kEndMagic, sizeof kEndMagic);
  sink.flush();

  // Durable file, then the rename, then the durable directory entry.
  if (::fsync(m.fd) != 0) throw_errno(errno, "fsync checkpoint", m.temp);
  const int fd = m.fd;
  m.fd = -1;
  if (::close(fd) != 0) throw_errno(errno, "close checkpoint", m.temp);
  if (::rename(m.temp.c_str(), m.path.c_str()) != 0) throw_errno(errno, "rename checkpoint to", m.path);
  m.committed = true;
  fsync_directory(parent_or_dot(m.path));
}

const std::filesystem::path& CheckpointWriter::path() const { return impl_->path; }
const std::filesystem::path& CheckpointWriter::temp_path() const { return impl_->temp; }

// ---------------------------------------------------------------------------------------
// CheckpointReader

struct CheckpointReader::Impl {
  struct Section {
    std::string name;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
  };

  std::filesystem::path path;
  int fd = -1;
  std::uint64_t size = 0;
  std::uint32_t version = 0;
  std::string algorithm;
  std::vector<Section> sections;
  std::unique_ptr<RegionSource> source;  // the current section's
  std::optional<ByteReader> reader;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  std::string what() const { return "checkpoint " + path.string(); }
  [[noreturn]] void fail(const std::string& why) const { throw CorruptData(what() + ": " + why); }

  const Section* find(const std::string& name) const {
    for (const auto& s : sections) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  const Section& require(const std::string& name) const {
    if (const Section* s = find(name)) return *s;
    std::string have;
    for (const auto& s : sections) have += (have.empty() ? "" : ", ") + s.name;
    fail("no section '" + name + "' (it holds: " + (have.empty() ? "none" : have) + ")");
  }

  void check_magic_and_version();
  void check_end_record_and_checksum(std::uint64_t* table_offset);
  void parse_header_and_table(std::uint64_t table_offset);
};

void CheckpointReader::Impl::check_magic_and_version() {
  char head[kFixedHeaderBytes];
  const std::size_t got = pread_some(fd, head, sizeof head, 0, path);
  const std::size_t magic_bytes = std::min(got, sizeof kMagic);
  const bool ours = std::memcmp(head, kMagic, magic_bytes) == 0;
  const bool old = std::memcmp(head, kPreVersion1Magic, magic_bytes) == 0;
  if (got == 0) fail("truncated: the file is empty");
  if (got >= sizeof kMagic && old) {
    fail("a checkpoint from an older build (format '" + std::string(kPreVersion1Magic, sizeof kPreVersion1Magic) +
         "', before format version 1) that this build cannot read; this build reads format version " +
         std::to_string(kCheckpointFormatVersion));
  }
  if (!ours && !old) {
    fail("not a ringrl checkpoint (it does not start with '" + std::string(kMagic, sizeof kMagic) + "')");
  }
  if (got < sizeof head) fail("truncated: " + std::to_string(size) + " bytes");
  std::memcpy(&version, head + sizeof kMagic, sizeof version);
  if (version != kCheckpointFormatVersion) {
    fail("format version " + std::to_string(version) +
         (version < kCheckpointFormatVersion ? " (from an older build)" : " (from a newer build)") +
         "; this build reads version " + std::to_string(kCheckpointFormatVersion));
  }
}

void CheckpointReader::Impl::check_end_record_and_checksum(std::uint64_t* table_offset) {
  if (size < kMinFileBytes) fail("truncated: " + std::to_string(size) + " bytes, its end record is missing");
  struct {
    std::uint64_t table_offset;
    std::uint64_t file_bytes;
    std::uint64_t checksum;
    char end_magic[sizeof kEndMagic];
  } end;
  static_assert(sizeof end == kEndRecordBytes);
  if (pread_some(fd, &end, sizeof end, size - kEndRecordBytes, path) != sizeof end) {
    fail("the file shrank while being read");
  }
  if (std::memcmp(end.end_magic, kEndMagic, sizeof kEndMagic) != 0) {
    fail("truncated or damaged: its " + std::to_string(size) +
         " bytes do not end with the end record (an interrupted write or a cut file)");
  }
  if (end.file_bytes != size) {
    // It does end with an end record, so this is damage rather than an interrupted write.
    fail("damaged: " + std::to_string(size) + " bytes, its end record says " + std::to_string(end.file_bytes));
  }

  // One streaming pass over every byte the checksum covers.
  Fnv1a64 hash;
  std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(kCheckpointIoBytes, size)));
  const std::uint64_t hashed = size - kUnhashedTailBytes;
  for (std::uint64_t at = 0; at < hashed;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), hashed - at));
    if (pread_some(fd, buf.data(), n, at, path) != n) fail("the file shrank while being read");
    hash.update(buf.data(), n);
    at += n;
  }
  if (hash.value() != end.checksum) {
    fail("checksum mismatch (stored " + hex64(end.checksum) + ", computed " + hex64(hash.value()) +
         "): the file is damaged");
  }
  *table_offset = end.table_offset;
}

void CheckpointReader::Impl::parse_header_and_table(std::uint64_t table_offset) {
  // The checksum matched, so what follows only fails for files no ringrl build wrote.
  const std::uint64_t table_end = size - kEndRecordBytes;
  if (table_offset < kFixedHeaderBytes || table_offset > table_end) {
    fail("damaged: its section table offset " + std::to_string(table_offset) + " lies outside the file");
  }
  const std::uint64_t header_end =
      std::min(table_offset, kFixedHeaderBytes + sizeof(std::uint64_t) + kCheckpointMaxNameBytes);
  RegionSource header_bytes(fd, kFixedHeaderBytes, header_end, path, what());
  ByteReader header(header_bytes, what());
  algorithm = header.get_string(kCheckpointMaxNameBytes);
  if (algorithm.empty()) header.fail("empty algorithm name");
  const std::uint64_t payload_begin = kFixedHeaderBytes + sizeof(std::uint64_t) + algorithm.size();

  RegionSource table_bytes(fd, table_offset, table_end, path, what() + ", section table");
  ByteReader table(table_bytes, what() + ", section table");
  const auto count = table.get<std::uint64_t>();
  if (count > table.remaining() / kMinTableEntryBytes) {
    table.fail(std::to_string(count) + " sections do not fit in its " + std::to_string(table.remaining()) + " bytes");
  }
  std::uint64_t offset = payload_begin;
  for (std::uint64_t k = 0; k < count; ++k) {
    Section s;
    s.name = table.get_string(kCheckpointMaxNameBytes);
    s.bytes = table.get<std::uint64_t>();
    s.offset = offset;
    if (s.name.empty()) table.fail("section " + std::to_string(k) + " has an empty name");
    if (find(s.name) != nullptr) table.fail("section '" + s.name + "' appears twice");
    if (s.bytes > table_offset - offset) {
      table.fail("section '" + s.name + "' of " + std::to_string(s.bytes) + " bytes runs past the payloads");
    }
    offset += s.bytes;
    sections.push_back(std::move(s));
  }
  table.expect_end();
  if (offset != table_offset) {
    table.fail("the sections cover " + std::to_string(offset - payload_begin) + " bytes, the payloads span " +
               std::to_string(table_offset - payload_begin));
  }
}

CheckpointReader::CheckpointReader(std::filesystem::path path, const std::string& expected_algorithm)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = std::move(path);
  m.fd = ::open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.fd < 0) throw_errno(errno, "open checkpoint", m.path);
  struct stat st {};
  if (::fstat(m.fd, &st) != 0) throw_errno(errno, "stat checkpoint", m.path);
  if (!S_ISREG(st.st_mode)) m.fail("not a ringrl checkpoint (not a regular file)");
  m.size = static_cast<std::uint64_t>(st.st_size);

  // Cheapest and most telling checks first: what the file is, then whether it is whole.
  m.check_magic_and_version();
  std::uint64_t table_offset = 0;
  m.check_end_record_and_checksum(&table_offset);
  m.parse_header_and_table(table_offset);
  if (!expected_algorithm.empty() && m.algorithm != expected_algorithm) {
    m.fail("written by algorithm '" + m.algorithm + "', expected '" + expected_algorithm + "'");
  }
}

CheckpointReader::~CheckpointReader() = default;

const std::filesystem::path& CheckpointReader::path() const { return impl_->path; }
const std::string& CheckpointReader::algorithm() const { return impl_->algorithm; }
std::uint32_t CheckpointReader::format_version() const { return impl_->version; }

std::vector<std::string> CheckpointReader::section_names() const {
  std::vector<std::string> names;
  for (const auto& s : impl_->sections) names.push_back(s.name);
  return names;
}

bool CheckpointReader::has_section(const std::string& name) const { return impl_->find(name) != nullptr; }

std::uint64_t CheckpointReader::section_bytes(const std::string& name) const { return impl_->require(name).bytes; }

ByteReader& CheckpointReader::section(const std::string& name) {
  Impl& m = *impl_;
  const Impl::Section& s = m.require(name);
  const std::string what = m.what() + ", section " + name;
  m.reader.reset();
  m.source = std::make_unique<RegionSource>(m.fd, s.offset, s.offset + s.bytes, m.path, what);
  m.reader.emplace(*m.source, what);
  return *m.reader;
}

}  // namespace ringrl
