#!/usr/bin/python3
"""A small, real distributed training job for berth's examples.

Trains a 2-layer MLP regression (16 -> 64 -> 1, tanh) on synthetic data with
DistributedDataParallel over the gloo backend (CPU), one process per rank, as
launched by torchrun. It is written for Debian's python3-torch 1.13 on Python 3.11
(/usr/bin/python3); see README.md beside this file for how berth launches it.

Environment (set by torchrun from the pod's PET_* variables):
  RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Without them the script
  runs as a single process (rank 0 of 1) with a private TCP store.

Arguments (each also readable from the environment variable in brackets):
  --steps N              total optimizer steps to reach (TRAIN_STEPS, default 100)
  --checkpoint-dir DIR   shared by every rank and every restart of the job
                         (CHECKPOINT_DIR, default ./checkpoints)
  --checkpoint-every K   save every K steps; 0 = only on SIGTERM/SIGINT and at the end
                         (CHECKPOINT_EVERY, default 10)
  --step-seconds S       minimum wall time of one step, to pace the demo (STEP_SECONDS,
                         default 0)
  --seed N               model/data seed (TRAIN_SEED, default 0)
  --batch-size N         samples per rank per step (default 64)
  --lr X                 SGD learning rate (default 0.05)
  --timeout-seconds S    collective/rendezvous timeout (default 300)
  --teardown-seconds S   longest wait for the process group's teardown before exiting
                         anyway (default 30; see Exit below)

Data: the batch of step s on rank r is drawn from a generator seeded with
(seed, s, r), so a run resumed from step N sees exactly the batches an uninterrupted
run would have seen from step N + 1 on.

Checkpoint: <checkpoint-dir>/checkpoint.pt, a torch.save'd dict
  {"step": completed steps, "model": state_dict, "optimizer": state_dict,
   "loss": global mean loss of that step, "world_size": int, "seed": int}.
Only rank 0 writes it, atomically: torch.save to a temporary file in the same
directory, fsync, os.replace onto checkpoint.pt, fsync of the directory; every rank
then waits on a barrier, so no rank runs ahead of (or exits before) a save. Every rank
loads the same file at start; a reader never sees a partial file.

Log lines (stdout, flushed; torchrun --redirects 2 --tee 2 passes stdout through):
  start rank R world_size W local_rank L master A:P backend gloo steps N
  resumed from step N (checkpoint <path>)      | no checkpoint in <dir>, starting from step 0
  step N loss X rank R world_size W            one per completed step, N counts from 1
  checkpoint saved at step N (<path>)          rank 0 only
  SIGTERM received: stopping at step N         every rank, after the collective decision
                                               (a rank whose peer was signalled stops too)
  exiting with code 143 (checkpoint at step N)
  training complete at step N loss X

Signals: SIGTERM (and SIGINT) set a flag. Every step ends with one all_reduce of
[loss, stop flag] over all ranks, so all ranks stop after the same step even when the
signal reaches the pods at different moments; rank 0 then saves the checkpoint, all
ranks pass a barrier and exit. A signal that arrives before the process group exists
exits at once (nothing new to save). The work per signal is one step plus one save
(milliseconds for this model), well inside Kubernetes' default 30 s grace period.

  The node agent (like the kubelet) signals the container's whole process group, so
  both torchrun and its workers receive SIGTERM. torchrun 1.13's elastic agent also
  forwards SIGTERM to its workers (the second signal is harmless: the handler only
  sets a flag), waits up to 30 s for them, then SIGKILLs them; torchrun itself then
  exits 1 with a SignalException traceback, whatever its workers returned. So the
  container's exit code on preemption is torchrun's 1; this script's own code is:

Exit codes:
  0    all --steps done (also when restarted after completion: nothing to do)
  143  stopped by SIGTERM after saving the checkpoint (130 for SIGINT): 128 + signal
       number, what a shell reports for a process the signal terminated. Not 0 on
       purpose: the job is not finished, and a Job controller counts a pod that exits
       0 as a completed index, which would keep that rank from ever re-running.
  1    a peer was lost or a collective failed (e.g. another rank was killed)
  2    bad arguments

Exit: once the last barrier is passed (training complete, or the stop checkpoint saved)
the outcome is decided, and the exit does not wait on the peers any more.
dist.destroy_process_group() can hang when a peer exits first (gloo and NCCL both;
pytorch/pytorch#75097, open), and so can the interpreter's own teardown, which joins the
backend's threads. A rank hanging there would keep its pod Running, holding its quota and
devices, with its work done. So the teardown runs under a watchdog: after
--teardown-seconds the rank logs
  process group teardown did not finish in S s; exiting anyway
and exits with the code it had decided; and the process ends with os._exit (stdout is
flushed line by line, the checkpoint is fsynced), skipping the interpreter's teardown.
"""

import argparse
import datetime
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

CHECKPOINT_NAME = "checkpoint.pt"
INPUT_DIM = 16
HIDDEN_DIM = 64


def log(message):
    print(message, flush=True)


def env_default(name, default, cast):
    value = os.environ.get(name)
    return cast(value) if value not in (None, "") else default


def parse_args(argv):
    p = argparse.ArgumentParser(description="Small DDP regression trainer with checkpoint/resume.")
    p.add_argument("--steps", type=int, default=env_default("TRAIN_STEPS", 100, int))
    p.add_argument("--checkpoint-dir", default=env_default("CHECKPOINT_DIR", "checkpoints", str))
    p.add_argument("--checkpoint-every", type=int, default=env_default("CHECKPOINT_EVERY", 10, int))
    p.add_argument("--step-seconds", type=float, default=env_default("STEP_SECONDS", 0.0, float))
    p.add_argument("--seed", type=int, default=env_default("TRAIN_SEED", 0, int))
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--timeout-seconds", type=float, default=300.0)
    p.add_argument("--teardown-seconds", type=float, default=30.0)
    args = p.parse_args(argv)
    if args.steps < 0:
        p.error("--steps must be >= 0")
    if args.checkpoint_every < 0:
        p.error("--checkpoint-every must be >= 0")
    if args.step_seconds < 0:
        p.error("--step-seconds must be >= 0")
    if args.batch_size <= 0:
        p.error("--batch-size must be > 0")
    if args.teardown_seconds <= 0:
        p.error("--teardown-seconds must be > 0")
    return args


class StopFlag:
    """Set by SIGTERM/SIGINT; read at step boundaries."""

    def __init__(self):
        self.signum = 0
        self.collective_ready = False

    def handle(self, signum, _frame):
        if not self.signum:
            self.signum = signum
        if not self.collective_ready:
            # No process group yet: nothing to save and no peer to agree with.
            log(f"{signal.Signals(signum).name} received before training started, exiting")
            os._exit(128 + signum)

    def install(self):
        signal.signal(signal.SIGTERM, self.handle)
        signal.signal(signal.SIGINT, self.handle)


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(INPUT_DIM, HIDDEN_DIM), nn.Tanh(), nn.Linear(HIDDEN_DIM, 1))


def teacher(seed):
    """The fixed function the model learns: y = tanh(x W1) W2 with seed-derived weights."""
    g = torch.Generator().manual_seed(seed + 7919)
    w1 = torch.randn(INPUT_DIM, 8, generator=g) / INPUT_DIM ** 0.5
    w2 = torch.randn(8, 1, generator=g)
    return lambda x: torch.tanh(x @ w1) @ w2


def batch(seed, step, rank, batch_size, target):
    g = torch.Generator().manual_seed((seed * 1_000_003 + step) * 4099 + rank)
    x = torch.randn(batch_size, INPUT_DIM, generator=g)
    return x, target(x)


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(directory, state):
    path = os.path.join(directory, CHECKPOINT_NAME)
    tmp = os.path.join(directory, f".{CHECKPOINT_NAME}.tmp.{os.getpid()}")
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(directory)
    return path


def remove_stale_temporaries(directory):
    for name in sorted(os.listdir(directory)):
        if name.startswith(f".{CHECKPOINT_NAME}.tmp."):
            os.unlink(os.path.join(directory, name))


def load_checkpoint(directory):
    path = os.path.join(directory, CHECKPOINT_NAME)
    if not os.path.exists(path):
        return None, path
    return torch.load(path, map_location="cpu"), path


def sleep_unless_stopped(seconds, stop):
    deadline = time.monotonic() + seconds
    while not stop.signum:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))


def init_process_group(timeout):
    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if "MASTER_ADDR" not in os.environ:
        # Single process without torchrun: a private store on a free port.
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "0"
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timeout)
    return dist.get_rank(), dist.get_world_size()


def tear_down(seconds, code, message):
    """destroy_process_group(), then log message; never waits more than seconds.

    A watchdog thread logs and exits with code if the teardown hangs (module docstring).
    """
    destroyed = threading.Event()

    def watchdog():
        if not destroyed.wait(seconds):
            log(f"process group teardown did not finish in {seconds:g} s; exiting anyway")
            log(message)
            os._exit(code)

    threading.Thread(target=watchdog, name="teardown-watchdog", daemon=True).start()
    dist.destroy_process_group()
    destroyed.set()
    log(message)
    return code


def main(argv):
    args = parse_args(argv)
    stop = StopFlag()
    stop.install()
    torch.set_num_threads(1)  # a pod is sized in whole CPUs; one rank = one thread

    rank, world_size = init_process_group(datetime.timedelta(seconds=args.timeout_seconds))
    stop.collective_ready = True
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    log(f"start rank {rank} world_size {world_size} local_rank {local_rank} "
        f"master {os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')} backend gloo steps {args.steps}")

    os.makedirs(args.checkpoint_dir, exist_ok=True)
    if rank == 0:
        remove_stale_temporaries(args.checkpoint_dir)
    dist.barrier()  # nobody reads while rank 0 cleans up

    model = make_model(args.seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    step, last_loss = 0, float("nan")
    state, path = load_checkpoint(args.checkpoint_dir)
    if state is None:
        log(f"no checkpoint in {args.checkpoint_dir}, starting from step 0")
    else:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, last_loss = int(state["step"]), float(state["loss"])
        log(f"resumed from step {step} (checkpoint {path})")

    ddp = DistributedDataParallel(model)
    target = teacher(args.seed)
    loss_fn = nn.MSELoss()

    def checkpoint():
        if rank == 0:
            saved = save_checkpoint(args.checkpoint_dir, {
                "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "loss": last_loss, "world_size": world_size, "seed": args.seed})
            log(f"checkpoint saved at step {step} ({saved})")
        dist.barrier()

    while step < args.steps:
        started = time.monotonic()
        x, y = batch(args.seed, step + 1, rank, args.batch_size, target)
        optimizer.zero_grad()
        loss = loss_fn(ddp(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()
        sleep_unless_stopped(args.step_seconds - (time.monotonic() - started), stop)

        # One collective per step: the mean loss and whether any rank was signalled.
        summary = torch.tensor([loss.item(), 1.0 if stop.signum else 0.0], dtype=torch.float64)
        dist.all_reduce(summary)
        step += 1
        last_loss = summary[0].item() / world_size
        log(f"step {step} loss {last_loss:.6f} rank {rank} world_size {world_size}")

        if summary[1].item() > 0:
            signum = stop.signum or signal.SIGTERM  # a peer's signal: stop as if signalled
            log(f"{signal.Signals(signum).name} received: stopping at step {step}")
            checkpoint()
            code = 128 + int(signum)
            return tear_down(args.teardown_seconds, code, f"exiting with code {code} (checkpoint at step {step})")
        if step == args.steps or (args.checkpoint_every and step % args.checkpoint_every == 0):
            checkpoint()

    return tear_down(args.teardown_seconds, 0, f"training complete at step {step} loss {last_loss:.6f}")


if __name__ == "__main__":
    try:
        exit_code = main(sys.argv[1:])
    except RuntimeError as e:  # gloo: a peer closed its connection or timed out
        log(f"error: {e}")
        exit_code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)  # not the interpreter's teardown, which can hang (docstring: Exit)
