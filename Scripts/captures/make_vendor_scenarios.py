#!/usr/bin/env python3
"""Record vendor-protocol BLE captures (Polar PMD, Huami / Mi Band, beacons) with
machine-readable ground truth.

Same set-up as make_scenarios.py (imported here for its Stack, the phone, the
connect / discovery helpers and the PMD UUIDs; make_hr_session.py for the
identities and the btsnoop record counter): one process, one
``bumble.link.LocalLink``, one emulated ``bumble.controller.Controller`` per
device, the phone's HCI traffic written by Bumble's ``BtSnooper`` (btsnoop v1,
datalink 1002 = H4, wall-clock timestamps: reruns differ only in timestamps).
The phone is the central / GATT client, static random address
C0:B1:ED:00:50:48 (controller 00:B1:ED:00:00:01); it connects to a peripheral
by address (LE Create Connection, no scanning).  All payload bytes follow
/work/shared/reference/gatt-payloads.md (sections cited below as "ref §n").
All multi-byte PMD / Huami fields are little-endian, beacon fields big-endian
(as the reference says).

Ground truth: next to each capture, ``<name>.truth.json`` = a JSON list, in
file order, built from the values this script generated (never by decoding the
capture).  Each entry:
  {"index", "direction": "phone->device" | "device->phone",
   "opcode": "write_request" | "write_command" | "notification" | "indication"
             | "read_response" | "adv_report",
   "handle": ATT value handle (null for adv_report), "hex": value bytes,
   "message": name, "fields": {decoded values},
   optional "uncertain_fields": [names in "fields" whose layout the reference
             marks as not cross-checked], optional "generator": {facts that
             are not in the bytes, e.g. the AES key used}}
For GATT captures "index" counts every ATT PDU that carries a value in the
phone's capture -- Read Response (0x0B), Write Request (0x12), Write Command
(0x52), Handle Value Notification (0x1B) and Indication (0x1D) -- so CCCD
writes are in the list too (message "cccd_write"); discovery, MTU exchange,
Read Requests, Write Responses and Confirmations carry no value and are not
counted.  For beacons.btsnoop "index" counts LE Advertising Report events
(one report each).

1. polar_pmd.btsnoop  (ref §8)
   Peripheral "bledissect PMD" D0:B1:ED:00:50:4D (controller 00:B1:ED:00:00:11):
   GAP, GATT, PMD service FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8 with the
   control point FB005C81 (read / write / indicate, CCCD) and data FB005C82
   (notify, CCCD).  Control point writes are Write Requests; responses are
   indications `F0 op type status [more params]`; data are notifications
   `type(1) timestamp(u64 ns since 2000-01-01, last sample) frame_type(1)
   samples`.  Settings TLVs `setting_type count value*count`: 00 sample rate
   u16, 01 resolution u16, 02 range u16, 03 range in milli-units u32,
   04 channels u8, 05 conversion factor float32.
   At ATT MTU 23: discovery; CCCD(cp) <- 02 00, CCCD(data) <- 01 00;
   read cp -> 0F 2F 3A (byte 1 = ECG|PPG|ACC|PPI|gyroscope, byte 2 = SDK mode
   |pressure|temperature|offline recording);
   start PPG `02 01 00 01 87 00 01 01 16 00 04 01 04` -> `F0 02 01 0A`
   (invalid MTU); then ATT MTU exchange 247 and:
   get settings `01 tt` for ECG, PPG, ACC, PPI, gyroscope, pressure,
   temperature -> `F0 01 tt 00 00 <settings>`:
     ECG   00 01 82 00 | 01 01 0E 00                       (130 Hz; 14 bit)
     PPG   00 02 37 00 87 00 | 01 01 16 00 | 04 01 04      (55/135 Hz; 22; 4 ch)
     ACC   00 04 19 00 32 00 64 00 C8 00 | 01 01 10 00 | 02 03 02 00 04 00 08 00
           | 04 01 03 | 05 01 00 00 80 3F    (25/50/100/200 Hz; 16; +-2/4/8 G;
                                              3 ch; factor 1.0)
     PPI   (no settings)
     gyro  00 02 1A 00 34 00 | 01 01 10 00 | 03 02 90 D0 03 00 20 A1 07 00
           | 04 01 03                        (26/52 Hz; 16; 250000/500000
                                              milli-deg/s; 3 ch)
     pressure / temperature  00 01 01 00     (1 Hz)
   errors: `0A 00` -> `F0 0A 00 01` (invalid op code); `01 04` -> `F0 01 04 02`
   (invalid measurement type); `01 06` -> `F0 01 06 03` (magnetometer: not
   supported); `02 00` -> `F0 02 00 04` (invalid length); start ECG with
   resolution 16 -> `F0 02 00 07`;
   ECG: start `02 00 00 01 82 00 01 01 0E 00` -> `F0 02 00 00 00`, 2 frames
   (type 00, 20 x s24 uV), start again -> `F0 02 00 06` (already in state),
   stop `03 00` -> `F0 03 00 00 00`;
   ACC: start at 30 Hz -> `F0 02 02 08` (invalid sample rate), range 16 ->
   `F0 02 02 09` (invalid range), start 50 Hz / 16 bit / 8 G / 3 ch ->
   success; frames type 00 (s8 x,y,z), 01 (s16), 02 (s24), then two delta
   frames (frame byte 0x80): the spec example (reference D0 FF 65 01 E4 0F =
   (-48, 357, 4068), block 08 1D = 29 samples of 8-bit deltas starting
   FC 07 FF) and one with three blocks (5-bit x 7, 12-bit x 3, 3-bit x 2);
   stop;
   PPG: start with 3 channels -> `F0 02 01 0B` (invalid number of channels),
   start 135 Hz / 22 bit / 4 ch -> success, 2 frames type 00 (4 x 3-byte
   values per sample), one delta frame (reference 4 x 3 bytes, blocks 7-bit
   x 5 and 13-bit x 3), device-initiated indication `01 01` (online
   measurement stopped: PPG), stop `03 01` -> `F0 03 01 06` (already in state);
   PPI: start `02 03` -> `F0 02 03 0D` (device in charger), again -> success,
   2 frames type 00 (6-byte samples), stop;
   gyroscope: start 52 Hz / 16 bit / 500000 / 3 ch -> success, frame type 01
   (float32 x,y,z), one delta frame (16-bit reference, 10-bit x 6), stop;
   pressure: start `02 0B 00 01 01 00`, frame type 00 (3 x float32 hPa), stop;
   temperature: start `02 0C 00 01 01 00`, frame type 00 (2 x float32 degC), stop;
   `05` -> `F0 05 00 00 00` (get measurement status; no parameters: the
   reference gives no layout for them);
   `04 02` -> `F0 04 02 0C` (get SDK-mode settings before SDK mode: invalid
   state); `02 09` -> `F0 02 09 00 00` (SDK mode on); `04 02` ->
   `F0 04 02 00 00 00 06 0D 00 1A 00 34 00 68 00 D0 00 A0 01 01 01 10 00 02 04
   02 00 04 00 08 00 10 00 04 01 03`; `06` -> `F0 06 00 00 00`; `03 09` ->
   `F0 03 09 00 00`;
   `07` -> `F0 07 00 00 00`; `08 01` -> `F0 08 00 00 00`; `08 07` ->
   `F0 08 00 05` (invalid parameter); `09 01 02 0F <ACC start settings>` ->
   `F0 09 02 0E` (disk full); disconnect.
   For responses to requests that carry no type byte (05, 06, 07, 08) the
   device sends type byte 00.  Not sent (reference incomplete): the optional
   security setting (type 06; key length unclear), "more" = 1 continuations,
   parameters of the status responses (05, 06, 07).

2. huami.btsnoop  (ref §9, §1, §4.4)
   Peripheral "bledissect Band" D0:B1:ED:00:48:4D (controller 00:B1:ED:00:00:12):
   GAP, GATT, Heart Rate 0x180D (HRM 2A37 notify, HR control point 2A39
   write), service 0xFEE0 with 0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0006
   (battery info, read/notify), 0x0007 (realtime steps, read/notify), 0x0008,
   0x0010 (device event), 0x0020 (Huami base 0000xxxx-0000-3512-2118-
   0009AF100700) and 2A2B (current time), service 0xFEE1 with 0x0009 (auth,
   write / write without response / notify).  No MTU exchange (ATT MTU 23).
   Discovery; CCCD(auth) <- 01 00; auth with key HUAMI_KEY =
   30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 and AES-128-ECB from the
   `cryptography` package (legacy steps as Write Commands, Mi Band 4/5 steps
   as Write Requests):
     `01 08 <key>` -> `10 01 04` (pairing refused); `01 08 <key>` -> `10 01 01`;
     `02 08` -> `10 02 01 <R1>`; `03 08 AES(WRONG_KEY, R1)` -> `10 03 04`;
     `02 08` -> `10 02 01 <R2>`; `03 08 AES(key, R2)` -> `10 03 01`;
     `82 00 02 01 00` -> `10 82 01 <R3>`; `83 00 AES(key, R3)` -> `10 83 01`
     (R1 = 00..0F, R2 = A0..AF, R3 = 5A A5 5A A5 ... C3 3C).
   Read 2A2B -> 10-byte Current Time 2025-01-14 09:30:05 Tuesday.
   Read 0x0006 -> battery info (20 bytes, below); CCCD(0x0006) <- 01 00;
   CCCD(0x0007) <- 01 00; read 0x0007; 3 steps notifications; CCCD(2A37) <-
   01 00; HR control writes (Write Requests) `15 02 00`, `15 01 00`,
   `15 02 01` -> HRM `00 48`; `15 01 01` -> HRM `00 4A`, `00 4C`; `16`
   (keep-alive) -> HRM `00 4D`; `15 01 00`; `15 00 01`; `15 00 00`; `14 0A`;
   `14 00`; battery info notification (charging); disconnect.
   Battery info 0x0006 (20 bytes): 0F, level, status (0 normal / 1 charging),
   last-off year u16 month day hour minute second (bytes 3-9), 00 (byte 10),
   last-charge year u16 month day hour minute second (bytes 11-17), 00 (byte
   18), last-charge level (byte 19).  Only bytes 1, 2 and 19 are confirmed
   by the reference; the two times follow creotiv/MiBand2 (`bytes[3:10]`,
   `bytes[11:18]`; Gadgetbridge reads the last-charge time from byte 10), so
   the truth lists them under "uncertain_fields".
   Realtime steps 0x0007 (13 bytes): 0C, steps u32 (bytes 1-4; bytes 1-2 are
   the confirmed u16), distance m u32 (5-8), calories u32 (9-12).  Values are
   chosen so that bytes 3-4 are 0, distance < 32768 and calories < 128:
   creotiv's i16 / i16 / i8 reads at 1, 5, 9 give the same numbers.  Distance
   and calories are "uncertain_fields"; byte 0 (0x0C) has no meaning in the
   reference.
   Not sent: device-event (0x0010) payloads, sensor control / raw data,
   configuration, activity fetch, user settings, chunked transfer (the
   reference names these characteristics but gives no byte layout).

3. beacons.btsnoop  (ref §6, §6.1, §6.2)
   The phone scans passively (legacy LE Set Scan Parameters / Enable; its
   controller has no extended advertising) and receives 8 LE Advertising
   Reports, event type ADV_NONCONN_IND (0x03), random addresses:
   iBeacon "D0:B1:ED:00:69:42" (RSSI -62) and Eddystone "D0:B1:ED:00:45:59"
   (RSSI -71), each advertising once per report (started, reported, stopped):
     0 iBeacon: 02 01 06 1A FF 4C 00 02 15 B1ED1BEA-C0DE-4E5A-9D1E-0000000000B1
       major 0x1234 minor 0xABCD power -59 (C5)
     1 Eddystone UID tx -20, namespace 00 11 .. 99 (10), instance B1 ED 00 00 00 01, RFU 00 00
     2 Eddystone URL tx -18: 01 "bledissect" 01 "dev" = https://www.bledissect.org/dev
     3 Eddystone TLM v0: 3012 mV, 23.5 degC (17 80), 1234567 PDUs, 98765 x 0.1 s
     4 iBeacon: same UUID, major 1, minor 2, power -65 (BF)
     5 Eddystone TLM v0: battery 0 (n/a), temperature 80 00 (n/a), 1234890 PDUs, 98790 x 0.1 s
     6 Eddystone UID without RFU (service data length 0x15), tx -4
     7 Eddystone URL tx -18: 00 "bledissect" 07 = http://www.bledissect.com
   Emulator extension: Bumble 0.0.236's emulated controller sends nothing for
   non-connectable legacy advertising and reports every advertising PDU twice
   (ADV_IND + a SCAN_RSP copy); the script's controller subclasses send
   ADV_NONCONN_IND PDUs and report each one once with its real event type and
   a per-advertiser RSSI.

Usage:  python3 Scripts/captures/make_vendor_scenarios.py [--out-dir captures]
                                                          [--only NAME ...]
Needs: Python 3.11+, bumble (tested with 0.0.236), cryptography (AES).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402
import make_scenarios as ms  # noqa: E402

from bumble import gatt, hci, ll  # noqa: E402
from bumble.controller import Controller, LegacyAdvertiser  # noqa: E402
from bumble.core import AdvertisingData  # noqa: E402
from bumble.device import AdvertisingType, Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.gatt import Characteristic, CharacteristicValue, Service  # noqa: E402
from bumble.host import Host  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.profiles.gap import GenericAccessService  # noqa: E402
from bumble.snoop import BtSnooper  # noqa: E402
from bumble.transport.common import AsyncPipeSink  # noqa: E402

try:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
except ImportError:  # pragma: no cover
    Cipher = None

PMD_DEVICE = ("bledissect PMD", "D0:B1:ED:00:50:4D", "00:B1:ED:00:00:11")
BAND_DEVICE = ("bledissect Band", "D0:B1:ED:00:48:4D", "00:B1:ED:00:00:12")
IBEACON_DEVICE = ("bledissect iBeacon", "D0:B1:ED:00:69:42", "00:B1:ED:00:00:13")
EDDYSTONE_DEVICE = ("bledissect Eddystone", "D0:B1:ED:00:45:59", "00:B1:ED:00:00:14")

PHONE_TO_DEVICE = "phone->device"
DEVICE_TO_PHONE = "device->phone"


# -----------------------------------------------------------------------------
# Ground truth
# -----------------------------------------------------------------------------
class Truth:
    def __init__(self) -> None:
        self.entries: list[dict] = []

    def add(self, direction, opcode, handle, value: bytes, message, fields,
            uncertain=None, generator=None) -> dict:
        entry = {
            "index": len(self.entries),
            "direction": direction,
            "opcode": opcode,
            "handle": handle,
            "hex": value.hex(),
            "message": message,
            "fields": fields,
        }
        if uncertain:
            entry["uncertain_fields"] = list(uncertain)
        if generator:
            entry["generator"] = generator
        self.entries.append(entry)
        return entry

    def write(self, path: str) -> None:
        # One entry per line (a JSON list).
        with open(path, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(e) for e in self.entries) + "\n]\n")


class GattSession:
    """Phone-side helpers that send a value and record it in the truth list."""

    def __init__(self, peer: Peer, device: Device, truth: Truth) -> None:
        self.peer = peer
        self.device = device
        self.truth = truth
        self.queues: dict[int, asyncio.Queue] = {}

    async def subscribe(self, characteristic, indicate: bool = False) -> None:
        bits = 0x0002 if indicate else 0x0001
        cccd = ms.cccd_of(characteristic)
        self.truth.add(
            PHONE_TO_DEVICE, "write_request", cccd, struct.pack("<H", bits), "cccd_write",
            {"notifications": not indicate, "indications": indicate},
        )
        queue: asyncio.Queue = asyncio.Queue()
        self.queues[characteristic.handle] = queue
        await self.peer.subscribe(
            characteristic, lambda v: queue.put_nowait(bytes(v)), prefer_notify=not indicate
        )

    async def read(self, characteristic, expected: bytes, message, fields, **kw) -> None:
        value = bytes(await self.peer.read_value(characteristic))
        assert value == expected, (value.hex(), expected.hex())
        self.truth.add(DEVICE_TO_PHONE, "read_response", characteristic.handle, value,
                       message, fields, **kw)

    async def write(self, characteristic, value: bytes, with_response: bool,
                    server_queue: asyncio.Queue, message, fields, **kw) -> None:
        self.truth.add(
            PHONE_TO_DEVICE, "write_request" if with_response else "write_command",
            characteristic.handle, value, message, fields, **kw,
        )
        await self.peer.write_value(characteristic, value, with_response=with_response)
        got = await asyncio.wait_for(server_queue.get(), 5)
        assert got == value, (got.hex(), value.hex())

    async def notify(self, server_char, client_char, value: bytes, message, fields,
                     indicate: bool = False, **kw) -> None:
        self.truth.add(
            DEVICE_TO_PHONE, "indication" if indicate else "notification",
            client_char.handle, value, message, fields, **kw,
        )
        if indicate:
            await self.device.indicate_subscribers(server_char, value)
        else:
            await self.device.notify_subscribers(server_char, value)
        got = await asyncio.wait_for(self.queues[client_char.handle].get(), 5)
        assert got == value, (got.hex(), value.hex())


# -----------------------------------------------------------------------------
# 1. Polar PMD (ref §8)
# -----------------------------------------------------------------------------
PMD_TYPE_NAMES = {
    0: "ECG", 1: "PPG", 2: "ACC", 3: "PPI", 4: "reserved", 5: "gyroscope",
    6: "magnetometer", 7: "skin temperature", 9: "SDK mode", 10: "location",
    11: "pressure", 12: "temperature", 13: "offline recording", 14: "offline HR",
}
ECG, PPG, ACC, PPI, GYRO, MAG, SDK_MODE, PRESSURE, TEMPERATURE = 0, 1, 2, 3, 5, 6, 9, 11, 12
PMD_FEATURE_BITS = [  # (byte, bit, name)
    (1, 0, "ECG"), (1, 1, "PPG"), (1, 2, "ACC"), (1, 3, "PPI"), (1, 5, "gyroscope"),
    (1, 6, "magnetometer"), (1, 7, "skin temperature"), (2, 1, "SDK mode"),
    (2, 2, "location"), (2, 3, "pressure"), (2, 4, "temperature"),
    (2, 5, "offline recording"), (2, 6, "offline HR"),
]
PMD_FEATURES = bytes([0x0F, 0x2F, 0x3A])
PMD_OPCODES = {
    0x01: "pmd_get_settings",
    0x02: "pmd_start_measurement",
    0x03: "pmd_stop_measurement",
    0x04: "pmd_get_sdk_mode_settings",
    0x05: "pmd_get_measurement_status",
    0x06: "pmd_get_sdk_mode_status",
    0x07: "pmd_get_offline_trigger_status",
    0x08: "pmd_set_offline_trigger_mode",
    0x09: "pmd_set_offline_trigger_settings",
}
PMD_STATUS = [
    "success", "invalid op code", "invalid measurement type", "not supported",
    "invalid length", "invalid parameter", "already in state", "invalid resolution",
    "invalid sample rate", "invalid range", "invalid MTU", "invalid number of channels",
    "invalid state", "device in charger", "disk full",
]
SETTING_NAMES = {
    0: ("sample_rate_hz", "<H"), 1: ("resolution_bits", "<H"), 2: ("range", "<H"),
    3: ("range_milliunits", "<I"), 4: ("channels", "<B"), 5: ("conversion_factor", "<f"),
}

# Settings as ordered lists of (setting type, [values]).
SETTINGS = {
    ECG: [(0, [130]), (1, [14])],
    PPG: [(0, [55, 135]), (1, [22]), (4, [4])],
    ACC: [(0, [25, 50, 100, 200]), (1, [16]), (2, [2, 4, 8]), (4, [3]), (5, [1.0])],
    PPI: [],
    GYRO: [(0, [26, 52]), (1, [16]), (3, [250000, 500000]), (4, [3])],
    PRESSURE: [(0, [1])],
    TEMPERATURE: [(0, [1])],
}
SDK_ACC_SETTINGS = [(0, [13, 26, 52, 104, 208, 416]), (1, [16]), (2, [2, 4, 8, 16]), (4, [3])]
START = {
    ECG: [(0, [130]), (1, [14])],
    PPG: [(0, [135]), (1, [22]), (4, [4])],
    ACC: [(0, [50]), (1, [16]), (2, [8]), (4, [3])],
    PPI: [],
    GYRO: [(0, [52]), (1, [16]), (3, [500000]), (4, [3])],
    PRESSURE: [(0, [1])],
    TEMPERATURE: [(0, [1])],
}
RATE = {ECG: 130, PPG: 135, ACC: 50, GYRO: 52, PRESSURE: 1, TEMPERATURE: 1}
# Each measurement's clock starts at PMD_BASE_NS + offset (ns since 2000-01-01):
# 2025-01-02T00:00:00Z plus a few seconds per type.
PMD_BASE_NS = ms.PMD_EPOCH_OFFSET_NS + 86_400 * 1_000_000_000
PMD_CLOCK_OFFSET_S = {ECG: 0, ACC: 10, PPG: 20, PPI: 30, GYRO: 40, PRESSURE: 50, TEMPERATURE: 60}


def encode_settings(settings) -> bytes:
    out = b""
    for setting_type, values in settings:
        fmt = SETTING_NAMES[setting_type][1]
        out += bytes([setting_type, len(values)]) + b"".join(struct.pack(fmt, v) for v in values)
    return out


def settings_fields(settings) -> dict:
    return {SETTING_NAMES[t][0]: list(values) for t, values in settings}


def type_fields(type_byte: int) -> dict:
    measurement = type_byte & 0x3F
    return {
        "measurement_type": PMD_TYPE_NAMES.get(measurement, f"unknown {measurement}"),
        "measurement_type_id": measurement,
        "recording_type": "offline" if type_byte & 0x80 else "online",
    }


def pmd_request(opcode: int, type_byte: int | None = None, settings=None, raw: bytes = b""):
    """(bytes, message, fields) for a control point write."""
    value = bytes([opcode])
    fields: dict = {"opcode": opcode}
    if type_byte is not None:
        value += bytes([type_byte])
        fields.update(type_fields(type_byte))
    if settings:
        value += encode_settings(settings)
        fields.update(settings_fields(settings))
    value += raw
    return value, PMD_OPCODES.get(opcode, "pmd_unknown_command"), fields


def pmd_response(opcode: int, type_byte: int, status: int, settings=None, more: int = 0):
    value = bytes([0xF0, opcode, type_byte, status])
    fields: dict = {"opcode": opcode}
    fields.update(type_fields(type_byte))
    del fields["recording_type"]
    fields.update({"status": status, "status_name": PMD_STATUS[status]})
    if status == 0:
        value += bytes([more])
        fields["more"] = more
        if settings:
            value += encode_settings(settings)
            fields.update(settings_fields(settings))
    name = PMD_OPCODES.get(opcode)
    message = f"{name}_response" if name else "pmd_control_point_response"
    return value, message, fields


def s_le(value: int, size: int) -> bytes:
    return value.to_bytes(size, "little", signed=True)


def pack_deltas(deltas: list[list[int]], width: int) -> bytes:
    """Bit-pack deltas LSB first, each a two's-complement `width`-bit number."""
    acc = 0
    nbits = 0
    for sample in deltas:
        for d in sample:
            assert -(1 << (width - 1)) <= d < (1 << (width - 1)), (d, width)
            acc |= (d & ((1 << width) - 1)) << nbits
            nbits += width
    return acc.to_bytes((nbits + 7) // 8, "little")


def unpack_compressed(body: bytes, channels: int, resolution: int) -> list[list[int]]:
    """Independent reader of a delta frame body (used as a self-check)."""
    size = (resolution + 7) // 8
    ref = [int.from_bytes(body[i * size:(i + 1) * size], "little", signed=True)
           for i in range(channels)]
    samples = [ref]
    pos = channels * size
    while pos < len(body):
        width, count = body[pos], body[pos + 1]
        pos += 2
        nbytes = (width * channels * count + 7) // 8
        bits = int.from_bytes(body[pos:pos + nbytes], "little")
        pos += nbytes
        for k in range(count):
            prev = samples[-1]
            new = []
            for c in range(channels):
                raw = (bits >> ((k * channels + c) * width)) & ((1 << width) - 1)
                if raw & (1 << (width - 1)):
                    raw -= 1 << width
                new.append(prev[c] + raw)
            samples.append(new)
    return samples


class PmdClock:
    def __init__(self) -> None:
        self.samples = {t: 0 for t in PMD_CLOCK_OFFSET_S}
        self.ppi_ms = 0

    def advance(self, measurement: int, count: int) -> int:
        """Timestamp (ns since 2000-01-01) of the last of `count` new samples."""
        self.samples[measurement] += count
        return (PMD_BASE_NS + PMD_CLOCK_OFFSET_S[measurement] * 1_000_000_000
                + (self.samples[measurement] * 1_000_000_000) // RATE[measurement])

    def advance_ppi(self, intervals_ms: list[int]) -> int:
        self.ppi_ms += sum(intervals_ms)
        return PMD_BASE_NS + PMD_CLOCK_OFFSET_S[PPI] * 1_000_000_000 + self.ppi_ms * 1_000_000


def pmd_frame(measurement: int, timestamp: int, frame_type: int, body: bytes) -> bytes:
    return bytes([measurement]) + struct.pack("<Q", timestamp) + bytes([frame_type]) + body


def data_fields(measurement: int, timestamp: int, frame_type: int, compressed: bool, samples):
    return {
        "measurement_type": PMD_TYPE_NAMES[measurement],
        "measurement_type_id": measurement,
        "timestamp_ns": timestamp,
        "frame_type": frame_type,
        "compressed": compressed,
        "samples": samples,
    }


def build_pmd_data_frames(clock: PmdClock) -> dict[int, list[tuple[bytes, dict, dict | None]]]:
    """All data notifications by measurement type: (value, fields, generator)."""
    frames: dict[int, list] = {t: [] for t in (ECG, ACC, PPG, PPI, GYRO, PRESSURE, TEMPERATURE)}

    # ECG frame type 0: s24 uV.
    for k in range(2):
        samples = ms.ecg_samples(k + 5)
        ts = clock.advance(ECG, len(samples))
        body = b"".join(s_le(v, 3) for v in samples)
        frames[ECG].append((pmd_frame(ECG, ts, 0x00, body), data_fields(ECG, ts, 0, False, samples), None))

    # ACC frame types 0 / 1 / 2: x, y, z as s8 / s16 / s24 (mG).
    acc_type_samples = {
        0: [[1, -2, 3], [-128, 127, 0], [5, -5, 64], [0, 0, -1]],
        1: [[-48, 357, 4068], [-52, 364, 4067], [-32768, 32767, 1000], [256, -256, -1]],
        2: [[-48, 357, 4068], [-8388608, 8388607, 65536], [-120000, 1000000, -1], [70000, -70000, 255]],
    }
    for frame_type, samples in acc_type_samples.items():
        size = frame_type + 1
        ts = clock.advance(ACC, len(samples))
        body = b"".join(s_le(v, size) for sample in samples for v in sample)
        frames[ACC].append((pmd_frame(ACC, ts, frame_type, body),
                            data_fields(ACC, ts, frame_type, False, samples), None))

    def compressed(measurement, ref, blocks, channels, resolution):
        """blocks = [(width, [delta tuples])] -> (value, fields, generator)"""
        size = (resolution + 7) // 8
        body = b"".join(s_le(v, size) for v in ref)
        samples = [list(ref)]
        for width, deltas in blocks:
            body += bytes([width, len(deltas)]) + pack_deltas(deltas, width)
            for d in deltas:
                samples.append([p + q for p, q in zip(samples[-1], d)])
        assert unpack_compressed(body, channels, resolution) == samples
        ts = clock.advance(measurement, len(samples))
        fields = data_fields(measurement, ts, 0, True, samples)
        fields["reference_sample"] = list(ref)
        fields["delta_blocks"] = [
            {"delta_bit_width": w, "sample_count": len(d)} for w, d in blocks
        ]
        generator = {"channels": channels, "resolution_bits": resolution,
                     "note": "samples[0] is the reference sample; resolution and channels "
                             "come from the start request"}
        return pmd_frame(measurement, ts, 0x80, body), fields, generator

    # ACC delta frame 1: the specification's example (reference, 8-bit x 29,
    # first deltas FC 07 FF).
    spec_deltas = [[-4, 7, -1]] + [
        [((k * 37) % 41) - 20, ((k * 53) % 61) - 30, ((k * 29) % 255) - 127] for k in range(1, 29)
    ]
    frame = compressed(ACC, [-48, 357, 4068], [(8, spec_deltas)], 3, 16)
    assert frame[0][10:18].hex() == "d0ff6501e40f081d" and frame[0][18:21].hex() == "fc07ff"
    frames[ACC].append(frame)
    # ACC delta frame 2: three blocks with widths that do not fill whole bytes.
    blocks = [
        (5, [[-16, 15, 1], [3, -3, 0], [7, -8, 2], [-1, -1, -1], [0, 0, 0], [15, -16, 9], [-2, 4, -6]]),
        (12, [[-2048, 2047, 1000], [1500, -1500, -3], [-77, 0, 2047]]),
        (3, [[-4, 3, 0], [1, -1, 2]]),
    ]
    frames[ACC].append(compressed(ACC, [-20000, 12345, 32767], blocks, 3, 16))

    # PPG frame type 0: ppg0, ppg1, ppg2, ambient, 3 bytes each (values < 2^23).
    for k in range(2):
        samples = [[100000 + 1000 * k + 37 * i, 120000 + 1000 * k - 29 * i,
                    90000 + 1000 * k + 11 * i, 2000 + i] for i in range(5)]
        ts = clock.advance(PPG, len(samples))
        body = b"".join(s_le(v, 3) for sample in samples for v in sample)
        frames[PPG].append((pmd_frame(PPG, ts, 0x00, body),
                            data_fields(PPG, ts, 0, False, samples), None))
    frames[PPG].append(compressed(
        PPG, [102000, 118000, 92000, 2010],
        [(7, [[-64, 63, 1, 0], [10, -10, 5, -1], [0, 1, 2, 3], [-7, -7, -7, -7], [33, -33, 60, -60]]),
         (13, [[-4096, 4095, 1234, -1], [2000, -2000, -1234, 1], [1, 2, 3, 4]])],
        4, 22,
    ))

    # PPI frame type 0: HR u8, PP interval u16 ms, error estimate u16 ms, flags u8.
    ppi_frames = [
        [(62, 968, 10, 0x06), (63, 952, 12, 0x06), (61, 984, 9, 0x07)],
        [(60, 1000, 20, 0x04), (64, 938, 8, 0x06)],
    ]
    for samples in ppi_frames:
        ts = clock.advance_ppi([s[1] for s in samples])
        body = b"".join(struct.pack("<BHHB", *s) for s in samples)
        fields = data_fields(PPI, ts, 0, False, [
            {"hr_bpm": hr_, "pp_interval_ms": pp, "error_estimate_ms": err, "flags": flags,
             "blocker": bool(flags & 1), "skin_contact": bool(flags & 2),
             "skin_contact_supported": bool(flags & 4)}
            for hr_, pp, err, flags in samples
        ])
        frames[PPI].append((pmd_frame(PPI, ts, 0x00, body), fields, None))

    # Gyroscope frame type 1: x, y, z float32 deg/s (exactly representable values).
    samples = [[1.5, -0.25, 12.125], [-3.0, 0.5, 0.0], [250.0, -250.0, 0.0625], [-1.75, 2.25, -0.125]]
    ts = clock.advance(GYRO, len(samples))
    body = b"".join(struct.pack("<fff", *s) for s in samples)
    frames[GYRO].append((pmd_frame(GYRO, ts, 0x01, body), data_fields(GYRO, ts, 1, False, samples), None))
    frames[GYRO].append(compressed(
        GYRO, [-300, 150, 5],
        [(10, [[-512, 511, 0], [100, -100, 1], [-1, -2, -3], [256, 0, -256], [7, 7, 7], [0, 0, 0]])],
        3, 16,
    ))

    # Pressure / temperature frame type 0: float32.
    for measurement, values in ((PRESSURE, [1013.25, 1013.5, 1013.75]), (TEMPERATURE, [21.5, 21.625])):
        ts = clock.advance(measurement, len(values))
        body = b"".join(struct.pack("<f", v) for v in values)
        frames[measurement].append((pmd_frame(measurement, ts, 0x00, body),
                                    data_fields(measurement, ts, 0, False, values), None))
    return frames


class PmdDevice:
    def __init__(self, stack: ms.Stack) -> None:
        self.device = stack.device
        self.cp_queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.cp = Characteristic(
            ms.PMD_CP_UUID,
            Characteristic.Properties.READ | Characteristic.Properties.WRITE
            | Characteristic.Properties.INDICATE,
            Characteristic.Permissions.READABLE | Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(read=lambda _c: PMD_FEATURES,
                                write=lambda _c, v: self.cp_queue.put_nowait(bytes(v))),
        )
        self.data = Characteristic(
            ms.PMD_DATA_UUID, Characteristic.Properties.NOTIFY,
            Characteristic.Permissions.READABLE, b"",
        )
        self.device.add_services([Service(ms.PMD_SERVICE_UUID, [self.cp, self.data])])


def pmd_features_fields(value: bytes) -> dict:
    return {
        "byte0": value[0],
        "supported_types": [name for byte, bit, name in PMD_FEATURE_BITS if value[byte] & (1 << bit)],
    }


async def scenario_pmd(phone_file, log) -> tuple[dict, Truth]:
    link = LocalLink()
    phone_stack = ms.make_phone(link, phone_file)
    name, random_address, public_address = PMD_DEVICE
    pmd = PmdDevice(ms.Stack(link, name, random_address, public_address))
    phone = phone_stack.device
    await pmd.device.power_on()
    await phone.power_on()
    truth = Truth()
    facts: dict = {}

    connection, pmd_connection = await ms.connect(phone, pmd.device, random_address)
    peer = Peer(connection)
    await ms.full_discovery(peer)
    cp = ms.find_char(peer, gatt.UUID(ms.PMD_CP_UUID))
    data = ms.find_char(peer, gatt.UUID(ms.PMD_DATA_UUID))
    facts["handles"] = {"pmd_cp": cp.handle, "pmd_cp_cccd": ms.cccd_of(cp),
                        "pmd_data": data.handle, "pmd_data_cccd": ms.cccd_of(data)}
    facts["all_handles"] = ms.handle_map(peer)
    log(f"PMD handles: {facts['handles']}")
    s = GattSession(peer, pmd.device, truth)

    await s.subscribe(cp, indicate=True)
    await s.subscribe(data)
    await s.read(cp, PMD_FEATURES, "pmd_features", pmd_features_fields(PMD_FEATURES),
                 generator={"note": "byte 0 is not interpreted by the reference (the SDK ignores it)"})

    async def control(request, response) -> None:
        value, message, fields = request
        await s.write(cp, value, True, pmd.cp_queue, message, fields)
        value, message, fields = response
        await s.notify(pmd.cp, cp, value, message, fields, indicate=True)

    frames = build_pmd_data_frames(PmdClock())

    async def send_frames(measurement: int) -> None:
        for value, fields, generator in frames[measurement]:
            await s.notify(pmd.data, data, value, "pmd_data", fields, generator=generator)

    # Before the MTU exchange: PPG refused with "invalid MTU".
    await control(pmd_request(0x02, PPG, START[PPG]), pmd_response(0x02, PPG, 10))
    mtu = await peer.request_mtu(hr.ATT_MTU)
    facts["mtu"] = mtu

    for measurement in (ECG, PPG, ACC, PPI, GYRO, PRESSURE, TEMPERATURE):
        await control(pmd_request(0x01, measurement),
                      pmd_response(0x01, measurement, 0, SETTINGS[measurement]))

    await control(pmd_request(0x0A, raw=b"\x00"), pmd_response(0x0A, 0x00, 1))
    await control(pmd_request(0x01, 4), pmd_response(0x01, 4, 2))
    await control(pmd_request(0x01, MAG), pmd_response(0x01, MAG, 3))

    # ECG
    await control(pmd_request(0x02, ECG), pmd_response(0x02, ECG, 4))
    await control(pmd_request(0x02, ECG, [(0, [130]), (1, [16])]), pmd_response(0x02, ECG, 7))
    await control(pmd_request(0x02, ECG, START[ECG]), pmd_response(0x02, ECG, 0))
    await send_frames(ECG)
    await control(pmd_request(0x02, ECG, START[ECG]), pmd_response(0x02, ECG, 6))
    await control(pmd_request(0x03, ECG), pmd_response(0x03, ECG, 0))

    # ACC
    await control(pmd_request(0x02, ACC, [(0, [30]), (1, [16]), (2, [8]), (4, [3])]),
                  pmd_response(0x02, ACC, 8))
    await control(pmd_request(0x02, ACC, [(0, [50]), (1, [16]), (2, [16]), (4, [3])]),
                  pmd_response(0x02, ACC, 9))
    await control(pmd_request(0x02, ACC, START[ACC]), pmd_response(0x02, ACC, 0))
    await send_frames(ACC)
    await control(pmd_request(0x03, ACC), pmd_response(0x03, ACC, 0))

    # PPG
    await control(pmd_request(0x02, PPG, [(0, [135]), (1, [22]), (4, [3])]),
                  pmd_response(0x02, PPG, 11))
    await control(pmd_request(0x02, PPG, START[PPG]), pmd_response(0x02, PPG, 0))
    await send_frames(PPG)
    stopped = bytes([0x01, PPG])
    await s.notify(pmd.cp, cp, stopped, "pmd_measurement_stopped",
                   {"command": 1, "measurement_types": ["PPG"], "measurement_type_ids": [PPG]},
                   indicate=True)
    await control(pmd_request(0x03, PPG), pmd_response(0x03, PPG, 6))

    # PPI
    await control(pmd_request(0x02, PPI), pmd_response(0x02, PPI, 13))
    await control(pmd_request(0x02, PPI), pmd_response(0x02, PPI, 0))
    await send_frames(PPI)
    await control(pmd_request(0x03, PPI), pmd_response(0x03, PPI, 0))

    # Gyroscope, pressure, temperature
    for measurement in (GYRO, PRESSURE, TEMPERATURE):
        await control(pmd_request(0x02, measurement, START[measurement]),
                      pmd_response(0x02, measurement, 0))
        await send_frames(measurement)
        await control(pmd_request(0x03, measurement), pmd_response(0x03, measurement, 0))

    # Status, SDK mode, offline recording trigger
    await control(pmd_request(0x05), pmd_response(0x05, 0x00, 0))
    await control(pmd_request(0x04, ACC), pmd_response(0x04, ACC, 12))
    await control(pmd_request(0x02, SDK_MODE), pmd_response(0x02, SDK_MODE, 0))
    await control(pmd_request(0x04, ACC), pmd_response(0x04, ACC, 0, SDK_ACC_SETTINGS))
    await control(pmd_request(0x06), pmd_response(0x06, 0x00, 0))
    await control(pmd_request(0x03, SDK_MODE), pmd_response(0x03, SDK_MODE, 0))
    await control(pmd_request(0x07), pmd_response(0x07, 0x00, 0))
    value, message, fields = pmd_request(0x08, raw=b"\x01")
    fields["mode"] = 1
    await control((value, message, fields), pmd_response(0x08, 0x00, 0))
    value, message, fields = pmd_request(0x08, raw=b"\x07")
    fields["mode"] = 7
    await control((value, message, fields), pmd_response(0x08, 0x00, 5))
    trigger_settings = encode_settings(START[ACC])
    value = bytes([0x09, 0x01, ACC, len(trigger_settings)]) + trigger_settings
    fields = {"opcode": 0x09, "trigger_status": 1, "measurement_type": "ACC",
              "measurement_type_id": ACC, "settings_length": len(trigger_settings)}
    fields.update(settings_fields(START[ACC]))
    await control((value, PMD_OPCODES[0x09], fields), pmd_response(0x09, ACC, 14))

    await ms.disconnect(connection, pmd_connection)
    await ms.settle()
    return facts, truth


# -----------------------------------------------------------------------------
# 2. Huami / Mi Band (ref §9)
# -----------------------------------------------------------------------------
def huami_uuid(short: int) -> str:
    return f"{short:08X}-0000-3512-2118-0009AF100700"


HUAMI_KEY = bytes(range(0x30, 0x3A)) + bytes(range(0x40, 0x46))  # "0123456789@ABCDE"
HUAMI_WRONG_KEY = bytes(range(0x10))
HUAMI_R1 = bytes(range(0x10))
HUAMI_R2 = bytes(range(0xA0, 0xB0))
HUAMI_R3 = bytes([0x5A, 0xA5] * 7 + [0xC3, 0x3C])
BAND_TIME = datetime.datetime(2025, 1, 14, 9, 30, 5)
BATTERY_LAST_OFF = datetime.datetime(2025, 1, 10, 22, 15, 30)
BATTERY_LAST_CHARGE = datetime.datetime(2025, 1, 12, 7, 45, 12)
BATTERY_STATES = [(64, 0), (65, 1)]  # (level %, status) read, then notified
BATTERY_LAST_LEVEL = 100
STEPS = [(1234, 890, 45), (1250, 902, 46), (1302, 941, 48), (1400, 1011, 52)]  # read + 3 notifications
HR_VALUES = {"manual": [72], "continuous": [74, 76], "after_keep_alive": [77]}


def aes_ecb(key: bytes, block: bytes) -> bytes:
    if Cipher is None:
        raise SystemExit("the cryptography package is needed for AES-128-ECB")
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def huami_time(t: datetime.datetime) -> bytes:
    return struct.pack("<HBBBBB", t.year, t.month, t.day, t.hour, t.minute, t.second)


def battery_info(level: int, status: int) -> bytes:
    value = (bytes([0x0F, level, status]) + huami_time(BATTERY_LAST_OFF) + b"\x00"
             + huami_time(BATTERY_LAST_CHARGE) + b"\x00" + bytes([BATTERY_LAST_LEVEL]))
    assert len(value) == 20
    return value


def battery_info_fields(level: int, status: int) -> dict:
    return {
        "level_percent": level,
        "status": status,
        "status_name": "charging" if status == 1 else "normal",
        "last_charge_level_percent": BATTERY_LAST_LEVEL,
        "last_off": BATTERY_LAST_OFF.isoformat(),
        "last_charge": BATTERY_LAST_CHARGE.isoformat(),
    }


BATTERY_GENERATOR = {
    "layout": "byte 0 = 0x0F (no meaning in the reference), 1 level, 2 status, 3-9 last off "
              "(year u16, month, day, hour, minute, second), 10 = 0x00, 11-17 last charge "
              "(same), 18 = 0x00, 19 last charge level; times per creotiv/MiBand2 "
              "(Gadgetbridge reads the last-charge time from byte 10)",
}


def steps_value(steps: int, distance: int, calories: int) -> bytes:
    assert steps < 32768 and distance < 32768 and calories < 128
    return bytes([0x0C]) + struct.pack("<III", steps, distance, calories)


def steps_fields(steps: int, distance: int, calories: int) -> dict:
    return {"steps": steps, "distance_m": distance, "calories": calories}


STEPS_GENERATOR = {
    "layout": "byte 0 = 0x0C (meaning unknown), steps u32 at 1, distance m u32 at 5, calories "
              "u32 at 9; values fit i16/i16/i8 so creotiv's reads agree"
}


def current_time(t: datetime.datetime) -> bytes:
    return struct.pack("<HBBBBBBBB", t.year, t.month, t.day, t.hour, t.minute, t.second,
                       t.isoweekday(), 0, 0)


class BandDevice:
    def __init__(self, stack: ms.Stack) -> None:
        self.device = stack.device
        self.queues: dict[str, asyncio.Queue] = {}
        self.battery = battery_info(*BATTERY_STATES[0])
        self.steps = steps_value(*STEPS[0])
        P = Characteristic.Properties
        R = Characteristic.Permissions.READABLE
        W = Characteristic.Permissions.WRITEABLE

        def writable(key: str, uuid, properties, extra_read=None):
            queue: asyncio.Queue = asyncio.Queue()
            self.queues[key] = queue
            return Characteristic(
                uuid, properties, R | W,
                CharacteristicValue(read=extra_read, write=lambda _c, v: queue.put_nowait(bytes(v))),
            )

        def plain(uuid, properties, value=b""):
            return Characteristic(uuid, properties, R, value)

        self.hrm = plain(gatt.GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, P.NOTIFY)
        self.hr_cp = writable("hr_cp", gatt.GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC, P.WRITE)
        self.battery_char = Characteristic(
            huami_uuid(0x0006), P.READ | P.NOTIFY, R,
            CharacteristicValue(read=lambda _c: self.battery),
        )
        self.steps_char = Characteristic(
            huami_uuid(0x0007), P.READ | P.NOTIFY, R,
            CharacteristicValue(read=lambda _c: self.steps),
        )
        self.time_char = Characteristic(
            gatt.GATT_CURRENT_TIME_CHARACTERISTIC, P.READ | P.WRITE | P.NOTIFY, R | W,
            current_time(BAND_TIME),
        )
        self.auth = writable("auth", huami_uuid(0x0009),
                             P.WRITE | P.WRITE_WITHOUT_RESPONSE | P.NOTIFY)
        fee0 = [
            writable("sensor_control", huami_uuid(0x0001), P.WRITE | P.WRITE_WITHOUT_RESPONSE),
            plain(huami_uuid(0x0002), P.NOTIFY),
            writable("configuration", huami_uuid(0x0003), P.WRITE | P.NOTIFY),
            writable("fetch", huami_uuid(0x0004), P.WRITE | P.NOTIFY),
            plain(huami_uuid(0x0005), P.NOTIFY),
            self.battery_char,
            self.steps_char,
            writable("user_settings", huami_uuid(0x0008), P.WRITE | P.NOTIFY),
            plain(huami_uuid(0x0010), P.NOTIFY),
            writable("chunked", huami_uuid(0x0020), P.WRITE_WITHOUT_RESPONSE | P.NOTIFY),
            self.time_char,
        ]
        self.device.add_services([
            Service(gatt.GATT_HEART_RATE_SERVICE, [self.hrm, self.hr_cp]),
            Service(gatt.UUID.from_16_bits(0xFEE0), fee0),
            Service(gatt.UUID.from_16_bits(0xFEE1), [self.auth]),
        ])


async def scenario_huami(phone_file, log) -> tuple[dict, Truth]:
    link = LocalLink()
    phone_stack = ms.make_phone(link, phone_file)
    name, random_address, public_address = BAND_DEVICE
    band = BandDevice(ms.Stack(link, name, random_address, public_address))
    phone = phone_stack.device
    await band.device.power_on()
    await phone.power_on()
    truth = Truth()
    facts: dict = {}

    connection, band_connection = await ms.connect(phone, band.device, random_address)
    peer = Peer(connection)
    await ms.full_discovery(peer)
    auth = ms.find_char(peer, gatt.UUID(huami_uuid(0x0009)))
    battery = ms.find_char(peer, gatt.UUID(huami_uuid(0x0006)))
    steps = ms.find_char(peer, gatt.UUID(huami_uuid(0x0007)))
    clock = ms.find_char(peer, gatt.GATT_CURRENT_TIME_CHARACTERISTIC)
    hrm = ms.find_char(peer, gatt.GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    hr_cp = ms.find_char(peer, gatt.GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC)
    facts["handles"] = {
        "hrm": hrm.handle, "hrm_cccd": ms.cccd_of(hrm), "hr_cp": hr_cp.handle,
        "battery_info": battery.handle, "battery_info_cccd": ms.cccd_of(battery),
        "steps": steps.handle, "steps_cccd": ms.cccd_of(steps),
        "current_time": clock.handle, "auth": auth.handle, "auth_cccd": ms.cccd_of(auth),
    }
    facts["all_handles"] = ms.handle_map(peer)
    log(f"Huami handles: {facts['handles']}")
    s = GattSession(peer, band.device, truth)

    # --- auth (ref §9.3) ---
    await s.subscribe(auth)

    async def auth_step(request: bytes, with_response: bool, message: str, fields: dict,
                        response: bytes, response_fields: dict, generator=None) -> None:
        await s.write(auth, request, with_response, band.queues["auth"], message, fields,
                      generator=generator)
        await s.notify(band.auth, auth, response, "huami_auth_response", response_fields)

    def response_fields(command: int, status: int, random: bytes | None = None) -> dict:
        fields = {"response_to": command, "status": status,
                  "status_name": {1: "success", 4: "failure"}[status]}
        if random is not None:
            fields["random_hex"] = random.hex()
        return fields

    def request_fields(command: int, flags: int, **extra) -> dict:
        fields = {"command": command, "crypt_flag": bool(command & 0x80), "auth_flags": flags}
        fields.update(extra)
        return fields

    for status in (4, 1):
        await auth_step(bytes([0x01, 0x08]) + HUAMI_KEY, False, "huami_auth_send_key",
                        request_fields(1, 8, key_hex=HUAMI_KEY.hex()),
                        bytes([0x10, 0x01, status]), response_fields(1, status))
    for key, random, status in ((HUAMI_WRONG_KEY, HUAMI_R1, 4), (HUAMI_KEY, HUAMI_R2, 1)):
        await auth_step(b"\x02\x08", False, "huami_auth_request_random", request_fields(2, 8),
                        b"\x10\x02\x01" + random, response_fields(2, 1, random))
        encrypted = aes_ecb(key, random)
        await auth_step(b"\x03\x08" + encrypted, False, "huami_auth_send_encrypted_random",
                        request_fields(3, 8, encrypted_random_hex=encrypted.hex()),
                        bytes([0x10, 0x03, status]), response_fields(3, status),
                        generator={"aes_key_hex": key.hex(), "random_hex": random.hex(),
                                   "correct_key": key == HUAMI_KEY})
    await auth_step(bytes([0x82, 0x00, 0x02, 0x01, 0x00]), True, "huami_auth_request_random",
                    request_fields(0x82, 0, parameters_hex="020100"),
                    b"\x10\x82\x01" + HUAMI_R3, response_fields(0x82, 1, HUAMI_R3))
    encrypted = aes_ecb(HUAMI_KEY, HUAMI_R3)
    await auth_step(b"\x83\x00" + encrypted, True, "huami_auth_send_encrypted_random",
                    request_fields(0x83, 0, encrypted_random_hex=encrypted.hex()),
                    b"\x10\x83\x01", response_fields(0x83, 1),
                    generator={"aes_key_hex": HUAMI_KEY.hex(), "random_hex": HUAMI_R3.hex(),
                               "correct_key": True})

    # --- current time, battery, steps (ref §4.4, §9.4) ---
    t = BAND_TIME
    await s.read(clock, current_time(t), "current_time", {
        "year": t.year, "month": t.month, "day": t.day, "hours": t.hour, "minutes": t.minute,
        "seconds": t.second, "day_of_week": t.isoweekday(), "fractions256": 0, "adjust_reason": 0,
    })
    await s.read(battery, band.battery, "huami_battery_info",
                 battery_info_fields(*BATTERY_STATES[0]),
                 uncertain=["last_off", "last_charge"], generator=BATTERY_GENERATOR)
    await s.subscribe(battery)
    await s.subscribe(steps)
    await s.read(steps, band.steps, "huami_realtime_steps", steps_fields(*STEPS[0]),
                 uncertain=["distance_m", "calories"], generator=STEPS_GENERATOR)
    for values in STEPS[1:]:
        band.steps = steps_value(*values)
        await s.notify(band.steps_char, steps, band.steps, "huami_realtime_steps",
                       steps_fields(*values), uncertain=["distance_m", "calories"],
                       generator=STEPS_GENERATOR)

    # --- heart rate (ref §9.2) ---
    await s.subscribe(hrm)

    async def hr_command(value: bytes) -> None:
        if value[0] == 0x15:
            mode = {0: "sleep", 1: "continuous", 2: "manual"}[value[1]]
            fields = {"command": 0x15, "mode": mode, "enable": bool(value[2])}
            message = "huami_hr_measurement_control"
        elif value[0] == 0x16:
            fields = {"command": 0x16}
            message = "huami_hr_keep_alive"
        else:
            fields = {"command": 0x14, "interval_minutes": value[1]}
            message = "huami_hr_interval"
        await s.write(hr_cp, value, True, band.queues["hr_cp"], message, fields)

    async def hr_notify(bpm: int) -> None:
        await s.notify(band.hrm, hrm, bytes([0x00, bpm]), "heart_rate_measurement",
                       {"flags": 0, "heart_rate_bpm": bpm})

    await hr_command(b"\x15\x02\x00")
    await hr_command(b"\x15\x01\x00")
    await hr_command(b"\x15\x02\x01")
    for bpm in HR_VALUES["manual"]:
        await hr_notify(bpm)
    await hr_command(b"\x15\x01\x01")
    for bpm in HR_VALUES["continuous"]:
        await hr_notify(bpm)
    await hr_command(b"\x16")
    for bpm in HR_VALUES["after_keep_alive"]:
        await hr_notify(bpm)
    await hr_command(b"\x15\x01\x00")
    await hr_command(b"\x15\x00\x01")
    await hr_command(b"\x15\x00\x00")
    await hr_command(b"\x14\x0A")
    await hr_command(b"\x14\x00")

    band.battery = battery_info(*BATTERY_STATES[1])
    await s.notify(band.battery_char, battery, band.battery, "huami_battery_info",
                   battery_info_fields(*BATTERY_STATES[1]),
                   uncertain=["last_off", "last_charge"], generator=BATTERY_GENERATOR)

    await ms.disconnect(connection, band_connection)
    await ms.settle()
    return facts, truth


# -----------------------------------------------------------------------------
# 3. Beacons (ref §6)
# -----------------------------------------------------------------------------
IBEACON_UUID = "B1ED1BEA-C0DE-4E5A-9D1E-0000000000B1"
EDDYSTONE_NAMESPACE = bytes.fromhex("00112233445566778899")
EDDYSTONE_INSTANCE = bytes.fromhex("B1ED00000001")
RSSI = {IBEACON_DEVICE[1]: -62, EDDYSTONE_DEVICE[1]: -71}
URL_SCHEMES = ["http://www.", "https://www.", "http://", "https://"]
URL_EXPANSIONS = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                  ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]


def ad(ad_type: int, data: bytes) -> bytes:
    return bytes([len(data) + 1, ad_type]) + data


FLAGS = ad(0x01, b"\x06")  # LE General Discoverable + BR/EDR Not Supported


def ibeacon(major: int, minor: int, power: int):
    import uuid as _uuid
    payload = (struct.pack("<H", 0x004C) + b"\x02\x15" + _uuid.UUID(IBEACON_UUID).bytes
               + struct.pack(">HHb", major, minor, power))
    data = FLAGS + ad(0xFF, payload)
    assert data[3:9].hex() == "1aff4c000215"
    fields = {"ad_flags": 6, "company_id": 0x004C, "beacon_type": 2, "beacon_length": 0x15,
              "proximity_uuid": IBEACON_UUID, "major": major, "minor": minor,
              "measured_power_dbm": power}
    return data, "ibeacon", fields


def eddystone(frame: bytes) -> bytes:
    return FLAGS + ad(0x03, b"\xAA\xFE") + ad(0x16, b"\xAA\xFE" + frame)


def eddystone_uid(tx_power: int, rfu: bool):
    frame = (b"\x00" + struct.pack("b", tx_power) + EDDYSTONE_NAMESPACE + EDDYSTONE_INSTANCE
             + (b"\x00\x00" if rfu else b""))
    data = eddystone(frame)
    assert data[7] == (0x17 if rfu else 0x15)
    fields = {"ad_flags": 6, "service_uuids_16": [0xFEAA], "frame_type": 0x00,
              "tx_power_dbm": tx_power, "namespace_hex": EDDYSTONE_NAMESPACE.hex(),
              "instance_hex": EDDYSTONE_INSTANCE.hex(), "rfu_present": rfu}
    return data, "eddystone_uid", fields


def eddystone_url(tx_power: int, scheme: int, encoded: bytes):
    assert len(encoded) <= 17
    url = URL_SCHEMES[scheme] + "".join(
        URL_EXPANSIONS[b] if b <= 0x0D else chr(b) for b in encoded
    )
    data = eddystone(b"\x10" + struct.pack("b", tx_power) + bytes([scheme]) + encoded)
    fields = {"ad_flags": 6, "service_uuids_16": [0xFEAA], "frame_type": 0x10,
              "tx_power_dbm": tx_power, "scheme_prefix": scheme, "url": url}
    return data, "eddystone_url", fields


def eddystone_tlm(battery_mv: int, temperature_raw: int, adv_count: int, seconds_x10: int):
    frame = b"\x20\x00" + struct.pack(">HHII", battery_mv, temperature_raw, adv_count, seconds_x10)
    data = eddystone(frame)
    assert data[7] == 0x11
    temperature = None if temperature_raw == 0x8000 else (
        (temperature_raw - 0x10000 if temperature_raw & 0x8000 else temperature_raw) / 256
    )
    fields = {"ad_flags": 6, "service_uuids_16": [0xFEAA], "frame_type": 0x20,
              "version": 0, "battery_mv": battery_mv, "temperature_c": temperature,
              "adv_pdu_count": adv_count, "time_since_boot_ds": seconds_x10}
    return data, "eddystone_tlm", fields


BEACON_FRAMES = [  # (advertiser identity, (data, message, fields))
    (IBEACON_DEVICE, ibeacon(0x1234, 0xABCD, -59)),
    (EDDYSTONE_DEVICE, eddystone_uid(-20, True)),
    (EDDYSTONE_DEVICE, eddystone_url(-18, 0x01, b"bledissect\x01dev")),
    (EDDYSTONE_DEVICE, eddystone_tlm(3012, 0x1780, 1234567, 98765)),
    (IBEACON_DEVICE, ibeacon(1, 2, -65)),
    (EDDYSTONE_DEVICE, eddystone_tlm(0, 0x8000, 1234890, 98790)),
    (EDDYSTONE_DEVICE, eddystone_uid(-4, False)),
    (EDDYSTONE_DEVICE, eddystone_url(-18, 0x00, b"bledissect\x07")),
]


class NonConnectableAdvertiser(LegacyAdvertiser):
    """Bumble 0.0.236's LegacyAdvertiser only sends ADV_IND; send ADV_NONCONN_IND too."""

    def send_advertising_data(self) -> None:
        if self.enabled and self.advertising_type == int(AdvertisingType.UNDIRECTED):
            self.controller.send_advertising_pdu(
                ll.AdvNonConnInd(advertiser_address=self.address, data=self.advertising_data)
            )
        else:
            super().send_advertising_data()


class BeaconController(Controller):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.le_legacy_advertiser = NonConnectableAdvertiser(self)


class ScannerController(Controller):
    """Reports each advertising PDU once, with its own event type and RSSI."""

    def on_ll_advertising_pdu(self, packet) -> None:
        if isinstance(packet, ll.AdvNonConnInd | ll.AdvInd) and self.le_scan_enable:
            event_type = (hci.HCI_LE_Advertising_Report_Event.EventType.ADV_NONCONN_IND
                          if isinstance(packet, ll.AdvNonConnInd)
                          else hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND)
            report = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=packet.advertiser_address.address_type,
                address=packet.advertiser_address,
                data=packet.data,
                rssi=RSSI.get(str(packet.advertiser_address).split("/")[0], -50),
            )
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
        elif not isinstance(packet, ll.AdvNonConnInd):
            super().on_ll_advertising_pdu(packet)


def make_legacy_stack(controller_cls, link, name, random_address, public_address, snoop_file=None):
    controller = controller_cls(name, link=link, public_address=public_address)
    controller.le_features = controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
    host = Host(controller, AsyncPipeSink(controller))
    host.snooper = BtSnooper(snoop_file) if snoop_file is not None else None
    config = DeviceConfiguration()
    config.name = name
    config.address = hci.Address(random_address)
    config.irk = (bytes(config.address) * 3)[:16]
    config.gap_service_enabled = False
    config.gatt_service_enabled = False
    device = Device(config=config, host=host)
    device.add_service(GenericAccessService(name))
    return device


async def scenario_beacons(phone_file, log) -> tuple[dict, Truth]:
    link = LocalLink()
    phone = make_legacy_stack(ScannerController, link, hr.PHONE_NAME, hr.PHONE_RANDOM_ADDRESS,
                              hr.PHONE_PUBLIC_ADDRESS, phone_file)
    beacons = {
        identity[1]: make_legacy_stack(BeaconController, link, *identity)
        for identity in (IBEACON_DEVICE, EDDYSTONE_DEVICE)
    }
    for device in list(beacons.values()) + [phone]:
        await device.power_on()
    truth = Truth()
    received: asyncio.Queue = asyncio.Queue()
    phone.on(Device.EVENT_ADVERTISEMENT, received.put_nowait)
    await phone.start_scanning(legacy=True, active=False, filter_duplicates=False)

    for identity, (data, message, fields) in BEACON_FRAMES:
        _name, address, _public = identity
        assert len(data) <= 31, (message, len(data))
        device = beacons[address]
        full_fields = {"event_type": "ADV_NONCONN_IND", "address": address,
                       "address_type": "random", "rssi": RSSI[address]}
        full_fields.update(fields)
        truth.add(DEVICE_TO_PHONE, "adv_report", None, data, message, full_fields)
        await device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED,
            advertising_data=data,
            advertising_interval_min=1000.0,
            advertising_interval_max=1000.0,
        )
        advertisement = await asyncio.wait_for(received.get(), 5)
        await device.stop_advertising()
        assert str(advertisement.address).split("/")[0] == address, advertisement.address
        assert bytes(advertisement.data) == data, (bytes(advertisement.data).hex(), data.hex())
        log(f"  {message} from {address}: {data.hex()}")

    await phone.stop_scanning()
    await ms.settle()
    assert received.empty()
    return {"reports": len(BEACON_FRAMES)}, truth


# -----------------------------------------------------------------------------
# Read-back check
# -----------------------------------------------------------------------------
VALUE_OPCODES = {0x0B: "read_response", 0x0D: "read_blob_response", 0x12: "write_request",
                 0x52: "write_command", 0x1B: "notification", 0x1D: "indication"}


def read_btsnoop(path: str):
    with open(path, "rb") as f:
        header = f.read(16)
        assert header[:8] == b"btsnoop\0" and struct.unpack(">II", header[8:])[1] == 1002
        while True:
            rec = f.read(24)
            if len(rec) < 24:
                return
            _orig, incl, flags, _drops, _ts = struct.unpack(">IIIIq", rec)
            yield flags, f.read(incl)


def values_in_capture(path: str) -> tuple[list[tuple], dict]:
    """(direction, opcode name, handle, value) of every value-carrying ATT PDU on
    CID 4, in file order, plus record counts."""
    counts = {"records": 0, "command": 0, "event": 0, "acl_tx": 0, "acl_rx": 0, "adv_reports": 0}
    partial: dict = {}
    last_read_handle: dict = {}
    found: list[tuple] = []
    for flags, packet in read_btsnoop(path):
        counts["records"] += 1
        kind = packet[0]
        if kind == 0x01:
            counts["command"] += 1
        elif kind == 0x04:
            counts["event"] += 1
            if packet[1] == 0x3E and packet[3] == 0x02:
                num = packet[4]
                assert num == 1
                event_type, address_type = packet[5], packet[6]
                address = ":".join(f"{b:02X}" for b in reversed(packet[7:13]))
                length = packet[13]
                data = packet[14:14 + length]
                rssi = struct.unpack("b", packet[14 + length:15 + length])[0]
                counts["adv_reports"] += 1
                found.append(("adv", event_type, address_type, address, rssi, bytes(data)))
        elif kind == 0x02:
            tx = (flags & 1) == 0
            counts["acl_tx" if tx else "acl_rx"] += 1
            handle_flags, length = struct.unpack("<HH", packet[1:5])
            conn, pb = handle_flags & 0x0FFF, (handle_flags >> 12) & 3
            payload = packet[5:5 + length]
            key = (tx, conn)
            if pb in (0, 2):
                partial[key] = bytearray(payload)
            else:
                partial[key] += payload
            buf = partial[key]
            if len(buf) >= 4 and len(buf) >= 4 + struct.unpack("<H", buf[:2])[0]:
                l2len, cid = struct.unpack("<HH", buf[:4])
                pdu = bytes(buf[4:4 + l2len])
                del partial[key]
                if cid != 4:
                    continue
                opcode = pdu[0]
                direction = PHONE_TO_DEVICE if tx else DEVICE_TO_PHONE
                if opcode == 0x0A:
                    last_read_handle[conn] = struct.unpack("<H", pdu[1:3])[0]
                elif opcode in (0x0B, 0x0D):
                    found.append((direction, VALUE_OPCODES[opcode], last_read_handle[conn], pdu[1:]))
                elif opcode in (0x12, 0x52, 0x1B, 0x1D):
                    found.append((direction, VALUE_OPCODES[opcode],
                                  struct.unpack("<H", pdu[1:3])[0], pdu[3:]))
    return found, counts


def check_capture(path: str, truth: Truth) -> dict:
    found, counts = values_in_capture(path)
    assert len(found) == len(truth.entries), (path, len(found), len(truth.entries))
    for entry, item in zip(truth.entries, found):
        if item[0] == "adv":
            _, event_type, address_type, address, rssi, data = item
            assert (event_type, address_type, address, rssi, data.hex()) == (
                0x03, 1, entry["fields"]["address"], entry["fields"]["rssi"], entry["hex"]
            ), (entry, item)
        else:
            direction, opcode, handle, value = item
            assert (direction, opcode, handle, value.hex()) == (
                entry["direction"], entry["opcode"], entry["handle"], entry["hex"]
            ), (entry, item)
    counts["values"] = len(found)
    return counts


# -----------------------------------------------------------------------------
SCENARIOS = {
    "polar_pmd": scenario_pmd,
    "huami": scenario_huami,
    "beacons": scenario_beacons,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "captures"))
    parser.add_argument("--out-dir", default=default_out)
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)
    os.makedirs(args.out_dir, exist_ok=True)

    for key in args.only or list(SCENARIOS):
        path = os.path.join(args.out_dir, f"{key}.btsnoop")
        truth_path = os.path.join(args.out_dir, f"{key}.truth.json")
        start = time.monotonic()
        with open(path, "wb") as phone_file:
            facts, truth = asyncio.run(SCENARIOS[key](phone_file, print))
        truth.write(truth_path)
        counts = check_capture(path, truth)
        size = os.path.getsize(path)
        assert size < 64 * 1024, (path, size)
        print(f"[{key}] {time.monotonic() - start:.1f} s, facts: {facts}")
        print(f"  {path}: {size} bytes, {counts}")
        print(f"  {truth_path}: {len(truth.entries)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
