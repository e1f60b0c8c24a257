#!/usr/bin/env python3
"""An Android-style btsnoop (datalink 1002, H4) whose controller also hands the host ACL records
on connection handle 0x0EDC that no connection event ever opened: the debug / vendor log
records Qualcomm controllers on Android phones put into btsnoop_hci.log.

    python3 Scripts/captures/make_android_debug_records.py [--out PATH]

Input: captures/hr_strap_session.btsnoop (the phone's side of the HR strap session, 160
records; its connection is handle 0x0001).  Output: captures/android_debug_records.btsnoop =
those 160 records, unchanged and in order, with 14 debug records put between them, and
`android_debug_records.truth.json`.

The debug records copy the shape of the ones in real Android logs (looked at, not copied: the
bytes here are made up, from a seeded generator):
  * H4 type 02 (ACL), handle 0x0EDC, packet boundary 0b10 (first, automatically flushable),
    broadcast 0b00; btsnoop flags 1 (received: controller -> host), never sent by the host;
    no connection event, no Number Of Completed Packets, no disconnect for the handle;
  * ACL payload = u16 length (the ACL length - 4, so it parses as an L2CAP basic header),
    u8 sequence number (one more per record, wrapping 0xFF -> 0x00), u8 = 0 except on the
    first record of a burst, u16 0x001C (a constant per controller), u16 record type, u16
    0x0001, u32 controller clock, u16 length of a first part, then that part and the rest;
  * in bursts: 4 just before the LE Connection Complete, 3 just after it, 4 during discovery
    (between an ATT response and the next request), 1 between two heart-rate notifications,
    2 after the Battery Level notification; 24 to 508 octets (more than the controller's LE
    ACL buffer of 27 octets, as real ones are);
  * the sequence numbers run FC .. FF, 00 .. 09; with the 0 after them, the records with
    sequence 01, 02, 04, 05 and 06 parse as L2CAP on CID 0x0001 (signalling), 0x0002
    (connectionless), 0x0004 (ATT), 0x0005 (LE signalling) and 0x0006 (SMP): tshark decodes
    the sequence-04 record (frame 54) as an ATT PDU with opcode 0x1C (the constant's low
    octet), the sequence-06 one (frame 56) as SMP, as it does with the real ones.

Timestamps: each debug record lies between its neighbours (the source's timestamps are kept),
so reruns give identical bytes.  The script checks that the real records are byte-identical to
the source's and, with tshark, that `bthci_acl.chandle == 0x0edc` is exactly the debug frames
and that the connection's ATT PDUs are the source's.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SOURCE = os.path.join(REPO, "captures", "hr_strap_session.btsnoop")
DEBUG_HANDLE = 0x0EDC
CONSTANT = 0x001C
EPOCH_DELTA = 0x00DCDDB30F2F8000  # btsnoop µs since year 0 -> Unix µs

# (after source record N (1-based), [(record type, first-part length, total ACL payload length), ...],
#  where in the burst: microseconds from the previous record, or None = just before the next one)
BURSTS = [
    (38, "before LE Connection Complete", [(0x0107, 8, 24), (0x0000, 456, 476), (0x0000, 453, 473), (0x0000, 225, 241)]),
    (39, "after LE Connection Complete", [(0x0107, 8, 24), (0x0003, 4, 180), (0x0408, 61, 167)]),
    (45, "during discovery", [(0x0107, 8, 24), (0x0000, 10, 26), (0x0003, 4, 212), (0x0000, 488, 508)]),
    (135, "between two HRM notifications", [(0x0107, 8, 24)]),
    (150, "after the Battery Level notification", [(0x0000, 456, 476), (0x0408, 61, 301)]),
]
FIRST_SEQ = 0xFC


def read_btsnoop(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"btsnoop\x00" and struct.unpack(">II", data[8:16]) == (1, 1002)
    out, off = [], 16
    while off < len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[off:off + 24])
        out.append((flags, drops, ts, data[off + 24:off + 24 + incl], orig))
        off += 24 + incl
    return data[:16], out


def record_bytes(flags, drops, ts, packet, orig=None):
    return struct.pack(">IIIIq", len(packet) if orig is None else orig, len(packet), flags, drops, ts) + packet


def debug_packet(rng, seq, first_in_burst, rtype, part, total, clock):
    body = bytearray(struct.pack("<BBHHHIH", seq, rng.randint(1, 0x60) if first_in_burst else 0, CONSTANT, rtype,
                                 0x0001, clock, part))
    while len(body) < total - 2:
        # made-up log entries: a tag, a 16-bit time, a length, that many bytes
        n = min(rng.randint(2, 9), total - 2 - len(body) - 4)
        if n < 0:
            body += bytes(rng.getrandbits(8) for _ in range(total - 2 - len(body)))
            break
        body += bytes([0x40 | rng.randint(0, 7)]) + struct.pack("<H", rng.getrandbits(16)) + bytes([n])
        body += bytes(rng.getrandbits(8) for _ in range(n))
    body = bytes(body[:total - 2])
    payload = struct.pack("<H", total - 4) + body
    assert len(payload) == total
    return bytes([0x02]) + struct.pack("<HH", DEBUG_HANDLE | (0b10 << 12), total) + payload


def att_of(packet):
    """(handle, ATT PDU) of an H4 ACL packet carrying a whole L2CAP PDU on CID 4, else None."""
    if packet[0] != 0x02 or len(packet) < 9:
        return None
    hf, _length = struct.unpack("<HH", packet[1:5])
    if (hf >> 12) & 3 not in (0b00, 0b10):  # a first fragment (host: non-flushable; controller: flushable)
        return None
    l2len, cid = struct.unpack("<HH", packet[5:9])
    if cid != 4 or l2len != len(packet) - 9:
        return None
    return hf & 0x0FFF, packet[9:]


def build():
    header, src = read_btsnoop(SOURCE)
    rng = random.Random(7331)
    inserts = {after: (what, spec) for after, what, spec in BURSTS}
    out, truth_debug, frame_of_source = [], [], {}
    seq = FIRST_SEQ
    for n, rec in enumerate(src, 1):
        out.append(("source", n, rec))
        frame_of_source[n] = len(out)
        if n in inserts:
            what, spec = inserts[n]
            t_prev, t_next = rec[2], src[n][2]
            gap = t_next - t_prev
            assert gap > 20 * (len(spec) + 1), (n, gap)
            if gap > 10_000:  # a long gap: a burst some milliseconds after the record
                times = [t_prev + 4_000 + 110 * k for k in range(len(spec))] if n != 38 else \
                        [t_next - 120 * (len(spec) - k) for k in range(len(spec))]
            else:
                step = gap // (len(spec) + 1)
                times = [t_prev + step * (k + 1) for k in range(len(spec))]
            for k, (rtype, part, total) in enumerate(spec):
                clock = (0x2C5A_0000 + (times[k] - src[0][2]) * 32 // 10) & 0xFFFFFFFF
                pkt = debug_packet(rng, seq, k == 0, rtype, part, total, clock)
                out.append(("debug", None, (1, 0, times[k], pkt, len(pkt))))
                l2cid = struct.unpack("<H", pkt[7:9])[0]
                truth_debug.append({
                    "frame": len(out), "time_us": times[k] - EPOCH_DELTA, "after_source_record": n, "burst": what,
                    "direction": "controller->host", "btsnoop_flags": 1, "handle": "0x0EDC", "pb": 2, "bc": 0,
                    "acl_length": total, "sequence": seq, "record_type": f"0x{rtype:04X}",
                    "parses_as_l2cap_cid": f"0x{l2cid:04X}",
                    "looks_like": {1: "L2CAP signalling (BR/EDR)", 2: "connectionless", 4: "ATT", 5: "LE signalling",
                                   6: "SMP"}.get(l2cid),
                    "head_hex": pkt[:21].hex()})
                seq = (seq + 1) & 0xFF
    content = header + b"".join(record_bytes(*r[2][:4], orig=r[2][4]) for r in out)
    return src, out, truth_debug, frame_of_source, content


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "captures", "android_debug_records.btsnoop"))
    args = parser.parse_args()
    src, out, debug, frame_of_source, content = build()

    # The real connection: handle from the LE Connection Complete, its ACL records.
    conn = None
    real_acl = []
    for frame, (kind, n, (flags, _d, ts, pkt, _o)) in enumerate(out, 1):
        if kind != "source":
            continue
        if pkt[0] == 0x04 and pkt[1] == 0x3E and pkt[3] == 0x01:
            status, handle, role, ptype = struct.unpack("<BHBB", pkt[4:9])
            conn = {"frame": frame, "source_record": n, "handle": f"0x{handle:04X}",
                    "role": "central" if role == 0 else "peripheral",
                    "peer": ":".join(f"{b:02X}" for b in pkt[9:15][::-1]), "peer_random": ptype == 1,
                    "interval": struct.unpack("<H", pkt[15:17])[0]}
        if pkt[0] == 0x02:
            att = att_of(pkt)
            entry = {"frame": frame, "source_record": n, "direction": "host->controller" if flags & 1 == 0 else
                     "controller->host", "handle": f"0x{struct.unpack('<H', pkt[1:3])[0] & 0x0FFF:04X}"}
            if att:
                entry["att_opcode"] = f"0x{att[1][0]:02X}"
                entry["att_hex"] = att[1].hex()
            real_acl.append(entry)
        if pkt[0] == 0x04 and pkt[1] == 0x05:
            conn["disconnection_complete_frame"] = frame
    assert conn and all(e["handle"] == conn["handle"] for e in real_acl)
    truth = {
        "file": "captures/android_debug_records.btsnoop",
        "generator": "Scripts/captures/make_android_debug_records.py",
        "source": "captures/hr_strap_session.btsnoop",
        "source_sha256": hashlib.sha256(open(SOURCE, "rb").read()).hexdigest(),
        "datalink": 1002,
        "records": len(out),
        "bytes": len(content),
        "source_records": len(src),
        "debug_records": len(debug),
        "debug_handle": "0x0EDC",
        "note": "frames are 1-based record numbers; every source record is in the file unchanged (same bytes, same "
                "timestamp), frame = source record + the debug records before it; the debug records are not a "
                "connection: no LE Connection Complete, no Number Of Completed Packets, no Disconnection "
                "Complete names 0x0EDC; their L2CAP-looking headers are not L2CAP",
        "connection": conn,
        "frame_of_source_record": [frame_of_source[n] for n in range(1, len(src) + 1)],
        "debug": debug,
        "connection_acl": real_acl,
    }
    # Checks: source records byte-identical; frame numbers.
    _h, back = read_btsnoop_bytes(content)
    assert len(back) == len(out)
    for n, rec in enumerate(src, 1):
        assert back[frame_of_source[n] - 1][:4] == rec[:4]
    for d in debug:
        flags, _dr, _ts, pkt, _o = back[d["frame"] - 1]
        assert flags == 1 and struct.unpack("<H", pkt[1:3])[0] & 0x0FFF == DEBUG_HANDLE
    times = [r[2] for r in back]
    assert times == sorted(times)
    with open(args.out, "wb") as f:
        f.write(content)
    base = os.path.splitext(args.out)[0]
    with open(base + ".truth.json", "w") as f:
        f.write(compact(truth))
    note = tshark_check(args.out, truth) if shutil.which("tshark") else "tshark not found: not checked"
    print(f"{args.out}: {len(out)} records ({len(debug)} debug records on 0x0EDC at frames "
          f"{[d['frame'] for d in debug]}), {len(content)} bytes; {note}")
    return 0


def read_btsnoop_bytes(data):
    out, off = [], 16
    while off < len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[off:off + 24])
        out.append((flags, drops, ts, data[off + 24:off + 24 + incl], orig))
        off += 24 + incl
    return data[:16], out


def compact(truth):
    lines = ["{"]
    keys = list(truth)
    for k, key in enumerate(keys):
        v = truth[key]
        comma = "," if k < len(keys) - 1 else ""
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f"  {json.dumps(key)}: [")
            lines += ["    " + json.dumps(e, separators=(",", ":")) + ("," if j < len(v) - 1 else "") for j, e in enumerate(v)]
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(v, separators=(',', ':'))}{comma}")
    return "\n".join(lines + ["}"]) + "\n"


def tshark_check(path, truth):
    def frames(filt):
        out = subprocess.run(["tshark", "-r", path, "-Y", filt, "-T", "fields", "-e", "frame.number"],
                             capture_output=True, text=True, check=True).stdout.split()
        return [int(x) for x in out]
    debug = frames("bthci_acl.chandle == 0x0edc")
    assert debug == [d["frame"] for d in truth["debug"]], debug
    handle = truth["connection"]["handle"].lower()
    real = frames(f"bthci_acl.chandle == {handle}")
    assert real == [e["frame"] for e in truth["connection_acl"]], real
    rows = subprocess.run(["tshark", "-r", path, "-T", "json", "-x", "-J", "frame btatt bthci_acl"],
                          capture_output=True, text=True, check=True).stdout
    att = {}
    for p in json.loads(rows):
        layers = p["_source"]["layers"]
        if "btatt_raw" in layers:
            raw = layers["btatt_raw"]
            att[int(layers["frame"]["frame.number"])] = raw[0] if isinstance(raw[0], str) else raw[0][0]
    want = {e["frame"]: e["att_hex"] for e in truth["connection_acl"] if "att_hex" in e}
    fake = sorted(set(att) - set(want))
    assert {f: att[f] for f in want} == want
    assert all(f in {d["frame"] for d in truth["debug"]} for f in fake)
    return (f"tshark: 0x0EDC = the {len(debug)} debug frames, {handle} = {len(real)} connection frames, the "
            f"connection's {len(want)} ATT PDUs as in the source; tshark also decodes debug frame(s) {fake} as ATT")


if __name__ == "__main__":
    sys.exit(main())
