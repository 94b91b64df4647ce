#!/usr/bin/env python3
"""Soak: one `berth server` on loopback under steady load, with clients that stop reading.

Starts `berth server` (SQLite store, no embedded node), creates 10,000 ConfigMaps of 256 B
and 20 of 32 KiB in namespace `soak`, then opens 100 watches:
  - 80 healthy informers, in --readers processes (a selector each, every byte read at once):
    each lists (pages of 500, as client-go's pager) and watches from the list's
    resourceVersion with bookmarks and client-go's timeoutSeconds (5 to 10 min); a watch the
    server ends cleanly resumes from the last resourceVersion seen; an ERROR event or an end
    without the final chunk is an error (the informer relists);
  - 20 stalled watchers: raw sockets with a 4 KiB receive buffer that watch from the current
    resourceVersion, read the response header and never read again.
Then drives --duration seconds of load from --workers processes, one keep-alive connection
each, paced at --rate requests/s in all (flat out when behind): get 30 %, list limit=50 15 %,
create 17.5 %, merge-patch 20 %, delete 17.5 %; and one more process merge-patching the
32 KiB ConfigMaps with new data at --big-rate/s, so that a stalled watcher's 4 MiB bound
fills within the run. Samples the server's VmRSS and CPU (/proc) every second and scans its
log for "closing a stream whose client does not read: <address>" (the byte bound and the
write deadline both log it). Prints:

  healthy errors   failed requests (non-2xx, reset, timeout) and healthy watches the server
                   ended (logged close of a healthy address, ERROR event, no final chunk);
                   must be 0
  rate             requests/s achieved, latency percentiles
  server CPU       the server's CPU seconds over the load, per request (each write is also
                   encoded for 100 watches), and how busy the whole machine was
  events           events each healthy informer received; must equal the writes
  RSS              the server's VmRSS at load start, its peak, and its steady state (mean of
                   the samples in the last half of the run)
  stalled closed   when the server logged closing each stalled watcher (s after load start),
                   and what each stalled socket finds when it finally reads: EOF or reset
Exit status 0 when all of that holds.

Usage: bench/soak.py [--berth build/cmd/berth/berth] [--duration 600] [--rate 1000]

Figures (2-core VM shared with other engineers' work; RelWithDebInfo build; each write is
encoded once per event and form, not once per watch, and GET/LIST answer stored objects from
the same encoding cache: apiserver/encoding_cache.h):
  --duration 600 --rate 1000, load average 5.6 at start, 8.7 at end (other builds running):
    healthy errors   0 of 602996 requests; 0 of 80 healthy watches ended by the server
    rate             1005 req/s (332623 writes); latency p50 6.7 ms, p99 22.3 ms, max 392 ms
    server CPU       581 s = 97 % of one core, 0.96 ms per request
    events           each healthy informer 332623 of 332623 writes; 160 watches (each
                     informer resumed once after its timeoutSeconds), 80 lists
    RSS              start 70 MiB, peak 239 MiB, steady 235 MiB
    stalled closed   20 of 20 at 16 s (byte bound: 4186810 bytes queued, limit 4194304);
                     read at the end: 20 reset (the kernel had dropped the orphaned sockets)
  --duration 75 on a quiet machine, before and after GET/LIST used the encoding cache:
    765 -> 968 req/s, server CPU 1.46 -> 0.92 ms per request (perf: JSON string escaping was
    29 % of the server's CPU before).
  A run shorter than about 76 s may log fewer than 20 stalled closes: the kernel's send
  buffers absorb up to 4 MiB per socket before the byte bound is reached, and the 60 s write
  deadline then closes the rest.
"""

import argparse, http.client, json, multiprocessing, os, queue, random, re, selectors, shutil, signal, socket
import subprocess, sys, tempfile, time

NS = "soak"
OBJECTS = 10_000
WATCHERS = 100
STALLED = 20
PAYLOAD = "x" * 256
BIG_OBJECTS = 20  # ConfigMaps big-0 .. big-19, rewritten with BIG_BYTES of new data
BIG_BYTES = 32 * 1024
CLOSE_LOG = re.compile(rb"closing a stream whose client does not read: ([0-9.]+:\d+): ([^\n]*)")
BASE = f"/api/v1/namespaces/{NS}/configmaps"


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def server_port(kubeconfig):
    m = re.search(r"server:\s*https?://[^:\s]+:(\d+)", open(kubeconfig).read())
    return int(m.group(1)) if m else None


def configmap(name, payload=PAYLOAD):
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS},
                       "data": {"n": "0", "payload": payload}})


class Client:
    """One keep-alive HTTP/1.1 connection; reconnects after an error."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def do(self, method, path, body=None, content_type="application/json"):
        """Returns (status or error text, body)."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": content_type} if body is not None else {}
        try:
            self.conn.request(method, path, body=body, headers=headers)
            resp = self.conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()
            self.conn = None
            return f"{type(e).__name__}: {e}", b""


def seed(port, names, big, out):
    c = Client(port)
    bad = sum(c.do("POST", BASE, configmap(name))[0] != 201 for name in names)
    bad += sum(c.do("POST", BASE, configmap(name, "y" * BIG_BYTES))[0] != 201 for name in big)
    out.put(bad)


def paced(rate, duration, start_at):
    """Yields once per request at `rate`/s for `duration` s from wall time `start_at`; runs
    flat out when behind."""
    while time.time() < start_at:
        time.sleep(0.005)
    t0 = time.monotonic()
    done = 0
    while time.monotonic() - t0 < duration:
        ahead = done / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
        yield done
        done += 1


def load_worker(port, wid, names, rate, duration, start_at, out):
    """Paced mixed load on one keep-alive connection: get 30 %, list limit=50 15 %, create
    17.5 %, merge-patch 20 %, delete 17.5 %. Reports (requests, writes, errors, first
    errors, latencies)."""
    rnd = random.Random(wid)
    c = Client(port)
    pool = list(names)
    created = writes = errors = 0
    samples, lat = [], []
    for done in paced(rate, duration, start_at):
        r = rnd.random()
        t = time.monotonic()
        if r < 0.30 and pool:
            (s, _), ok, w = c.do("GET", f"{BASE}/{rnd.choice(pool)}"), (200,), 0
        elif r < 0.45:
            (s, _), ok, w = c.do("GET", f"{BASE}?limit=50"), (200,), 0
        elif r < 0.625 or not pool:
            name = f"w{wid}-{created}"
            created += 1
            (s, _), ok, w = c.do("POST", BASE, configmap(name)), (201,), 1
            if s == 201:
                pool.append(name)
        elif r < 0.825:
            (s, _), ok, w = c.do("PATCH", f"{BASE}/{rnd.choice(pool)}", json.dumps({"data": {"n": f"{wid}-{done}"}}),
                                 "application/merge-patch+json"), (200,), 1
        else:
            name = pool.pop(rnd.randrange(len(pool)))
            (s, _), ok, w = c.do("DELETE", f"{BASE}/{name}"), (200, 202), 1
        lat.append(time.monotonic() - t)
        if s in ok:
            writes += w
        else:
            errors += 1
            if len(samples) < 5:
                samples.append(str(s))
    out.put((len(lat), writes, errors, samples, lat))


def big_writer(port, rate, duration, start_at, out):
    """Merge-patches big-<i> with BIG_BYTES of new data at `rate`/s: the events that fill a
    stalled watcher's 4 MiB bound within the run."""
    rnd = random.Random(-1)
    c = Client(port)
    writes = errors = 0
    samples, lat = [], []
    for done in paced(rate, duration, start_at):
        body = json.dumps({"data": {"payload": rnd.choice("abcdefgh") * BIG_BYTES, "n": str(done)}})
        t = time.monotonic()
        s, _ = c.do("PATCH", f"{BASE}/big-{done % BIG_OBJECTS}", body, "application/merge-patch+json")
        lat.append(time.monotonic() - t)
        if s == 200:
            writes += 1
        else:
            errors += 1
            if len(samples) < 5:
                samples.append(str(s))
    out.put((len(lat), writes, errors, samples, lat))


def list_rv(client):
    """Lists every ConfigMap in pages of 500 (client-go's pager) and returns the list's
    resourceVersion."""
    rv, cont = None, ""
    while True:
        s, body = client.do("GET", f"{BASE}?limit=500" + (f"&continue={cont}" if cont else ""))
        if s != 200:
            raise RuntimeError(f"list: {s} {body[:200]!r}")
        meta = json.loads(body)["metadata"]
        rv = rv or meta["resourceVersion"]
        cont = meta.get("continue", "")
        if not cont:
            return rv


def open_watch(port, query, receive_buffer=0):
    """A raw socket with a watch request sent and the response header read; returns the
    socket and the bytes after the header."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET {BASE}?watch=true&{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1 if receive_buffer else 4096)  # a stalled watcher reads the header only
        if not chunk:
            raise RuntimeError("watch refused")
        head += chunk
    if b" 200 " not in head.split(b"\r\n")[0]:
        raise RuntimeError(f"watch answered {head[:100]!r}")
    return s, head.split(b"\r\n\r\n", 1)[1]


def healthy_watchers(port, ids, stop, ready, progress, out):
    """Informers: each watch lists, then watches from the list's resourceVersion with
    bookmarks and client-go's timeoutSeconds (5 to 10 min); a watch the server ends cleanly
    is resumed from the last resourceVersion seen. Every event is read at once (one selector
    per process, several processes). An ERROR event or an end without the final chunk is
    an error; that watch relists."""
    c = Client(port)
    sel = selectors.DefaultSelector()
    rnd = random.Random(ids[0])
    slots = {i: {"events": 0, "errors": [], "lists": 0, "watches": 0, "rv": None} for i in ids}

    def start(i, relist):
        st = slots[i]
        if relist or st["rv"] is None:
            st["rv"] = list_rv(c)
            st["lists"] += 1
        s, rest = open_watch(port, f"resourceVersion={st['rv']}&allowWatchBookmarks=true"
                                   f"&timeoutSeconds={rnd.randint(300, 599)}")
        st["watches"] += 1
        s.setblocking(False)
        key = {"i": i, "carry": b"", "local": "%s:%d" % s.getsockname()}
        sel.register(s, selectors.EVENT_READ, key)
        feed(key, rest)

    def feed(key, data):
        st = slots[key["i"]]
        buf = key["carry"] + data
        carry = key["carry"]
        n = buf.count(b'"type":"') - carry.count(b'"type":"')
        n -= buf.count(b'"type":"BOOKMARK"') - carry.count(b'"type":"BOOKMARK"')
        st["events"] += n
        progress.value += n
        at = buf.rfind(b'"resourceVersion":"')
        if at >= 0:
            end = buf.find(b'"', at + 19)
            if end > 0:
                st["rv"] = buf[at + 19:end].decode()
        if buf.count(b'"type":"ERROR"') > carry.count(b'"type":"ERROR"'):
            key["error"] = buf[buf.find(b'"type":"ERROR"') - 300:][:400]
        key["carry"] = buf[-64:]

    for i in ids:
        start(i, True)
    ready.put(len(ids))
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.2):
            s, k = key.fileobj, key.data
            try:
                data = s.recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError as e:
                data, err = b"", f"{type(e).__name__}: {e}"
            else:
                err = None
            if data:
                feed(k, data)
                if "error" not in k:
                    continue
            sel.unregister(s)
            s.close()
            clean = err is None and "error" not in k and k["carry"].endswith(b"0\r\n\r\n")
            if not clean:
                slots[k["i"]]["errors"].append(f"{time.time():.0f} {k['local']}: "
                                               f"{err or k.get('error') or 'ended without the final chunk'!r}")
            if not stop.is_set():
                start(k["i"], relist=not clean)
    out.put(slots)


def proc_stat_cpu(pid):
    """utime + stime of a process, in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy():
    """(busy, total) jiffies of all CPUs."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values, p):
    return sorted(values)[min(len(values) - 1, int(len(values) * p))] if values else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--berth", default=os.path.join(os.path.dirname(__file__), "..", "build", "cmd", "berth", "berth"))
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--rate", type=float, default=1000, help="requests/s of the mixed load")
    ap.add_argument("--big-rate", type=float, default=5, help="32 KiB ConfigMap updates/s, besides --rate")
    ap.add_argument("--workers", type=int, default=8, help="load processes, one keep-alive connection each")
    ap.add_argument("--readers", type=int, default=4, help="processes reading the 80 healthy watches")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="berth-soak-")
    log_path = os.path.join(work, "server.log")
    log = open(log_path, "ab")
    kubeconfig = os.path.join(work, "data", "kubeconfig")
    server = subprocess.Popen([args.berth, "server", "--port", "0", "--data-dir", os.path.join(work, "data"),
                               "--nodes", "0", "--shutdown-grace-period", "0", "--insecure-http"],
                              stdout=log, stderr=subprocess.STDOUT)
    print(f"load at start    {open('/proc/loadavg').read().strip()}", flush=True)
    readers = []
    try:
        wait_for(lambda: os.path.exists(kubeconfig) and server_port(kubeconfig), 30, "the kubeconfig")
        port = server_port(kubeconfig)
        c = Client(port)
        assert c.do("POST", "/api/v1/namespaces", json.dumps({"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": NS}}))[0] == 201

        # 10,000 objects (and the big ones), created from the load processes' name pools.
        names = [[f"seed{w}-{i}" for i in range(w, OBJECTS, args.workers)] for w in range(args.workers)]
        big = [[f"big-{i}" for i in range(w, BIG_OBJECTS, args.workers)] for w in range(args.workers)]
        q = multiprocessing.Queue()
        t = time.monotonic()
        procs = [multiprocessing.Process(target=seed, args=(port, names[w], big[w], q)) for w in range(args.workers)]
        for p in procs:
            p.start()
        seed_bad = sum(q.get() for _ in procs)
        for p in procs:
            p.join()
        print(f"seeded {OBJECTS} ConfigMaps in {time.monotonic() - t:.1f} s ({seed_bad} failed)", flush=True)

        # 80 healthy informers in --readers processes, then 20 stalled watches.
        t = time.monotonic()
        stop, ready, results_q = multiprocessing.Event(), multiprocessing.Queue(), multiprocessing.Queue()
        progress = [multiprocessing.Value("q", 0, lock=False) for _ in range(args.readers)]
        ids = list(range(WATCHERS - STALLED))
        readers = [multiprocessing.Process(target=healthy_watchers,
                                           args=(port, ids[r::args.readers], stop, ready, progress[r], results_q))
                   for r in range(args.readers)]
        for p in readers:
            p.start()
        assert sum(ready.get(timeout=300) for _ in readers) == len(ids)
        rv = list_rv_small(c)
        stalled = [open_watch(port, f"resourceVersion={rv}", receive_buffer=4096)[0] for _ in range(STALLED)]
        stalled_addr = {"%s:%d" % s.getsockname(): i for i, s in enumerate(stalled)}
        print(f"watches open in {time.monotonic() - t:.1f} s (80 listed and watching, 20 stalled from "
              f"resourceVersion {rv})", flush=True)

        start_at = time.time() + 1
        procs = [multiprocessing.Process(target=load_worker, args=(port, w, names[w], args.rate / args.workers,
                                                                   args.duration, start_at, q))
                 for w in range(args.workers)]
        if args.big_rate > 0:
            procs.append(multiprocessing.Process(target=big_writer, args=(port, args.big_rate, args.duration,
                                                                          start_at, q)))
        for p in procs:
            p.start()
        log_offset = os.path.getsize(log_path)
        samples, closes, healthy_closes = [], {}, []
        cpu0 = busy0 = None
        # The load processes' results are taken as they come: a process whose result is
        # larger than a pipe's buffer exits only once it has been read.
        results = []
        while len(results) < len(procs):
            now = time.time()
            if now >= start_at:
                if cpu0 is None:
                    cpu0, busy0, children0 = proc_stat_cpu(server.pid), machine_busy(), os.times()
                samples.append((now - start_at, rss_kib(server.pid)))
            with open(log_path, "rb") as f:
                f.seek(log_offset)
                text = f.read()
            text = text[:text.rfind(b"\n") + 1]
            log_offset += len(text)
            for m in CLOSE_LOG.finditer(text):
                addr = m.group(1).decode()
                if addr in stalled_addr:
                    closes.setdefault(stalled_addr[addr], (now - start_at, m.group(2).decode()))
                else:
                    healthy_closes.append(f"{now - start_at:.0f} s {addr}: {m.group(2).decode()}")
            try:
                while len(results) < len(procs):
                    results.append(q.get(timeout=max(0.01, 1 - (time.time() - now))))
            except queue.Empty:
                pass
        for p in procs:
            p.join()
        cpu = proc_stat_cpu(server.pid) - cpu0
        busy1 = machine_busy()
        elapsed = time.time() - start_at
        writes = sum(r[1] for r in results)

        # Let the informers catch up (each should see every write), then stop them.
        deadline = time.monotonic() + 60
        last, still = -1, 0
        while time.monotonic() < deadline:
            total = sum(v.value for v in progress)
            if total >= writes * len(ids):
                break
            still = still + 1 if total == last else 0
            if still >= 5:
                break
            last = total
            time.sleep(1)
        stop.set()
        slots = {}
        for _ in readers:
            slots.update(results_q.get(timeout=60))
        for p in readers:
            p.join()
        children1 = os.times()
        bench_cpu = (children1.children_user + children1.children_system
                     - children0.children_user - children0.children_system)

        # The stalled watchers read at last: what the kernel held, then EOF or a reset.
        ends = []
        for s in stalled:
            s.settimeout(3)
            try:
                while s.recv(1 << 20):
                    pass
                ends.append("EOF")
            except ConnectionResetError:
                ends.append("RST")
            except socket.timeout:
                ends.append("open")
            s.close()

        requests = sum(r[0] for r in results)
        errors = sum(r[2] for r in results)
        msgs = [m for r in results for m in r[3]]
        lat = [x for r in results for x in r[4]]
        watch_errors = [e for st in slots.values() for e in st["errors"]]
        events = [st["events"] for st in slots.values()]
        rss = [kib for _, kib in samples]
        steady = [kib for s, kib in samples if s >= args.duration / 2] or rss
        machine = (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1])
        print(f"duration         {args.duration:.0f} s, {args.workers} load processes + 1 big writer, target "
              f"{args.rate:.0f} + {args.big_rate:.0f} req/s")
        print(f"healthy errors   {errors} of {requests} requests {msgs[:3]}; {len(watch_errors)} healthy watches "
              f"ended by the server {watch_errors[:3]} {healthy_closes[:3]}")
        print(f"rate             {requests / elapsed:.0f} req/s ({writes} writes); latency p50 "
              f"{percentile(lat, 0.5) * 1000:.1f} ms, p99 {percentile(lat, 0.99) * 1000:.1f} ms, max "
              f"{max(lat, default=0) * 1000:.0f} ms")
        print(f"server CPU       {cpu:.0f} s = {100 * cpu / elapsed:.0f} % of one core, "
              f"{1e3 * cpu / max(1, requests):.2f} ms per request; machine busy {100 * machine:.0f} % of "
              f"{os.cpu_count()} cores; bench processes {bench_cpu:.0f} s")
        print(f"events           each healthy watcher {min(events, default=0)} .. {max(events, default=0)} of "
              f"{writes} writes; {sum(st['watches'] for st in slots.values())} watches, "
              f"{sum(st['lists'] for st in slots.values())} lists for {len(ids)} informers")
        print(f"RSS              start {rss[0] / 1024:.0f} MiB, peak {max(rss) / 1024:.0f} MiB, steady "
              f"{sum(steady) / len(steady) / 1024:.0f} MiB (mean of the last half)")
        when = sorted(closes.values())
        print(f"stalled closed   {len(closes)} of {STALLED} in the server log, at "
              f"{', '.join(f'{t:.0f}' for t, _ in when)} s ({when[0][1] if when else ''}); "
              f"read at the end: {ends.count('EOF')} EOF, {ends.count('RST')} reset, {ends.count('open')} open")
        print(f"load at end      {open('/proc/loadavg').read().strip()}")
        ok = (errors == 0 and not watch_errors and not healthy_closes and len(closes) == STALLED
              and ends.count("open") == 0 and min(events, default=0) == writes)
        return 0 if ok else 1
    finally:
        for p in readers:
            if p.is_alive():
                p.terminate()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        if args.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def list_rv_small(client):
    """The current resourceVersion, from a list of one item."""
    s, body = client.do("GET", f"{BASE}?limit=1")
    assert s == 200, (s, body[:200])
    return json.loads(body)["metadata"]["resourceVersion"]


if __name__ == "__main__":
    sys.exit(main())
