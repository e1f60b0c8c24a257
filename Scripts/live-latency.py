#!/usr/bin/env python3
"""Measures `bledissect live`'s latency: the time from a record written (to a followed file,
or sent over TCP as Android's feed) to its line printed, record by record, with a pause
between records so that each one waits alone. Prints the median, 90th percentile and worst.

Usage: Scripts/live-latency.py [--binary PATH] [--records N] [--gap MS] [--mode follow|android|both]
"""
import argparse, os, random, select, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def split(path):
    data = open(path, "rb").read()
    records, offset = [], 16
    while offset + 24 <= len(data):
        included = int.from_bytes(data[offset + 4:offset + 8], "big")
        records.append(data[offset:offset + 24 + included])
        offset += 24 + included
    return data[:16], records

def await_line(stream, buffered, deadline):
    """Reads from the process's stdout until one more line arrives; returns its arrival time."""
    while b"\n" not in buffered[0]:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return None
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            return None
        buffered[0] += chunk
    arrived = time.monotonic()
    buffered[0] = buffered[0].split(b"\n", 1)[1]
    return arrived

def measure(binary, mode, header, records, gap):
    tmp = tempfile.mkdtemp(prefix="bledissect-latency-")
    env = dict(os.environ, XDG_CACHE_HOME=tmp)
    server = client = None
    if mode == "follow":
        path = os.path.join(tmp, "growing.btsnoop")
        with open(path, "wb") as f:
            f.write(header)
        process = subprocess.Popen([binary, "live", "-1", "--no-cache", "--follow", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        out = open(path, "ab", buffering=0)
        send = out.write
    else:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        process = subprocess.Popen([binary, "live", "-1", "--no-cache", "--android", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        client, _ = server.accept()
        client.sendall(header)
        send = client.sendall
    buffered = [b""]
    latencies = []
    for record in records:
        start = time.monotonic()
        send(record)
        arrived = await_line(process.stdout, buffered, start + 5)
        if arrived is None:
            print(f"  {mode}: a frame did not appear within 5 s", file=sys.stderr)
            break
        latencies.append((arrived - start) * 1000)
        time.sleep(random.uniform(0, 2 * gap) / 1000)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=10)
    if client: client.close()
    if server: server.close()
    return latencies

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/bledissect"))
    parser.add_argument("--records", type=int, default=60)
    parser.add_argument("--gap", type=float, default=30, help="mean pause between records (ms), drawn at random from 0 to twice this")
    parser.add_argument("--mode", choices=["follow", "android", "both"], default="both")
    args = parser.parse_args()
    header, records = split(os.path.join(ROOT, "captures/hr_strap_session.btsnoop"))
    records = records[:args.records]
    for mode in (["follow", "android"] if args.mode == "both" else [args.mode]):
        latencies = sorted(measure(args.binary, mode, header, records, args.gap))
        if not latencies:
            continue
        p90 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.9))]
        print(f"{mode:8s} {len(latencies)} frames: written → printed median {statistics.median(latencies):6.1f} ms, "
              f"90% {p90:6.1f} ms, worst {latencies[-1]:6.1f} ms")

if __name__ == "__main__":
    main()
