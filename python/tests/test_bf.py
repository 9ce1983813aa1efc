"""ringrl.bf against the CLI: score() gives the numbers of `ringrl bf score` on a few
thousand random programs across tasks and both variants, run() those of `ringrl bf run`,
tasks() those of `ringrl bf tasks`; the thread count never changes a score; bad input raises
the CLI's one-line message."""

import json

import numpy as np
import pytest

import ringrl
from conftest import run_cli

TASKS = ["reverse", "print-hello", "count-char", "add", "echo", "remove-char", "multiply", "sort"]
PROGRAMS_PER_TASK = 500
ALPHABET = list("+-<>[].,") * 4 + list("ab 0")  # mostly BF, a few other characters (no-ops)


def random_programs(seed, count, max_len=40):
    rng = np.random.default_rng(seed)
    programs = []
    for _ in range(count):
        n = int(rng.integers(0, max_len + 1))
        programs.append("".join(rng.choice(ALPHABET, size=n)))
    return programs


@pytest.mark.parametrize("variant", ["paper", "simplify"])
def test_score_agrees_with_the_cli(cli, variant):
    tasks = [t for t in TASKS if t in {x["name"] for x in ringrl.bf.tasks()}]
    assert len(tasks) >= 6
    requests, programs_by_task = [], {}
    for k, task in enumerate(tasks):
        programs = random_programs(seed=k + (100 if variant == "simplify" else 0), count=PROGRAMS_PER_TASK)
        programs_by_task[task] = programs
        requests += [json.dumps({"task": task, "variant": variant, "code": p}) for p in programs]
    out = run_cli(cli, "bf", "score", "--jsonl", input="\n".join(requests) + "\n").stdout.splitlines()
    assert len(out) == len(requests)
    k = 0
    compared = 0
    for task in tasks:
        s = ringrl.bf.score(programs_by_task[task], task, variant=variant)
        names = s.reason_names()
        for i in range(len(programs_by_task[task])):
            want = json.loads(out[k])
            k += 1
            assert s.reward[i] == want["total_reward"], (task, programs_by_task[task][i])
            assert bool(s.correct[i]) == want["correct"]
            assert names[i] == want["reason"]
            compared += 1
    assert compared >= 3000


def test_score_finds_a_correct_program():
    s = ringrl.bf.score([",[.,]", ",[.,]." , "+"], "echo")
    assert s.reward.dtype == np.float64 and s.correct.dtype == np.bool_ and s.reason.dtype == np.uint8
    assert list(s.reason_names()) == [ringrl.bf.REASONS[c] for c in s.reason]


def test_thread_count_does_not_change_scores():
    programs = random_programs(seed=7, count=3000, max_len=60)
    one = ringrl.bf.score(programs, "reverse", threads=1)
    two = ringrl.bf.score(programs, "reverse", threads=2)
    assert one.reward.tobytes() == two.reward.tobytes()
    assert one.reason.tobytes() == two.reason.tobytes()


def test_score_takes_numpy_arrays_of_str_and_bytes():
    programs = ["+.", ",[.,]", ""]
    want = ringrl.bf.score(programs, "reverse").reward
    np.testing.assert_array_equal(ringrl.bf.score(np.array(programs), "reverse").reward, want)
    np.testing.assert_array_equal(ringrl.bf.score(np.array(programs, dtype="S"), "reverse").reward, want)


def test_run_agrees_with_the_cli(cli):
    cases = [("+[>,.]", [1, 2, 3]), (",[.,]", [5, 4, 0]), ("+[]", []), ("[[", [1]), ("a+.b", [])]
    lines = "\n".join(json.dumps({"code": c, "input": i}) for c, i in cases) + "\n"
    out = run_cli(cli, "bf", "run", "--jsonl", input=lines).stdout.splitlines()
    for (code, inp), line in zip(cases, out):
        assert ringrl.bf.run(code, inp) == json.loads(line)


def test_tasks_agree_with_the_cli(cli):
    listed = [json.loads(line) for line in run_cli(cli, "bf", "tasks", "--json").stdout.splitlines()]
    mine = ringrl.bf.tasks()
    assert [t["name"] for t in mine] == [t["name"] for t in listed]
    assert [t["base"] for t in mine] == [t["base"] for t in listed]


def test_bad_input_raises_the_cli_message(cli):
    out = run_cli(cli, "bf", "score", "--task", "revers", "+", check=False)
    message = out.stderr.strip().removeprefix("ringrl: error: ")
    with pytest.raises(ValueError) as e:
        ringrl.bf.score(["+"], "revers")
    assert str(e.value) == message
    with pytest.raises(TypeError, match="program 1 is a int"):
        ringrl.bf.score(["+", 3], "reverse")
    with pytest.raises(TypeError, match="one str"):
        ringrl.bf.score("+.", "reverse")
    with pytest.raises(ValueError, match="paper"):
        ringrl.bf.score(["+"], "reverse", variant="fast")
