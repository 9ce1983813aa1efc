"""Samples BF programs from a trained PQT policy in NumPy and scores them with ringrl.bf.score.

    python3 examples/pqt_sample.py runs/pqt-reverse/model-rep0.ckpt [--programs 1000] [--seed 0]

The policy is the checkpoint's LSTM (common/pqt/policy_layout.h): token embedding, TF1
BasicLSTMCell layers (gates i, j, f, o; forget bias +1 at run time), output logits; token 0 is
EOS and the start token, never drawn unless the run set eos_token. Tokens are drawn from
softmax(softmax_tr * logits) for the run's timestep_limit steps. Prints the rewards' summary and
the best programs; checks that the run's best program (results.jsonl) scores as recorded.
"""

import argparse
import json
import pathlib

import numpy as np

import ringrl

TOKEN_CHARS = "_><+-[].,"  # common/pqt/program_record.h: token i as a BF character, 0 = EOS
FORGET_BIAS = 1.0  # kPolicyForgetBias


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def sample(w: dict, layers: int, steps: int, n: int, temperature: float, eos: bool, rng) -> list[str]:
    tokens = np.zeros(n, np.int64)  # start token
    state = [(np.zeros((n, w[f"lstm{l}/bias"].shape[0] // 4), np.float32),) * 2 for l in range(layers)]
    alive = np.ones(n, bool)
    out = np.zeros((n, steps), np.int64)
    for t in range(steps):
        x = w["embedding"][tokens]
        for l in range(layers):
            c, h = state[l]
            gates = np.concatenate([x, h], axis=1) @ w[f"lstm{l}/kernel"] + w[f"lstm{l}/bias"]
            i, j, f, o = np.split(gates, 4, axis=1)
            c = c * sigmoid(f + FORGET_BIAS) + sigmoid(i) * np.tanh(j)
            h = np.tanh(c) * sigmoid(o)
            state[l] = (c, h)
            x = h
        logits = temperature * (x @ w["output"])
        if not eos:
            logits[:, 0] = -np.inf
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        tokens = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
        out[:, t] = np.where(alive, tokens, 0)
        alive &= tokens != 0
    return ["".join(TOKEN_CHARS[k] for k in row if k != 0) for row in out]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint", type=pathlib.Path)
    p.add_argument("--programs", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    ck = ringrl.checkpoint.load(a.checkpoint)
    if ck.algorithm != "pqt":
        raise SystemExit(f"{a.checkpoint}: a {ck.algorithm} checkpoint, expected pqt")
    run = ringrl.runs.open(a.checkpoint.parent)
    cfg = run.config
    task, variant = cfg["task"], cfg.get("variant", "paper")
    programs = sample(ck.weights, len(cfg["policy_lstm_sizes"]), int(cfg["timestep_limit"]), a.programs,
                      float(cfg.get("softmax_tr", 1.0)), bool(cfg.get("eos_token", False)),
                      np.random.default_rng(a.seed))
    s = ringrl.bf.score(programs, task, variant=variant)
    order = np.argsort(-s.reward, kind="stable")
    print(f"{len(programs)} programs on {task} ({variant}): mean reward {s.reward.mean():.4f}, "
          f"best {s.reward[order[0]]:.4f}, correct {int(s.correct.sum())}")
    for k in order[:3]:
        print(f"  {s.reward[k]:.4f} {ringrl.bf.REASONS[s.reason[k]]:<12} {programs[k]}")
    rep = int(ck.run.get("rep", 0)) if ck.run else 0
    recorded = [r for r in run.results if r.get("global_rep") == rep]
    if recorded and recorded[0].get("best_code"):
        best = recorded[0]
        again = ringrl.bf.score([best["best_code"]], task, variant=variant).reward[0]
        if again != best["best_reward"]:
            raise SystemExit(f"the run's best program scores {again}, results.jsonl says {best['best_reward']}")
        print(f"run's best program scores {again:.4f}, as results.jsonl records")
    print(json.dumps({"programs": len(programs), "mean_reward": float(s.reward.mean()),
                      "best_reward": float(s.reward.max())}))


if __name__ == "__main__":
    main()
