#!/usr/bin/env python3
"""Sends GET requests for the paths on standard input (one a line) to a base URL, CONCURRENCY at a
time, and prints one JSON object: how many, their statuses, latency percentiles, and failures.

    drive.py http://127.0.0.1:9201 [--concurrency 8] < paths
"""
import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def fetch(url):
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            body = response.read()
            return response.status, time.monotonic() - start, len(body), None
    except urllib.error.HTTPError as error:
        return error.code, time.monotonic() - start, 0, None
    except Exception as error:  # a connection that failed: no status at all
        return 0, time.monotonic() - start, 0, str(error)


def main():
    base = sys.argv[1].rstrip("/")
    concurrency = int(sys.argv[sys.argv.index("--concurrency") + 1]) if "--concurrency" in sys.argv else 8
    paths = [line.strip() for line in sys.stdin if line.strip()]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(fetch, [base + path for path in paths]))
    statuses = {}
    for status, _, _, _ in results:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    latencies = sorted(elapsed for _, elapsed, _, _ in results)

    def percentile(p):
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 1) if latencies else None

    failures = [f"{path} -> {status} {error or ''}".strip()
                for path, (status, _, _, error) in zip(paths, results) if status != 200][:10]
    print(json.dumps({
        "requests": len(results), "statuses": statuses, "p50_ms": percentile(0.5), "p99_ms": percentile(0.99),
        "bytes": sum(size for _, _, size, _ in results), "failures": failures,
    }))


if __name__ == "__main__":
    main()
