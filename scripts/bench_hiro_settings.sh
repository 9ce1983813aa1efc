#!/usr/bin/env bash
# Runs `ringrl bench hiro --json` for several binaries or settings, alternated over rounds, and
# prints one JSON object per run with its label (what docs/hiro.md's tables come from).
#
#   ROUNDS=2 bash scripts/bench_hiro_settings.sh \
#     "old|/path/to/old/ringrl" "new|build/release/app/ringrl" \
#     "bf16|build/release/app/ringrl --set learner_precision=bf16" > bench.jsonl
#
# Each argument is LABEL|BINARY [EXTRA ARGS...]; BENCH_ARGS (default: --env ant-maze --seconds
# 20) goes to every run. PAUSE, when set, is a pgrep -f pattern of processes to stop with
# SIGSTOP for the duration (long training runs sharing the machine) and continue afterwards.
set -euo pipefail
ROUNDS=${ROUNDS:-1}
BENCH_ARGS=${BENCH_ARGS:---env ant-maze --seconds 20}
export OMP_NUM_THREADS=1
paused=""
if [[ -n ${PAUSE:-} ]]; then
  paused=$(pgrep -f "$PAUSE" | tr '\n' ' ' || true)
  [[ -n $paused ]] && kill -STOP $paused
fi
trap '[[ -n $paused ]] && kill -CONT $paused' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for spec in "$@"; do
    label=${spec%%|*}
    read -r -a cmd <<< "${spec#*|}"
    echo "bench_hiro_settings: $label, round $round, $(date -u +%FT%TZ)" >&2
    # shellcheck disable=SC2086
    out=$("${cmd[0]}" bench hiro $BENCH_ARGS --json "${cmd[@]:1}")
    printf '{"label": "%s", "round": %d, "result": %s}\n' "$label" "$round" "$out"
  done
done
