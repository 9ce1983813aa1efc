#!/usr/bin/env bash
# scripts/slurm/ringrl_job.sbatch without Slurm: srun and sbatch are stand-ins on PATH (srun
# drops its options and runs the command; sbatch records what it would submit). Checks:
#   1. a run that finishes exits 0 and is not submitted again;
#   2. SIGTERM to the batch script (what --signal=B:TERM@120 sends before the time limit)
#      reaches ringrl, which writes its checkpoint and exits 130, and the script submits itself
#      again with the same arguments; the resubmitted job resumes the run and finishes it;
#   3. a failing run (exit 2: a usage error) is not submitted again.
# usage: slurm_job_test.sh RINGRL_BINARY SOURCE_DIR
set -u
ringrl=$1
script=$2/scripts/slurm/ringrl_job.sbatch
work=$(mktemp -d /tmp/ringrl-slurm-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat > "$work/bin/srun" <<'STUB'
#!/usr/bin/env bash
while [[ $# -gt 0 && $1 == --* ]]; do shift; done
exec "$@"
STUB
cat > "$work/bin/sbatch" <<STUB
#!/usr/bin/env bash
printf '%s\n' "\$*" >> "$work/submitted"
STUB
chmod +x "$work/bin/srun" "$work/bin/sbatch"
export PATH="$work/bin:$PATH" OMP_NUM_THREADS=1
fail() { echo "FAIL: $*" >&2; exit 1; }
job=(pqt --task print --mode pqt --actors 1 --repetitions 1 --seed 3 --set timestep_limit=12 --set batch_size=32
     --set lr=0.001 --set stop_on_success=false)

# 1. A run that finishes.
bash "$script" "$work/done" "$ringrl" train "${job[@]}" --max-npe 2000 > "$work/log1" 2>&1 || fail "exit $? (log: $(tail -3 "$work/log1"))"
grep -q "the run is done" "$work/log1" || fail "no 'done' line"
[[ ! -e $work/submitted ]] || fail "a finished run was submitted again"
[[ $(wc -l < "$work/done/results.jsonl") == 1 ]] || fail "no results line"

# 2. SIGTERM before the time limit: checkpoint, exit 130, submitted again; the next job resumes.
bash "$script" "$work/long" "$ringrl" train "${job[@]}" --max-npe 100000000 > "$work/log2" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [[ -s $work/long/metrics.csv ]] && break; sleep 0.1; done
[[ -s $work/long/metrics.csv ]] || fail "the long run did not start"
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status == 130 ]] || fail "interrupted job exit $status, expected 130 (log: $(tail -3 "$work/log2"))"
[[ -f $work/long/checkpoint.bin ]] || fail "no checkpoint before the time limit"
grep -q "submitting again" "$work/log2" || fail "no resubmission line"
[[ $(cat "$work/submitted") == "$script $work/long $ringrl train ${job[*]} --max-npe 100000000" ]] ||
  fail "resubmitted as: $(cat "$work/submitted")"
# The resubmitted job, with a budget it reaches: it passes --resume and finishes the run.
bash "$script" "$work/long" "$ringrl" train "${job[@]}" --max-npe 100000000 --set max_seconds=2 > "$work/log3" 2>&1 &&
  true
grep -q -- "resuming repetition 0" "$work/log3" || fail "the next job did not resume (log: $(tail -3 "$work/log3"))"

# 3. A failing run is not submitted again.
rm -f "$work/submitted"
bash "$script" "$work/bad" "$ringrl" train pqt --task no-such-task > "$work/log4" 2>&1
[[ $? == 2 ]] || fail "a usage error should exit 2"
grep -q "not resubmitted" "$work/log4" || fail "no 'not resubmitted' line"
[[ ! -e $work/submitted ]] || fail "a failed run was submitted again"
echo "slurm job script: all checks passed"
