// Td3Agent against hand-computed values (spec hiro.md §4, §5): the smoothed, clipped and
// unclipped target, the minimum of the twins, Huber, the period-2 cadence from counter 0,
// the soft update of all three targets, the actor loss on Q1 only, init bounds, save/load,
// TensorFlow's Adam at its first steps and the reference's zero-gradient actor steps (both
// kernels). The reference forward passes below are independent double-precision code.
#include "learner/td3/td3.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"

namespace ringrl::td3 {
namespace {

using Vec = std::vector<double>;

// A linear layer read out of a module, in double.
struct Lin {
  int in = 0, out = 0;
  Vec w, b;  // w: out x in, row-major
  explicit Lin(const torch::nn::Linear& l) {
    const auto W = l->weight.detach().to(torch::kDouble).contiguous();
    const auto Bv = l->bias.detach().to(torch::kDouble).contiguous();
    out = static_cast<int>(W.size(0));
    in = static_cast<int>(W.size(1));
    w.assign(W.data_ptr<double>(), W.data_ptr<double>() + W.numel());
    b.assign(Bv.data_ptr<double>(), Bv.data_ptr<double>() + Bv.numel());
  }
  Vec operator()(const Vec& x) const {
    Vec y(static_cast<std::size_t>(out));
    for (int o = 0; o < out; ++o) {
      double s = b[static_cast<std::size_t>(o)];
      for (int i = 0; i < in; ++i) s += w[static_cast<std::size_t>(o * in + i)] * x[static_cast<std::size_t>(i)];
      y[static_cast<std::size_t>(o)] = s;
    }
    return y;
  }
};

Vec relu(Vec v) {
  for (double& x : v) x = std::max(0.0, x);
  return v;
}
Vec concat(Vec a, const Vec& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Vec masked(Vec x, int m) {
  for (int i = 0; i < m; ++i) x[static_cast<std::size_t>(i)] = 0.0;
  return x;
}

Vec actor_ref(Actor& net, const Vec& x, const Td3Shape& s) {
  const Vec h = relu(Lin(net->fc2)(relu(Lin(net->fc1)(masked(x, s.masked_inputs)))));
  const Vec o = Lin(net->out)(h);
  Vec a(o.size());
  for (std::size_t j = 0; j < o.size(); ++j) {
    const double lo = s.action_low[j], hi = s.action_high[j];
    a[j] = (hi + lo) / 2 + (hi - lo) / 2 * std::tanh(o[j]);
  }
  return a;
}

double critic_ref(Critic& net, const Vec& x, const Vec& a, const Td3Shape& s) {
  const Vec h1 = relu(Lin(net->fc1)(concat(masked(x, s.masked_inputs), a)));
  const Vec h2 = relu(Lin(net->fc2)(concat(h1, a)));
  return Lin(net->out)(h2)[0];
}

double huber_ref(double d) { return std::fabs(d) <= 1.0 ? 0.5 * d * d : std::fabs(d) - 0.5; }

Vec row(const torch::Tensor& t, std::int64_t i) {
  const auto r = t[i].to(torch::kDouble).contiguous();
  return Vec(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
}

// Sets every parameter of `m` to U(-scale, scale) (weights and biases), from torch's stream.
void randomize(torch::nn::Module& m, double scale) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.uniform_(-scale, scale);
}

Td3Options tiny_options() {
  Td3Options o;
  o.shape.input_dim = 3;
  o.shape.action_dim = 2;
  o.shape.action_low = {-2.0f, -1.0f};
  o.shape.action_high = {2.0f, 3.0f};
  o.shape.hidden1 = 4;
  o.shape.hidden2 = 5;
  o.seed = 11;
  return o;
}

// An agent with non-trivial online and target weights (targets differ from the online nets).
struct Tiny {
  Td3Options options;
  Td3Agent agent;
  explicit Tiny(Td3Options o = tiny_options()) : options(o), agent(o, torch::kCPU) {
    torch::manual_seed(3);
    for (torch::nn::Module* m :
         {static_cast<torch::nn::Module*>(agent.actor().get()), static_cast<torch::nn::Module*>(agent.critic1().get()),
          static_cast<torch::nn::Module*>(agent.critic2().get()),
          static_cast<torch::nn::Module*>(agent.actor_target().get()),
          static_cast<torch::nn::Module*>(agent.critic1_target().get()),
          static_cast<torch::nn::Module*>(agent.critic2_target().get())})
      randomize(*m, 0.8);
  }
};

Td3Batch tiny_batch(int B) {
  torch::manual_seed(9);
  return {torch::randn({B, 3}), torch::rand({B, 2}) * 2 - 1, torch::randn({B}), torch::randn({B, 3})};
}

std::vector<torch::Tensor> snapshot(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}
bool same(const std::vector<torch::Tensor>& a, torch::nn::Module& m) {
  const auto b = m.parameters();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

TEST(Td3, TargetSmoothsClipsDoesNotReclipAndTakesTheMinimum) {
  Tiny t;
  Td3Agent& ag = t.agent;
  const Td3Shape& s = t.options.shape;
  {
    // Push the target actor's first output to the top of its box: +noise leaves the box.
    torch::NoGradGuard no_grad;
    ag.actor_target()->out->bias[0].fill_(20.0);
    // Q2_targ = -Q1_targ, so min(Q1, Q2) = -|Q1|: rows pick Q1 or Q2 by the sign of Q1.
    auto c1 = ag.critic1_target()->parameters();
    auto c2 = ag.critic2_target()->parameters();
    for (std::size_t i = 0; i < c1.size(); ++i) c2[i].copy_(c1[i]);
    ag.critic2_target()->out->weight.neg_();
    ag.critic2_target()->out->bias.neg_();
  }
  const int B = 6;
  const Td3Batch b = tiny_batch(B);
  // Draws inside and beyond the clip (0.2 * 5 = 1.0 -> 0.5).
  const auto eps =
      torch::tensor({5.0f, -0.5f, -7.0f, 1.0f, 0.3f, 2.6f, -2.4f, 0.0f, 10.0f, -10.0f, 0.1f, -1.1f}).view({B, 2});
  const auto y = ag.target_q(b.r, b.x_next, eps);
  int q1_smaller = 0, q2_smaller = 0, outside_box = 0;
  for (int i = 0; i < B; ++i) {
    const Vec xn = row(b.x_next, i);
    Vec an = actor_ref(ag.actor_target(), xn, s);
    for (int j = 0; j < 2; ++j) {
      const double noise = std::clamp(0.2 * static_cast<double>(eps[i][j].item<float>()), -0.5, 0.5);
      an[static_cast<std::size_t>(j)] += noise;  // no clip back to the box
      if (an[static_cast<std::size_t>(j)] > s.action_high[static_cast<std::size_t>(j)]) ++outside_box;
    }
    const double q1 = critic_ref(ag.critic1_target(), xn, an, s);
    const double q2 = critic_ref(ag.critic2_target(), xn, an, s);
    (q1 < q2 ? q1_smaller : q2_smaller)++;
    const double want = b.r[i].item<double>() + 0.99 * std::min(q1, q2);
    EXPECT_NEAR(y[i].item<double>(), want, 1e-5) << "row " << i;
  }
  EXPECT_GT(outside_box, 0);  // the unclipped path is exercised
  EXPECT_GT(q1_smaller, 0);   // both twins win somewhere
  EXPECT_GT(q2_smaller, 0);
}

TEST(Td3, CriticLossIsTheMeanHuberOverBothCritics) {
  Tiny t;
  Td3Agent& ag = t.agent;
  const Td3Shape& s = t.options.shape;
  const int B = 5;
  const Td3Batch b = tiny_batch(B);
  std::vector<double> q1(B), q2(B);
  for (int i = 0; i < B; ++i) {
    q1[static_cast<std::size_t>(i)] = critic_ref(ag.critic1(), row(b.x, i), row(b.a, i), s);
    q2[static_cast<std::size_t>(i)] = critic_ref(ag.critic2(), row(b.x, i), row(b.a, i), s);
  }
  // Targets at both sides of |d| = 1 for Q1.
  const double offsets[B] = {0.3, -2.5, 0.9, 4.0, -0.1};
  auto y = torch::empty({B});
  for (int i = 0; i < B; ++i) y[i] = q1[static_cast<std::size_t>(i)] + offsets[i];
  double want = 0.0;
  for (int i = 0; i < B; ++i) {
    const double yi = y[i].item<double>();
    want += huber_ref(q1[static_cast<std::size_t>(i)] - yi) + huber_ref(q2[static_cast<std::size_t>(i)] - yi);
  }
  want /= 2.0 * B;
  EXPECT_NEAR(ag.critic_loss(b.x, b.a, y).item<double>(), want, 1e-5);
  // Huber itself.
  const auto h = huber(torch::tensor({-3.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 2.0f}));
  const double hv[] = {2.5, 0.5, 0.125, 0.0, 0.03125, 0.5, 1.5};
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(h[i].item<double>(), hv[i], 1e-7);
  // update() reports the loss against the smoothed target computed before its step.
  const auto eps = torch::randn({B, 2});
  const double before = ag.critic_loss(b.x, b.a, ag.target_q(b.r, b.x_next, eps)).item<double>();
  const Td3Stats st = ag.update(b, eps);
  EXPECT_NEAR(st.critic_loss.item<double>(), before, 1e-6);
}

TEST(Td3, ActorAndTargetsMoveEverySecondUpdateFromCounterZero) {
  Tiny t;
  Td3Agent& ag = t.agent;
  const Td3Batch b = tiny_batch(8);
  const double tau = t.options.tau;
  for (int u = 0; u < 5; ++u) {
    const auto actor0 = snapshot(*ag.actor());
    const auto c10 = snapshot(*ag.critic1());
    const auto targets0 = std::vector<std::vector<torch::Tensor>>{
        snapshot(*ag.actor_target()), snapshot(*ag.critic1_target()), snapshot(*ag.critic2_target())};
    EXPECT_EQ(ag.counter(), u);
    const Td3Stats st = ag.update(b);
    EXPECT_EQ(ag.counter(), u + 1);
    EXPECT_FALSE(same(c10, *ag.critic1())) << "critics step every update";
    const bool on = u % 2 == 0;
    EXPECT_EQ(st.actor_step, on) << u;
    EXPECT_EQ(st.actor_loss.defined(), on) << u;
    EXPECT_EQ(same(actor0, *ag.actor()), !on) << "actor at update " << u;
    // Soft update of all three targets with the freshly stepped online nets, or none at all.
    torch::nn::Module* online[3] = {ag.actor().get(), ag.critic1().get(), ag.critic2().get()};
    torch::nn::Module* target[3] = {ag.actor_target().get(), ag.critic1_target().get(), ag.critic2_target().get()};
    for (int n = 0; n < 3; ++n) {
      const auto o = online[n]->parameters();
      const auto tg = target[n]->parameters();
      for (std::size_t i = 0; i < tg.size(); ++i) {
        if (on) {
          const auto want = targets0[static_cast<std::size_t>(n)][i] * (1 - tau) + o[i].detach() * tau;
          EXPECT_TRUE(torch::allclose(tg[i], want, /*rtol=*/1e-6, /*atol=*/1e-7)) << "net " << n << " param " << i;
          EXPECT_FALSE(torch::equal(tg[i], targets0[static_cast<std::size_t>(n)][i])) << "net " << n << " param " << i;
        } else {
          EXPECT_TRUE(torch::equal(tg[i], targets0[static_cast<std::size_t>(n)][i])) << "net " << n << " param " << i;
        }
      }
    }
  }
}

TEST(Td3, PeriodIsAParameter) {
  Td3Options o = tiny_options();
  o.update_period = 3;
  Tiny t(o);
  const Td3Batch b = tiny_batch(4);
  std::vector<bool> steps;
  for (int u = 0; u < 7; ++u) steps.push_back(t.agent.update(b).actor_step);
  EXPECT_EQ(steps, (std::vector<bool>{true, false, false, true, false, false, true}));
}

TEST(Td3, ActorLossUsesQ1Only) {
  Td3Options o = tiny_options();
  o.critic_lr = 0.0;  // critics stay put, so the hand value uses the initial weights
  Tiny a(o), b(o);
  {
    // b differs from a only in Q2 (online and target).
    torch::NoGradGuard no_grad;
    torch::manual_seed(77);
    randomize(*b.agent.critic2(), 2.0);
    randomize(*b.agent.critic2_target(), 2.0);
  }
  const Td3Batch batch = tiny_batch(7);
  const Td3Shape& s = o.shape;
  double want = 0.0;
  double q_before = 0.0;
  for (int i = 0; i < 7; ++i) {
    const Vec x = row(batch.x, i);
    const double q = critic_ref(a.agent.critic1(), x, actor_ref(a.agent.actor(), x, s), s);
    want -= q / 7.0;
    q_before += q;
  }
  const auto eps = torch::randn({7, 2});
  const Td3Stats sa = a.agent.update(batch, eps);
  const Td3Stats sb = b.agent.update(batch, eps);
  ASSERT_TRUE(sa.actor_step);
  EXPECT_NEAR(sa.actor_loss.item<double>(), want, 1e-5);
  EXPECT_EQ(sa.actor_loss.item<float>(), sb.actor_loss.item<float>());
  const auto pa = a.agent.actor()->parameters();
  const auto pb = b.agent.actor()->parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << i;
  // The step raised Q1 of the actor's own actions.
  double q_after = 0.0;
  for (int i = 0; i < 7; ++i) {
    const Vec x = row(batch.x, i);
    q_after += critic_ref(a.agent.critic1(), x, actor_ref(a.agent.actor(), x, s), s);
  }
  EXPECT_GT(q_after, q_before);
}

TEST(Td3, InitBoundsZeroBiasesAndHardCopiedTargets) {
  Td3Options o;
  o.shape.input_dim = 45;
  o.shape.action_dim = 8;
  o.shape.action_low.assign(8, -30.0f);
  o.shape.action_high.assign(8, 30.0f);
  Td3Agent ag(o, torch::kCPU);
  const auto check = [](const torch::nn::Linear& l, double bound, const char* what) {
    const double m = l->weight.abs().max().item<double>();
    EXPECT_LE(m, bound) << what;
    EXPECT_GT(m, 0.9 * bound) << what;
    EXPECT_EQ(l->bias.abs().max().item<double>(), 0.0) << what;
  };
  check(ag.actor()->fc1, 1.0 / std::sqrt(45.0), "actor fc1");
  check(ag.actor()->fc2, 1.0 / std::sqrt(300.0), "actor fc2");
  check(ag.actor()->out, 0.003, "actor out");
  for (Critic* c : {&ag.critic1(), &ag.critic2()}) {
    check((*c)->fc1, 1.0 / std::sqrt(53.0), "critic fc1");
    check((*c)->fc2, 1.0 / std::sqrt(308.0), "critic fc2");
    check((*c)->out, 0.003, "critic out");
  }
  EXPECT_FALSE(torch::equal(ag.critic1()->fc1->weight, ag.critic2()->fc1->weight));
  const auto eq = [](torch::nn::Module& x, torch::nn::Module& y) {
    const auto a = x.parameters(), b = y.parameters();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!torch::equal(a[i], b[i])) return false;
    return true;
  };
  EXPECT_TRUE(eq(*ag.actor(), *ag.actor_target()));
  EXPECT_TRUE(eq(*ag.critic1(), *ag.critic1_target()));
  EXPECT_TRUE(eq(*ag.critic2(), *ag.critic2_target()));
  // Untrained actor outputs are near the box middle (U(+-0.003) output layer, §12.23).
  EXPECT_LT(ag.act(torch::randn({16, 45})).abs().max().item<double>(), 30.0 * 0.05);
}

TEST(Td3, FlatTd3IsOneConfiguration) {
  // No hierarchy: obs (+) G -> env torques (the paper's "no HRL" baseline), same pieces.
  Td3Options o;
  o.shape.input_dim = 30 + 2;
  o.shape.action_dim = 8;
  o.shape.action_low.assign(8, -30.0f);
  o.shape.action_high.assign(8, 30.0f);
  o.shape.hidden1 = 32;
  o.shape.hidden2 = 32;
  Td3Agent ag(o, torch::kCPU);
  EXPECT_EQ(ag.critic1()->fc1->weight.size(1), 40);
  EXPECT_EQ(ag.critic1()->fc2->weight.size(1), 40);
  torch::manual_seed(4);
  const Td3Batch b{torch::randn({16, 32}), torch::rand({16, 8}) * 60 - 30, torch::randn({16}), torch::randn({16, 32})};
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(ag.update(b).critic_loss.item<double>()));
  EXPECT_EQ(ag.counter(), 4);
}

TEST(Td3, OptionsAreValidated) {
  const auto bad = [](auto edit) {
    Td3Options o = tiny_options();
    edit(o);
    EXPECT_THROW(Td3Agent(o, torch::kCPU), UsageError);
  };
  bad([](Td3Options& o) { o.shape.input_dim = 0; });
  bad([](Td3Options& o) { o.shape.action_low.pop_back(); });
  bad([](Td3Options& o) { o.shape.masked_inputs = 4; });
  bad([](Td3Options& o) { o.shape.action_low[0] = 5.0f; });
  bad([](Td3Options& o) { o.tau = 1.5; });
  bad([](Td3Options& o) { o.update_period = 0; });
  bad([](Td3Options& o) { o.actor_lr = -1.0; });
  bad([](Td3Options& o) { o.threads = 0; });
  bad([](Td3Options& o) { o.threads = kMaxTaskThreads + 1; });
}

TEST(Td3, SaveLoadGivesBitIdenticalUpdates) {
  Td3Options o = tiny_options();
  Td3Agent a(o, torch::kCPU);
  const Td3Batch b = tiny_batch(10);
  for (int i = 0; i < 3; ++i) a.update(b);
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  a.save(w);
  o.seed = 999;  // the checkpoint, not the seed, decides
  Td3Agent c(o, torch::kCPU);
  MemorySource src(bytes);
  ByteReader rd(src, "td3 test");
  c.load(rd);
  rd.expect_end();
  EXPECT_EQ(c.counter(), 3);
  for (int i = 0; i < 5; ++i) {
    const auto la = a.update(b).critic_loss.item<float>();
    const auto lc = c.update(b).critic_loss.item<float>();
    EXPECT_EQ(la, lc) << i;
  }
  const auto pa = a.critic2_target()->parameters();
  const auto pc = c.critic2_target()->parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pc[i]));
  // A checkpoint of another shape is refused.
  Td3Options other = tiny_options();
  other.shape.hidden2 = 6;
  Td3Agent d(other, torch::kCPU);
  MemorySource src2(bytes);
  ByteReader rd2(src2, "td3 test");
  EXPECT_THROW(d.load(rd2), CorruptData);
}

// ---------------------------------------------------------------- Adam (both kernels)

class Td3Adam : public ::testing::TestWithParam<Td3Kernel> {};

// The critics' and the actor's parameters as Adam lists them (Q1's then Q2's).
std::vector<torch::Tensor> critic_params(Td3Agent& a) {
  auto v = snapshot(*a.critic1());
  for (auto& t : snapshot(*a.critic2())) v.push_back(t);
  return v;
}

// TensorFlow's Adam step t from its moments (double): -lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps).
double tf_step(double lr, int t, double m, double v) {
  return -lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t)) * m / (std::sqrt(v) + 1e-8);
}
// PyTorch's: -lr / (1 - b1^t) m / (sqrt(v / (1 - b2^t)) + eps).
double torch_step(double lr, int t, double m, double v) {
  return -lr / (1 - std::pow(0.9, t)) * m / (std::sqrt(v / (1 - std::pow(0.999, t))) + 1e-8);
}
// What float rounding allows between a hand step and an observed one on a weight of size |w|.
double step_tolerance(double step, double w) { return 1e-5 * std::fabs(step) + 2 * std::ldexp(std::fabs(w), -23); }

// A batch whose input columns span 1 to 1e-8, so the first layers' gradients range from
// O(0.1) down to where sqrt(v) is near eps, and the two Adam forms part.
Td3Batch spread_batch(int B) {
  Td3Batch b = tiny_batch(B);
  const auto scale = torch::tensor({1.0f, 1e-6f, 1e-8f});
  b.x = b.x * scale;
  b.x_next = b.x_next * scale;
  return b;
}

// Steps 1 and 2 of both optimisers against TensorFlow's Adam computed here from the moments
// each step left: each weight moved by exactly -lr_t m / (sqrt(v) + eps), and the moments are
// those of one gradient (v = (1 - b2) g^2 with g = m / (1 - b1) at step 1). On this batch
// PyTorch's form predicts other steps for many weights (the old ringrl Adam).
TEST_P(Td3Adam, TensorFlowFormAtTheFirstSteps) {
  Td3Options o = tiny_options();
  o.kernel = GetParam();
  o.update_period = 1;  // the actor steps at every update too
  Tiny t(o);
  Td3Agent& ag = t.agent;
  EXPECT_EQ(o.adam_form, AdamForm::kTensorFlow) << "the default";
  const Td3Batch b = spread_batch(8);
  int parted = 0;
  for (int step = 1; step <= 2; ++step) {
    const auto critics0 = critic_params(ag);
    const auto actor0 = snapshot(*ag.actor());
    const AdamSnapshot c0 = ag.critic_adam(), a0 = ag.actor_adam();
    ag.update(b);
    const AdamSnapshot c1 = ag.critic_adam(), a1 = ag.actor_adam();
    ASSERT_EQ(c1.steps, step);
    ASSERT_EQ(a1.steps, step);
    const std::pair<const std::vector<torch::Tensor>*, double> groups[] = {{&critics0, o.critic_lr},
                                                                           {&actor0, o.actor_lr}};
    const std::vector<torch::Tensor> now[] = {critic_params(ag), snapshot(*ag.actor())};
    const AdamSnapshot* states[] = {&c1, &a1};
    const AdamSnapshot* before[] = {&c0, &a0};
    for (int gi = 0; gi < 2; ++gi) {
      const auto& [params0, lr] = groups[gi];
      for (std::size_t k = 0; k < params0->size(); ++k) {
        const auto w0 = (*params0)[k].to(torch::kDouble).flatten();
        const auto w1 = now[gi][k].to(torch::kDouble).flatten();
        const auto m = states[gi]->m[k].to(torch::kDouble).flatten();
        const auto v = states[gi]->v[k].to(torch::kDouble).flatten();
        for (std::int64_t i = 0; i < w0.numel(); ++i) {
          const double mi = m[i].item<double>(), vi = v[i].item<double>(), p0 = w0[i].item<double>();
          if (step == 1) {
            const double g = mi / 0.1;
            EXPECT_NEAR(vi, 0.001 * g * g, 1e-4 * vi + 1e-30) << "group " << gi << " tensor " << k << " [" << i << "]";
          } else {
            // v after step 2 holds the first step's v decayed; a sign of the moments' bookkeeping.
            EXPECT_GE(vi, 0.999 * before[gi]->v[k].flatten()[i].item<double>() * (1 - 1e-6));
          }
          const double want = tf_step(lr, step, mi, vi);
          const double got = w1[i].item<double>() - p0;
          const double tol = step_tolerance(want, p0);
          ASSERT_NEAR(got, want, tol) << "group " << gi << " tensor " << k << " [" << i << "], step " << step;
          if (std::fabs(torch_step(lr, step, mi, vi) - want) > 20 * tol) ++parted;
        }
      }
    }
  }
  EXPECT_GT(parted, 10) << "the batch must make the two forms differ measurably";
}

// The PyTorch form stays available (adam_form = torch): the same check with its formula.
TEST_P(Td3Adam, PyTorchFormOnRequest) {
  Td3Options o = tiny_options();
  o.kernel = GetParam();
  o.adam_form = AdamForm::kPyTorch;
  Tiny t(o);
  const auto critics0 = critic_params(t.agent);
  t.agent.update(spread_batch(8));
  const AdamSnapshot c = t.agent.critic_adam();
  const auto now = critic_params(t.agent);
  for (std::size_t k = 0; k < now.size(); ++k) {
    const auto w0 = critics0[k].to(torch::kDouble).flatten(), w1 = now[k].to(torch::kDouble).flatten();
    const auto m = c.m[k].to(torch::kDouble).flatten(), v = c.v[k].to(torch::kDouble).flatten();
    for (std::int64_t i = 0; i < w0.numel(); ++i) {
      const double want = torch_step(o.critic_lr, 1, m[i].item<double>(), v[i].item<double>());
      ASSERT_NEAR(w1[i].item<double>() - w0[i].item<double>(), want, step_tolerance(want, w0[i].item<double>()))
          << k << " [" << i << "]";
    }
  }
  EXPECT_EQ(parse_adam_form("tf"), AdamForm::kTensorFlow);
  EXPECT_EQ(parse_adam_form("torch"), AdamForm::kPyTorch);
  EXPECT_THROW(parse_adam_form("adamw"), UsageError);
}

// actor_zero_grad_steps: on the off updates of the period the actor's Adam takes a step with
// a zero gradient (the reference multiplies its actor loss by 0 and still steps). Checked
// against Adam's recursion computed here: the actor gradient of the on updates comes from
// autograd on a copy of the actor (through the agent's just-updated Q1), the off updates' is 0;
// m, v, the step count and every actor weight must follow. Without the switch the off updates
// leave the actor and its Adam state alone.
TEST_P(Td3Adam, ZeroGradientActorStepsOnOffUpdates) {
  for (const bool zero_steps : {true, false}) {
    SCOPED_TRACE(zero_steps ? "actor_zero_grad_steps" : "true skip");
    Td3Options o = tiny_options();
    o.kernel = GetParam();
    o.actor_lr = 1e-2;  // visible moves
    o.actor_zero_grad_steps = zero_steps;
    Tiny t(o);
    Td3Agent& ag = t.agent;
    const Td3Batch b = tiny_batch(8);
    const auto params = ag.actor()->parameters();
    std::vector<torch::Tensor> m, v;  // the reference's moments (double)
    for (const auto& p : params) {
      m.push_back(torch::zeros(p.sizes(), torch::kDouble));
      v.push_back(torch::zeros(p.sizes(), torch::kDouble));
    }
    std::int64_t steps = 0;
    for (int u = 0; u < 6; ++u) {
      const bool on = u % 2 == 0;
      const auto before = snapshot(*ag.actor());
      ag.update(b);
      // The gradient the reference applies: -d mean Q1(x, mu(x)) / d theta on the on updates
      // (Q1 as just updated; the actor step does not touch it), 0 on the off ones.
      std::vector<torch::Tensor> grads;
      if (on) {
        Actor copy(o.shape);
        {
          torch::NoGradGuard no_grad;
          auto dst = copy->parameters();
          for (std::size_t k = 0; k < dst.size(); ++k) dst[k].copy_(before[k]);
        }
        const auto loss = -ag.critic1()->forward(b.x, copy->forward(b.x)).mean();
        grads = torch::autograd::grad({loss}, copy->parameters());
      }
      if (!on && !zero_steps) {
        EXPECT_TRUE(same(before, *ag.actor())) << "update " << u;
        continue;
      }
      ++steps;
      const double t1 = static_cast<double>(steps);
      const double lr_t = o.actor_lr * std::sqrt(1 - std::pow(0.999, t1)) / (1 - std::pow(0.9, t1));
      const AdamSnapshot got = ag.actor_adam();
      ASSERT_EQ(got.steps, steps) << "update " << u;
      const auto now = ag.actor()->parameters();
      bool moved = false;
      for (std::size_t k = 0; k < params.size(); ++k) {
        const auto g = on ? grads[k].detach().to(torch::kDouble) : torch::zeros_like(m[k]);
        m[k] = 0.9 * m[k] + 0.1 * g;
        v[k] = 0.999 * v[k] + 0.001 * g * g;
        EXPECT_TRUE(torch::allclose(got.m[k].to(torch::kDouble), m[k], 1e-4, 1e-9)) << "m, update " << u << " " << k;
        EXPECT_TRUE(torch::allclose(got.v[k].to(torch::kDouble), v[k], 1e-4, 1e-12)) << "v, update " << u << " " << k;
        const auto want = before[k].to(torch::kDouble) - lr_t * m[k] / (v[k].sqrt() + 1e-8);
        EXPECT_TRUE(torch::allclose(now[k].detach().to(torch::kDouble), want, 1e-5, 1e-6))
            << "weights, update " << u << " " << k;
        moved = moved || !torch::equal(now[k], before[k]);
      }
      EXPECT_TRUE(moved) << "every actor step moves the actor, also with a zero gradient; update " << u;
    }
    EXPECT_EQ(ag.actor_adam().steps, zero_steps ? 6 : 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, Td3Adam, ::testing::Values(Td3Kernel::kFused, Td3Kernel::kEager),
                         [](const ::testing::TestParamInfo<Td3Kernel>& p) { return td3_kernel_name(p.param); });

}  // namespace
}  // namespace ringrl::td3
