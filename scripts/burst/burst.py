#!/usr/bin/env python3
"""A burst of distinct requests, all at once (or --sustain: that many in flight for a while),
against one server; samples its memory and /health.

    burst.py --url-template T --count N --pids P[,P...] [--health URL] [--settle 20]

T holds {n} (the request's number, for a new source each) and {name} (a source, in turn from
--names). Every request starts at once (one thread each). Meanwhile the resident memory of the
PIDs (summed) is read every 100 ms, and --health is asked every 100 ms. Prints one JSON line:
answered by status, Retry-After seen on 503s, latency p50/p99/max of 200s and of all, peak RSS
during the burst, RSS --settle seconds after its last answer, /health max latency, wall time,
and the server's CPU use over it (cores busy on average).
"""
import argparse, json, os, threading, time, urllib.request, urllib.error


def rss_mb(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def cpu_seconds(pids):
    """User + system CPU time the PIDs have used so far (their threads included)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        except FileNotFoundError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url-template", required=True)
    parser.add_argument("--names", required=True, help="a file with one source name a line")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--pids", required=True)
    parser.add_argument("--health")
    parser.add_argument("--settle", type=float, default=20)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--check", help="a file to append 'status content-type bytes' of every answer to")
    parser.add_argument("--sustain", type=float, default=0,
                        help="instead of one burst, keep --count requests in flight for this many seconds "
                             "(each client asks for a new source as soon as it has an answer)")
    args = parser.parse_args()
    pids = [int(p) for p in args.pids.split(",") if p]
    names = [line.strip() for line in open(args.names) if line.strip()]

    results = []
    lock = threading.Lock()
    done = threading.Event()
    peak = [rss_mb(pids)]
    health = []

    cpu_samples = []

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(pids))
            cpu_samples.append((time.monotonic(), cpu_seconds(pids)))
            time.sleep(0.1)

    def probe():
        while not done.is_set():
            start = time.monotonic()
            try:
                urllib.request.urlopen(args.health, timeout=30).read()
                ok = True
            except Exception:
                ok = False
            health.append((time.monotonic() - start, ok))
            time.sleep(0.1)

    def one(n):
        url = args.url_template.format(n=n, name=names[n % len(names)])
        start = time.monotonic()
        retry_after = None
        try:
            with urllib.request.urlopen(url, timeout=args.timeout) as response:
                body = response.read()
                status, kind = response.status, response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            body = error.read()
            status, kind = error.code, error.headers.get("Content-Type", "")
            retry_after = error.headers.get("Retry-After")
        except Exception as error:
            body, status, kind = b"", f"error:{type(error).__name__}", ""
        record = {"n": n, "name": names[n % len(names)], "status": status, "seconds": time.monotonic() - start, "start": start,
                  "retry_after": retry_after, "bytes": len(body), "type": kind}
        with lock:
            results.append(record)
        return record

    threads = [threading.Thread(target=sample, daemon=True)]
    if args.health:
        threads.append(threading.Thread(target=probe, daemon=True))
    for thread in threads:
        thread.start()
    start = time.monotonic()
    cpu_start = cpu_seconds(pids)
    if args.sustain:
        counter = [args.count]

        def client(n):
            while time.monotonic() - start < args.sustain:
                last = one(n)
                with lock:
                    n = counter[0]
                    counter[0] += 1
                # A client that honours Retry-After (as browsers, CDNs and well-behaved SDKs do):
                # it waits as told before asking again, rather than spinning on the same cores.
                if last["status"] == 503 and last["retry_after"]:
                    time.sleep(min(float(last["retry_after"]), max(0.0, args.sustain - (time.monotonic() - start))))

        workers = [threading.Thread(target=client, args=(n,)) for n in range(args.count)]
    else:
        workers = [threading.Thread(target=one, args=(n,)) for n in range(args.count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.monotonic() - start
    cpu = cpu_seconds(pids) - cpu_start
    done.set()
    time.sleep(args.settle)
    settled = rss_mb(pids)

    statuses = {}
    for result in results:
        statuses[str(result["status"])] = statuses.get(str(result["status"]), 0) + 1
    admitted = [r["seconds"] for r in results if r["status"] == 200]
    every = [r["seconds"] for r in results]
    refused = [r for r in results if r["status"] == 503]
    if args.check:
        with open(args.check, "a") as check:
            for r in sorted(results, key=lambda r: r["n"]):
                check.write(f'{r["n"]} {r["status"]} {r["type"]} {r["bytes"]}\n')
    print(json.dumps({
        "count": args.count,
        "answered": statuses,
        "retry_after_on_every_503": all(r["retry_after"] for r in refused),
        "admitted_p50": percentile(admitted, 50), "admitted_p99": percentile(admitted, 99),
        "admitted_max": max(admitted) if admitted else None,
        "all_p50": percentile(every, 50), "all_max": max(every) if every else None,
        "admitted_per_second": len(admitted) / wall if wall else None,
        "mode": f"sustained {args.sustain:g} s" if args.sustain else "burst",
        "peak_rss_mb": round(peak[0]), "settled_rss_mb": round(settled), "settle_seconds": args.settle,
        "health_max_ms": round(max(h[0] for h in health) * 1000) if health else None,
        "health_failures": sum(1 for h in health if not h[1]),
        "wall_seconds": round(wall, 2),
        # The server's CPU over the wall time, in cores (2.0: both cores busy throughout).
        "cpu_cores": round(cpu / wall, 2) if wall else None,
        # How many of each source were answered 200: the work done, to weigh by each source's cost.
        "admitted_sources": {name: sum(1 for r in results if r["status"] == 200 and r["name"] == name)
                             for name in sorted(set(r["name"] for r in results))},
        # When each admitted request was answered, seconds after the start (with --timeline).
        **({"admitted_at": sorted(round(r["start"] - start + r["seconds"], 2) for r in results if r["status"] == 200)}
           if os.environ.get("BURST_TIMELINE") else {}),
        # The server's CPU in each half second from the start, in cores (with --timeline).
        **({"cores_by_half_second": [
            round((b[1] - a[1]) / (b[0] - a[0]), 1)
            for a, b in zip(cpu_samples[::5], cpu_samples[5::5]) if a[0] >= start and b[0] <= start + wall]}
           if os.environ.get("BURST_TIMELINE") else {}),
    }))


if __name__ == "__main__":
    main()
