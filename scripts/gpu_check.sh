#!/usr/bin/env bash
# One GPU check, for a machine with an NVIDIA GPU (docs/gpu.md). Prints one JSON line per step,
# {"step": "...", "ok": true|false, ...figures}, and exits non-zero if any step failed:
#   detect          nvidia-smi and torch.cuda in the python that has torch. Without a GPU: this
#                   one line ("gpu": false and why) and exit 0 (scripts/test.sh runs it so in CI).
#   configure       cmake into build/gpu against the torch wheel's CUDA LibTorch. No .cu files,
#   build           but LibTorch's CMake config enables the CUDA language, so this needs a CUDA
#                   toolkit (nvcc) even though nothing is compiled by it.
#   cuda_tests      ctest -L cuda (tests/learner/pqt/cuda_agreement_test.cc,
#                   tests/learner/td3/td3_cuda_test.cc); none may skip on a GPU.
#   pqt_update_k1   bench/pqt/model_bench on cuda:0, batches_per_update 1 and 8: updates/s.
#   pqt_update_k8
#   bench_npe       ringrl bench npe --json with every core but one as actors (PQT, reverse).
#   bench_hiro      ringrl bench hiro --json --env ant-maze, the same actors.
#   td3_update      ringrl bench td3-update --json: the TD3 updates with and without CUDA graphs.
#   projection      wall time of a 10M-step ant-maze run and of a 20M-program PQT run.
#   done            total seconds.
# Designed for <= 8 minutes on one GPU with 16 cores: every step has a timeout, and no step
# starts past the budget (RINGRL_GPU_CHECK_BUDGET_S, default 480 s).
#
# Environment:
#   RINGRL_GPU_CHECK_FORCE=1       go through the steps without a GPU (the CUDA cases skip and
#                                  the benches run on the CPU); for trying the script.
#   RINGRL_GPU_BUILD_DIR=DIR       build directory (default build/gpu).
#   RINGRL_GPU_CHECK_SKIP_BUILD=1  use DIR as it is (already built), no configure or build.
#   RINGRL_GPU_CHECK_BENCH_S=S     seconds of bench npe's and bench hiro's end-to-end runs
#                                  (default 15 and 30); model_bench's learner side gets S/5.
#   RINGRL_PYTHON=PY               the python with torch (default python3).
# Step outputs and logs go to DIR/gpu-check/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

t_start=$SECONDS
budget=${RINGRL_GPU_CHECK_BUDGET_S:-480}
force=${RINGRL_GPU_CHECK_FORCE:-0}
build_dir=${RINGRL_GPU_BUILD_DIR:-build/gpu}
py=${RINGRL_PYTHON:-python3}
# Every core (`nproc` obeys OMP_NUM_THREADS, which scripts/test.sh sets to 1).
cores=$(getconf _NPROCESSORS_ONLN)
actors=$((cores > 1 ? cores - 1 : 1))  # one core left for the learner
bench_s=${RINGRL_GPU_CHECK_BENCH_S:-}
npe_s=${bench_s:-15}
hiro_s=${bench_s:-30}
learner_s=$(awk -v s="${bench_s:-15}" 'BEGIN { x = s / 5; if (x < 0.5) x = 0.5; printf "%.2f", x }')
kProjectedAntMazeSteps=10000000  # env steps of an ant-maze run (efficient-hrl's 10M)
kProjectedPqtPrograms=20000000   # programs of a PQT run (brain_coder's 20M NPE)
kMinStepSeconds=10               # a step with less budget left than this does not start
failed=0

# --- JSON lines ---------------------------------------------------------------------------
jstr() {  # jstr TEXT: TEXT as a JSON string (one line)
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/ | }
  s=${s//$'\r'/}
  s=${s//$'\t'/ }
  printf '"%s"' "$s"
}
emit() {  # emit STEP OK [FIELDS]: one line; FIELDS is '"key": value, ...' or empty
  local fields=${3:-}
  [[ $2 == true ]] || failed=1
  printf '{"step": "%s", "ok": %s%s}\n' "$1" "$2" "${fields:+, $fields}"
}
log_tail() {  # log_tail FILE: its last lines, as a "log" and "tail" field pair
  printf '"log": %s, "tail": %s' "$(jstr "$1")" "$(jstr "$(tail -n 6 "$1" 2>/dev/null)")"
}
left() { echo $((budget - (SECONDS - t_start))); }
step_timeout() {  # step_timeout DEFAULT: DEFAULT, or what is left of the budget if less
  local l
  l=$(left)
  echo $((l < $1 ? l : $1))
}
has_time() {  # has_time STEP: false (and a failed line) when the budget is spent
  if (($(left) < kMinStepSeconds)); then
    emit "$1" false "\"reason\": $(jstr "not started: the check's budget of ${budget} s is spent")"
    return 1
  fi
}
json_fields() {  # json_fields FILE EXPR: evaluates EXPR over d (FILE's JSON object) into fields
  "$py" - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:  # a command that logs other lines too: its last JSON object line
    d = json.loads([l for l in text.splitlines() if l.startswith("{")][-1])
print(json.dumps(eval(sys.argv[2], {"d": d}))[1:-1])
PY
}

# --- detect -------------------------------------------------------------------------------
smi_gpus=0
smi_line=""
if command -v nvidia-smi >/dev/null 2>&1; then
  smi_out=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits 2>&1)
  smi_rc=$?
  if ((smi_rc == 0)) && [[ -n $smi_out ]]; then
    smi_gpus=$(grep -c . <<<"$smi_out")
    smi_line=$(head -n 1 <<<"$smi_out")
  else
    smi_line="nvidia-smi failed (status $smi_rc): $smi_out"
  fi
else
  smi_line="no nvidia-smi"
fi
torch_json=$(timeout 120 "$py" - 2>/dev/null <<'PY'
import json
try:
    import torch
except Exception as e:
    print(json.dumps({"torch": None, "error": str(e)}))
    raise SystemExit
r = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "available": False, "count": 0}
try:
    r["available"] = torch.cuda.is_available()
    r["count"] = torch.cuda.device_count() if r["available"] else 0
    if r["available"]:
        p = torch.cuda.get_device_properties(0)
        r["name"] = p.name
        r["capability"] = "sm_%d%d" % (p.major, p.minor)
        r["memory_gib"] = round(p.total_memory / 2**30, 1)
except Exception as e:
    r["error"] = str(e)
print(json.dumps(r))
PY
)
[[ -n $torch_json ]] || torch_json='{"torch": null, "error": "'"$py"' did not answer"}'
torch_fields=${torch_json#\{}
torch_fields=${torch_fields%\}}
torch_gpu=$("$py" -c 'import json,sys; print(1 if json.loads(sys.argv[1]).get("available") else 0)' "$torch_json" 2>/dev/null || echo 0)
smi_fields="\"nvidia_smi_gpus\": $smi_gpus, \"nvidia_smi\": $(jstr "$smi_line"), $torch_fields, \"cores\": $cores"

if ((smi_gpus == 0 && torch_gpu == 0)); then
  reason="no GPU: $smi_line; torch.cuda.is_available() is false"
  if [[ $force != 1 ]]; then
    emit detect true "\"gpu\": false, \"reason\": $(jstr "$reason"), $smi_fields"
    exit 0
  fi
  emit detect true "\"gpu\": false, \"forced\": true, \"reason\": $(jstr "$reason; RINGRL_GPU_CHECK_FORCE=1: the steps run on the CPU"), $smi_fields"
  gpu=0
elif ((torch_gpu == 0)); then
  emit detect false "\"gpu\": true, \"reason\": $(jstr "nvidia-smi lists $smi_gpus GPU(s) but torch.cuda.is_available() is false (driver too old for the wheel's CUDA?)"), $smi_fields"
  exit 1
else
  emit detect true "\"gpu\": true, $smi_fields"
  gpu=1
fi
device=$( ((gpu)) && echo cuda:0 || echo cpu)
out=$build_dir/gpu-check
mkdir -p "$out"

# --- configure and build --------------------------------------------------------------------
if [[ ${RINGRL_GPU_CHECK_SKIP_BUILD:-0} == 1 ]]; then
  emit build true "\"skipped\": $(jstr "RINGRL_GPU_CHECK_SKIP_BUILD=1: $build_dir as it is")"
else
  nvcc=$(command -v nvcc || true)
  [[ -n $nvcc || ! -x /usr/local/cuda/bin/nvcc ]] || nvcc=/usr/local/cuda/bin/nvcc
  [[ -n $nvcc || -z ${CUDACXX:-} ]] || nvcc=$CUDACXX
  if [[ -z $nvcc ]]; then
    emit configure false "\"reason\": $(jstr "no CUDA toolkit: the torch wheel's CMake config (Caffe2 public/cuda.cmake) enables the CUDA language and needs nvcc to configure, although ringrl compiles no .cu file; install the toolkit (e.g. cuda-nvcc + cuda-cudart-dev of the wheel's CUDA major) or set CUDACXX")"
    exit 1
  fi
  nvcc_version=$("$nvcc" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -n 1)
  has_time configure || exit 1
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  t0=$SECONDS
  if timeout "$(step_timeout 180)" cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DRINGRL_TORCH_SOURCE=python >"$out/configure.log" 2>&1; then
    if grep -q 'torch_cuda target: ON' "$out/configure.log"; then
      emit configure true "\"seconds\": $((SECONDS - t0)), \"nvcc\": $(jstr "$nvcc ($nvcc_version)")"
    else
      emit configure false "\"reason\": \"LibTorch without CUDA (no torch_cuda target)\", $(log_tail "$out/configure.log")"
      exit 1
    fi
  else
    emit configure false "\"seconds\": $((SECONDS - t0)), $(log_tail "$out/configure.log")"
    exit 1
  fi
  has_time build || exit 1
  t0=$SECONDS
  if timeout "$(step_timeout 330)" cmake --build "$build_dir" -j "$cores" --target ringrl pqt_cuda_tests td3_cuda_tests model_bench \
      >"$out/build.log" 2>&1; then
    emit build true "\"seconds\": $((SECONDS - t0)), \"jobs\": $cores"
  else
    emit build false "\"seconds\": $((SECONDS - t0)), $(log_tail "$out/build.log")"
    exit 1
  fi
fi
ringrl=$build_dir/app/ringrl
model_bench=$build_dir/bench/pqt/model_bench

# --- CUDA tests -----------------------------------------------------------------------------
if has_time cuda_tests; then
  t0=$SECONDS
  timeout "$(step_timeout 180)" ctest --test-dir "$build_dir" -L cuda -V -j 4 --timeout 120 >"$out/cuda_tests.log" 2>&1
  rc=$?
  figures=$("$py" - "$out/cuda_tests.log" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
passed = len(re.findall(r"Test +#\d+: .* \.+ +Passed", text))
failed = len(re.findall(r"Test +#\d+: .* \.+\**(?:Failed|Timeout|Exception)", text))
skipped = len(re.findall(r"\(Skipped\)\s*$", text, re.M))
worst = max([float(m) for m in re.findall(r"cuda - cpu \S+ \((\S+) of it\)", text)] or [0.0])
print(json.dumps({"passed": passed, "failed": failed, "skipped": skipped, "worst_delta_fraction": worst})[1:-1])
PY
)
  skipped=$(grep -o '"skipped": [0-9]*' <<<"$figures" | grep -o '[0-9]*$')
  if ((rc == 0)) && ! ((gpu && ${skipped:-0} > 0)); then
    emit cuda_tests true "\"seconds\": $((SECONDS - t0)), $figures"
  else
    reason="ctest status $rc"
    ((gpu && ${skipped:-0} > 0)) && reason="$reason; CUDA cases skipped on a GPU machine"
    emit cuda_tests false "\"seconds\": $((SECONDS - t0)), \"reason\": $(jstr "$reason"), $figures, $(log_tail "$out/cuda_tests.log")"
  fi
fi

# --- the PQT update at k = 1 and 8 ----------------------------------------------------------
for k in 1 8; do
  has_time "pqt_update_k$k" || continue
  t0=$SECONDS
  # model_bench [sampler_s] [learner_s] [trace] [threads] [device] [batches_per_update]
  if timeout "$(step_timeout 120)" "$model_bench" 0.05 "$learner_s" "" 1 "$device" "$k" \
      >"$out/pqt_update_k$k.json" 2>"$out/pqt_update_k$k.log"; then
    emit "pqt_update_k$k" true "\"seconds\": $((SECONDS - t0)), $(json_fields "$out/pqt_update_k$k.json" \
      '{k: d["learner"][k] for k in ("device", "batches_per_update", "ours_updates_per_s", "ours_ms",
        "bare_updates_per_s", "bare_fused_updates_per_s", "ours_gflop_per_s")}')"
  else
    emit "pqt_update_k$k" false "\"seconds\": $((SECONDS - t0)), $(log_tail "$out/pqt_update_k$k.log")"
  fi
done

# --- end to end: bench npe and bench hiro -----------------------------------------------------
npe_per_s=""
if has_time bench_npe; then
  t0=$SECONDS
  if timeout "$(step_timeout 150)" "$ringrl" bench npe --json --actors "$actors" --seconds "$npe_s" --device auto \
      >"$out/bench_npe.json" 2>"$out/bench_npe.log"; then
    fields=$(json_fields "$out/bench_npe.json" \
      '{k: d[k] for k in ("device", "actors", "task", "mode", "npe_per_s", "actor_only_npe_per_s", "efficiency",
        "learner_updates_per_s", "learner_steps_per_s_in_run", "lag_p50", "lag_max", "seconds")}')
    emit bench_npe true "\"wall_s\": $((SECONDS - t0)), $fields"
    npe_per_s=$(json_fields "$out/bench_npe.json" '{"x": d["npe_per_s"]}' | sed 's/"x": //')
  else
    emit bench_npe false "\"wall_s\": $((SECONDS - t0)), $(log_tail "$out/bench_npe.log")"
  fi
fi
hiro_steps_per_s=""
if has_time bench_hiro; then
  t0=$SECONDS
  if timeout "$(step_timeout 150)" "$ringrl" bench hiro --json --env ant-maze --actors "$actors" --seconds "$hiro_s" \
      >"$out/bench_hiro.json" 2>"$out/bench_hiro.log"; then
    fields=$(json_fields "$out/bench_hiro.json" \
      '{k: d[k] for k in ("device", "env", "actors", "td3_kernel", "env_steps_per_s", "actor_only_env_steps_per_s",
        "learner_env_steps_per_s", "plain_libtorch_env_steps_per_s", "learner_steps_per_s_in_run", "lag_p50",
        "lag_max", "seconds")} | {"low_update_ms": d["learner"]["low_update_ms"],
        "high_update_ms": d["learner"]["high_update_ms"]}')
    emit bench_hiro true "\"wall_s\": $((SECONDS - t0)), $fields"
    hiro_steps_per_s=$(json_fields "$out/bench_hiro.json" '{"x": d["env_steps_per_s"]}' | sed 's/"x": //')
  else
    emit bench_hiro false "\"wall_s\": $((SECONDS - t0)), $(log_tail "$out/bench_hiro.log")"
  fi
fi

# --- the TD3 updates with and without CUDA graphs ----------------------------------------------
if has_time td3_update; then
  t0=$SECONDS
  if timeout "$(step_timeout 120)" "$ringrl" bench td3-update --json --device "$device" --seconds 3 \
      >"$out/td3_update.json" 2>"$out/td3_update.log"; then
    emit td3_update true "\"seconds\": $((SECONDS - t0)), $(json_fields "$out/td3_update.json" '{"result": d}')"
  else
    emit td3_update false "\"seconds\": $((SECONDS - t0)), $(log_tail "$out/td3_update.log")"
  fi
fi

# --- projection ---------------------------------------------------------------------------------
# A rate of 0 (bench hiro measures only past initial_steps) projects nothing: a failed line.
positive() { awk -v x="${1:-0}" 'BEGIN { exit !(x > 0) }'; }
if positive "$npe_per_s" && positive "$hiro_steps_per_s"; then
  emit projection true "$("$py" - "$npe_per_s" "$hiro_steps_per_s" "$kProjectedPqtPrograms" "$kProjectedAntMazeSteps" \
    "$actors" "$device" <<'PY'
import json, sys
npe, steps, programs, env_steps = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hours = lambda n, rate: round(n / rate / 3600, 2) if rate > 0 else None
print(json.dumps({"ant_maze_env_steps": env_steps, "ant_maze_env_steps_per_s": steps,
                  "ant_maze_hours": hours(env_steps, steps), "pqt_programs": programs, "pqt_npe_per_s": npe,
                  "pqt_hours": hours(programs, npe), "actors": int(sys.argv[5]), "device": sys.argv[6]})[1:-1])
PY
)"
else
  emit projection false "\"reason\": $(jstr "no rate to project from: bench npe ${npe_per_s:-failed} NPE/s, bench hiro ${hiro_steps_per_s:-failed} env steps/s (past initial_steps; a longer RINGRL_GPU_CHECK_BENCH_S)")"
fi

emit "done" "$( ((failed)) && echo false || echo true)" "\"seconds\": $((SECONDS - t_start)), \"gpu\": $( ((gpu)) && echo true || echo false)"
exit "$failed"
