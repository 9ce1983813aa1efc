// The ProgramEpisode record (record type kRecordProgramEpisode): one program sampled by an
// actor's policy and scored on the task, as it travels from the actor to the learner.
//
// Payload layout (little-endian host order, no padding surprises):
//   ProgramEpisodeHeader | std::int8_t tokens[length] | zero pad to 4 | float log_probs[length]
// log_probs[t] is log mu(a_t) of the sampling policy; the record's ring version is the weights
// version that policy came from. Writers use encode_program_episode() into a reserved frame;
// the reader validates with decode_program_episode(), which never reads past `bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ringrl {

/// Token i of the program-synthesis vocabulary as a BF character; 0 (EOS) is '_' (spec §2).
inline constexpr char kProgramTokenChars[] = "_><+-[].,";
inline constexpr int kProgramVocab = 9;

struct ProgramEpisodeHeader {
  std::uint32_t length;       // tokens, 1..max_len
  std::uint8_t correct;       // 1 when every test case printed its target exactly
  std::uint8_t reason;        // bf::ScoreReason as a number
  std::uint16_t reserved;     // 0
  double reward;              // total reward r = R / best_reward
  std::uint64_t actor_batch;  // which of the actor's batches it came from
};
static_assert(std::is_trivially_copyable_v<ProgramEpisodeHeader> && sizeof(ProgramEpisodeHeader) == 24);

constexpr std::uint32_t program_tokens_padded(std::uint32_t length) noexcept { return (length + 3) & ~3u; }
constexpr std::uint32_t program_episode_bytes(std::uint32_t length) noexcept {
  return static_cast<std::uint32_t>(sizeof(ProgramEpisodeHeader)) + program_tokens_padded(length) +
         length * static_cast<std::uint32_t>(sizeof(float));
}

/// Writes one episode into `dst` (program_episode_bytes(h.length) bytes).
inline void encode_program_episode(std::byte* dst, const ProgramEpisodeHeader& h, const std::int32_t* tokens,
                                   const float* log_probs) noexcept {
  std::memcpy(dst, &h, sizeof h);
  std::byte* tok = dst + sizeof h;
  for (std::uint32_t t = 0; t < h.length; ++t) tok[t] = static_cast<std::byte>(tokens[t]);
  for (std::uint32_t t = h.length; t < program_tokens_padded(h.length); ++t) tok[t] = std::byte{0};
  std::memcpy(tok + program_tokens_padded(h.length), log_probs, h.length * sizeof(float));
}

/// A decoded view; pointers alias the record bytes.
struct ProgramEpisodeView {
  ProgramEpisodeHeader header{};
  const std::int8_t* tokens = nullptr;
  const std::byte* log_probs = nullptr;  // `length` floats, possibly unaligned: memcpy them
};

/// Validates and decodes; on failure returns false and says why in `*error`.
inline bool decode_program_episode(const std::byte* data, std::uint32_t bytes, std::uint32_t max_len,
                                   ProgramEpisodeView* out, std::string* error) {
  if (bytes < sizeof(ProgramEpisodeHeader)) {
    *error = "program record of " + std::to_string(bytes) + " bytes is shorter than its header";
    return false;
  }
  std::memcpy(&out->header, data, sizeof out->header);
  const std::uint32_t n = out->header.length;
  if (n < 1 || n > max_len) {
    *error = "program record length " + std::to_string(n) + " is outside [1, " + std::to_string(max_len) + "]";
    return false;
  }
  // Compared in 64 bits: a huge `n` must not wrap into a small, matching 32-bit size.
  const std::uint64_t want =
      sizeof(ProgramEpisodeHeader) + ((std::uint64_t{n} + 3) & ~std::uint64_t{3}) + std::uint64_t{n} * sizeof(float);
  if (bytes != want) {
    *error = "program record of " + std::to_string(bytes) + " bytes, expected " + std::to_string(want) + " for " +
             std::to_string(n) + " tokens";
    return false;
  }
  out->tokens = reinterpret_cast<const std::int8_t*>(data + sizeof(ProgramEpisodeHeader));
  for (std::uint32_t t = 0; t < n; ++t) {
    if (out->tokens[t] < 0 || out->tokens[t] >= kProgramVocab) {
      *error = "program record token " + std::to_string(out->tokens[t]) + " at " + std::to_string(t) +
               " is outside [0, " + std::to_string(kProgramVocab) + ")";
      return false;
    }
  }
  out->log_probs = data + sizeof(ProgramEpisodeHeader) + program_tokens_padded(n);
  return true;
}

/// The BF program string of `n` tokens (every token maps to a character, EOS included).
template <typename Token>
std::string program_string(const Token* tokens, std::size_t n) {
  std::string s(n, '_');
  for (std::size_t t = 0; t < n; ++t) s[t] = kProgramTokenChars[static_cast<int>(tokens[t])];
  return s;
}

}  // namespace ringrl
