#include "common/runfiles/tb_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <system_error>

#include "common/errors.h"

namespace ringrl::runfiles {
namespace {

constexpr uint32_t kCrc32cPolyReflected = 0x82F63B78u;
constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
constexpr int kCrcMaskRotate = 15;
constexpr int kCrcBits = 32;
constexpr const char* kFileVersion = "brain.Event:2";
constexpr const char* kFilePrefix = "events.out.tfevents.";
constexpr size_t kHostNameMax = 256;
constexpr int kMaxNameAttempts = 1000;
constexpr mode_t kFileMode = 0644;

// Protobuf wire types.
constexpr uint32_t kWireVarint = 0;
constexpr uint32_t kWireFixed64 = 1;
constexpr uint32_t kWireLengthDelimited = 2;
constexpr uint32_t kWireFixed32 = 5;

// Field numbers of tensorflow.Event / Summary / Summary.Value.
constexpr uint32_t kEventWallTime = 1;
constexpr uint32_t kEventStep = 2;
constexpr uint32_t kEventFileVersion = 3;
constexpr uint32_t kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1;
constexpr uint32_t kValueSimpleValue = 2;

constexpr uint32_t kVarintPayloadBits = 7;
constexpr uint8_t kVarintPayloadMask = 0x7f;
constexpr uint8_t kVarintContinue = 0x80;
constexpr int kBitsPerByte = 8;

using CrcTable = std::array<uint32_t, 256>;

constexpr CrcTable make_crc_table() {
  CrcTable table{};
  for (uint32_t i = 0; i < table.size(); ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < kBitsPerByte; ++bit) {
      c = (c & 1u) ? (c >> 1) ^ kCrc32cPolyReflected : (c >> 1);
    }
    table[i] = c;
  }
  return table;
}

constexpr CrcTable kCrcTable = make_crc_table();

void append_le(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (kBitsPerByte * i)) & 0xffu));
}

// Minimal protobuf encoder: appends to a byte string.
class ProtoWriter {
 public:
  void varint(uint64_t v) {
    while (v >= kVarintContinue) {
      out_.push_back(static_cast<char>((v & kVarintPayloadMask) | kVarintContinue));
      v >>= kVarintPayloadBits;
    }
    out_.push_back(static_cast<char>(v));
  }
  void key(uint32_t field, uint32_t wire_type) { varint((uint64_t{field} << 3) | wire_type); }
  void int64_field(uint32_t field, int64_t v) {
    key(field, kWireVarint);
    varint(static_cast<uint64_t>(v));  // two's complement, as protobuf int64 does
  }
  void double_field(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, kWireFixed64);
    append_le(out_, bits, sizeof bits);
  }
  void float_field(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, kWireFixed32);
    append_le(out_, bits, sizeof bits);
  }
  void bytes_field(uint32_t field, std::string_view bytes) {
    key(field, kWireLengthDelimited);
    varint(bytes.size());
    out_.append(bytes.data(), bytes.size());
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string host_name() {
  char buf[kHostNameMax + 1] = {};
  if (::gethostname(buf, kHostNameMax) != 0 || buf[0] == '\0') return "localhost";
  std::string name(buf);
  for (char& c : name) {
    if (c == '/') c = '_';  // keep it one path component
  }
  return name;
}

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) {
  uint32_t c = ~crc;
  for (unsigned char byte : data) c = kCrcTable[(c ^ byte) & 0xffu] ^ (c >> kBitsPerByte);
  return ~c;
}

uint32_t mask_crc(uint32_t crc) {
  return ((crc >> kCrcMaskRotate) | (crc << (kCrcBits - kCrcMaskRotate))) + kCrcMaskDelta;
}

std::string tf_record(std::string_view data) {
  std::string header;
  append_le(header, data.size(), sizeof(uint64_t));
  std::string out = header;
  append_le(out, masked_crc32c(header), sizeof(uint32_t));
  out.append(data.data(), data.size());
  append_le(out, masked_crc32c(data), sizeof(uint32_t));
  return out;
}

std::string encode_file_version_event(double wall_time) {
  ProtoWriter event;
  event.double_field(kEventWallTime, wall_time);
  event.bytes_field(kEventFileVersion, kFileVersion);
  return event.take();
}

std::string encode_scalar_event(std::string_view tag, int64_t step, float value, double wall_time) {
  ProtoWriter value_msg;
  value_msg.bytes_field(kValueTag, tag);
  value_msg.float_field(kValueSimpleValue, value);
  ProtoWriter summary;
  summary.bytes_field(kSummaryValue, value_msg.take());
  ProtoWriter event;
  event.double_field(kEventWallTime, wall_time);
  event.int64_field(kEventStep, step);
  event.bytes_field(kEventSummary, summary.take());
  return event.take();
}

double unix_time_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

TbWriter::TbWriter(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::system_error(ec, "create directory " + dir.string());

  double now = unix_time_now();
  std::string base = kFilePrefix + std::to_string(static_cast<int64_t>(std::floor(now))) + "." + host_name();
  int fd = -1;
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    path_ = dir / (attempt == 0 ? base : base + "." + std::to_string(attempt));
    fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kFileMode);
    if (fd >= 0 || errno != EEXIST) break;
  }
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "create " + path_.string());
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "fdopen " + path_.string());
  }
  write_record(encode_file_version_event(now));
  flush();
}

TbWriter::~TbWriter() {
  if (file_ != nullptr) std::fclose(file_);  // flushes; errors cannot be reported here
}

void TbWriter::add_scalar(std::string_view tag, int64_t step, float value, std::optional<double> wall_time) {
  if (tag.empty()) throw UsageError("TensorBoard scalar: empty tag (expected a name)");
  write_record(encode_scalar_event(tag, step, value, wall_time ? *wall_time : unix_time_now()));
}

void TbWriter::write_record(std::string_view data) {
  std::string record = tf_record(data);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw std::system_error(errno, std::generic_category(), "write " + path_.string());
  }
}

void TbWriter::flush() {
  if (std::fflush(file_) != 0) {
    throw std::system_error(errno, std::generic_category(), "flush " + path_.string());
  }
}

}  // namespace ringrl::runfiles
