#include "common/runfiles/config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/common/runfiles/temp_dir.h"

namespace ringrl::runfiles {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

Config sample() {
  return json::parse(R"({
    "batch_size": 64,
    "lr": 5e-05,
    "eos_token": false,
    "task": "reverse",
    "policy_lstm_sizes": [35, 35],
    "weights": [0.5, 1.0],
    "tags": [],
    "seed": null,
    "optimizer": {"name": "rmsprop", "decay": 0.99},
    "presets": {
      "fast": {"batch_size": 8, "lr": 1, "optimizer.decay": 0.9},
      "broken": {"batch_size": "eight"}
    }
  })");
}

// The UsageError message of `fn`, or "" if it does not throw one.
template <class Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, ParseOverrideValue) {
  EXPECT_EQ(parse_override_value("1e-4"), json(1e-4));
  EXPECT_EQ(parse_override_value("64"), json(64));
  EXPECT_EQ(parse_override_value("true"), json(true));
  EXPECT_EQ(parse_override_value("null"), json(nullptr));
  EXPECT_EQ(parse_override_value("[1, 2]"), json::array({1, 2}));
  EXPECT_EQ(parse_override_value("abc"), json("abc"));
  EXPECT_EQ(parse_override_value("\"quoted\""), json("quoted"));
  EXPECT_EQ(parse_override_value(""), json(""));
}

TEST(Config, OverridesOfEachType) {
  Config cfg = sample();
  apply_overrides(cfg, {"batch_size=128", "lr=1e-4", "eos_token=true", "task=remove-char",
                        "policy_lstm_sizes=[64,64,64]", "optimizer.name=adam", "tags=[\"a\"]"});
  EXPECT_EQ(cfg["batch_size"], 128);
  EXPECT_DOUBLE_EQ(cfg["lr"].get<double>(), 1e-4);
  EXPECT_EQ(cfg["eos_token"], true);
  EXPECT_EQ(cfg["task"], "remove-char");
  EXPECT_EQ(cfg["policy_lstm_sizes"], json::array({64, 64, 64}));
  EXPECT_EQ(cfg["optimizer"]["name"], "adam");
  EXPECT_EQ(cfg["tags"], json::array({"a"}));
}

TEST(Config, IntegerIntoFloatSlotStaysFloat) {
  Config cfg = sample();
  apply_override(cfg, "lr=1");
  EXPECT_TRUE(cfg["lr"].is_number_float());
  EXPECT_EQ(cfg["lr"].get<double>(), 1.0);
  apply_override(cfg, "weights=[1, 2.5]");
  EXPECT_TRUE(cfg["weights"][0].is_number_float());
}

TEST(Config, IntegralFloatIntoIntegerSlot) {
  Config cfg = sample();
  apply_override(cfg, "batch_size=2e3");
  EXPECT_TRUE(cfg["batch_size"].is_number_integer());
  EXPECT_EQ(cfg["batch_size"], 2000);
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "batch_size=1.5"); }),
            "--set batch_size=1.5: expected an integer (default 2000)");
}

TEST(Config, StringSlotTakesRawText) {
  Config cfg = sample();
  apply_override(cfg, "task=123");
  EXPECT_EQ(cfg["task"], "123");
  apply_override(cfg, "task=\"x y\"");
  EXPECT_EQ(cfg["task"], "x y");
}

TEST(Config, TypeChangesAreOneLineUsageErrors) {
  Config cfg = sample();
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "batch_size=abc"); }),
            "--set batch_size=abc: expected an integer (default 64)");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "lr=fast"); }), "--set lr=fast: expected a number (default 5e-05)");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "policy_lstm_sizes=3"); }),
            "--set policy_lstm_sizes=3: expected a list of integers (default [35,35])");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "policy_lstm_sizes=[3,4.5]"); }),
            "--set policy_lstm_sizes=[3,4.5]: expected a list of integers (default [35,35])");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "eos_token=1"); }),
            "--set eos_token=1: expected a boolean (default false)");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optimizer=3"); }),
            "--set optimizer=3: expected a group of settings "
            "(default {\"decay\":0.99,\"name\":\"rmsprop\"})");
  EXPECT_EQ(cfg, sample());
}

TEST(Config, UnknownKeys) {
  Config cfg = sample();
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "batch_sise=3"); }),
            "--set batch_sise=3: unknown key 'batch_sise' (did you mean 'batch_size'?)");
  std::string msg = usage_error([&] { apply_override(cfg, "optimizer.momentumxyz=0.5"); });
  EXPECT_EQ(msg,
            "--set optimizer.momentumxyz=0.5: unknown key 'optimizer.momentumxyz' "
            "(known keys in 'optimizer': decay, name)");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "lr.x=1"); }), "--set lr.x=1: 'lr' is not a group (it is a number)");
  EXPECT_NE(usage_error([&] { apply_override(cfg, "a..b=1"); }), "");
}

TEST(Config, MalformedAssignment) {
  Config cfg = sample();
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "batch_size"); }),
            "--set batch_size: expected key=value (e.g. batch_size=64)");
  EXPECT_NE(usage_error([&] { apply_override(cfg, "=3"); }), "");
}

TEST(Config, NullSlotAcceptsAnyValue) {
  Config cfg = sample();
  apply_override(cfg, "seed=17");
  EXPECT_EQ(cfg["seed"], 17);
}

TEST(Config, ObjectValueMergesStrictly) {
  Config cfg = sample();
  apply_override(cfg, "optimizer={\"decay\": 1}");
  EXPECT_EQ(cfg["optimizer"]["name"], "rmsprop");
  EXPECT_TRUE(cfg["optimizer"]["decay"].is_number_float());
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optimizer={\"decay\": \"x\"}"); }),
            "--set optimizer.decay=\"x\": expected a number (default 1.0)");
}

TEST(Config, FailedOverrideListLeavesConfigUnchanged) {
  Config cfg = sample();
  EXPECT_THROW(apply_overrides(cfg, {"batch_size=1", "lr=oops"}), UsageError);
  EXPECT_EQ(cfg, sample());
}

TEST(Config, SetStrictUsesTheGivenOrigin) {
  Config cfg = sample();
  set_strict(cfg, "optimizer.decay", json(0.5), "test:");
  EXPECT_EQ(cfg["optimizer"]["decay"], 0.5);
  EXPECT_EQ(usage_error([&] { set_strict(cfg, "task", json(3), "test:"); }),
            "test: task=3: expected a string (default \"reverse\")");
}

TEST(Config, Presets) {
  Config cfg = sample();
  EXPECT_EQ(preset_names(cfg), (std::vector<std::string>{"broken", "fast"}));
  apply_preset(cfg, "fast");
  EXPECT_EQ(cfg["batch_size"], 8);
  EXPECT_EQ(cfg["lr"], 1.0);
  EXPECT_EQ(cfg["optimizer"]["decay"], 0.9);
  EXPECT_EQ(usage_error([&] { apply_preset(cfg, "slow"); }), "unknown preset 'slow' (available: broken, fast)");
  Config before = cfg;
  EXPECT_EQ(usage_error([&] { apply_preset(cfg, "broken"); }),
            "preset 'broken': batch_size=\"eight\": expected an integer (default 8)");
  EXPECT_EQ(cfg, before);
  Config none = json::parse(R"({"a": 1})");
  EXPECT_EQ(usage_error([&] { apply_preset(none, "x"); }), "unknown preset 'x' (this config defines no presets)");
}

TEST(Config, LoadConfigErrors) {
  TempDir dir;
  EXPECT_NE(usage_error([&] { load_config(dir / "missing.json"); }).find("missing.json"), std::string::npos);
  write_file(dir / "bad.json", "{\"a\": 1,,}");
  std::string msg = usage_error([&] { load_config(dir / "bad.json"); });
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 1"), std::string::npos) << msg;
  write_file(dir / "list.json", "[1]");
  EXPECT_NE(usage_error([&] { load_config(dir / "list.json"); }).find("object"), std::string::npos);
  write_file(dir / "presets.json", "{\"presets\": {\"p\": 3}}");
  EXPECT_NE(usage_error([&] { load_config(dir / "presets.json"); }).find("'p'"), std::string::npos);
}

TEST(Config, WriteResolvedRoundTrips) {
  TempDir dir;
  Config cfg = sample();
  apply_override(cfg, "batch_size=7");
  std::filesystem::path p = write_resolved(cfg, dir / "run");
  EXPECT_EQ(p, dir / "run" / "config.json");
  EXPECT_EQ(load_config(p), cfg);
  EXPECT_EQ(read_file(p).back(), '\n');
  write_resolved(sample(), dir / "run");
  EXPECT_EQ(load_config(p)["batch_size"], 64);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "run"), std::filesystem::directory_iterator()), 1);
}

TEST(Config, TypedGetters) {
  Config cfg = sample();
  EXPECT_EQ(get<int>(cfg, "batch_size"), 64);
  EXPECT_EQ(get<int64_t>(cfg, "batch_size"), 64);
  EXPECT_EQ(get<double>(cfg, "batch_size"), 64.0);
  EXPECT_EQ(get<float>(cfg, "lr"), 5e-05f);
  EXPECT_EQ(get<bool>(cfg, "eos_token"), false);
  EXPECT_EQ(get<std::string>(cfg, "optimizer.name"), "rmsprop");
  EXPECT_EQ(get<std::vector<int>>(cfg, "policy_lstm_sizes"), (std::vector<int>{35, 35}));
  EXPECT_EQ(get<std::vector<double>>(cfg, "weights"), (std::vector<double>{0.5, 1.0}));
  EXPECT_EQ(get<json>(cfg, "optimizer")["decay"], 0.99);
  EXPECT_TRUE(has(cfg, "optimizer.decay"));
  EXPECT_FALSE(has(cfg, "optimizer.nope"));
  EXPECT_FALSE(has(cfg, "lr.x"));

  EXPECT_EQ(usage_error([&] { get<int>(cfg, "lr"); }), "config key 'lr': expected an integer, got 5e-05");
  EXPECT_EQ(usage_error([&] { get<int>(cfg, "nope"); }), "config key 'nope' is missing");
  EXPECT_EQ(usage_error([&] { get<bool>(cfg, "batch_size"); }), "config key 'batch_size': expected a boolean, got 64");
  EXPECT_EQ(usage_error([&] { get<std::vector<std::string>>(cfg, "policy_lstm_sizes"); }),
            "config key 'policy_lstm_sizes[0]': expected a string, got 35");
  Config big = json::parse(R"({"n": 5000000000, "neg": -1})");
  EXPECT_EQ(get<int64_t>(big, "n"), 5000000000);
  EXPECT_THROW(get<int>(big, "n"), UsageError);
  EXPECT_THROW(get<uint64_t>(big, "neg"), UsageError);
}

// An unsigned key refuses every value that is not a whole number in its range, with the
// message of common/parse_number.h naming the key, the value as typed and the range.
TEST(Config, UnsignedOverridesRefuseNegativesFractionsAndOverflow) {
  const UnsignedKeys keys = {{"batch_size", 1, 4096}, {"seed"}};
  const std::string kMax = "18446744073709551615";
  struct Case {
    std::string assignment, message;
  };
  const std::vector<Case> cases = {
      {"batch_size=-1", "--set batch_size '-1': expected a whole number from 1 to 4096"},
      {"batch_size=1.5", "--set batch_size '1.5': expected a whole number from 1 to 4096"},
      {"batch_size=abc", "--set batch_size 'abc': expected a whole number from 1 to 4096"},
      {"batch_size=0", "--set batch_size '0': expected a whole number from 1 to 4096"},
      {"batch_size=4097", "--set batch_size '4097': expected a whole number from 1 to 4096"},
      {"batch_size=1e30", "--set batch_size '1e30': expected a whole number from 1 to 4096"},
      {"seed=-3", "--set seed '-3': expected a whole number from 0 to " + kMax},
      {"seed=18446744073709551616", "--set seed '18446744073709551616': expected a whole number from 0 to " + kMax},
      {"seed=\"7\"", "--set seed '\"7\"': expected a whole number from 0 to " + kMax},
      {"seed=[1]", "--set seed '[1]': expected a whole number from 0 to " + kMax},
  };
  for (const Case& c : cases) {
    Config cfg = json::parse(R"({"batch_size": 64, "seed": 0})");
    const Config before = cfg;
    EXPECT_EQ(usage_error([&] { apply_overrides(cfg, {c.assignment}, keys); }), c.message) << c.assignment;
    EXPECT_EQ(cfg, before) << c.assignment;
  }
  // In range, including an integral float (`2e3`) and spaces JSON allows around a number.
  Config cfg = json::parse(R"({"batch_size": 64, "seed": 0})");
  apply_overrides(cfg, {"batch_size=2e3", "seed=" + kMax}, keys);
  EXPECT_EQ(get_unsigned(cfg, keys[0]), 2000u);
  EXPECT_EQ(get_unsigned(cfg, keys[1]), std::numeric_limits<std::uint64_t>::max());
  apply_overrides(cfg, {"batch_size= 8"}, keys);
  EXPECT_EQ(get_unsigned<int>(cfg, keys[0]), 8);
  // Keys outside the table keep the plain strict rules.
  Config other = json::parse(R"({"batch_size": 64, "offset": 0})");
  apply_overrides(other, {"offset=-2"}, keys);
  EXPECT_EQ(get<int>(other, "offset"), -2);
}

TEST(Config, UnsignedGettersRefuseFileValues) {
  const UnsignedKey batch{"batch_size", 1, 4096};
  const std::string suffix = "': expected a whole number from 1 to 4096";
  for (const char* text : {"-1", "1.5", "\"abc\"", "18446744073709551616", "1e30", "64.0", "0", "null"}) {
    const Config cfg = json::parse(std::string(R"({"batch_size": )") + text + "}");
    EXPECT_EQ(usage_error([&] { get_unsigned(cfg, batch); }),
              "config key batch_size '" + cfg["batch_size"].dump() + suffix)
        << text;
    EXPECT_EQ(usage_error([&] { check_unsigned(cfg, {batch}); }),
              "config key batch_size '" + cfg["batch_size"].dump() + suffix)
        << text;
  }
  const Config cfg = json::parse(R"({"batch_size": 64, "big": 5000000000})");
  EXPECT_EQ(get_unsigned<int>(cfg, batch), 64);
  check_unsigned(cfg, {batch, {"absent"}});  // a key the config does not have is not checked
  // The range is cut to what the target type holds.
  EXPECT_EQ(usage_error([&] { get_unsigned<std::uint32_t>(cfg, {"big"}); }),
            "config key big '5000000000': expected a whole number from 0 to 4294967295");
  EXPECT_EQ(usage_error([&] { get_unsigned(cfg, {"absent"}); }), "config key 'absent' is missing");
  // get<unsigned T> words its refusals the same way.
  EXPECT_EQ(usage_error([&] { get<std::uint32_t>(json::parse(R"({"n": -1})"), "n"); }),
            "config key n '-1': expected a whole number from 0 to 4294967295");
}

// configs/pqt.json: the program-synthesis trainer's defaults and the paper's presets.
Config pqt_config() { return load_config(std::filesystem::path(RINGRL_SOURCE_DIR) / "configs/pqt.json"); }

TEST(PqtConfig, DefaultsFollowTheSpec) {
  Config cfg = pqt_config();
  EXPECT_EQ(get<int>(cfg, "batch_size"), 64);
  EXPECT_EQ(get<int>(cfg, "timestep_limit"), 32);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "lr"), 5e-5);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "entropy_beta"), 0.01);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "grad_clip_threshold"), 10.0);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "param_init_factor"), 1.0);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "ema_baseline_decay"), 0.99);
  EXPECT_EQ(get<int>(cfg, "topk"), 0);
  EXPECT_EQ(get<int>(cfg, "topk_batch_size"), 1);
  EXPECT_EQ(get<std::vector<int>>(cfg, "policy_lstm_sizes"), (std::vector<int>{35, 35}));
  EXPECT_EQ(get<int>(cfg, "obs_embedding_size"), 10);
  EXPECT_FALSE(get<bool>(cfg, "eos_token"));
  EXPECT_TRUE(get<bool>(cfg, "stop_on_success"));
  EXPECT_TRUE(get<bool>(cfg, "iw_normalize"));
  EXPECT_DOUBLE_EQ(get<double>(cfg, "correct_bonus"), 2.0);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "code_length_bonus"), 1.0);
  EXPECT_EQ(get<int>(cfg, "actors"), 1);
  EXPECT_EQ(get<int>(cfg, "max_lag"), 0);
  EXPECT_DOUBLE_EQ(get<double>(cfg, "checkpoint_every_s"), 30.0);
  EXPECT_EQ(get<int>(cfg, "repetitions"), 1);
  EXPECT_EQ(get<std::string>(cfg, "task"), "");
  EXPECT_EQ(get<std::string>(cfg, "pace"), "learner");
  EXPECT_EQ(get<std::string>(cfg, "queue_offer"), "batch_best");
}

TEST(PqtConfig, EveryPresetAppliesCleanly) {
  Config base = pqt_config();
  EXPECT_EQ(preset_names(base), (std::vector<std::string>{"pg", "pg+pqt", "pqt", "pqt-0ent", "simplify"}));
  for (const std::string& name : preset_names(base)) {
    Config cfg = base;
    EXPECT_NO_THROW(apply_preset(cfg, name)) << name;
    EXPECT_DOUBLE_EQ(get<double>(cfg, "grad_clip_threshold"), 50.0) << name;
    EXPECT_DOUBLE_EQ(get<double>(cfg, "param_init_factor"), 0.5) << name;
    EXPECT_EQ(get<int>(cfg, "timestep_limit"), 100) << name;
    EXPECT_EQ(get<int>(cfg, "batch_size"), 64) << name;
    EXPECT_DOUBLE_EQ(get<double>(cfg, "lr"), 1e-4) << name;
    // The original's update ratio and queue push (spec §5.4, §5.7): one step per batch, only
    // the batch's best enters the queue.
    EXPECT_EQ(get<std::string>(cfg, "pace"), "learner") << name;
    EXPECT_EQ(get<std::string>(cfg, "queue_offer"), "batch_best") << name;
    // Keys keep their types, so the typed getters still work after the preset.
    EXPECT_NO_THROW(get<double>(cfg, "topk_loss_hparam")) << name;
    EXPECT_NO_THROW(get<int64_t>(cfg, "max_npe")) << name;
  }
}

TEST(PqtConfig, PresetValuesMatchThePaperTable) {
  struct Row {
    const char* name;
    double entropy_beta, topk_loss_hparam, pi_loss_hparam;
    int topk;
    int64_t max_npe;
    int repetitions;
    bool eos_token, stop_on_success;
  };
  const Row rows[] = {
      {"pg", 0.05, 0.0, 1.0, 0, 20000000, 25, false, true},
      {"pg+pqt", 0.01, 50.0, 1.0, 10, 20000000, 25, false, true},
      {"pqt", 0.01, 200.0, 0.0, 10, 20000000, 25, false, true},
      {"pqt-0ent", 0.0, 200.0, 0.0, 10, 20000000, 25, false, true},
      {"simplify", 0.05, 0.5, 1.0, 10, 500000000, 1, true, false},
  };
  for (const Row& r : rows) {
    Config cfg = pqt_config();
    apply_preset(cfg, r.name);
    EXPECT_DOUBLE_EQ(get<double>(cfg, "entropy_beta"), r.entropy_beta) << r.name;
    EXPECT_DOUBLE_EQ(get<double>(cfg, "topk_loss_hparam"), r.topk_loss_hparam) << r.name;
    EXPECT_DOUBLE_EQ(get<double>(cfg, "pi_loss_hparam"), r.pi_loss_hparam) << r.name;
    EXPECT_EQ(get<int>(cfg, "topk"), r.topk) << r.name;
    EXPECT_EQ(get<int64_t>(cfg, "max_npe"), r.max_npe) << r.name;
    EXPECT_EQ(get<int>(cfg, "repetitions"), r.repetitions) << r.name;
    EXPECT_EQ(get<bool>(cfg, "eos_token"), r.eos_token) << r.name;
    EXPECT_EQ(get<bool>(cfg, "stop_on_success"), r.stop_on_success) << r.name;
  }
}

TEST(PqtConfig, StrictOverrideMessageOnTheRealConfig) {
  Config cfg = pqt_config();
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "batch_size=abc"); }),
            "--set batch_size=abc: expected an integer (default 64)");
  apply_overrides(cfg, {"task=reverse", "lr=1e-3", "max_npe=5e6"});
  EXPECT_EQ(get<std::string>(cfg, "task"), "reverse");
  EXPECT_EQ(get<int64_t>(cfg, "max_npe"), 5000000);
}

}  // namespace
}  // namespace ringrl::runfiles
