#!/usr/bin/env python3
"""Generate a large btsnoop capture of a long Bumble heart-rate session (benchmarks).

Usage:
    python3 Scripts/captures/make_bench_capture.py OUT [--packets N]
        [--side central|peripheral] [--max-real-seconds S] [--real-packets K]

    OUT        output path, e.g. bench/hr_1_5M.btsnoop (not meant to be committed)
    --packets  number of btsnoop records in OUT (default 1_500_000)

What is real and what is synthesized
------------------------------------
1. A real Bumble session is run, exactly the one of make_hr_session.py (same two
   emulated controllers on one LocalLink, same GATT database, advertising,
   discovery, reads, L2CAP connection parameter update, CCCD writes, the fixed
   list of 21 heart-rate notifications with the control point write in the
   middle, the phone's LE Connection Update and the disconnect), with one
   addition: between the fixed list and the final connection update there is a
   "bulk" phase in which the strap sends heart-rate notifications back to back
   (at most 8 in flight) and the phone reads the battery level (ATT Read
   Request/Response) after every 50th notification.  Bulk values come from
   bulk_value(i), a deterministic function (same flag shapes as the fixed list,
   varying bpm, energy expended and RR intervals).  The HCI traffic of one side
   (--side, default: central = the phone, like captures/hr_strap_session.btsnoop)
   is recorded with Bumble's BtSnooper to a temporary file next to OUT.  No
   inter-notification sleeps are used, so the real part runs as fast as Bumble
   can go and its timestamps are wall clock.

2. How long the bulk phase runs: after 20,000 bulk records the measured record
   rate is used to project the wall time needed to reach N.  If that projection
   is within --max-real-seconds (default 180), the bulk phase continues until
   the capture is 64 records short of N (a margin for the in-flight
   notifications and the connection-update/disconnect tail).  Otherwise (or if
   --real-packets K is given) the bulk phase stops after K (default 50,000) bulk
   records.

3. Extension to exactly N records ("repeat the steady state"): the template is
   the first <= 50,000 records of the real bulk phase, cut at a notification
   boundary.  It is split into units, each starting at an ACL packet that begins
   an ATT Handle Value Notification (PB flag = start, CID 0x0004, opcode 0x1B)
   and containing everything up to the next such packet (on the central side
   that is the notification itself and occasionally the battery-read
   request/response and the Number Of Completed Packets event for the request;
   on the peripheral side the notification, its Number Of Completed Packets
   event, and occasionally the battery read).  Units are appended, cyclically
   and in order, right after the last real bulk record and before the tail,
   unchanged byte for byte except for the timestamp.  Copy k of a template
   record with original timestamp t gets
       base + k * P + (t - t_first)
   where g = mean inter-record gap of the template, P = (t_last - t_first) + g
   is the template period and base = (timestamp of the last real bulk record) + g.
   Units whose size would leave a remainder that cannot be filled exactly with
   the available unit sizes are skipped (the next fitting unit further along
   the cycle is used instead), so the total is exactly N (the central side has
   single-record units; the peripheral side has units of 2, 4, 5, 7 records,
   so only a requested extension of 1 or 3 records could not be met exactly;
   the script exits non-zero if the total differs from N).
   The real tail (LE Connection Update, Disconnect, ...) is then written with
   all its timestamps shifted by the same amount, so its spacing relative to
   the last bulk record is preserved.  Nothing else is changed: the head
   (reset, scan, connect, discovery ...) and the tail are real records.  Note
   that the repeated records re-use the same ACL payloads (same heart-rate
   values) as the template.

The output is a standard btsnoop file as written by bumble.snoop.BtSnooper:
16-byte header "btsnoop\\0", version 1 (BE), datalink 1002 (H4, BE), then records
with 24-byte big-endian headers (orig len, incl len, flags, drops, timestamp in
microseconds since 0000-01-01 = unix_us + 0x00DCDDB30F2F8000); flags bit 0 =
direction (1 = controller->host), bit 1 = command/event.

The run prints the measured Bumble record rate and the total time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import struct
import sys
import time

sys.dont_write_bytecode = True  # keep Scripts/captures free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import make_hr_session as hr  # noqa: E402
from bumble.snoop import BtSnooper  # noqa: E402

DEFAULT_PACKETS = 1_500_000
PROBE_RECORDS = 20_000
DEFAULT_SHORT_BULK_RECORDS = 50_000
TEMPLATE_MAX_RECORDS = 50_000
REAL_MARGIN = 64
BATTERY_READ_EVERY = 50


class CountingBtSnooper(BtSnooper):
    """Bumble's BtSnooper, unchanged output, plus a record counter."""

    def __init__(self, output) -> None:
        super().__init__(output)
        self.count = 0

    def snoop(self, hci_packet, direction) -> None:
        self.count += 1
        super().snoop(hci_packet, direction)


def bulk_value(i: int) -> bytes:
    """Deterministic heart-rate measurement #i of the bulk phase."""
    bpm_base, uint16, contact, energy, rr = hr.HR_MEASUREMENTS[i % len(hr.HR_MEASUREMENTS)]
    bpm = 60 + (i * 13) % 120
    energy_value = (i // 4) % 0x10000 if energy is not None else None
    beat = round(60 * 1024 / bpm)
    rr_values = tuple(beat + ((i + k) % 5) - 2 for k in range(len(rr)))
    return hr.encode_hr_measurement(bpm, uint16, contact, energy_value, rr_values)


# -----------------------------------------------------------------------------
# btsnoop helpers
# -----------------------------------------------------------------------------
REC = struct.Struct(">IIIIq")


def read_records(f):
    """Yield (orig_len, flags, drops, timestamp, data) for each record."""
    while True:
        header = f.read(24)
        if not header:
            return
        if len(header) < 24:
            raise ValueError("truncated record header")
        orig_len, incl_len, flags, drops, ts = REC.unpack(header)
        data = f.read(incl_len)
        if len(data) < incl_len:
            raise ValueError("truncated record data")
        yield orig_len, flags, drops, ts, data


def write_record(out, orig_len, flags, drops, ts, data) -> None:
    out.write(REC.pack(orig_len, len(data), flags, drops, ts) + data)


def starts_notification(data: bytes) -> bool:
    # H4 ACL packet, PB = start (0b00 or 0b10), L2CAP CID 0x0004, ATT opcode 0x1B
    if len(data) < 10 or data[0] != 0x02:
        return False
    handle_flags = data[1] | (data[2] << 8)
    if (handle_flags >> 12) & 0x3 not in (0, 2):
        return False
    cid = data[7] | (data[8] << 8)
    return cid == 0x0004 and data[9] == 0x1B


# -----------------------------------------------------------------------------
async def run_real(tmp_file, side: str, target: int, max_real_seconds: float, real_packets):
    snooper = CountingBtSnooper(tmp_file)
    marks: dict[str, tuple[int, float]] = {}
    info: dict = {}

    def mark(name: str) -> None:
        marks[name] = (snooper.count, time.monotonic())

    def generator():
        start_count = snooper.count
        start_time = time.monotonic()
        if real_packets is not None:
            stop_at = start_count + real_packets
            info["decision"] = f"forced short real session ({real_packets} bulk records)"
        else:
            stop_at = target - REAL_MARGIN
        decided = real_packets is not None
        i = 0
        while snooper.count < stop_at:
            if not decided and snooper.count - start_count >= PROBE_RECORDS:
                decided = True
                elapsed = time.monotonic() - start_time
                rate = (snooper.count - start_count) / elapsed
                projected = (stop_at - snooper.count) / rate + elapsed
                info["probe_rate"] = rate
                info["projected_seconds"] = projected
                if projected > max_real_seconds:
                    stop_at = start_count + DEFAULT_SHORT_BULK_RECORDS
                    info["decision"] = (
                        f"projected {projected:.0f} s > {max_real_seconds:.0f} s: "
                        f"short real session ({DEFAULT_SHORT_BULK_RECORDS} bulk records) + extension"
                    )
                else:
                    info["decision"] = (
                        f"projected {projected:.0f} s <= {max_real_seconds:.0f} s: "
                        "real session up to N (small top-up only)"
                    )
            yield bulk_value(i)
            i += 1

    central = snooper if side == "central" else None
    peripheral = snooper if side == "peripheral" else None
    t0 = time.monotonic()
    stats = await hr.run_session(
        central,
        peripheral,
        interval=0.0,
        bulk_measurements=generator(),
        bulk_battery_read_every=BATTERY_READ_EVERY,
        mark=mark,
        log=lambda *_: None,
    )
    info["session_seconds"] = time.monotonic() - t0
    info["total_real_records"] = snooper.count
    (s_count, s_time), (e_count, e_time) = marks["bulk_start"], marks["bulk_end"]
    info["bulk_start"], info["bulk_end"] = s_count, e_count
    info["bulk_rate"] = (e_count - s_count) / max(e_time - s_time, 1e-9)
    info["stats"] = stats
    return info


def extend(tmp_path: str, out_path: str, target: int, bulk_start: int, bulk_end: int) -> dict:
    with open(tmp_path, "rb") as f:
        header = f.read(16)
        assert header[:8] == b"btsnoop\0"
        total_real = sum(1 for _ in read_records(f))
    to_add = target - total_real
    if to_add < 0:
        raise SystemExit(f"real session already has {total_real} > {target} records")

    added = 0
    with open(tmp_path, "rb") as f, open(out_path, "wb") as out:
        out.write(f.read(16))
        records = read_records(f)
        template: list[tuple] = []
        template_done = False
        last_bulk_ts = None
        tail_shift = 0
        index = 0
        for rec in records:
            if index == bulk_end:
                # ---- emit the extension before the first tail record ----
                added, last_ext_ts = _emit_extension(out, template, last_bulk_ts, to_add)
                tail_shift = last_ext_ts - last_bulk_ts
            if index >= bulk_end:
                orig_len, flags, drops, ts, data = rec
                write_record(out, orig_len, flags, drops, ts + tail_shift, data)
            else:
                write_record(out, *rec)
                if index >= bulk_start:
                    last_bulk_ts = rec[3]
                    if not template_done:
                        is_unit_start = starts_notification(rec[4])
                        if is_unit_start and len(template) >= TEMPLATE_MAX_RECORDS:
                            template_done = True  # full, and cut at a unit boundary
                        elif template or is_unit_start:
                            template.append(rec)
            index += 1
        if bulk_end >= index:  # no tail at all (should not happen)
            added, _ = _emit_extension(out, template, last_bulk_ts, to_add)
    return {"real_records": total_real, "added_records": added, "total": total_real + added}


def _emit_extension(out, template, last_bulk_ts, to_add):
    if to_add <= 0:
        return 0, last_bulk_ts
    if not template:
        raise SystemExit("no steady-state template records to repeat")
    # Split the template into units starting at notification records.
    units: list[list[tuple]] = []
    for rec in template:
        if starts_notification(rec[4]) or not units:
            units.append([rec])
        else:
            units[-1].append(rec)
    t_first = template[0][3]
    t_last = template[-1][3]
    gap = (t_last - t_first) / max(len(template) - 1, 1)
    period = (t_last - t_first) + gap
    base = last_bulk_ts + gap

    # Which remainders can still be filled exactly with the available unit sizes
    # (coin problem); used so that we never take a unit that would leave an
    # unfillable remainder.
    sizes = sorted({len(u) for u in units})
    limit = sizes[-1] * sizes[-1] + 1
    fillable = [False] * (limit + 1)
    fillable[0] = True
    for r in range(1, limit + 1):
        fillable[r] = any(r >= sz and fillable[r - sz] for sz in sizes)

    def can_fill(r: int) -> bool:
        return fillable[r] if r <= limit else True

    remaining = to_add
    added = 0
    last_ts = last_bulk_ts
    copy = 0
    while remaining > 0:
        progressed = False
        for unit in units:
            if len(unit) > remaining or not can_fill(remaining - len(unit)):
                continue
            for orig_len, flags, drops, ts, data in unit:
                new_ts = int(round(base + copy * period + (ts - t_first)))
                write_record(out, orig_len, flags, drops, new_ts, data)
                last_ts = new_ts
            remaining -= len(unit)
            added += len(unit)
            progressed = True
            if remaining == 0:
                break
        copy += 1
        if not progressed:
            break  # no unit small enough; total ends up `remaining` short
    return added, last_ts


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Generate a large real-stack (Bumble) heart-rate btsnoop capture for benchmarks."
    )
    parser.add_argument("out", help="output btsnoop path")
    parser.add_argument("--packets", type=int, default=DEFAULT_PACKETS, help="number of records (default 1500000)")
    parser.add_argument("--side", choices=("central", "peripheral"), default="central")
    parser.add_argument(
        "--max-real-seconds",
        type=float,
        default=180.0,
        help="wall-time budget for the real bulk phase (default 180)",
    )
    parser.add_argument(
        "--real-packets",
        type=int,
        default=None,
        help="force a short real bulk phase of this many records, then extend",
    )
    args = parser.parse_args()

    t0 = time.monotonic()
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp_path = args.out + ".real.tmp"
    try:
        with open(tmp_path, "wb") as tmp_file:
            info = asyncio.run(
                run_real(tmp_file, args.side, args.packets, args.max_real_seconds, args.real_packets)
            )
        t1 = time.monotonic()
        result = extend(tmp_path, args.out, args.packets, info["bulk_start"], info["bulk_end"])
    finally:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
    t2 = time.monotonic()

    print(f"bumble {hr.BUMBLE_VERSION}, side={args.side}")
    if "probe_rate" in info:
        print(f"probe rate: {info['probe_rate']:.0f} records/s (projected {info['projected_seconds']:.0f} s to N)")
    print(f"decision: {info.get('decision', 'n/a')}")
    print(
        f"real session: {info['total_real_records']} records in {info['session_seconds']:.1f} s; "
        f"bulk phase {info['bulk_end'] - info['bulk_start']} records at {info['bulk_rate']:.0f} records/s; "
        f"bulk notifications {info['stats']['bulk_notifications']}, "
        f"battery reads {info['stats']['bulk_battery_reads']}"
    )
    print(
        f"extension: +{result['added_records']} records in {t2 - t1:.1f} s -> {result['total']} records "
        f"(target {args.packets})"
    )
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes) in {t2 - t0:.1f} s total")
    return 0 if result["total"] == args.packets else 1


if __name__ == "__main__":
    sys.exit(main())
