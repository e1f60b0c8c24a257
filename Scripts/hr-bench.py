#!/usr/bin/env python3
"""Times `bledissect hr` (and `gatt`, whose consumer does almost nothing per frame, as the
engine's floor) on a capture: the best of N runs, wall and peak RSS from /usr/bin/time.

Usage: Scripts/hr-bench.py [--runs N] [--binary PATH] CAPTURE
"""
import argparse, os, re, subprocess, sys

def run(command):
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, rss = result.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("capture")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--binary", default=".build/release/bledissect")
    args = parser.parse_args()
    frames = int(re.search(r"frames:\s+(\d+)", subprocess.run([args.binary, "info", args.capture], capture_output=True, text=True).stdout).group(1))
    print(f"{args.capture}: {frames} frames, load average {os.getloadavg()[0]:.2f}, best of {args.runs}")
    for label, extra in [("gatt (engine floor)", ["gatt"]), ("hr text", ["hr"]), ("hr --csv", ["hr", "--csv"]),
                         ("hr --json", ["hr", "--json"]), ("hr --svg", ["hr", "--svg", "/tmp/hr-bench.svg"]),
                         ("annotate -1", ["-1"])]:
        times = [run([args.binary] + extra + [args.capture]) for _ in range(args.runs)]
        wall = min(t for t, _ in times)
        rss = max(r for _, r in times)
        print(f"  {label:22s} {wall:6.2f} s  {frames / wall / 1e6:5.2f} M frames/s  peak RSS {rss / 1024:5.1f} MiB")

if __name__ == "__main__":
    sys.exit(main())
