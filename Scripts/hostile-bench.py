#!/usr/bin/env python3
"""Time and peak memory of bledissect on adversarial captures, at several sizes.

Usage: nice python3 Scripts/hostile-bench.py [--scales 10000,100000] [--full] [--only CASE ...]
           [--modes text,json,info,convert,diff,check] [--cache empty,used] [--timeout 120] [--keep DIR]
           [--binary PATH]

Each case of Scripts/captures/make_hostile_captures.py (listed by its --list) is written at each
scale (N units: pairs, connections, bearers ... see the case's line) into a temporary directory,
then bledissect reads it once per mode, with its output thrown away. The compressed bombs
(gzip_bomb, zip_bomb, btsnooz_bomb, resync_bomb: fixed size, about 512 KiB, 512 KiB, 86 KiB and
512 KiB) are written
and read once, whatever the scales; their scale column shows "fixed" and their records are the
good ones before the garbage. A bomb is expected to stop at its inflation cap with exit status 1
and the cap's message (shown as the row's note):

    text     bledissect FILE > /dev/null              (annotate, plain text)
    json     bledissect --json FILE > /dev/null       (annotate, JSON Lines)
    info     bledissect info FILE
    convert  bledissect convert --to pcapng FILE TMP  (TMP deleted afterwards)
    diff     bledissect diff FILE FILE                (each side read on its own thread)
    check    bledissect check FILE                    (the conformance analysis)
    (timestamps and timestamps_only also: text-abs = -t abs, text-delta = -t delta)

Each run has a GATT cache of its own (XDG_CACHE_HOME), never the user's, in each --cache state:

    empty    a new, empty cache folder
    used     a copy (hard links) of a cache filled once before the runs, as a user who decoded
             hostile files would have it: the tables saved after decoding the read_by_type_chars
             case at 250 000 pairs and every capture in captures/, plus 40 hostile table files
             written by hand (5 of 100 000 characteristics, 35 of 3 000, one of them for the
             strap of captures/late_reconnect.btsnoop)

The samples captures/hr_strap_session.btsnoop and captures/late_reconnect.btsnoop are run too
(case "sample", scale 1), so start-up cost shows. A row of the used cache is flagged when its
wall time is more than 3x the empty cache's for the same case, scale and mode (and above 0.2 s).

Each run gets --timeout seconds (default 120); a run still going then is killed and reported as
TIMEOUT, and that case and mode are not tried at larger scales. Captures are deleted after their
runs (--keep DIR keeps them there). The release binary is built first if it is missing.

Figures: wall seconds, CPU seconds (user + system, both threads), CPU microseconds per unit (flat
across scales = linear time) and peak resident set size,
taken from os.wait4 on the child. A child forked straight from Python inherits Python's resident
set in its high-water mark (a /bin/true child reports the parent's RSS), so on Linux the
command runs under GNU time (/usr/bin/time, a small C program) when it is installed, and the
peak RSS is GNU time's report of the real child; otherwise ru_maxrss of wait4 is shown, marked
as an upper bound. Exit statuses follow the shell: 128 + signal (132 SIGILL = Swift trap, 134
SIGABRT, 139 SIGSEGV).

The table (Markdown, stdout) flags a row when the peak RSS is >= 64 MiB (the goal: below 64 MiB
on any capture), when RSS grew by more than half and 8 MiB from the previous scale, when CPU time
per unit grew more than 2x from the previous scale (super-linear; only counted once the larger run
takes 0.5 s, below that start-up dominates), when the run timed out though the smaller scale,
grown linearly, would have finished in half the timeout, and on any non-zero exit.
Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = os.path.join(ROOT, "Scripts", "captures", "make_hostile_captures.py")
sys.path.insert(0, os.path.dirname(GENERATOR))
import make_hostile_captures as hostile  # noqa: E402

RSS_LIMIT_MIB = 64
GNU_TIME = "/usr/bin/time" if sys.platform.startswith("linux") and os.access("/usr/bin/time", os.X_OK) else None
MODES = ("text", "json", "info", "convert", "diff", "check")
EXTRA_MODES = {name: ("text-abs", "text-delta") for name in ("timestamps", "timestamps_only")}


def command(binary: str, mode: str, capture: str, scratch: str) -> list[str]:
    if mode == "text":
        return [binary, capture]
    if mode == "json":
        return [binary, "--json", capture]
    if mode == "text-abs":
        return [binary, "-t", "abs", capture]
    if mode == "text-delta":
        return [binary, "-t", "delta", capture]
    if mode == "info":
        return [binary, "info", capture]
    if mode == "diff":
        return [binary, "diff", capture, capture]
    if mode == "check":
        return [binary, "check", capture]
    if mode == "convert":
        return [binary, "convert", "--to", "pcapng", capture, os.path.join(scratch, "converted.pcapng")]
    raise ValueError(mode)


def describe_failure(stderr_path: str) -> str:
    """The Swift runtime failure and the first source location of the backtrace, or the first line."""
    try:
        with open(stderr_path, "rb") as f:
            text = f.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""
    failure = re.search(r"Swift runtime failure: ([^\n*]+)", text) or re.search(r"(Fatal error[^\n]*)", text)
    location = re.search(r" at (?:\S*/)?(Sources/\S+\.swift:\d+(?::\d+)?)", text)
    if failure:
        return failure.group(1).strip() + (f" at {location.group(1)}" if location else "")
    first = text.strip().splitlines()
    return first[0][:160] if first else ""


def hostile_table(address: str, characteristics: int) -> str:
    """A GATT map file (the cache's format) of one service with this many characteristics."""
    entries = ",".join(f'{{"declaration_handle":{i % 32000 * 2 + 2},"value_handle":{i % 32000 * 2 + 3},"uuid":"2a37"}}'
                       for i in range(characteristics))
    return ('{"format":"bledissect-gatt-map","version":1,"capture":"hostile","learned":"2026-01-01T00:00:00Z",'
            f'"devices":[{{"server":"peer","address":"{address}","services":[{{"start":1,"end":65535,"uuid":"180d",'
            f'"characteristics":[{entries}]}}]}}]}}\n')


def prepare_used_cache(binary: str, base: str, out_dir: str) -> None:
    """Fills XDG_CACHE_HOME=base as a user who decoded hostile files would have it."""
    environment = dict(os.environ, XDG_CACHE_HOME=base)
    path, _ = generate("read_by_type_chars", 250_000, out_dir)
    samples = sorted(os.path.join(ROOT, "captures", n) for n in os.listdir(os.path.join(ROOT, "captures")) if n.endswith(".btsnoop"))
    for capture in [path] + samples:
        subprocess.run([binary, "summary", capture], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.remove(path)
    tables = os.path.join(base, "bledissect", "gatt")
    os.makedirs(tables, exist_ok=True)
    for index in range(40):
        address = "D0:B1:ED:00:48:52" if index == 0 else f"C0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}"
        name = address.replace(":", "") + ".json"
        with open(os.path.join(tables, name), "w") as f:
            f.write(hostile_table(address, 100_000 if index < 5 else 3000))


def fresh_cache(state: str, used: str | None, scratch: str) -> str:
    """A cache folder for one run: empty, or hard links to the used cache's files."""
    base = tempfile.mkdtemp(prefix=f"cache-{state}-", dir=scratch)
    if state == "used" and used:
        source = os.path.join(used, "bledissect", "gatt")
        target = os.path.join(base, "bledissect", "gatt")
        os.makedirs(target)
        for name in os.listdir(source):
            os.link(os.path.join(source, name), os.path.join(target, name))
    return base


def measure(argv: list[str], timeout: float, scratch: str, cache: str | None = None) -> dict:
    """Runs argv (stdout to /dev/null); returns wall/cpu seconds, peak RSS MiB, status, note."""
    report = os.path.join(scratch, "time.out")
    stderr_path = os.path.join(scratch, "stderr.txt")
    wrapped = [GNU_TIME, "-q", "-f", "%M", "-o", report] + argv if GNU_TIME else argv
    with open(os.devnull, "wb") as null, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        environment = dict(os.environ, XDG_CACHE_HOME=cache) if cache else None
        process = subprocess.Popen(wrapped, stdout=null, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True, env=environment)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - start
    process.returncode = 0  # reaped by wait4 above; keeps Popen from waiting again
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code  # killed by a signal: report as the shell does
    rss = None
    if GNU_TIME and not timed_out:
        try:
            with open(report) as f:
                rss = int(f.read().split()[-1]) / 1024
        except (OSError, ValueError, IndexError):
            rss = None
    if rss is None:
        # ru_maxrss is KiB on Linux, bytes on macOS; includes this script's RSS at fork.
        rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    note = "" if code == 0 or timed_out else describe_failure(stderr_path)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss, "status": "TIMEOUT" if timed_out else code, "note": note}


def generate(case: str, scale: int, out_dir: str) -> tuple[str, int]:
    """Writes one capture in a separate process (keeps this process small); returns (path, records)."""
    result = subprocess.run([sys.executable, GENERATOR, "--out", out_dir, "--scale", str(scale), "--only", case],
                            capture_output=True, text=True, check=True)
    path = os.path.join(out_dir, hostile.file_name(case, scale))
    records = int(re.search(r"(\d+) records", result.stdout).group(1))
    return path, records


def ensure_binary(binary: str) -> None:
    if os.path.exists(binary):
        return
    print("hostile-bench: building the release binary", file=sys.stderr, flush=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "bledissect"], cwd=ROOT, check=True, stdout=sys.stderr)


def flags_for(row: dict, previous: dict | None, timeout: float) -> list[str]:
    flags = []
    if row["status"] == "TIMEOUT":
        if previous and previous["status"] == 0 and previous["wall"] * row["scale"] / previous["scale"] < timeout / 2:
            flags.append("SUPER-LINEAR (timeout)")
        return flags
    if row["status"] != 0:
        flags.append(f"EXIT {row['status']}")
    if row["rss"] >= RSS_LIMIT_MIB:
        flags.append(f"RSS >= {RSS_LIMIT_MIB} MiB")
    if previous and previous["status"] == 0:
        if row["rss"] > previous["rss"] * 1.5 and row["rss"] - previous["rss"] > 8:
            flags.append("RSS grows")
        if row["cpu"] >= 0.5 and previous["cpu"] > 0:
            per_unit = (row["cpu"] / row["scale"]) / (previous["cpu"] / previous["scale"])
            if per_unit > 2:
                flags.append(f"SUPER-LINEAR ({per_unit:.1f}x per unit)")
    return flags


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="10000,100000", help="comma-separated units per case (default 10000,100000)")
    parser.add_argument("--full", action="store_true", help="add the 1000000 scale")
    parser.add_argument("--only", action="append", choices=sorted(hostile.CASES) + sorted(hostile.BOMBS), help="only this case (repeatable)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: text,json,info,convert,diff,check (default all)")
    parser.add_argument("--cache", default="empty,used", help="comma-separated cache states: empty,used (default both)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    parser.add_argument("--keep", metavar="DIR", help="write the captures to DIR and keep them")
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "bledissect"))
    args = parser.parse_args()

    scales = sorted({int(s) for s in args.scales.split(",") if s} | ({1_000_000} if args.full else set()))
    modes = [m for m in args.modes.split(",") if m]
    for mode in modes:
        if mode not in MODES and not any(mode in extra for extra in EXTRA_MODES.values()):
            parser.error(f"unknown mode {mode}")
    ensure_binary(args.binary)
    binary = os.path.abspath(args.binary)

    out_dir = args.keep or tempfile.mkdtemp(prefix="bledissect-hostile-")
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="bledissect-hostile-run-")
    states = [c for c in args.cache.split(",") if c]
    for state in states:
        if state not in ("empty", "used"):
            parser.error(f"unknown cache state {state}")
    used = None
    if "used" in states:
        used = tempfile.mkdtemp(prefix="bledissect-used-cache-")
        print("hostile-bench: filling the used cache", file=sys.stderr, flush=True)
        prepare_used_cache(binary, used, out_dir)
    rows: list[dict] = []
    last: dict[tuple[str, str, str], dict] = {}
    timed_out: set[tuple[str, str, str]] = set()

    def run_all(case: str, scale: int, records: int, path: str, case_modes: list[str], fixed: bool = False) -> None:
        size = os.path.getsize(path)
        for mode in case_modes:
            empty_row = None
            for state in states:
                if (case, mode, state) in timed_out:
                    continue
                cache = fresh_cache(state, used, scratch)
                result = measure(command(binary, mode, path, scratch), args.timeout, scratch, cache)
                shutil.rmtree(cache, ignore_errors=True)
                row = {"case": case, "scale": scale, "fixed": fixed, "records": records, "mib": size / 2**20, "mode": mode, "cache": state,
                       **result}
                row["flags"] = flags_for(row, last.get((case, mode, state)), args.timeout)
                if state == "empty":
                    empty_row = row
                elif empty_row and empty_row["status"] == 0 and row["wall"] > 0.2 and row["wall"] > 3 * empty_row["wall"]:
                    row["flags"].append(f"USED CACHE {row['wall'] / empty_row['wall']:.1f}x")
                rows.append(row)
                last[(case, mode, state)] = row
                if result["status"] == "TIMEOUT":
                    timed_out.add((case, mode, state))
                print(f"  {mode:10} {state:5} {result['wall']:8.2f} s  {result['rss']:8.1f} MiB  exit {result['status']}"
                      f"  {' '.join(row['flags'])} {result['note']}", file=sys.stderr, flush=True)

    try:
        for sample in ("hr_strap_session.btsnoop", "late_reconnect.btsnoop"):
            print(f"sample {sample}", file=sys.stderr, flush=True)
            run_all("sample " + sample, 1, 0, os.path.join(ROOT, "captures", sample), modes, fixed=True)
        for case in args.only or list(hostile.CASES) + list(hostile.BOMBS):
            case_modes = modes + [m for m in EXTRA_MODES.get(case, ()) if "text" in modes]
            bomb = case in hostile.BOMBS
            for scale in scales[:1] if bomb else scales:
                if all((case, m, s) in timed_out for m in case_modes for s in states):
                    break
                start = time.perf_counter()
                path, records = generate(case, scale, out_dir)
                size = os.path.getsize(path)
                print(f"{case} @ {scale}: {records} records, {size / 2**20:.1f} MiB, written in "
                      f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
                run_all(case, scale, records, path, case_modes, fixed=bomb)
                if not args.keep:
                    os.remove(path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if used:
            shutil.rmtree(used, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)

    rss_source = "GNU time" if GNU_TIME else "wait4 ru_maxrss (upper bound: includes this script at fork)"
    print(f"bledissect hostile captures; timeout {args.timeout:.0f} s per run; peak RSS from {rss_source}\n")
    print("| case | scale | records | MiB | mode | cache | wall s | cpu s | cpu µs/unit | peak RSS MiB | exit | flags |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        wall = f"> {args.timeout:.0f}" if r["status"] == "TIMEOUT" else f"{r['wall']:.2f}"
        rss = "—" if r["status"] == "TIMEOUT" and GNU_TIME else f"{r['rss']:.1f}"
        flags = "; ".join(r["flags"] + ([r["note"]] if r["note"] else []))
        per_unit = "—" if r["status"] == "TIMEOUT" or r["fixed"] else f"{r['cpu'] / r['scale'] * 1e6:.2f}"
        scale = "fixed" if r["fixed"] else r["scale"]
        print(f"| {r['case']} | {scale} | {r['records']} | {r['mib']:.1f} | {r['mode']} | {r['cache']} | {wall} | {r['cpu']:.2f} | "
              f"{per_unit} | {rss} | {r['status']} | {flags} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
