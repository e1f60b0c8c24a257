#!/usr/bin/env python3
"""Write adversarial (hostile) btsnoop captures that stress bledissect's time and memory.

Usage:
    python3 Scripts/captures/make_hostile_captures.py [--out DIR] [--scale N] [--only NAME ...] [--list]

    --out    output directory (default: a new temporary directory, printed); the files are large
             and never meant to be committed
    --scale  N, the number of units per case (default 10000); a unit is one request/response
             pair, one connection, one bearer ... as each case's line says. Generate the same case
             at 10k, 100k and 1M to see whether decoding time grows linearly.
    --only   generate only these cases (repeatable)
    --list   print the cases, one line each, and exit

Four cases are compressed bombs of a fixed size (--scale is ignored): gzip_bomb (a .btsnoop.gz),
zip_bomb (a bugreport .zip whose btsnoop_hci.log entry is the bomb) and btsnooz_bomb (a bugreport
.txt whose BTSNOOP_LOG_SUMMARY inflates to 64 MiB) each start with 1000 good records, then
inflate to hundreds of MB of zeros; resync_bomb (a .btsnoop.gz) repeats damage between good
records instead, so that reading on past damage is what the cap bounds. They check the
inflation caps (docs/formats.md).

Every other file is btsnoop v1, datalink 1002 (H4), written as the phone (the central, the ATT client)
would record it: flags 0 = ACL host->controller, 1 = ACL controller->host, 2 = command, 3 = event
(see ../shared/reference/capture-formats.md section 1). Records are 1 ms apart unless a case says
otherwise. HCI ACL headers carry handle | PB << 12 (PB 0b00 for host->controller starts, 0b10 for
controller->host starts, 0b01 continuations), L2CAP basic headers length + CID, and ATT PDUs the
opcodes of hci-l2cap-att.md section 5. Output is deterministic (fixed random seeds).

Python 3 standard library only. Prints one line per file: name, records, bytes, seconds.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import struct
import sys
import tempfile
import time
import zipfile
import zlib

sys.dont_write_bytecode = True

# btsnoop timestamps: microseconds since 0000-01-01; unix_us + this offset.
BTSNOOP_EPOCH_OFFSET = 0x00DCDDB30F2F8000
START_UNIX_US = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
RECORD_GAP_US = 1000
READER_MAX_PACKET = 262_144  # CaptureFile.maximumPacketLength (Sources/BLECapture/CaptureReader.swift)

RECORD_HEADER = struct.Struct(">IIIIQ")  # orig len, incl len, flags, drops, timestamp (bits as unsigned)

TX, RX = False, True
PB_START_TX, PB_CONT, PB_START_RX = 0b00, 0b01, 0b10
ATT_CID, LE_SIGNALING_CID = 0x0004, 0x0005


class Capture:
    """A btsnoop (datalink 1002) writer with HCI/L2CAP/ATT helpers; counts records."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file = open(path, "wb", buffering=1 << 20)
        self.file.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        self.ts = START_UNIX_US + BTSNOOP_EPOCH_OFFSET
        self.records = 0

    def close(self) -> None:
        self.file.close()

    # --- records -------------------------------------------------------------------------
    def record(self, data: bytes, flags: int, ts: int | None = None, orig_len: int | None = None) -> None:
        if ts is None:
            self.ts += RECORD_GAP_US
            ts = self.ts
        orig = len(data) if orig_len is None else orig_len
        self.file.write(RECORD_HEADER.pack(orig, len(data), flags, 0, ts & 0xFFFF_FFFF_FFFF_FFFF))
        self.file.write(data)
        self.records += 1

    def command(self, opcode: int, params: bytes = b"", **kw) -> None:
        self.record(b"\x01" + struct.pack("<HB", opcode, len(params)) + params, 2, **kw)

    def event(self, code: int, params: bytes, **kw) -> None:
        self.record(b"\x04" + struct.pack("<BB", code, len(params)) + params, 3, **kw)

    def acl(self, handle: int, pb: int, data: bytes, rx: bool, **kw) -> None:
        self.record(b"\x02" + struct.pack("<HH", (handle & 0x0FFF) | (pb << 12), len(data)) + data, 1 if rx else 0, **kw)

    def l2cap(self, handle: int, cid: int, payload: bytes, rx: bool, **kw) -> None:
        self.acl(handle, PB_START_RX if rx else PB_START_TX, struct.pack("<HH", len(payload), cid) + payload, rx, **kw)

    def att(self, handle: int, pdu: bytes, rx: bool, cid: int = ATT_CID, **kw) -> None:
        self.l2cap(handle, cid, pdu, rx, **kw)

    def kframe(self, handle: int, cid: int, sdu: bytes, rx: bool, **kw) -> None:
        """A whole SDU in one K-frame: SDU length, then the SDU (an ATT PDU on EATT)."""
        self.l2cap(handle, cid, struct.pack("<H", len(sdu)) + sdu, rx, **kw)

    def signaling(self, handle: int, code: int, identifier: int, data: bytes, rx: bool) -> None:
        self.l2cap(handle, LE_SIGNALING_CID, struct.pack("<BBH", code, identifier, len(data)) + data, rx)

    # --- events --------------------------------------------------------------------------
    def le_connection_complete(self, handle: int, address: bytes, address_type: int = 1, role: int = 0) -> None:
        params = struct.pack("<BBHBB", 0x01, 0x00, handle, role, address_type) + address
        params += struct.pack("<HHHB", 24, 0, 400, 0)  # 30 ms interval, latency 0, 4 s timeout, 500 ppm
        self.event(0x3E, params)

    def disconnection_complete(self, handle: int, reason: int = 0x13) -> None:
        self.event(0x05, struct.pack("<BHB", 0x00, handle, reason))

    def mtu_exchange(self, handle: int, mtu: int = 517) -> None:
        self.att(handle, struct.pack("<BH", 0x02, mtu), TX)
        self.att(handle, struct.pack("<BH", 0x03, mtu), RX)


def address(rng: random.Random) -> bytes:
    """A random static address (two top bits set), LSB first as on the wire."""
    raw = bytearray(rng.getrandbits(8) for _ in range(6))
    raw[5] |= 0xC0
    return bytes(raw)


PEER = bytes.fromhex("524800EDB1D0")  # D0:B1:ED:00:48:52, LSB first
CONN = 0x0001


def connect(cap: Capture) -> None:
    cap.le_connection_complete(CONN, PEER, address_type=0)


def char_entry(decl: int, uuid16: int, properties: int = 0x1A) -> bytes:
    """One characteristic declaration entry of a Read By Type Response (7 bytes)."""
    return struct.pack("<HBHH", decl, properties, (decl + 1) & 0xFFFF, uuid16)


# --- the cases ---------------------------------------------------------------------------
def prepared_writes(cap: Capture, n: int, execute: bool = False) -> None:
    """N Prepare Write Request/Response pairs on 0x0010, 18-byte parts at growing offsets, no Execute Write."""
    connect(cap)
    for i in range(n):
        part = bytes(((i + k) & 0xFF) for k in range(18))
        pdu = struct.pack("<HH", 0x0010, (i * 18) & 0xFFFF) + part
        cap.att(CONN, b"\x16" + pdu, TX)
        cap.att(CONN, b"\x17" + pdu, RX)
    if execute:
        cap.att(CONN, b"\x18\x01", TX)
        cap.att(CONN, b"\x19", RX)


def prepared_writes_execute(cap: Capture, n: int) -> None:
    """As prepared_writes, then Execute Write Request flags 0x01 (write all) and its response."""
    prepared_writes(cap, n, execute=True)


def _characteristic_handles(n: int, descending: bool):
    """Declaration handles 2, 4, ... 0xFFFE (value = decl + 1), cycling when N exceeds 32767."""
    span = 0x7FFF
    for i in range(n):
        k = i % span
        yield 0xFFFE - 2 * k if descending else 2 + 2 * k


def read_by_type_chars(cap: Capture, n: int, descending: bool = False, with_requests: bool = False) -> None:
    """N Read By Type Responses (length 7, one characteristic declaration each), ascending handles."""
    connect(cap)
    for i, decl in enumerate(_characteristic_handles(n, descending)):
        if with_requests:
            cap.att(CONN, struct.pack("<BHHH", 0x08, decl, 0xFFFF, 0x2803), TX)
        cap.att(CONN, b"\x09\x07" + char_entry(decl, 0x2A00 + (i % 0x200)), RX)


def read_by_type_chars_desc(cap: Capture, n: int) -> None:
    """As read_by_type_chars in DESCENDING handle order (each new declaration sorts first)."""
    read_by_type_chars(cap, n, descending=True)


def read_by_type_chars_req(cap: Capture, n: int) -> None:
    """As read_by_type_chars, each response preceded by its Read By Type Request for 0x2803."""
    read_by_type_chars(cap, n, with_requests=True)


def many_connections(cap: Capture, n: int) -> None:
    """N short connections (handle cycling 0..0xEFE, each a new random peer): service discovery, notification, disconnect."""
    rng = random.Random(7)
    for i in range(n):
        handle = i % 0xEFF
        cap.le_connection_complete(handle, address(rng))
        cap.att(handle, struct.pack("<BHHH", 0x10, 0x0001, 0xFFFF, 0x2800), TX)
        cap.att(handle, struct.pack("<BBHHH", 0x11, 6, 0x0001, 0x0005, 0x180D), RX)
        cap.att(handle, struct.pack("<BHHH", 0x08, 0x0001, 0x0005, 0x2803), TX)
        cap.att(handle, b"\x09\x07" + char_entry(0x0002, 0x2A37, 0x10), RX)
        cap.att(handle, struct.pack("<BHBB", 0x1B, 0x0003, 0x06, 60 + i % 120), RX)
        cap.disconnection_complete(handle)


def eatt_bearers(cap: Capture, n: int) -> None:
    """N ECRED (0x17/0x18) connections on PSM 0x0027 with fresh CIDs, one ATT notification each, never closed."""
    connect(cap)
    cap.mtu_exchange(CONN)
    for i in range(n):
        cid = 0x0040 + i % (0x10000 - 0x0040)
        identifier = 1 + i % 255
        cap.signaling(CONN, 0x17, identifier, struct.pack("<HHHHH", 0x0027, 247, 247, 10, cid), TX)
        cap.signaling(CONN, 0x18, identifier, struct.pack("<HHHHH", 2048, 2048, 256, 0x0000, cid), RX)
        cap.kframe(CONN, cid, struct.pack("<BHBB", 0x1B, 0x0012, 0x06, 60 + i % 120), RX)


def huge_records(cap: Capture, n: int) -> None:
    """N/100 records of about 64 KiB (N >= 100): full 65535-byte ACL PDUs, never-completed starts, orphan continuations, 256 KiB records."""
    connect(cap)
    filler = bytes(range(256)) * 256  # 65536 bytes
    for i in range(max(n // 100, 1)):
        kind = i % 6
        handle = 1 + (i // 6) % 0xEFE  # 0x001..0xEFE
        if kind == 0:  # one complete L2CAP PDU filling the largest ACL payload: a 65528-byte notification
            cap.att(CONN, struct.pack("<BH", 0x1B, 0x0010) + filler[:65535 - 4 - 3], RX)
        elif kind == 1:  # a start announcing 65535 bytes, carrying all but 4: never completed (a new handle each time)
            cap.acl(handle, PB_START_RX, struct.pack("<HH", 0xFFFF, ATT_CID) + filler[:65531], RX)
        elif kind == 2:  # a continuation fragment without a start, on a handle with no PDU in progress
            cap.acl(0xEFF - handle % 0x100, PB_CONT, filler[:65535], RX)
        elif kind == 3:  # a record at the reader's limit: an ACL header saying 65535, 262139 bytes of data
            data = b"\x02" + struct.pack("<HH", CONN | PB_START_RX << 12, 0xFFFF)
            data += (struct.pack("<HH", 0xFFFB, ATT_CID) + filler * 4)[:READER_MAX_PACKET - len(data)]
            cap.record(data, 1)
        elif kind == 4:  # one byte under the limit, as an event with a lying length, original length 0xFFFFFFFF
            data = b"\x04\x3E\xFF" + filler * 4
            cap.record(data[:READER_MAX_PACKET - 1], 3, orig_len=0xFFFF_FFFF)
        else:  # a start on CONN with 65535 announced, then a continuation that overflows it
            cap.acl(CONN, PB_START_RX, struct.pack("<HH", 0xFFFF, ATT_CID) + filler[:65531], RX)
            cap.acl(CONN, PB_CONT, filler[:65535], RX)


def many_handles(cap: Capture, n: int) -> None:
    """Discovery of one service declaring min(N, 32766) characteristics, then N notifications on handles cycling 1..0xFFFF."""
    connect(cap)
    cap.mtu_exchange(CONN)
    cap.att(CONN, struct.pack("<BHHH", 0x10, 0x0001, 0xFFFF, 0x2800), TX)
    cap.att(CONN, struct.pack("<BBHHH", 0x11, 6, 0x0001, 0xFFFF, 0xFFF0), RX)
    count = min(n, 0x7FFE)
    per_response = (517 - 2) // 7
    decl = 2
    done = 0
    while done < count:
        take = min(per_response, count - done)
        cap.att(CONN, struct.pack("<BHHH", 0x08, decl, 0xFFFF, 0x2803), TX)
        entries = b"".join(char_entry(decl + 2 * k, 0x2A00 + (done + k) % 0x200, 0x12) for k in range(take))
        cap.att(CONN, b"\x09\x07" + entries, RX)
        decl += 2 * take
        done += take
    for i in range(n):
        cap.att(CONN, struct.pack("<BHI", 0x1B, 1 + i % 0xFFFF, i & 0xFFFFFFFF), RX)


# Timestamps as the unsigned 64-bit bit pattern of the btsnoop field (read as signed by most readers).
EXTREME_TIMESTAMPS = (
    0x7FFF_FFFF_FFFF_FFFF,  # Int64.max
    0x7FFF_FFFF_FFFF_FFFE,
    0x8000_0000_0000_0000,  # Int64.min (as signed)
    0xFFFF_FFFF_FFFF_FFFF,  # UInt64.max, -1 as signed
    0x0000_0000_0000_0000,  # year 0
    BTSNOOP_EPOCH_OFFSET - 1,  # one microsecond before 1970
    0x7FFF_FFFF_FFFF_FFFF - BTSNOOP_EPOCH_OFFSET,
)


def timestamps(cap: Capture, n: int) -> None:
    """N ATT Read Request/Response pairs whose timestamps jump between normal and Int64/UInt64 extremes, and back."""
    connect(cap)
    normal = cap.ts
    extremes = EXTREME_TIMESTAMPS
    for i in range(n):
        normal += RECORD_GAP_US
        a = extremes[i % len(extremes)] if i % 3 else normal
        b = extremes[(i * 5 + 3) % len(extremes)] if i % 2 else normal + 500
        cap.att(CONN, struct.pack("<BH", 0x0A, 0x0003), TX, ts=a)
        cap.att(CONN, struct.pack("<BB", 0x0B, 87), RX, ts=b)
        if i % 4 == 0:
            cap.att(CONN, struct.pack("<BHB", 0x1B, 0x0010, 0x00), RX, ts=normal + 700)


def timestamps_only(cap: Capture, n: int) -> None:
    """N notifications whose timestamps cycle through the Int64/UInt64 extremes (no request/response pairs)."""
    connect(cap)
    for i in range(n):
        cap.att(CONN, struct.pack("<BHB", 0x1B, 0x0010, i & 0xFF), RX, ts=EXTREME_TIMESTAMPS[i % len(EXTREME_TIMESTAMPS)])


def long_reads(cap: Capture, n: int) -> None:
    """MTU 517, Read Request + full 516-byte Read Response, then N full Read Blob pairs of one value; every 1000th at offset 0xFFFF."""
    connect(cap)
    cap.mtu_exchange(CONN)
    part = bytes(range(256)) * 3
    cap.att(CONN, struct.pack("<BH", 0x0A, 0x0010), TX)
    cap.att(CONN, b"\x0B" + part[:516], RX)
    for i in range(n):
        offset = 0xFFFF if i % 1000 == 999 else (516 * (i + 1)) & 0xFFFF
        cap.att(CONN, struct.pack("<BHH", 0x0C, 0x0010, offset), TX)
        cap.att(CONN, b"\x0D" + part[i % 256:i % 256 + 516], RX)


def distinct_exchanges(cap: Capture, n: int) -> None:
    """N Write Commands, Write Requests, Read Requests and Find Information Requests on handles cycling 1..0xFFFF, each with a distinct value (what diff tallies per attribute)."""
    connect(cap)
    cap.mtu_exchange(CONN)
    for i in range(n):
        handle = 1 + i % 0xFFFF
        value = struct.pack("<I", i & 0xFFFFFFFF) + bytes(i % 60)
        kind = i % 4
        if kind == 0:
            cap.att(CONN, struct.pack("<BH", 0x52, handle) + value, TX)
        elif kind == 1:
            cap.att(CONN, struct.pack("<BH", 0x12, handle) + value, TX)
            cap.att(CONN, b"\x13", RX)
        elif kind == 2:
            cap.att(CONN, struct.pack("<BH", 0x0A, handle), TX)
            cap.att(CONN, b"\x0B" + value, RX)
        else:
            cap.att(CONN, struct.pack("<BHH", 0x04, handle, handle), TX)
            cap.att(CONN, struct.pack("<BBHH", 0x05, 1, handle, 0x2902), RX)


CASES = {
    "prepared_writes": prepared_writes,
    "prepared_writes_execute": prepared_writes_execute,
    "read_by_type_chars": read_by_type_chars,
    "read_by_type_chars_desc": read_by_type_chars_desc,
    "read_by_type_chars_req": read_by_type_chars_req,
    "many_connections": many_connections,
    "eatt_bearers": eatt_bearers,
    "huge_records": huge_records,
    "many_handles": many_handles,
    "timestamps": timestamps,
    "timestamps_only": timestamps_only,
    "long_reads": long_reads,
    "distinct_exchanges": distinct_exchanges,
}


# --- compressed bombs --------------------------------------------------------------------
# Fixed-size files (--scale is ignored): each starts like a real capture (a connection and
# BOMB_GOOD_RECORDS notifications), then its compressed content inflates to hundreds of MB of
# garbage that deflate squeezes about 1000:1. They exercise the inflaters' output caps.
BOMB_COMPRESSED_BYTES = 512 * 1024  # a gzip or zip bomb's compressed size, about
BOMB_GOOD_RECORDS = 1000
BTSNOOZ_BOMB_BODY = 64 * 1024 * 1024  # the btsnooz limit before issue 17 (Bugreport.maximumSummaryBytes)
ZERO_CHUNK = bytes(1 << 20)


def _good_prefix(path: str) -> tuple[bytes, int]:
    """A real-looking btsnoop capture: a connection and BOMB_GOOD_RECORDS notifications."""
    cap = Capture(path)
    connect(cap)
    for i in range(BOMB_GOOD_RECORDS - 1):
        cap.att(CONN, struct.pack("<BHB", 0x1B, 0x0010, i & 0xFF), RX)
    cap.close()
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    return data, cap.records


def _deflate_until(compressor, sink, prefix: bytes, compressed_goal: int) -> int:
    """Feeds prefix, then 1 MiB blocks of zeros, to compressor, handing its output to sink, until
    about compressed_goal bytes came out; returns the bytes fed."""
    out = compressor.compress(prefix)
    sink(out)
    written, fed = len(out), len(prefix)
    while written < compressed_goal:
        out = compressor.compress(ZERO_CHUNK)
        sink(out)
        written += len(out)
        fed += len(ZERO_CHUNK)
    sink(compressor.flush())
    return fed


def gzip_bomb(path: str) -> int:
    """A .btsnoop.gz of ~512 KiB: 1000 good records, then zeros (empty 24-byte records) inflating to ~500 MiB."""
    prefix, records = _good_prefix(path)
    with open(path, "wb") as out:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + 15)
        _deflate_until(compressor, out.write, prefix, BOMB_COMPRESSED_BYTES)
    return records


def zip_bomb(path: str) -> int:
    """A bugreport .zip of ~512 KiB whose btsnoop_hci.log entry (deflated, true sizes and CRC) inflates to ~500 MiB: 1000 good records, then zeros."""
    prefix, records = _good_prefix(path)
    # Two passes: the first finds how many zeros make ~512 KiB compressed, the second writes the
    # entry through zipfile (its sizes and CRC-32 are then the true ones).
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    total = _deflate_until(compressor, lambda data: None, prefix, BOMB_COMPRESSED_BYTES)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("version.txt", "2.0")
        with archive.open("FS/data/misc/bluetooth/logs/btsnoop_hci.log", "w") as entry:
            entry.write(prefix)
            left = total - len(prefix)
            while left > 0:
                take = min(left, len(ZERO_CHUNK))
                entry.write(ZERO_CHUNK[:take])
                left -= take
    return records


def btsnooz_bomb(path: str) -> int:
    """A bugreport .txt (~86 KiB) whose btsnooz v2 summary inflates to 64 MiB: 1000 good records, then zeros (empty 9-byte records)."""
    body = bytearray()
    for i in range(BOMB_GOOD_RECORDS):
        pdu = struct.pack("<BHB", 0x1B, 0x0010, i & 0xFF)
        acl = struct.pack("<HH", CONN | PB_START_RX << 12, 4 + len(pdu)) + struct.pack("<HH", len(pdu), ATT_CID) + pdu
        body += struct.pack("<HHIB", len(acl) + 1, len(acl) + 1, 1000, 0x11) + acl
    compressor = zlib.compressobj(9, zlib.DEFLATED, 15)
    payload = bytearray(struct.pack("<BQ", 2, START_UNIX_US + BOMB_GOOD_RECORDS * RECORD_GAP_US))
    payload += compressor.compress(bytes(body))
    left = BTSNOOZ_BOMB_BODY - len(body)
    while left > 0:
        take = min(left, len(ZERO_CHUNK))
        payload += compressor.compress(ZERO_CHUNK[:take])
        left -= take
    payload += compressor.flush()
    encoded = base64.b64encode(bytes(payload))
    with open(path, "wb") as out:
        out.write(b"========================================================\n== dumpstate: 2025-01-01 00:00:00\n")
        out.write(b"--- BEGIN:BTSNOOP_LOG_SUMMARY (%d bytes in) ---\n" % len(body))
        for at in range(0, len(encoded), 76):
            out.write(encoded[at:at + 76] + b"\n")
        out.write(b"--- END:BTSNOOP_LOG_SUMMARY ---\n")
    return BOMB_GOOD_RECORDS


def resync_bomb(path: str) -> int:
    """A .btsnoop.gz of ~512 KiB: 1000 good records, then a repeated damaged byte and two notifications (a skip every 75 bytes) to ~150 MiB."""
    prefix, records = _good_prefix(path)
    cap = Capture(path)
    ts = START_UNIX_US + BTSNOOP_EPOCH_OFFSET + (BOMB_GOOD_RECORDS + 1) * RECORD_GAP_US
    notification = b"\x02" + struct.pack("<HH", CONN | PB_START_RX << 12, 8) + struct.pack("<HHBHB", 4, ATT_CID, 0x1B, 0x0010, 0x42)
    unit = b"\xff" + b"".join(RECORD_HEADER.pack(len(notification), len(notification), 1, 0, ts + k) + notification for k in (0, 1000))
    cap.close()
    os.remove(path)
    block = unit * ((1 << 20) // len(unit))
    with open(path, "wb") as out:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + 15)
        out.write(compressor.compress(prefix))
        written = 0
        while written < BOMB_COMPRESSED_BYTES:
            data = compressor.compress(block)
            out.write(data)
            written += len(data)
        out.write(compressor.flush())
    return records


BOMBS = {
    "gzip_bomb": (gzip_bomb, ".btsnoop.gz"),
    "zip_bomb": (zip_bomb, ".zip"),
    "btsnooz_bomb": (btsnooz_bomb, ".txt"),
    "resync_bomb": (resync_bomb, ".btsnoop.gz"),
}


def describe(name: str) -> str:
    function = BOMBS[name][0] if name in BOMBS else CASES[name]
    return (function.__doc__ or "").strip().splitlines()[0] + (" (fixed size)" if name in BOMBS else "")


def file_name(name: str, scale: int) -> str:
    if name in BOMBS:
        return f"{name}{BOMBS[name][1]}"
    return f"{name}_{scale}.btsnoop"


def generate(name: str, scale: int, out_dir: str) -> tuple[str, int, float]:
    """Writes one case; returns (path, records, seconds). Bombs ignore scale; their records are the good ones before the garbage."""
    path = os.path.join(out_dir, file_name(name, scale))
    start = time.perf_counter()
    if name in BOMBS:
        records = BOMBS[name][0](path)
        return path, records, time.perf_counter() - start
    cap = Capture(path)
    try:
        CASES[name](cap, scale)
    finally:
        cap.close()
    return path, cap.records, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description="Write adversarial btsnoop captures (datalink 1002).")
    parser.add_argument("--out", help="output directory (default: a new temporary directory)")
    parser.add_argument("--scale", type=int, default=10_000, help="units per case (default 10000)")
    parser.add_argument("--only", action="append", choices=sorted(CASES) + sorted(BOMBS), help="only this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args()
    if args.list:
        for name in list(CASES) + list(BOMBS):
            print(f"{name:24} {describe(name)}")
        return 0
    if args.scale < 1:
        parser.error("--scale must be at least 1")
    out_dir = args.out or tempfile.mkdtemp(prefix="bledissect-hostile-")
    os.makedirs(out_dir, exist_ok=True)
    for name in args.only or list(CASES) + list(BOMBS):
        path, records, seconds = generate(name, args.scale, out_dir)
        print(f"{path}  {records} records  {os.path.getsize(path)} bytes  {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
