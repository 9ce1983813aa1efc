// The HIRO ring records (spec hiro.md §7.1, §8): Transition (kRecordTransition, one low-level
// env step) and MetaTransition (kRecordMetaTransition, one high-level segment of c steps).
//
// Payload layout (host order): a 24-byte POD header, then one block of float32 values. The
// float block is exactly the learner's replay row, so the learner stores a record with one
// copy (its offsets are TransitionLayout / MetaTransitionLayout):
//   Transition:     s[obs] a[act] s'[obs] g[k] g'[k] r_env discount
//   MetaTransition: s_t[obs] g_t[k] s_{t+c}[obs] G_t[ctx] G_{t+c}[ctx] R discount
//                   low_states[c x obs] (s_t .. s_{t+c-1}) low_actions[c x act] (a_t .. a_{t+c-1})
// r_env and both discounts are stored but unused for learning (§8, no terminal masking); the
// low-level reward is recomputed by the learner from (s, g, s'); R = 0.1 x sum of the c task
// rewards (§6.4). The weights version of the acting policy is the ring frame's version.
//
// Writers: encode_*() into a reserved ring frame of *_bytes(dims) bytes. Readers: decode_*()
// treat the bytes as untrusted, never read past `bytes`, and return false with the reason in
// *error when a header dimension differs from the learner's, the size is not the exact size
// for those dimensions, a flag is unknown or any float is not finite. Views alias the record
// bytes; the float block may be unaligned, so read it with copy_floats()/value().
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ringrl::hiro {

/// Largest dimension a record header may carry (u16 fields).
inline constexpr int kMaxRecordDim = 65535;
/// Transition flag: the step ended the episode (a time-limit cut, never a terminal).
inline constexpr std::uint8_t kTransitionEpisodeEnd = 1;
/// Every flag bit a record may carry.
inline constexpr std::uint8_t kTransitionKnownFlags = kTransitionEpisodeEnd;

/// Dimensions both sides agree on (the learner passes its own to the decoders).
struct TransitionDims {
  int obs_dim = 0;
  int action_dim = 0;
  int goal_dim = 0;  // k
};

struct MetaTransitionDims {
  int obs_dim = 0;
  int action_dim = 0;
  int goal_dim = 0;     // k
  int context_dim = 0;  // dim(G)
  int steps = 0;        // c
};

/// Offsets (in floats) of the Transition float block.
struct TransitionLayout {
  int obs = 0, act = 0, goal = 0;

  constexpr explicit TransitionLayout(const TransitionDims& d) noexcept
      : obs(d.obs_dim), act(d.action_dim), goal(d.goal_dim) {}
  constexpr int s() const noexcept { return 0; }
  constexpr int a() const noexcept { return obs; }
  constexpr int s_next() const noexcept { return obs + act; }
  constexpr int g() const noexcept { return 2 * obs + act; }
  constexpr int g_next() const noexcept { return g() + goal; }
  constexpr int r_env() const noexcept { return g_next() + goal; }
  constexpr int discount() const noexcept { return r_env() + 1; }
  constexpr int floats() const noexcept { return discount() + 1; }
};

/// Offsets (in floats) of the MetaTransition float block.
struct MetaTransitionLayout {
  int obs = 0, act = 0, goal = 0, ctx = 0, steps = 0;

  constexpr explicit MetaTransitionLayout(const MetaTransitionDims& d) noexcept
      : obs(d.obs_dim), act(d.action_dim), goal(d.goal_dim), ctx(d.context_dim), steps(d.steps) {}
  constexpr int s() const noexcept { return 0; }
  constexpr int g() const noexcept { return obs; }
  constexpr int s_next() const noexcept { return obs + goal; }
  constexpr int context() const noexcept { return 2 * obs + goal; }
  constexpr int context_next() const noexcept { return context() + ctx; }
  constexpr int reward() const noexcept { return context_next() + ctx; }
  constexpr int discount() const noexcept { return reward() + 1; }
  constexpr int low_states() const noexcept { return discount() + 1; }
  constexpr int low_actions() const noexcept { return low_states() + steps * obs; }
  constexpr int floats() const noexcept { return low_actions() + steps * act; }
};

struct TransitionHeader {
  std::uint16_t obs_dim;     // observation floats
  std::uint16_t action_dim;  // action floats
  std::uint16_t goal_dim;    // k
  std::uint8_t flags;        // kTransitionEpisodeEnd
  std::uint8_t reserved;     // 0
  std::uint32_t t;           // env step within the episode (0-based) of s
  std::uint32_t reserved2;   // 0
  std::uint64_t episode;     // the episode's stream key (actors/hiro/hiro_actor.h; diagnostics)
};
static_assert(std::is_trivially_copyable_v<TransitionHeader> && std::is_standard_layout_v<TransitionHeader>);
static_assert(sizeof(TransitionHeader) == 24 && sizeof(TransitionHeader) % alignof(float) == 0);

struct MetaTransitionHeader {
  std::uint16_t obs_dim;
  std::uint16_t action_dim;
  std::uint16_t goal_dim;
  std::uint16_t context_dim;
  std::uint16_t steps;    // c: low-level steps (states and actions) carried
  std::uint8_t flags;     // kTransitionEpisodeEnd: the segment ended the episode
  std::uint8_t reserved;  // 0
  std::uint32_t t;        // env step within the episode (0-based) of s_t
  std::uint64_t episode;  // the episode's stream key (actors/hiro/hiro_actor.h; diagnostics)
};
static_assert(std::is_trivially_copyable_v<MetaTransitionHeader> && std::is_standard_layout_v<MetaTransitionHeader>);
static_assert(sizeof(MetaTransitionHeader) == 24 && sizeof(MetaTransitionHeader) % alignof(float) == 0);

constexpr std::uint32_t transition_bytes(const TransitionDims& d) noexcept {
  return static_cast<std::uint32_t>(sizeof(TransitionHeader) +
                                    sizeof(float) * static_cast<std::size_t>(TransitionLayout(d).floats()));
}
constexpr std::uint32_t meta_transition_bytes(const MetaTransitionDims& d) noexcept {
  return static_cast<std::uint32_t>(sizeof(MetaTransitionHeader) +
                                    sizeof(float) * static_cast<std::size_t>(MetaTransitionLayout(d).floats()));
}

/// Borrowed pointers to the fields of one low-level step (sizes from the header's dims).
struct TransitionFields {
  const float* s = nullptr;       // obs before the step
  const float* a = nullptr;       // executed (noisy, clipped) action
  const float* s_next = nullptr;  // obs after the step
  const float* g = nullptr;       // goal the action was taken under
  const float* g_next = nullptr;  // goal for the next step (§7.1)
  float r_env = 0.0f;             // env reward (unused for learning)
  float discount = 1.0f;          // env discount (unused for learning)
};

/// Borrowed pointers to the fields of one high-level segment.
struct MetaTransitionFields {
  const float* s = nullptr;             // s_t
  const float* g = nullptr;             // emitted goal g_t
  const float* s_next = nullptr;        // s_{t+c}
  const float* context = nullptr;       // G_t
  const float* context_next = nullptr;  // G_{t+c}
  float reward = 0.0f;                  // R = 0.1 x sum of the c task rewards
  float discount = 1.0f;                // 1, or 0 at episode end (unused for learning)
  const float* low_states = nullptr;    // c x obs: s_t .. s_{t+c-1}
  const float* low_actions = nullptr;   // c x act: a_t .. a_{t+c-1}
};

namespace record_detail {
inline std::byte* put_floats(std::byte* dst, const float* src, int n) noexcept {
  std::memcpy(dst, src, sizeof(float) * static_cast<std::size_t>(n));
  return dst + sizeof(float) * static_cast<std::size_t>(n);
}
inline std::byte* put_float(std::byte* dst, float v) noexcept { return put_floats(dst, &v, 1); }

// Checks that every float of the block is finite; names the first bad one.
inline bool check_finite(const std::byte* floats, int n, const char* record, std::string (*field_of)(int, const void*),
                         const void* layout, std::string* error) {
  for (int i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, floats + sizeof(float) * static_cast<std::size_t>(i), sizeof v);
    if (!std::isfinite(v)) {
      *error = std::string(record) + " value " + std::to_string(v) + " at " + field_of(i, layout) + " is not finite";
      return false;
    }
  }
  return true;
}
inline bool check_dim(const char* record, const char* name, int got, int want, std::string* error) {
  if (got == want) return true;
  *error = std::string(record) + " " + name + " " + std::to_string(got) + ", expected " + std::to_string(want);
  return false;
}
}  // namespace record_detail

/// Writes one low-level step into `dst` (transition_bytes(dims of h) bytes).
inline void encode_transition(std::byte* dst, const TransitionHeader& h, const TransitionFields& f) noexcept {
  std::memcpy(dst, &h, sizeof h);
  std::byte* p = dst + sizeof h;
  p = record_detail::put_floats(p, f.s, h.obs_dim);
  p = record_detail::put_floats(p, f.a, h.action_dim);
  p = record_detail::put_floats(p, f.s_next, h.obs_dim);
  p = record_detail::put_floats(p, f.g, h.goal_dim);
  p = record_detail::put_floats(p, f.g_next, h.goal_dim);
  p = record_detail::put_float(p, f.r_env);
  record_detail::put_float(p, f.discount);
}

/// Writes one high-level segment into `dst` (meta_transition_bytes(dims of h) bytes).
inline void encode_meta_transition(std::byte* dst, const MetaTransitionHeader& h,
                                   const MetaTransitionFields& f) noexcept {
  std::memcpy(dst, &h, sizeof h);
  std::byte* p = dst + sizeof h;
  p = record_detail::put_floats(p, f.s, h.obs_dim);
  p = record_detail::put_floats(p, f.g, h.goal_dim);
  p = record_detail::put_floats(p, f.s_next, h.obs_dim);
  p = record_detail::put_floats(p, f.context, h.context_dim);
  p = record_detail::put_floats(p, f.context_next, h.context_dim);
  p = record_detail::put_float(p, f.reward);
  p = record_detail::put_float(p, f.discount);
  p = record_detail::put_floats(p, f.low_states, h.steps * h.obs_dim);
  record_detail::put_floats(p, f.low_actions, h.steps * h.action_dim);
}

/// A decoded record: the header and the float block, aliasing the record bytes.
template <class Header>
struct RecordFloatsView {
  Header header{};
  const std::byte* floats = nullptr;  // the float block (possibly unaligned)
  int count = 0;                      // floats in the block

  /// Copies the whole block (the replay row) into `dst` (count floats).
  void copy_floats(float* dst) const noexcept {
    std::memcpy(dst, floats, sizeof(float) * static_cast<std::size_t>(count));
  }
  /// Float `i` of the block (offsets from the layout).
  float value(int i) const noexcept {
    float v;
    std::memcpy(&v, floats + sizeof(float) * static_cast<std::size_t>(i), sizeof v);
    return v;
  }
};
using TransitionView = RecordFloatsView<TransitionHeader>;
using MetaTransitionView = RecordFloatsView<MetaTransitionHeader>;

/// Validates and decodes a Transition against the learner's `dims`.
inline bool decode_transition(const std::byte* data, std::uint32_t bytes, const TransitionDims& dims,
                              TransitionView* out, std::string* error) {
  constexpr const char* kWhat = "transition record";
  if (bytes < sizeof(TransitionHeader)) {
    *error = std::string(kWhat) + " of " + std::to_string(bytes) + " bytes is shorter than its header";
    return false;
  }
  std::memcpy(&out->header, data, sizeof out->header);
  const TransitionHeader& h = out->header;
  if (!record_detail::check_dim(kWhat, "obs_dim", h.obs_dim, dims.obs_dim, error) ||
      !record_detail::check_dim(kWhat, "action_dim", h.action_dim, dims.action_dim, error) ||
      !record_detail::check_dim(kWhat, "goal_dim", h.goal_dim, dims.goal_dim, error))
    return false;
  if ((h.flags & ~kTransitionKnownFlags) != 0) {
    *error = std::string(kWhat) + " has unknown flags " + std::to_string(h.flags);
    return false;
  }
  if (bytes != transition_bytes(dims)) {
    *error = std::string(kWhat) + " of " + std::to_string(bytes) + " bytes, expected " +
             std::to_string(transition_bytes(dims)) + " for its dims";
    return false;
  }
  const TransitionLayout layout(dims);
  out->floats = data + sizeof(TransitionHeader);
  out->count = layout.floats();
  const auto field = [](int i, const void* l) -> std::string {
    const auto& L = *static_cast<const TransitionLayout*>(l);
    const char* name = i < L.a()          ? "s"
                       : i < L.s_next()   ? "a"
                       : i < L.g()        ? "s_next"
                       : i < L.g_next()   ? "g"
                       : i < L.r_env()    ? "g_next"
                       : i < L.discount() ? "r_env"
                                          : "discount";
    return std::string(name) + " (float " + std::to_string(i) + ")";
  };
  return record_detail::check_finite(out->floats, out->count, kWhat, field, &layout, error);
}

/// Validates and decodes a MetaTransition against the learner's `dims`.
inline bool decode_meta_transition(const std::byte* data, std::uint32_t bytes, const MetaTransitionDims& dims,
                                   MetaTransitionView* out, std::string* error) {
  constexpr const char* kWhat = "meta transition record";
  if (bytes < sizeof(MetaTransitionHeader)) {
    *error = std::string(kWhat) + " of " + std::to_string(bytes) + " bytes is shorter than its header";
    return false;
  }
  std::memcpy(&out->header, data, sizeof out->header);
  const MetaTransitionHeader& h = out->header;
  if (!record_detail::check_dim(kWhat, "obs_dim", h.obs_dim, dims.obs_dim, error) ||
      !record_detail::check_dim(kWhat, "action_dim", h.action_dim, dims.action_dim, error) ||
      !record_detail::check_dim(kWhat, "goal_dim", h.goal_dim, dims.goal_dim, error) ||
      !record_detail::check_dim(kWhat, "context_dim", h.context_dim, dims.context_dim, error) ||
      !record_detail::check_dim(kWhat, "steps", h.steps, dims.steps, error))
    return false;
  if ((h.flags & ~kTransitionKnownFlags) != 0) {
    *error = std::string(kWhat) + " has unknown flags " + std::to_string(h.flags);
    return false;
  }
  if (bytes != meta_transition_bytes(dims)) {
    *error = std::string(kWhat) + " of " + std::to_string(bytes) + " bytes, expected " +
             std::to_string(meta_transition_bytes(dims)) + " for its dims";
    return false;
  }
  const MetaTransitionLayout layout(dims);
  out->floats = data + sizeof(MetaTransitionHeader);
  out->count = layout.floats();
  const auto field = [](int i, const void* l) -> std::string {
    const auto& L = *static_cast<const MetaTransitionLayout*>(l);
    const char* name = i < L.g()              ? "s"
                       : i < L.s_next()       ? "g"
                       : i < L.context()      ? "s_next"
                       : i < L.context_next() ? "context"
                       : i < L.reward()       ? "context_next"
                       : i < L.discount()     ? "reward"
                       : i < L.low_states()   ? "discount"
                       : i < L.low_actions()  ? "low_states"
                                              : "low_actions";
    return std::string(name) + " (float " + std::to_string(i) + ")";
  };
  return record_detail::check_finite(out->floats, out->count, kWhat, field, &layout, error);
}

}  // namespace ringrl::hiro
