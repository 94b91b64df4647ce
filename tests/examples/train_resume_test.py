#!/usr/bin/python3
"""Kill-and-resume check of examples/train/train.py with two "pods" on this host.

Each pod is a process group of its own (start_new_session), as berth's node agent runs a
container, and gets SIGTERM as a whole, as the agent (and the kubelet) sends it. Two
launch modes, as berth's two training APIs start the script:

  torchrun  TrainJob: `python3 -m torch.distributed.run --redirects=2 --tee=2 train.py`
            with PET_NNODES=2, PET_NPROC_PER_NODE=1, PET_NODE_RANK=0|1,
            PET_MASTER_ADDR/PET_MASTER_PORT (the Trainer's variables);
  env       PyTorchJob: `python3 train.py` with RANK, WORLD_SIZE, MASTER_ADDR and
            MASTER_PORT (the Training Operator's variables).

Checks:
  1. run 1 is stopped by SIGTERM to both process groups mid-run: every rank logs the same
     stop step N, rank 0 saves checkpoint.pt at step N (read back with torch.load), the
     script exits 143, no temporary file is left;
  2. run 2 (same checkpoint directory) logs "resumed from step N", its first step is N + 1,
     and it completes (exit 0) at --steps;
  3. an uninterrupted run 3 logs exactly the same losses for steps N + 1 .. --steps as
     run 2: the checkpoint restores model, optimizer and data position.

Mode `teardown` checks instead that a rank whose process-group teardown hangs
(pytorch/pytorch#75097; simulated by replacing dist.destroy_process_group with a sleep)
still exits, with the code it had decided, after --teardown-seconds: 0 when training is
complete, 143 when stopped by SIGTERM; and that it logs why.

A rank that does not exit in time gets SIGABRT first (PYTHONFAULTHANDLER=1 prints every
Python thread's stack into its log), then SIGKILL; a failure prints every rank's log.

Usage: train_resume_test.py <train.py> torchrun|env|teardown
Exit: 0 pass, 1 fail, 77 skip (python3-torch is not installed).
"""

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"
STEPS = 24
STOP_AFTER = 6          # SIGTERM once every rank has logged this step
DEADLINE_SECONDS = 240  # per run; the machine may be busy compiling


def skip_without_torch():
    probe = subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True)
    if probe.returncode != 0:
        print(f"SKIP: {PYTHON} cannot import torch (install python3-torch)")
        sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pod:
    def __init__(self, argv, env, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def sigterm(self):
        os.killpg(self.proc.pid, signal.SIGTERM)

    def wait(self, deadline):
        try:
            return self.proc.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGABRT)  # the stacks, into the log
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return None
        finally:
            self.log.close()


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PET_") and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK",
                                                     "MASTER_ADDR", "MASTER_PORT")}
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def start_pods(script, mode, checkpoint_dir, work, tag, step_seconds):
    port = free_port()
    args = ["--steps", str(STEPS), "--checkpoint-dir", checkpoint_dir, "--checkpoint-every", "4",
            "--step-seconds", str(step_seconds), "--timeout-seconds", "120"]
    pods = []
    for rank in range(2):
        env = clean_env()
        if mode == "torchrun":
            env.update(PET_NNODES="2", PET_NPROC_PER_NODE="1", PET_NODE_RANK=str(rank),
                       PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=str(port))
            argv = [PYTHON, "-m", "torch.distributed.run", "--redirects=2", "--tee=2", script] + args
        else:
            env.update(RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            argv = [PYTHON, script] + args
        pods.append(Pod(argv, env, os.path.join(work, f"{tag}-rank{rank}.log")))
    return pods


def step_lines(text):
    """{step: loss text} of the `step N loss X rank R world_size W` lines."""
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^step (\d+) loss (\S+) rank \d+ world_size \d+$", text, re.M)}


class Checker:
    def __init__(self):
        self.failures = 0

    def expect(self, ok, what, detail=""):
        if not ok:
            self.failures += 1
            print(f"FAIL: {what}")
            if detail:
                print("    " + detail.replace("\n", "\n    "))


# Runs train.py with dist.destroy_process_group replaced by an hour's sleep.
HANGING_TEARDOWN = ("import runpy, sys, time, torch.distributed as d; "
                    "d.destroy_process_group = lambda *a, **k: time.sleep(3600); "
                    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
TEARDOWN_SECONDS = 2


def check_hanging_teardown(script):
    """Mode teardown: a single rank (no MASTER_ADDR) whose teardown never returns."""
    work = tempfile.mkdtemp(prefix="berth-train-teardown-")
    c = Checker()
    for case, want_code, want_last in (("complete", 0, "training complete at step 3 loss "),
                                       ("sigterm", 143, "exiting with code 143 (checkpoint at step ")):
        argv = [PYTHON, "-c", HANGING_TEARDOWN, script, "--steps", "3" if case == "complete" else "1000",
                "--checkpoint-dir", os.path.join(work, case), "--checkpoint-every", "0",
                "--step-seconds", "0.05", "--teardown-seconds", str(TEARDOWN_SECONDS)]
        pod = Pod(argv, clean_env(), os.path.join(work, f"{case}.log"))
        deadline = time.monotonic() + DEADLINE_SECONDS
        if case == "sigterm":
            while time.monotonic() < deadline and 2 not in step_lines(pod.text()) and pod.proc.poll() is None:
                time.sleep(0.05)
            if pod.proc.poll() is None:
                pod.sigterm()
        code = pod.wait(deadline)
        text = pod.text()
        c.expect(code == want_code, f"{case}: exit code {code}, want {want_code}", text)
        lines = text.splitlines()
        c.expect(len(lines) >= 2 and lines[-2] == f"process group teardown did not finish in {TEARDOWN_SECONDS} s; "
                 "exiting anyway" and lines[-1].startswith(want_last),
                 f"{case}: the last lines name the hung teardown, then '{want_last}...'", text)
    if c.failures:
        print(f"{c.failures} failure(s); logs kept in {work}")
        return 1
    subprocess.run(["rm", "-rf", work])
    print("PASS (teardown): a hung process-group teardown ends with the decided exit code")
    return 0


def main():
    script, mode = sys.argv[1], sys.argv[2]
    if mode not in ("torchrun", "env", "teardown"):
        sys.exit(f"unknown mode {mode}")
    skip_without_torch()
    if mode == "teardown":
        return check_hanging_teardown(script)
    import torch  # noqa: E402 (only after the skip check)

    work = tempfile.mkdtemp(prefix=f"berth-train-{mode}-")
    ckpt = os.path.join(work, "checkpoints")
    c = Checker()

    # Run 1: SIGTERM to both process groups once both ranks logged STOP_AFTER.
    pods = start_pods(script, mode, ckpt, work, "run1", step_seconds=0.3)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if all(STOP_AFTER in step_lines(p.text()) for p in pods):
            break
        if any(p.proc.poll() is not None for p in pods):
            break
        time.sleep(0.1)
    for p in pods:
        if p.proc.poll() is None:
            p.sigterm()
    codes = [p.wait(deadline) for p in pods]
    logs = [p.text() for p in pods]
    stops = [re.findall(r"^SIGTERM received: stopping at step (\d+)$", t, re.M) for t in logs]
    c.expect(all(len(s) == 1 for s in stops), "run 1: every rank logs one stop step", "\n---\n".join(logs))
    if c.failures:
        return 1
    stop = int(stops[0][0])
    c.expect(stops[1][0] == stops[0][0], f"run 1: ranks stop at the same step ({stops[0][0]} vs {stops[1][0]})")
    c.expect(STOP_AFTER <= stop < STEPS, f"run 1: stop step {stop} in [{STOP_AFTER}, {STEPS})")
    for rank, text in enumerate(logs):
        c.expect(f"exiting with code 143 (checkpoint at step {stop})" in text,
                 f"run 1 rank {rank}: exits 143 after the checkpoint", text)
    c.expect(re.search(rf"^checkpoint saved at step {stop} \(", logs[0], re.M) is not None,
             "run 1: rank 0 saves the checkpoint at the stop step", logs[0])
    c.expect("checkpoint saved" not in logs[1], "run 1: rank 1 never writes a checkpoint", logs[1])
    if mode == "env":
        # Without torchrun the script is the pod's main process: its code is the pod's.
        c.expect(codes == [143, 143], f"run 1: exit codes {codes}, want [143, 143]")
    else:
        # torchrun re-raises the SIGTERM as SignalException and exits 1 (torch 1.13).
        c.expect(codes == [1, 1], f"run 1: torchrun exit codes {codes}, want [1, 1]")
    state = torch.load(os.path.join(ckpt, "checkpoint.pt"))
    c.expect(state["step"] == stop, f"checkpoint step {state['step']}, want {stop}")
    c.expect(state["world_size"] == 2, f"checkpoint world_size {state['world_size']}, want 2")
    leftovers = sorted(n for n in os.listdir(ckpt) if n != "checkpoint.pt")
    c.expect(leftovers == [], f"no temporary files left in the checkpoint dir: {leftovers}")

    # Run 2: restart both pods on the same directory.
    pods = start_pods(script, mode, ckpt, work, "run2", step_seconds=0)
    deadline = time.monotonic() + DEADLINE_SECONDS
    codes = [p.wait(deadline) for p in pods]
    logs = [p.text() for p in pods]
    c.expect(codes == [0, 0], f"run 2: exit codes {codes}, want [0, 0]", "\n---\n".join(logs))
    resumed = {}
    for rank, text in enumerate(logs):
        c.expect(f"resumed from step {stop} (checkpoint " in text, f"run 2 rank {rank}: resumes from step {stop}", text)
        steps = step_lines(text)
        first = min(steps) if steps else None
        c.expect(first == stop + 1, f"run 2 rank {rank}: first step {first}, want {stop + 1}")
        c.expect(sorted(steps) == list(range(stop + 1, STEPS + 1)), f"run 2 rank {rank}: steps {stop + 1}..{STEPS}")
        c.expect(f"training complete at step {STEPS} loss " in text, f"run 2 rank {rank}: completes", text)
        resumed[rank] = steps
    c.expect(torch.load(os.path.join(ckpt, "checkpoint.pt"))["step"] == STEPS, f"final checkpoint at step {STEPS}")

    # Run 3: uninterrupted from scratch; the resumed losses must be the same numbers.
    pods = start_pods(script, mode, os.path.join(work, "fresh"), work, "run3", step_seconds=0)
    deadline = time.monotonic() + DEADLINE_SECONDS
    codes = [p.wait(deadline) for p in pods]
    fresh = step_lines(pods[0].text())
    c.expect(codes == [0, 0], f"run 3: exit codes {codes}, want [0, 0]", "\n---\n".join(p.text() for p in pods))
    want = {s: fresh.get(s) for s in range(stop + 1, STEPS + 1)}
    c.expect(resumed.get(0) == want, "run 2 losses equal an uninterrupted run's from the resumed step on",
             f"resumed: {resumed.get(0)}\nuninterrupted: {want}")

    if c.failures:
        print(f"{c.failures} failure(s); logs kept in {work}")
        return 1
    subprocess.run(["rm", "-rf", work])
    print(f"PASS ({mode}): stopped at step {stop}, resumed at {stop + 1}, completed at {STEPS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
