#!/usr/bin/env python3
"""Speed and memory of bledissect against btmon and tshark on one capture.

Usage: Scripts/benchmark.py [CAPTURE] [--runs N] [--air-only | --no-air]

CAPTURE defaults to bench/hr_1_5M.btsnoop, made on first use with
Scripts/captures/make_bench_capture.py (a real Bumble heart-rate session, 1.5 M records).
The air figure (issue 20: link-layer packets sniffed over the air to text, `-1` and JSON) is
measured on /tmp/air_bench_1M.pcap, made on first use with Scripts/captures/make_air_bench.py
(1 M packets of a sniffed session, link type 256; a few seconds), in the same rounds.
Each tool reads the same file with its output sent to /dev/null, the tools taking turns round
after round; the best of --runs wall times is reported (the machine is shared), with the peak
resident set size of that run (GNU time).
Figures go to stdout as a Markdown table, ready for docs/performance.md.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def frame_count(binary, capture):
    out = subprocess.run([binary, "info", capture], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("frames:"):
            return int(line.split()[1])
    raise SystemExit("benchmark: cannot read the frame count")


GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") and sys.platform.startswith("linux") else None


def measure(argv):
    """Runs argv with stdout to /dev/null; returns (seconds, peak RSS in MiB, exit status).

    The peak RSS comes from GNU time when present: a child spawned straight from Python would
    report Python's own resident set (the high-water mark includes the time before exec)."""
    with open(os.devnull, "wb") as null, tempfile.NamedTemporaryFile("r") as report:
        command = [GNU_TIME, "-q", "-f", "%M %x", "-o", report.name] + argv if GNU_TIME else argv
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=null, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if GNU_TIME:
            fields = report.read().split()
            rss = int(fields[-2]) / 1024 if len(fields) >= 2 else float("nan")
        else:
            # ru_maxrss is KiB on Linux, bytes on macOS.
            rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return elapsed, rss, code


def btmon_safe_copy(capture):
    """btmon 5.66 crashes (SIGSEGV) on ATT Read By Type requests for 0x2803 (characteristic
    discovery). Writes a copy without those frames, so btmon can read the rest of the same session."""
    if not (shutil.which("tshark") and shutil.which("editcap")):
        return None
    safe = capture.replace(".btsnoop", "") + ".btmon-safe.btsnoop"
    if os.path.exists(safe):
        return safe
    # Discovery happens at the start: look at the first 20 000 frames only.
    out = subprocess.run(["tshark", "-n", "-r", capture, "-c", "20000", "-Y", "btatt.opcode == 0x08 && btatt.uuid16 == 0x2803",
                          "-T", "fields", "-e", "frame.number"], capture_output=True, text=True).stdout.split()
    if not out:
        return None
    subprocess.run(["editcap", "-F", "btsnoop", capture, safe] + out, check=True, stdout=subprocess.DEVNULL)
    return safe


def air_table(binary, capture, runs):
    """Issue 20's figure: air packets (link-layer, sniffed) per second, text, `-1` and JSON Lines,
    the three taking turns round after round; best and median of `runs` wall times."""
    packets = frame_count(binary, capture)
    size = os.path.getsize(capture) / (1024 * 1024)
    modes = [("text", []), ("-1", ["-1"]), ("--json", ["--json"])]
    times = {name: [] for name, _ in modes}
    rss = {}
    for _ in range(runs):
        for name, extra in modes:
            seconds, peak, code = measure([binary] + extra + [capture])
            if code != 0:
                raise SystemExit(f"benchmark: bledissect {' '.join(extra)} {capture} exited with {code}")
            times[name].append(seconds)
            rss[name] = max(rss.get(name, 0), peak)
    print(f"air capture: {os.path.basename(capture)}, {packets} packets, {size:.1f} MiB; {runs} runs each, taking turns")
    print()
    print("| bledissect (air) | best s | median s | packets/s (median) | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in modes:
        ordered = sorted(times[name])
        median = ordered[len(ordered) // 2]
        print(f"| {name} | {ordered[0]:.3f} | {median:.3f} | {packets / median:,.0f} | {rss[name]:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("capture", nargs="?", default=os.path.join(ROOT, "bench", "hr_1_5M.btsnoop"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-tshark", action="store_true", help="tshark takes minutes on 1.5 M packets")
    parser.add_argument("--air", default="/tmp/air_bench_1M.pcap", help="the air capture (made if missing)")
    parser.add_argument("--no-air", action="store_true", help="leave out the air capture")
    parser.add_argument("--air-only", action="store_true", help="time the air capture only")
    args = parser.parse_args()

    if not args.no_air and not os.path.exists(args.air):
        print(f"benchmark: making {args.air}", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(ROOT, "Scripts/captures/make_air_bench.py"), args.air], check=True,
                       stdout=subprocess.DEVNULL)
    if args.air_only:
        subprocess.run(["swift", "build", "-c", "release", "--product", "bledissect"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        air_table(os.path.join(ROOT, ".build", "release", "bledissect"), args.air, args.runs)
        return

    if not os.path.exists(args.capture):
        os.makedirs(os.path.dirname(args.capture), exist_ok=True)
        print(f"benchmark: making {args.capture} (a few minutes)", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(ROOT, "Scripts/captures/make_bench_capture.py"), args.capture], check=True)

    subprocess.run(["swift", "build", "-c", "release", "--product", "bledissect"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build", "release", "bledissect")
    frames = frame_count(binary, args.capture)
    size = os.path.getsize(args.capture) / (1024 * 1024)

    tools = [
        ("bledissect (text)", [binary, args.capture]),
        ("bledissect --json", [binary, "--json", args.capture]),
        ("bledissect --oneline", [binary, "--oneline", args.capture]),
    ]
    safe = None
    if shutil.which("btmon"):
        tools.append(("btmon -r", ["btmon", "-r", args.capture]))
        safe = btmon_safe_copy(args.capture)
        if safe:
            tools.append(("btmon -r (btmon-safe copy)", ["btmon", "-r", safe]))
            tools.append(("bledissect (text, btmon-safe copy)", [binary, safe]))
            tools.append(("bledissect --json (btmon-safe copy)", [binary, "--json", safe]))
    if shutil.which("tshark") and not args.skip_tshark:
        tools.append(("tshark -r", ["tshark", "-n", "-r", args.capture]))
        tools.append(("tshark -r -V", ["tshark", "-n", "-V", "-r", args.capture]))

    print(f"capture: {os.path.basename(args.capture)}, {frames} frames, {size:.1f} MiB; best of {args.runs} runs")
    print(f"machine: {os.cpu_count()} cores, {os.uname().sysname} {os.uname().machine}")
    print()
    print("| tool | wall s | frames/s | peak RSS MiB | exit | note |")
    print("|---|---:|---:|---:|---:|---|")
    results = {}
    # Round robin: every tool runs once per round, so a slow spell of the shared machine
    # falls on all of them alike, and each keeps its best round. tshark runs once (minutes).
    best = {}
    for round_index in range(args.runs):
        for name, argv in tools:
            if name.startswith("tshark") and round_index > 0:
                continue
            result = measure(argv)
            if name not in best or result[0] < best[name][0]:
                best[name] = result
    for name, argv in tools:
        seconds, rss, code = best[name]
        note = ""
        if code < 0 or code >= 128:
            signal_number = -code if code < 0 else code - 128
            note = f"crashed (signal {signal_number}) before the end: its rate is not a full read"
        elif code != 0:
            note = f"exit status {code}"
        results[name] = seconds
        print(f"| {name} | {seconds:.2f} | {frames / seconds:,.0f} | {rss:.1f} | {code} | {note} |")
    if not args.no_air:
        print()
        air_table(binary, args.air, args.runs)
    if safe:
        print()
        print(f"btmon-safe copy: {os.path.basename(safe)}, {frame_count(binary, safe)} frames "
              "(the 0x2803 Read By Type requests that crash btmon 5.66 removed)")
        base = results["btmon -r (btmon-safe copy)"]
        for name in ("bledissect (text, btmon-safe copy)", "bledissect --json (btmon-safe copy)"):
            print(f"{name}: {base / results[name]:.1f}x faster than btmon -r on the same file")


if __name__ == "__main__":
    main()
