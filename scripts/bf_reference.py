#!/usr/bin/env python3
"""Plain Python reference for the BF machine and scorer (spec brain_coder.md §1, §3).

A straightforward transcription in the style of the original: a per-instruction while loop
with the timeout and step-limit checks after every instruction, lists for tape and output.
No fast paths, on purpose: it stands in for the original's speed in `ringrl bench bf
--baseline`, and it is the differential oracle of tests/envs/bf.

Modes (JSON lines on stdin, JSON lines on stdout):
  run    each line {"code", "input", "base", "max_steps", "require_correct_syntax"}
         (defaults 256, 5000, false; max_steps null = no limit) -> one line
         {"output", "success", "failure_reason", "steps", "memory"} per input line.
  score  first line: {"base", "max_steps", "min_code_length", "max_code_length",
         "correct_bonus", "code_length_bonus", "failure_reward", "require_correct_syntax",
         "timeout", "cases": [[input, output], ...]}; then one JSON string (a program) per
         line -> one line {"total_reward", "correct", "reason"} per program, and a last
         line {"elapsed_s": CPU seconds spent scoring (process time: the machine may be
         shared)}.
"""

import json
import sys
import time


def match_brackets(code):
    """Bracket table; unmatched brackets map to themselves."""
    match = {}
    stack = []
    correct = True
    for i, c in enumerate(code):
        if c == '[':
            stack.append(i)
        elif c == ']':
            if stack:
                j = stack.pop()
                match[i] = j
                match[j] = i
            else:
                match[i] = i
                correct = False
    for j in stack:
        match[j] = j
        correct = False
    return match, correct


def evaluate(code, input_buffer=None, base=256, timeout=None, max_steps=None,
             require_correct_syntax=True, output_memory=False):
    """Runs `code`; returns (output, success, failure_reason, steps, memory)."""
    match, correct_syntax = match_brackets(code)
    if require_correct_syntax and not correct_syntax:
        return [], False, 'syntax-error', 0, ([] if output_memory else None)
    input_buffer = list(input_buffer or [])
    cells = [0]
    dp = 0
    ip = 0
    steps = 0
    output = []
    success = True
    reason = 'success'
    start = time.time()
    while ip < len(code):
        c = code[ip]
        if c == '>':
            dp += 1
            if dp == len(cells):
                cells.append(0)
        elif c == '<':
            dp = max(dp - 1, 0)
        elif c == '+':
            if cells[dp] < base - 1:
                cells[dp] += 1
            else:
                cells[dp] = 0
        elif c == '-':
            if cells[dp] > 0:
                cells[dp] -= 1
            else:
                cells[dp] = base - 1
        elif c == '[':
            if cells[dp] == 0:
                ip = match[ip]
        elif c == ']':
            if cells[dp] != 0:
                ip = match[ip]
        elif c == '.':
            output.append(cells[dp])
        elif c == ',':
            if input_buffer:
                cells[dp] = input_buffer.pop(0)
            else:
                cells[dp] = 0
        ip += 1
        steps += 1
        if timeout is not None and time.time() - start > timeout:
            success = False
            reason = 'timeout'
            break
        if max_steps is not None and steps >= max_steps:
            success = False
            reason = 'step-limit'
            break
    return output, success, reason, steps, (cells if output_memory else None)


def absolute_distance(pred, target, base):
    d = 0
    for i, t in enumerate(target):
        if i < len(pred):
            d += abs(pred[i] - t)
        else:
            d += base
    if len(pred) > len(target):
        d += base * (len(pred) - len(target))
    return d


def absolute_distance_reward(pred, target, base):
    unit = float(base * len(target))
    if unit == 0:
        unit = base
    return (unit - absolute_distance(pred, target, base)) / unit


def clipped_linear(x, x0, y0, slope, lo, hi):
    return min(max(y0 + (x - x0) * slope, lo), hi)


class ReferenceScorer(object):
    def __init__(self, config):
        self.base = config['base']
        self.max_steps = config.get('max_steps', 5000)
        self.min_len = config['min_code_length']
        self.max_len = config['max_code_length']
        self.correct_bonus = config.get('correct_bonus', 2.0)
        self.code_length_bonus = config.get('code_length_bonus', 1.0)
        self.failure_reward = config.get('failure_reward', -2.0)
        self.require_correct_syntax = config.get('require_correct_syntax', False)
        self.timeout = config.get('timeout')
        if self.timeout is not None and self.timeout <= 0:
            self.timeout = None
        self.cases = [(list(i), list(o)) for i, o in config['cases']]
        if self.max_len > self.min_len:
            self.time_penalty = 1.0 / (self.max_len - self.min_len)
        else:
            self.time_penalty = 0.0
        self.best = sum(absolute_distance_reward(o, o, self.base) + self.correct_bonus +
                        self.code_length_bonus for _, o in self.cases)

    def score(self, code):
        reward = 0.0
        reason = 'correct'
        for inp, tgt in self.cases:
            out, success, failure, _, _ = evaluate(
                code, input_buffer=inp, base=self.base, timeout=self.timeout,
                max_steps=self.max_steps, require_correct_syntax=self.require_correct_syntax)
            if not success:
                reward = self.failure_reward
                reason = failure
                break
            reward += absolute_distance_reward(out, tgt, self.base)
            if out == tgt:
                reward += self.correct_bonus
                if self.min_len == self.max_len:
                    reward += self.code_length_bonus
                else:
                    reward += self.code_length_bonus * clipped_linear(
                        len(code), self.min_len, 1.0, -self.time_penalty, 0.0, 1.0)
            elif reason == 'correct':
                reason = 'wrong'
        return reward / self.best, reason == 'correct', reason


def main_run(lines, out):
    for line in lines:
        req = json.loads(line)
        output, success, reason, steps, memory = evaluate(
            req['code'], input_buffer=req.get('input', []), base=req.get('base', 256),
            timeout=None, max_steps=req.get('max_steps', 5000),
            require_correct_syntax=req.get('require_correct_syntax', False),
            output_memory=True)
        out.write(json.dumps({'output': output, 'success': success,
                              'failure_reason': reason, 'steps': steps,
                              'memory': memory}) + '\n')


def main_score(lines, out):
    scorer = ReferenceScorer(json.loads(next(lines)))
    programs = [json.loads(line) for line in lines]
    results = []
    start = time.process_time()
    for code in programs:
        results.append(scorer.score(code))
    elapsed = time.process_time() - start
    for total, correct, reason in results:
        out.write(json.dumps({'total_reward': total, 'correct': correct,
                              'reason': reason}) + '\n')
    out.write(json.dumps({'elapsed_s': elapsed}) + '\n')


def main(argv):
    if len(argv) != 2 or argv[1] not in ('run', 'score'):
        sys.stderr.write('usage: bf_reference.py run|score < requests.jsonl\n')
        return 2
    lines = (line for line in sys.stdin if line.strip())
    if argv[1] == 'run':
        main_run(lines, sys.stdout)
    else:
        main_score(lines, sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
