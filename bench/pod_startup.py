#!/usr/bin/python3
"""Delay from admission to every process of a 16-pod job running (issue #6 bench).

Starts `berth server` (memory store, 4 embedded nodes of 8 CPUs), creates a ClusterQueue
and a queued Indexed Job of N pods (1 CPU each, `sleep`), and measures on the client's
monotonic clock, from two kubectl watches:
  admitted  -> the Workload's Admitted condition became True
  running   -> the last of the N pods reported phase Running (its process started)
Prints both delays from the Job's creation and the admission-to-running delay, per run and
the median. Usage: bench/pod_startup.py BERTH_BINARY [--pods 16] [--runs 5]
Target (issue #6): a 16-pod job running within 1 s of admission on this machine.
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

def watch(kind, ns, env, on_event, stop):
    p = subprocess.Popen(["kubectl", "get", kind, "-n", ns, "-w", "--output-watch-events", "-o", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    dec, buf = json.JSONDecoder(), ""
    def pump():
        nonlocal buf
        for line in p.stdout:
            buf += line
            while True:
                s = buf.lstrip()
                if not s:
                    buf = ""
                    break
                try:
                    ev, end = dec.raw_decode(s)
                except ValueError:
                    break
                buf = s[end:]
                on_event(time.monotonic(), ev)
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    stop.append(p)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--pods", type=int, default=16)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="berth-startup-")
    env = dict(os.environ, KUBECONFIG=os.path.join(work, "data", "kubeconfig"), HOME=work)
    server = subprocess.Popen([a.berth, "server", "--port", "0", "--store=memory", "--data-dir", os.path.join(work, "data"),
                               "--nodes", "4", "--node-capacity", "cpu=8,memory=32Gi", "--eviction-hard", "nodefs.available<1Gi"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = []
    try:
        for _ in range(100):
            if os.path.exists(env["KUBECONFIG"]): break
            time.sleep(0.1)
        setup = f"""
apiVersion: v1
kind: Namespace
metadata: {{name: bench}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{{name: cpu, nominalQuota: 32}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: bench}}
spec: {{clusterQueue: cq}}
"""
        subprocess.run(["kubectl", "apply", "-f", "-"], input=setup, text=True, env=env, check=True, capture_output=True)
        results = []
        for run in range(a.runs):
            name = f"gang-{run}"
            admitted, running = {}, {}
            def on_wl(t, ev):
                o = ev["object"]
                if f"job-{name}-" in o["metadata"]["name"] and any(
                        c.get("type") == "Admitted" and c.get("status") == "True"
                        for c in o.get("status", {}).get("conditions", [])):
                    admitted.setdefault(o["metadata"]["name"], t)
            def on_pod(t, ev):
                o = ev["object"]
                if (o["metadata"]["name"].startswith(name + "-") and ev["type"] != "DELETED"
                        and o.get("status", {}).get("phase") == "Running"):
                    running.setdefault(o["metadata"]["name"], t)
            watch("workloads", "bench", env, on_wl, procs)
            watch("pods", "bench", env, on_pod, procs)
            time.sleep(2.0)  # let both watches start
            job = f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: bench, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
spec:
  completionMode: Indexed
  completions: {a.pods}
  parallelism: {a.pods}
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 0
      containers:
      - {{name: main, image: busybox, command: [sleep, "600"], resources: {{requests: {{cpu: "1"}}}}}}
"""
            t0 = time.monotonic()
            subprocess.run(["kubectl", "apply", "-f", "-"], input=job, text=True, env=env, check=True, capture_output=True)
            deadline = t0 + 60
            while time.monotonic() < deadline and (not admitted or len(running) < a.pods):
                time.sleep(0.01)
            mine = sorted(running.values())
            if not admitted or len(mine) < a.pods:
                print(f"run {run}: incomplete (admitted={bool(admitted)}, running={len(mine)})"); continue
            t_adm = min(admitted.values())
            r = (t_adm - t0, mine[-1] - t0, mine[-1] - t_adm)
            results.append(r)
            print(f"run {run}: admitted {r[0]*1000:.0f} ms, all {a.pods} running {r[1]*1000:.0f} ms after create;"
                  f" admission -> all running {r[2]*1000:.0f} ms")
            for p in procs: p.terminate()
            procs.clear()
            subprocess.run(["kubectl", "delete", "job", name, "-n", "bench", "--wait=true", "--cascade=foreground"],
                           env=env, capture_output=True)
        if results:
            med = statistics.median(r[2] for r in results)
            print(f"median admission -> all {a.pods} pods running: {med*1000:.0f} ms over {len(results)} runs "
                  f"(load average {os.getloadavg()[0]:.1f}; target <= 1000 ms)")
    finally:
        for p in procs: p.terminate()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    main()
