#!/usr/bin/python3
"""Adoption after a server crash, and what a container supervisor costs (issue 15 bench).

For each N: starts `berth server` (SQLite store, one embedded node with room for N pods,
pods left running on exit), creates N pods bound to it (`sleep`), waits until all are
Running, then measures:
  start       seconds from the pods' creation to all N reported Running (N supervisors
              and containers started)
  shim RSS    per supervisor (`berth shim`) process: mean VmRSS, mean Pss (shared pages
              split among the sharers) and mean USS (Private_Clean + Private_Dirty: what
              one more container costs), from /proc/<pid>/smaps_rollup
  adopt       `kill -9` of the server, then seconds from starting a new server on the same
              data directory to every pod adopted (the agent's "adopted" log line for each),
              checking afterwards that no pod's status was written (resourceVersion and
              restartCount unchanged) and every container process kept its pid
Prints one line per N and the machine's load. Usage:
  bench/adoption.py BERTH_BINARY [--pods 100,1000] [--keep]
Targets (issue 15): adoption of 1,000 live containers under 2 s; a supervisor under 2 MiB RSS.
"""
import argparse, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time


def kubectl(env, *args, input=None):
    return subprocess.run(["kubectl", *args], env=env, input=input, capture_output=True, text=True, check=True).stdout


def start_server(berth, work, n, log):
    return subprocess.Popen([berth, "server", "--port", "0", "--data-dir", os.path.join(work, "data"), "--nodes", "1",
                             "--node-capacity", f"cpu={n},memory={n}Gi,pods={n + 10}", "--shutdown-grace-period", "0",
                             "--eviction-hard", "nodefs.available<1Gi"],
                            stdout=log, stderr=subprocess.STDOUT)


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return time.monotonic()
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def shim_pids(work):
    out = subprocess.run(["pgrep", "-f", f"shim {work}/"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def container_pids(work):
    out = []
    for s in shim_pids(work):
        try:
            with open(f"/proc/{s}/task/{s}/children") as f:
                out += f.read().split()
        except OSError:
            pass
    return sorted(out)


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            m = re.match(r"(\w+):\s+(\d+) kB", line)
            if m:
                fields[m.group(1)] = int(m.group(2))
    return fields["Rss"], fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"]


def pod_states(env):
    items = json.loads(kubectl(env, "get", "pods", "-n", "bench", "-o", "json"))["items"]
    return {p["metadata"]["name"]: (p["metadata"]["resourceVersion"], p.get("status", {}).get("phase"),
                                    p.get("status", {}).get("containerStatuses", [{}])[0].get("restartCount"))
            for p in items}


def kill_containers(work):
    for root, _, files in os.walk(work):
        if "shim.sock" not in files:
            continue
        try:
            fd = os.open(root, os.O_PATH)
            s = socket.socket(socket.AF_UNIX)
            s.connect(f"/proc/self/fd/{fd}/shim.sock")
            s.sendall(b"signal 9\n")
            s.close()
            os.close(fd)
        except OSError:
            pass
    wait_for(lambda: not shim_pids(work), 60, "supervisors to exit")


def run(berth, n, keep):
    work = tempfile.mkdtemp(prefix="berth-adopt-")
    env = dict(os.environ, KUBECONFIG=os.path.join(work, "data", "kubeconfig"), HOME=work)
    log = open(os.path.join(work, "server.log"), "ab")
    server = start_server(berth, work, n, log)
    try:
        wait_for(lambda: os.path.exists(env["KUBECONFIG"]), 20, "the kubeconfig")
        wait_for(lambda: "node-0" in subprocess.run(["kubectl", "get", "nodes"], env=env, capture_output=True,
                                                    text=True).stdout, 20, "node-0")
        kubectl(env, "create", "namespace", "bench")
        pods = "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, namespace: bench}}
spec:
  nodeName: node-0
  restartPolicy: Never
  containers: [{{name: c, image: busybox, command: [sleep, "1000000"]}}]
""" for i in range(n))
        t0 = time.monotonic()
        kubectl(env, "apply", "-f", "-", input=pods)
        t_running = wait_for(lambda: sum(1 for s in pod_states(env).values() if s[1] == "Running") == n, 600,
                             "all pods Running")
        pids = shim_pids(work)
        assert len(pids) == n, f"{len(pids)} supervisors for {n} pods"
        mem = [memory(p) for p in pids]
        rss, pss, uss = (sum(m[i] for m in mem) / len(mem) / 1024 for i in range(3))
        before = pod_states(env)
        containers = container_pids(work)

        server.send_signal(signal.SIGKILL)
        server.wait()
        os.remove(env["KUBECONFIG"])
        offset = os.path.getsize(os.path.join(work, "server.log"))
        t1 = time.monotonic()
        server = start_server(berth, work, n, log)

        def adopted():
            with open(os.path.join(work, "server.log"), "rb") as f:
                f.seek(offset)
                return f.read().count(b"adopted 1 running container") >= n
        t_adopted = wait_for(adopted, 120, "every pod adopted")
        wait_for(lambda: os.path.exists(env["KUBECONFIG"]), 20, "the kubeconfig")
        time.sleep(1)
        after = pod_states(env)
        changed = [k for k in before if before[k] != after.get(k)]
        still = container_pids(work)
        lost = set(containers) - set(still)
        print(f"N={n:5d}  start {t_running - t0:6.2f} s  shim RSS {rss:5.2f} MiB  PSS {pss:5.2f} MiB  "
              f"USS {uss:5.2f} MiB  adopt {t_adopted - t1:5.2f} s  "
              f"pods changed {len(changed)}  containers lost {len(lost)}", flush=True)
        if changed or lost:
            print(f"  changed: {changed[:5]} lost: {sorted(lost)[:5]}")
            return False
        return True
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
        kill_containers(work)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--pods", default="100,1000")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    ok = all([run(os.path.realpath(a.berth), int(n), a.keep) for n in a.pods.split(",")])
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
