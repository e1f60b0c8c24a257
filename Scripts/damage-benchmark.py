#!/usr/bin/env python3
"""Time and memory of reading on after damage, on hostile captures of growing size.

Usage: Scripts/damage-benchmark.py [--binary PATH] [--sizes 4,8,16] [--runs N]

Builds btsnoop files (in a temporary directory, from captures/hr_strap_session.btsnoop) of each
size in MiB, for three kinds of damage, and runs `bledissect -1` (output to /dev/null) and
`bledissect info` on each; prints a Markdown table of the best wall time of --runs, MiB/s, peak
RSS (GNU time) and the exit status. Linear time shows as a constant MiB/s across sizes.

  garbage     random bytes after the first 40 records: the search gives up after 1 MiB
  many-gaps   two good records, then 8-57 bytes of garbage, over and over: one skip per pair
  lookalikes  headers that each look right and claim 200 000 bytes (a look ahead per offset),
              with a real pair of records every 900 KiB so the search starts again
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") and sys.platform.startswith("linux") else None


def records(capture):
    out, offset = [], 16
    while offset + 24 <= len(capture):
        length = struct.unpack(">I", capture[offset + 4:offset + 8])[0]
        out.append(capture[offset:offset + 24 + length])
        offset += 24 + length
    return capture[:16], out


def make(kind, size, header, recs, rng):
    body = bytearray(header)
    body += b"".join(recs[:40])
    pair = recs[150] + recs[151]
    if kind == "garbage":
        body += b"\xff" * 8 + rng.randbytes(size - len(body) - 8)
    elif kind == "many-gaps":
        while len(body) < size:
            body += b"\xff" * 8 + rng.randbytes(rng.randrange(0, 50)) + pair
    else:
        stamp = struct.unpack(">q", recs[0][16:24])[0]
        unit = struct.pack(">IIIIq", 200_000, 200_000, 0, 0, stamp) + b"\x01"
        stretch = (900 * 1024) // len(unit)
        while len(body) < size:
            body += b"\xff" * 24 + unit * stretch + pair
    return bytes(body)


def measure(argv):
    with open(os.devnull, "wb") as null, tempfile.NamedTemporaryFile("r") as report:
        command = [GNU_TIME, "-q", "-f", "%M %x", "-o", report.name] + argv if GNU_TIME else argv
        start = time.perf_counter()
        process = subprocess.run(command, stdout=null, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        rss = float("nan")
        if GNU_TIME:
            fields = report.read().split()
            if len(fields) >= 2:
                rss = int(fields[-2]) / 1024
    return elapsed, rss, process.returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/bledissect"))
    parser.add_argument("--sizes", default="4,8,16")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "bledissect"], cwd=ROOT, check=True)
    with open(os.path.join(ROOT, "captures/hr_strap_session.btsnoop"), "rb") as f:
        header, recs = records(f.read())
    print("| damage | MiB | command | best s | MiB/s | peak RSS MiB | exit |")
    print("|---|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as directory:
        for kind in ["garbage", "many-gaps", "lookalikes"]:
            for mib in [int(s) for s in args.sizes.split(",")]:
                path = os.path.join(directory, f"{kind}-{mib}.btsnoop")
                with open(path, "wb") as f:
                    f.write(make(kind, mib << 20, header, recs, random.Random(mib)))
                real = os.path.getsize(path) / (1 << 20)
                for command in (["-1"], ["info"]):
                    best = None
                    for _ in range(args.runs):
                        result = measure([args.binary] + command + [path])
                        if best is None or result[0] < best[0]:
                            best = result
                    elapsed, rss, code = best
                    print(f"| {kind} | {real:.1f} | {' '.join(command)} | {elapsed:.3f} | {real / elapsed:.0f} | {rss:.1f} | {code} |")


if __name__ == "__main__":
    main()
