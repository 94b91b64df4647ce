#!/usr/bin/env python3
"""Latency of one admission through a running berth server: a standalone Workload created in a
LocalQueue whose ClusterQueue has room, timed from the create call's start until a watch on
Workloads shows it Admitted=True (the control plane's steps: the create, Kueue's informer and
scheduling cycle, the QuotaReserved/Admitted status write, the watch back). No nodes and no
pods are involved; the ClusterQueue is large enough that nothing waits for quota.

  bench/admission_latency.py [--berth build/cmd/berth/berth] [--store memory|sqlite] [--n 40]

Prints the create call's median and the create -> Admitted-seen median, p90 and minimum in ms.

Figures (2026-12-06, 2-core VM, load ~5 from a review running beside): memory store:
create 1.1-1.5 ms, create -> Admitted seen median 1.9-2.1, p90 2.4-2.5, min 1.3 ms; sqlite
(an fsync per commit): create 2.5 ms, median 3.6, p90 4.3, min 2.5 ms. Kueue's baseline scenario in real time
(bench/kueue_realtime.sh) ran 1.067-1.072 times its zero-latency replay with glibc's malloc,
which the replay reproduces only with 25-50 ms per control-plane step (admission_bench
BM_BaselineLatency/L): the gap was not an admission's latency, and it went with the server's
CPU (with jemalloc, the same sitting: 1.033-1.035).
"""

import argparse, json, os, shutil, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_throughput import must, watch_stages  # noqa: E402
from soak import Client, server_port, wait_for  # noqa: E402

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--berth", default=os.path.join(os.path.dirname(__file__), "..", "build", "cmd", "berth", "berth"))
    ap.add_argument("--store", default="memory")
    ap.add_argument("--n", type=int, default=40)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="berth-admission-latency.")
    server = subprocess.Popen([args.berth, "--log-level", "warn", "server", "--port", "0", "--data-dir",
                               os.path.join(work, "data"), "--nodes", "0", "--store", args.store, "--insecure-http"],
                              stdout=open(os.path.join(work, "server.log"), "w"), stderr=subprocess.STDOUT)
    try:
        kubeconfig = os.path.join(work, "data", "kubeconfig")
        wait_for(lambda: os.path.exists(kubeconfig) and server_port(kubeconfig), 30, "the kubeconfig")
        port = server_port(kubeconfig)
        c = Client(port)
        must(c.do("POST", KUEUE + "/resourceflavors", json.dumps(
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "rf"}})), "flavor")
        must(c.do("POST", KUEUE + "/clusterqueues", json.dumps(
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                 {"name": "rf", "resources": [{"name": "cpu", "nominalQuota": str(10 * args.n)}]}]}]}})),
             "cluster queue")
        must(c.do("POST", KUEUE + "/namespaces/default/localqueues", json.dumps(
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": "lq", "namespace": "default"}, "spec": {"clusterQueue": "cq"}})), "local queue")
        time.sleep(1)  # the LocalQueue reaches Kueue's cache

        admitted = {}
        cv = threading.Condition()

        def note(obj):
            conditions = {c["type"]: c["status"] for c in obj.get("status", {}).get("conditions", [])}
            if conditions.get("Admitted") == "True":
                with cv:
                    admitted.setdefault(obj["metadata"]["name"], time.perf_counter())
                    cv.notify_all()

        threading.Thread(target=watch_stages, args=(port, KUEUE + "/namespaces/default/workloads", note),
                         daemon=True).start()
        creates, latencies = [], []
        for i in range(args.n):
            name = f"w{i}"
            start = time.perf_counter()
            must(c.do("POST", KUEUE + "/namespaces/default/workloads", json.dumps(
                {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                 "metadata": {"name": name, "namespace": "default"},
                 "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                     "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}]}})),
                 "workload")
            creates.append((time.perf_counter() - start) * 1000)
            with cv:
                if not cv.wait_for(lambda: name in admitted, timeout=10):
                    raise SystemExit(f"{name} was not admitted within 10 s")
                latencies.append((admitted[name] - start) * 1000)
            time.sleep(0.05)  # one at a time: each admission on an idle server
        creates.sort()
        latencies.sort()
        n = len(latencies)
        print(f"store {args.store}, n {n}: create {creates[n // 2]:.1f} ms; create -> Admitted seen median "
              f"{latencies[n // 2]:.1f} ms, p90 {latencies[(n * 9) // 10]:.1f}, min {latencies[0]:.1f}")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
