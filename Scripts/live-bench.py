#!/usr/bin/env python3
"""Measures `bledissect live` on its two streaming paths, without a Bluetooth kernel or a phone.

- Monitor channel: the kernel's monitor socket is replaced by the LD_PRELOAD stand-in the tests
  use (Tests/Support/monitor_standin.c, built here with clang). It replays a capture as monitor
  messages on a schedule and, like the kernel's monitor queue, never waits for the reader: a
  message that does not fit the socket buffer is dropped and counted.
- Android feed: a TCP server on 127.0.0.1 plays the phone's role (btsnoop header, then records
  on a schedule); `live --android` connects to it.

Prints, per path: records asked for and sent, dropped, decoded (from live's count line), and
whether the -w recording holds exactly the records sent (same kinds, directions and bytes, in
order: compared by digest). Then, at a busy real session's rate (1 000 records/s): CPU per
second of wall time, and the latency from a record's send to its printed line (p50/p99/max).

Usage: Scripts/live-bench.py [--capture FILE] [--rate N] [--seconds S] [--quiet-rate N]
                             [--quiet-seconds S] [--only monitor|android]
The capture defaults to bench/hr_1_5M.btsnoop (Scripts/captures/make_bench_capture.py), else
the sample session, replayed as often as needed. Targets (issue 11): nothing lost at 50 000/s
for 60 s; CPU < 5 % of a core at 1 000/s; p99 latency < 100 ms.
"""
import argparse, hashlib, os, re, resource, signal, socket, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Monitor opcodes (capture-formats.md §4) for the H4 kinds and directions: (indicator, received).
MONITOR_KIND = {2: (1, 0), 3: (4, 1), 4: (2, 0), 5: (2, 1), 6: (3, 0), 7: (3, 1), 18: (5, 0), 19: (5, 1)}


def build_standin(directory):
    library = os.path.join(directory, "standin.so")
    subprocess.run(["clang", "-shared", "-fPIC", "-O2", "-o", library,
                    os.path.join(ROOT, "Tests/Support/monitor_standin.c"), "-ldl", "-lpthread"], check=True)
    return library


class Capture:
    """A btsnoop file in memory with its record offsets; records() cycles through them."""

    def __init__(self, path):
        with open(path, "rb") as handle:
            self.data = handle.read()
        self.datalink = int.from_bytes(self.data[12:16], "big")
        self.offsets = []
        offset = 16
        while offset + 24 <= len(self.data):
            length = int.from_bytes(self.data[offset + 4:offset + 8], "big")
            if offset + 24 + length > len(self.data):
                break
            self.offsets.append(offset)
            offset += 24 + length
        self.end = offset

    def normalized(self, count):
        """(indicator, received, payload) of the first `count` records, cycling."""
        return normalized_records(self.data, self.datalink, self.offsets, count)


def normalized_records(data, datalink, offsets, count):
    produced = 0
    while produced < count and offsets:
        for offset in offsets:
            if produced == count:
                return
            length = int.from_bytes(data[offset + 4:offset + 8], "big")
            flags = int.from_bytes(data[offset + 8:offset + 12], "big")
            payload = data[offset + 24:offset + 24 + length]
            if datalink == 2001:
                kind = MONITOR_KIND.get(flags & 0xFFFF)
                if kind is None:
                    continue
                yield kind[0], kind[1], payload
            else:
                if not payload or payload[0] not in (1, 2, 3, 4, 5):
                    continue
                yield payload[0], flags & 1, payload[1:]
            produced += 1


def digest(records):
    hasher, count, size = hashlib.sha256(), 0, 0
    for indicator, received, payload in records:
        hasher.update(bytes([indicator, received]) + len(payload).to_bytes(4, "little") + payload)
        count += 1
        size += len(payload)
    return count, hasher.hexdigest(), size


def payload_bytes(capture, count):
    return digest(capture.normalized(count))[2]


def recording_matches(capture, recording, sent):
    if not os.path.exists(recording):
        return "no recording"
    written = Capture(recording)
    written_count, written_digest, _ = digest(written.normalized(len(written.offsets)))
    source_count, source_digest, _ = digest(capture.normalized(sent))
    if written_count != source_count:
        return f"recorded {written_count} of {source_count}"
    return f"recorded {written_count}, " + ("identical to the records sent" if written_digest == source_digest else "CONTENT DIFFERS")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def finish(process, errors_path, before, started):
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(errors_path, "rb") as handle:
        errors = handle.read()
    decoded = re.search(rb"live: (\d+) frames?", errors)
    return {"elapsed": elapsed, "cpu": cpu, "decoded": int(decoded.group(1)) if decoded else None,
            "status": process.returncode, "errors": errors.decode(errors="replace")}


def monitor_run(binary, library, capture_path, rate, seconds, directory, recording=None, latency=False):
    report = os.path.join(directory, "report")
    sendlog = os.path.join(directory, "sendlog")
    env = dict(os.environ, LD_PRELOAD=library, STANDIN_CAPTURE=capture_path, STANDIN_RATE=str(rate),
               STANDIN_REPEAT="1000000", STANDIN_LIMIT=str(int(rate * seconds)), STANDIN_DROP="1",
               STANDIN_REPORT=report, XDG_CACHE_HOME=os.path.join(directory, "cache"))
    if latency:
        env["STANDIN_SENDLOG"] = sendlog
    arguments = [binary, "live", "-1", "--no-cache"] + (["-w", recording] if recording else [])
    errors_path = os.path.join(directory, "stderr")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(errors_path, "wb") as errors:
        process = subprocess.Popen(arguments, env=env, stdout=subprocess.PIPE if latency else subprocess.DEVNULL, stderr=errors)
        arrivals = []
        if latency:
            # Each printed line's arrival, on the same clock as the stand-in's send times.
            for _ in process.stdout:
                arrivals.append(time.monotonic())
        # The stand-in closes the socket after the last message; live then ends by itself.
        process.wait()
    result = finish(process, errors_path, before, started)
    with open(report) as handle:
        sent, dropped, feed_seconds, feed_cpu = re.match(
            r"sent (\d+) dropped (\d+) seconds ([\d.]+) cpu ([\d.]+)", handle.read()).groups()
    # The stand-in's feeding thread runs inside live's process: its CPU is the kernel's part.
    result.update(sent=int(sent), dropped=int(dropped), feed_seconds=float(feed_seconds), cpu=result["cpu"] - float(feed_cpu),
                  feed_cpu=float(feed_cpu))
    if latency:
        with open(sendlog) as handle:
            sends = [float(line) for line in handle]
        result["lines"] = len(arrivals)
        if len(arrivals) == len(sends) and sends:
            result["latency"] = [arrival - send for arrival, send in zip(arrivals, sends)]
    return result


def android_run(binary, capture, rate, seconds, directory, recording=None, latency=False):
    """Serves the capture's records on a schedule to one `live --android` connection, then closes."""
    limit = int(rate * seconds)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    fed = {}
    sends = []

    def feed():
        connection, _ = server.accept()
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        connection.sendall(capture.data[:16])
        view, offsets, count = memoryview(capture.data), capture.offsets, len(capture.offsets)
        start = time.monotonic()
        sent = sent_bytes = 0
        while sent < limit:
            due = min(limit, int((time.monotonic() - start) * rate) + 1)
            if due <= sent:
                time.sleep(0.001)
                continue
            # Contiguous records go out in one write (up to the end of a pass through the file).
            first = sent % count
            last = min(count, first + (due - sent))
            end = offsets[last] if last < count else capture.end
            connection.sendall(view[offsets[first]:end])
            if latency:
                sends.extend([time.monotonic()] * (last - first))
            sent_bytes += end - offsets[first]
            sent += last - first
        fed.update(sent=sent, bytes=sent_bytes, seconds=time.monotonic() - start)
        connection.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    errors_path = os.path.join(directory, "stderr")
    arguments = [binary, "live", "-1", "--no-cache", "--android", f"127.0.0.1:{port}"] + (["-w", recording] if recording else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(errors_path, "wb") as errors:
        process = subprocess.Popen(arguments, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(directory, "cache")),
                                   stdout=subprocess.PIPE if latency else subprocess.DEVNULL, stderr=errors)
        arrivals = []

        def watch():
            for _ in process.stdout:
                arrivals.append(time.monotonic())

        watcher = threading.Thread(target=watch)
        if latency:
            watcher.start()
        feeder.join()
        # After the feed closes, live says so and waits to reconnect: then Ctrl-C ends it.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with open(errors_path, "rb") as handle:
                if b"closed the connection" in handle.read():
                    break
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        if latency:
            watcher.join()
    server.close()
    result = finish(process, errors_path, before, started)
    # Waiting for the reconnection notice is not work: CPU is per second of the feed.
    result["elapsed"] = fed["seconds"]
    result["lines"] = len(arrivals)
    if latency and len(arrivals) == len(sends) and sends:
        result["latency"] = [arrival - send for arrival, send in zip(arrivals, sends)]
    result.update(sent=fed["sent"], sent_bytes=fed["bytes"], feed_seconds=fed["seconds"])
    received = re.search(r"live: \d+ frames?, (\d+) bytes?", result["errors"])
    result["received_bytes"] = int(received.group(1)) if received else None
    return result


def quiet_line(name, result, rate, seconds, note=""):
    line = (f"{name}, {rate:.0f} records/s for {seconds:.0f} s: CPU {result['cpu']:.2f} s over {result['elapsed']:.1f} s = "
            f"{100 * result['cpu'] / max(result['elapsed'], 1e-9):.1f} % of a core{note}; decoded {result['decoded']} of {result['sent']}")
    if "latency" in result:
        milliseconds = [1000 * value for value in result["latency"]]
        line += (f"; send to printed line p50 {percentile(milliseconds, 0.5):.2f} ms, p99 {percentile(milliseconds, 0.99):.2f} ms, "
                 f"max {max(milliseconds):.2f} ms")
    else:
        line += f"; latency not measured ({result['lines']} lines for {result['sent']} records)"
    return line


def main():
    parser = argparse.ArgumentParser()
    bench = os.path.join(ROOT, "bench/hr_1_5M.btsnoop")
    parser.add_argument("--capture", default=bench if os.path.exists(bench) else os.path.join(ROOT, "captures/hr_strap_session.btsnoop"))
    parser.add_argument("--rate", type=float, default=50000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--quiet-rate", type=float, default=1000)
    parser.add_argument("--quiet-seconds", type=float, default=10)
    parser.add_argument("--only", choices=["monitor", "android"])
    options = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "bledissect"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build/release/bledissect")
    capture = Capture(options.capture)
    with tempfile.TemporaryDirectory() as directory:
        if options.only != "android":
            library = build_standin(directory)
            recording = os.path.join(directory, "monitor.btsnoop")
            busy = monitor_run(binary, library, options.capture, options.rate, options.seconds, directory, recording)
            print(f"monitor, {options.rate:.0f} records/s for {options.seconds:.0f} s: sent {busy['sent']} in {busy['feed_seconds']:.1f} s "
                  f"({busy['sent'] / max(busy['feed_seconds'], 1e-9):.0f}/s), dropped by the socket {busy['dropped']}, "
                  f"decoded {busy['decoded']}, {recording_matches(capture, recording, busy['sent'])}, exit {busy['status']}")
            quiet = monitor_run(binary, library, options.capture, options.quiet_rate, options.quiet_seconds, directory, latency=True)
            print(quiet_line("monitor", quiet, options.quiet_rate, options.quiet_seconds,
                             f" (not counting the stand-in's feeding thread, {quiet['feed_cpu']:.2f} s)"))
        if options.only != "monitor":
            recording = os.path.join(directory, "android.btsnoop")
            busy = android_run(binary, capture, options.rate, options.seconds, directory, recording)
            print(f"android, {options.rate:.0f} records/s for {options.seconds:.0f} s: sent {busy['sent']} records "
                  f"({payload_bytes(capture, busy['sent'])} packet bytes, {busy['sent_bytes']} on the wire) in {busy['feed_seconds']:.1f} s "
                  f"({busy['sent'] / max(busy['feed_seconds'], 1e-9):.0f}/s); decoded {busy['decoded']} ({busy['received_bytes']} packet bytes), "
                  f"{recording_matches(capture, recording, busy['sent'])}, exit {busy['status']}")
            quiet = android_run(binary, capture, options.quiet_rate, options.quiet_seconds, directory, latency=True)
            print(quiet_line("android", quiet, options.quiet_rate, options.quiet_seconds))


if __name__ == "__main__":
    sys.exit(main())
