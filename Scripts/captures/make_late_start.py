#!/usr/bin/env python3
"""Record heart-rate captures that lack the usual beginning, with ground truth.

Same set-up as make_scenarios.py (which this script imports, with
make_hr_session.py): one process, one ``bumble.link.LocalLink``, one emulated
``bumble.controller.Controller`` per device, each driven by its own
``bumble.host.Host`` + ``bumble.device.Device``.  The phone (central, GATT
client, static random address C0:B1:ED:00:50:48, controller 00:B1:ED:00:00:01)
connects by address (LE Create Connection, no scanning) to the heart-rate strap
``make_hr_session.Strap`` "bledissect HR" D0:B1:ED:00:48:52 (controller
00:B1:ED:00:00:02), whose handles are the same as in
captures/hr_strap_session.btsnoop (checked on every run, from the strap's GATT
server and, where the phone discovers, with make_scenarios.handle_map):

    Heart Rate Measurement 16 (0x10) + CCCD 17 (0x11), Body Sensor Location 19
    (0x13, value 01 = chest), Heart Rate Control Point 21 (0x15), Battery Level
    24 (0x18) + CCCD 25 (0x19).

Only the phone's HCI traffic is recorded, by Bumble's ``BtSnooper`` (btsnoop
v1, datalink 1002 = H4) behind a small gate (``GatedSnooper``) that drops
packets while the "user has not enabled the snoop log" and forwards them
unchanged otherwise, so each file holds exactly what the phone's host and
controller exchanged while logging was on.

Heart Rate Measurement values (``hr_measurement(i, supported)``, i = the
strap's second counter, each scenario uses a range of it; ``supported`` = the
connection's Sensor Contact Supported bit):
    combination c = i mod 64: bit 0 = 16-bit bpm format, bit 1 = the Sensor
    Contact Status bit (flags bit 1), bit 3 = energy expended present, bits 4-5
    = number of RR intervals (0-3); bit 2 of c is not used: flags bit 2 (Sensor
    Contact Supported) is the connection's, the same in every value of a
    connection, as HRS 1.0 3.1.1.1 wants ("static while in a connection").
    So the sensor contact encoding is 0b10 (supported, not detected) / 0b11
    (detected) in a connection with support, 0b00 / 0b01 (not supported, both
    encodings HRS allows) in one without.  Any 64 consecutive i of a connection
    therefore cover all 32 combinations twice and all 16 flag bytes of the
    connection (0x04..0x07, 0x0C..0x0F, 0x14..0x17, 0x1C..0x1F with support;
    those with bit 4 set with 1, 2 and 3 RR intervals).  Connections with
    support: late_reconnect, late_midstream, late_concat part 1; without:
    late_concat part 2.  (Until issue 28, bit 2 of c gave flags bit 2, which
    then changed every 4 values within a connection.)
    bpm = 55 + 2 * triangle(i mod 120, peak 60) + ((7 i) mod 5) - 2, within
    53..177.  Energy expended (kJ) = sum over j <= i of bpm(j) // 40 (the strap
    counts it every second, whether it is sent or not; never reset in the
    values sent).  RR interval k (1/1024 s) = round(61440 / bpm) +
    ((11 i + 5 k) mod 13) - 6, i.e. 60/bpm s +- 6/1024 s, within 333..1138 ms.

Captures (captures/<name>.btsnoop + captures/<name>.truth.json):

1. late_reconnect
   Logging on from the phone's power-on (HCI Reset + Bumble's init sequence).
   The phone has the strap's handles cached (a GATT cache from an earlier
   connection that is not in this log) and never discovers: LE Create
   Connection to D0:B1:ED:00:48:52 (LE Connection Complete is logged),
   Exchange MTU 247 (server answers 517), Write Request 01 00 to 17 (HRM
   CCCD), Read Request 24 (Battery Level -> 81), Write Request 01 00 to 25
   (battery CCCD), 120 HRM notifications on 16 (i = 0..119), after the 30th,
   60th, 90th and 120th a Battery Level notification on 24 (80, 79, 78, 77),
   Read Request 19 (Body Sensor Location -> 01 chest), Write Request 01 to 21
   (HR Control Point, reset energy expended), Disconnect (reason 0x13).

2. late_midstream
   Not logged: power-on, LE Create Connection, MTU 247, full discovery
   (services, characteristics, descriptors), subscribe HRM and Battery Level
   (Bumble's subscribe(): Find Information + Write Request 01 00 to 17 and 25).
   Logging starts after that (the user enabled the snoop log mid-session): no
   LE Connection Complete, no discovery, the peer's address appears nowhere;
   the first record is the first HRM notification.  Logged: 300 HRM
   notifications on 16 (i = 1800..2099, half an hour into the session), after
   every 60th a Battery Level notification on 24 (90, 89, 88, 87, 86), after
   the 150th a Read Request 24 (-> 89), Disconnect (its Command Status and
   Disconnection Complete are logged).

3. late_concat
   Two logs of the same phone joined like ``mergecap -a`` (one header, the
   second log's records after the first's).  Part 1, logged from power-on:
   LE Create Connection, MTU 247, full discovery, subscribe HRM (Find
   Information + Write Request 01 00 to 17), 10 HRM notifications (i = 0..9,
   sensor contact supported), Disconnect.  Not logged: LE Create Connection
   again (the controller reuses connection handle 0x0001), MTU 247, Write
   Request 01 00 to 17 by its cached handle.  Part 2, logged: 40 HRM
   notifications (i = 610..649, sensor contact not supported: the strap's
   contact sensor is off in this connection), Disconnect.
   So part 2 has no LE Connection Complete and no discovery.

Timestamps: Bumble writes wall-clock times; after the run the records are
re-timed deterministically (order and bytes unchanged), so reruns produce
identical files.  Segment 0 starts at the scenario's base time (late_reconnect
2025-03-01T08:00:00Z, late_midstream 09:00:00Z, late_concat 10:00:00Z); a
later segment (part 2 of late_concat) starts 600 s after the previous
segment's last record.  Within a segment, the k-th HRM notification of the
file (k counted from 0 over the whole file) after the segment's first one is
at the previous HRM notification + 1.000 s + jitter(k), jitter(k) =
(((37 k) mod 41) - 20) ms; every other record r (0-based record number) is at
the previous record + 2.000 ms + 0.250 ms * (r mod 5).

Ground truth (<name>.truth.json), written from the values this script sent,
not by decoding the file: {"capture", "generator", "strap": {"name",
"address", "handles"}, "segments": [{"first_record", "records",
"connection_complete_logged", "discovery_logged"}], "values": [...]} where
"values" lists every ATT value the strap sent that is in the file, in file
order: {"index" (0-based among those values), "opcode" ("notification" |
"read_response"), "handle", "connection_handle", "hex" (the value bytes),
"decoded"}; decoded = {"bpm", "contact" ("unsupported" | "not_detected" |
"detected"), "energy_kj" (int or null), "rr_ms" (raw * 1000 / 1024, exact)}
for HRM, {"battery_percent"} for Battery Level, {"body_sensor_location",
"name"} for Body Sensor Location.  After writing, each file is read back and
checked against the truth (record count, value sequence, no LE Connection
Complete where none is expected).

Usage:  python3 Scripts/captures/make_late_start.py [--out-dir captures]
                                                    [--only NAME ...]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import io
import json
import logging
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402
import make_scenarios as sc  # noqa: E402

from bumble.device import Peer  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BATTERY_SERVICE,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_HEART_RATE_SERVICE,
)
from bumble.link import LocalLink  # noqa: E402
from bumble.profiles.heart_rate_service import HeartRateService  # noqa: E402
from bumble.snoop import BtSnooper, Snooper  # noqa: E402

# -----------------------------------------------------------------------------
# Fixed values
# -----------------------------------------------------------------------------
HANDLES = {
    "hrm": 16,
    "hrm_cccd": 17,
    "body_sensor_location": 19,
    "hr_control_point": 21,
    "battery_level": 24,
    "battery_cccd": 25,
}
STRAP_INFO = {
    "name": hr.STRAP_NAME,
    "address": hr.STRAP_RANDOM_ADDRESS,
    "handles": HANDLES,
}
BODY_SENSOR_LOCATION = (0x01, "Chest")

# 1. late_reconnect
RECONNECT_HR = range(0, 120)
RECONNECT_CONTACT_SUPPORTED = True
RECONNECT_BATTERY_READ = 81
RECONNECT_BATTERY_EVERY = 30
RECONNECT_BATTERY_NOTIFIED = [80, 79, 78, 77]

# 2. late_midstream
MIDSTREAM_HR = range(1800, 2100)
MIDSTREAM_CONTACT_SUPPORTED = True
MIDSTREAM_BATTERY_START = 91  # level before logging starts (never sent)
MIDSTREAM_BATTERY_EVERY = 60
MIDSTREAM_BATTERY_NOTIFIED = [90, 89, 88, 87, 86]
MIDSTREAM_READ_AFTER = 150  # battery Read Request after this many notifications

# 3. late_concat
CONCAT_HR_1 = range(0, 10)
CONCAT_HR_2 = range(610, 650)
CONCAT_CONTACT_SUPPORTED_1 = True
CONCAT_CONTACT_SUPPORTED_2 = False  # another connection: legal (HRS 1.0 3.1.1.1)

BASE_TIMES = {
    "late_reconnect": datetime.datetime(2025, 3, 1, 8, 0, 0, tzinfo=datetime.UTC),
    "late_midstream": datetime.datetime(2025, 3, 1, 9, 0, 0, tzinfo=datetime.UTC),
    "late_concat": datetime.datetime(2025, 3, 1, 10, 0, 0, tzinfo=datetime.UTC),
}
SEGMENT_GAP_US = 600_000_000  # 10 minutes between the two logs of late_concat
HR_PERIOD_US = 1_000_000

CONTACTS = (hr.NOT_SUPPORTED, hr.NOT_SUPPORTED_ALT, hr.NOT_DETECTED, hr.DETECTED)
CONTACT_WORD = {
    hr.NOT_SUPPORTED: "unsupported",
    hr.NOT_SUPPORTED_ALT: "unsupported",
    hr.NOT_DETECTED: "not_detected",
    hr.DETECTED: "detected",
}


# -----------------------------------------------------------------------------
# Heart-rate values
# -----------------------------------------------------------------------------
def bpm_at(i: int) -> int:
    p = i % 120
    triangle = p if p < 60 else 120 - p
    return 55 + 2 * triangle + (7 * i) % 5 - 2


def energy_at(i: int) -> int:
    return sum(bpm_at(j) // 40 for j in range(i + 1))


def hr_measurement(i: int, contact_supported: bool) -> tuple[int, bool, str, int | None, tuple[int, ...]]:
    """(bpm, 16-bit?, contact, energy kJ or None, RR in 1/1024 s) for second i of a
    connection whose Sensor Contact Supported bit is ``contact_supported``."""
    c = i % 64
    uint16 = bool(c & 1)
    contact = CONTACTS[(2 if contact_supported else 0) | ((c >> 1) & 1)]
    energy = energy_at(i) if c & 8 else None
    bpm = bpm_at(i)
    base = round(61440 / bpm)
    rr = tuple(base + (11 * i + 5 * k) % 13 - 6 for k in range((c >> 4) & 3))
    assert 50 <= bpm <= 180, bpm
    assert all(300 <= r * 1000 / 1024 <= 1500 for r in rr), rr
    assert energy is None or energy <= 0xFFFF
    return bpm, uint16, contact, energy, rr


def encode_checked(m) -> bytes:
    value = hr.encode_hr_measurement(*m)
    bpm, _u16, contact, energy, rr = m
    decoded = HeartRateService.HeartRateMeasurement.from_bytes(value)
    assert decoded.heart_rate == bpm
    assert decoded.energy_expended == energy
    assert tuple(round(x * 1024) for x in (decoded.rr_intervals or ())) == rr
    assert decoded.sensor_contact_detected == {
        hr.NOT_SUPPORTED: None, hr.NOT_SUPPORTED_ALT: None,
        hr.NOT_DETECTED: False, hr.DETECTED: True,
    }[contact]
    return value


# -----------------------------------------------------------------------------
# Truth
# -----------------------------------------------------------------------------
class Truth:
    def __init__(self, capture: str) -> None:
        self.capture = capture
        self.values: list[dict] = []
        self.segments: list[dict] = []

    def _add(self, opcode: str, handle: int, connection: int, value: bytes, decoded: dict) -> None:
        self.values.append({
            "index": len(self.values),
            "opcode": opcode,
            "handle": handle,
            "connection_handle": connection,
            "hex": value.hex(),
            "decoded": decoded,
        })

    def hrm(self, connection: int, m, value: bytes) -> None:
        bpm, _u16, contact, energy, rr = m
        self._add("notification", HANDLES["hrm"], connection, value, {
            "bpm": bpm,
            "contact": CONTACT_WORD[contact],
            "energy_kj": energy,
            "rr_ms": [r * 1000 / 1024 for r in rr],
        })

    def battery(self, opcode: str, connection: int, level: int) -> None:
        self._add(opcode, HANDLES["battery_level"], connection, bytes([level]),
                  {"battery_percent": level})

    def body_sensor_location(self, connection: int, value: bytes) -> None:
        assert value == bytes([BODY_SENSOR_LOCATION[0]]), value
        self._add("read_response", HANDLES["body_sensor_location"], connection, value,
                  {"body_sensor_location": BODY_SENSOR_LOCATION[0],
                   "name": BODY_SENSOR_LOCATION[1]})

    def write(self, path: str) -> None:
        head = {
            "capture": self.capture,
            "generator": "Scripts/captures/make_late_start.py (bumble 0.0.236)",
            "strap": STRAP_INFO,
            "segments": self.segments,
        }
        lines = ["{"]
        for key, item in head.items():
            lines.append(f"  {json.dumps(key)}: {json.dumps(item)},")
        lines.append('  "values": [')
        for n, value in enumerate(self.values):
            comma = "," if n + 1 < len(self.values) else ""
            lines.append(f"    {json.dumps(value)}{comma}")
        lines.append("  ]")
        lines.append("}")
        text = "\n".join(lines) + "\n"
        json.loads(text)  # well-formed
        with open(path, "w") as f:
            f.write(text)


# -----------------------------------------------------------------------------
# Snooping with a gate, re-timing
# -----------------------------------------------------------------------------
class GatedSnooper(Snooper):
    """Bumble's BtSnooper (into memory) behind an on/off gate."""

    def __init__(self, enabled: bool) -> None:
        self.buffer = io.BytesIO()
        self.inner = BtSnooper(self.buffer)
        self.enabled = False
        self.records = 0
        self.segment_starts: list[int] = []
        if enabled:
            self.enable()

    def enable(self) -> None:
        assert not self.enabled
        self.enabled = True
        self.segment_starts.append(self.records)

    def disable(self) -> None:
        assert self.enabled
        self.enabled = False

    def snoop(self, hci_packet: bytes, direction: Snooper.Direction) -> None:
        if self.enabled:
            self.inner.snoop(hci_packet, direction)
            self.records += 1


def parse_btsnoop(data: bytes) -> list[tuple[int, int, bytes]]:
    """[(flags, timestamp, packet)] of a btsnoop v1 H4 file."""
    assert data[:8] == b"btsnoop\0" and struct.unpack(">II", data[8:16]) == (1, 1002)
    records = []
    offset = 16
    while offset < len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIQ", data[offset:offset + 24])
        assert orig == incl and drops == 0
        packet = data[offset + 24:offset + 24 + incl]
        assert len(packet) == incl
        records.append((flags, ts, packet))
        offset += 24 + incl
    return records


def att_pdu(flags: int, packet: bytes) -> bytes | None:
    """The ATT PDU of an unfragmented ACL packet on CID 4, else None."""
    if packet[0] != 0x02 or len(packet) < 10:
        return None
    pb = (struct.unpack("<H", packet[1:3])[0] >> 12) & 3
    length, cid = struct.unpack("<HH", packet[5:9])
    if pb == 1 or cid != 4 or len(packet) != 9 + length:
        return None
    return packet[9:]


def is_hr_notification(flags: int, packet: bytes) -> bool:
    pdu = att_pdu(flags, packet)
    return (flags == 1 and pdu is not None and pdu[0] == 0x1B
            and struct.unpack("<H", pdu[1:3])[0] == HANDLES["hrm"])


def btsnoop_time(moment: datetime.datetime) -> int:
    micro = (moment - BtSnooper.TIMESTAMP_ANCHOR) // datetime.timedelta(microseconds=1)
    return micro + BtSnooper.TIMESTAMP_DELTA


def retime(data: bytes, segment_starts: list[int], base: datetime.datetime) -> bytes:
    """Deterministic timestamps (see the module docstring); order and bytes kept."""
    records = parse_btsnoop(data)
    out = bytearray(data[:16])
    t = None
    last_hr = None
    hr_index = 0
    for r, (flags, _ts, packet) in enumerate(records):
        hr_record = is_hr_notification(flags, packet)
        if r in segment_starts:
            t = btsnoop_time(base) if t is None else t + SEGMENT_GAP_US
            last_hr = None
        elif hr_record and last_hr is not None:
            new = last_hr + HR_PERIOD_US + (((37 * hr_index) % 41) - 20) * 1000
            assert new > t + 1000, (r, new - t)
            t = new
        else:
            t = t + 2000 + 250 * (r % 5)
        if hr_record:
            last_hr = t
            hr_index += 1
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, t) + packet
    return bytes(out)


# -----------------------------------------------------------------------------
# Helpers
# -----------------------------------------------------------------------------
def check_server_handles(strap: hr.Strap) -> None:
    server = strap.device.gatt_server

    def value_handle(service, uuid):
        return server.get_characteristic_attributes(service, uuid)[1].handle

    def cccd(service, uuid):
        return server.get_descriptor_attribute(
            service, uuid, GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
        ).handle

    found = {
        "hrm": value_handle(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "hrm_cccd": cccd(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "body_sensor_location": value_handle(
            GATT_HEART_RATE_SERVICE, GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC),
        "hr_control_point": value_handle(
            GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC),
        "battery_level": value_handle(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
        "battery_cccd": cccd(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
    }
    assert found == HANDLES, found


def check_client_handles(peer) -> None:
    handles = sc.handle_map(peer)
    expected = {
        str(GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC): (HANDLES["hrm"], HANDLES["hrm_cccd"]),
        str(GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC): (HANDLES["body_sensor_location"], None),
        str(GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC): (HANDLES["hr_control_point"], None),
        str(GATT_BATTERY_LEVEL_CHARACTERISTIC): (HANDLES["battery_level"], HANDLES["battery_cccd"]),
    }
    for uuid, pair in expected.items():
        assert handles[uuid] == pair, (uuid, handles[uuid], pair)


async def setup(snooper: GatedSnooper):
    link = LocalLink()
    phone_stack = sc.make_phone(link, None)
    # make_scenarios.Stack wraps a file in a BtSnooper; hand the host our gate.
    phone_stack.snooper = phone_stack.host.snooper = snooper
    strap = sc.make_strap(link, sc.STRAP)
    check_server_handles(strap)
    await strap.device.power_on()
    await phone_stack.device.power_on()
    return phone_stack.device, strap


async def send_hr(strap, queue, truth, connection, i, contact_supported: bool) -> None:
    m = hr_measurement(i, contact_supported)
    value = encode_checked(m)
    await strap.notify_hr(value)
    got = await asyncio.wait_for(queue.get(), 5)
    assert got == value, (got.hex(), value.hex())
    truth.hrm(connection.handle, m, value)


async def send_battery(strap, queue, truth, connection, level) -> None:
    await strap.notify_battery(level)
    got = await asyncio.wait_for(queue.get(), 5)
    assert got == bytes([level]), got
    truth.battery("notification", connection.handle, level)


def subscribe_cached(client, handle: int) -> asyncio.Queue:
    """What a client with a GATT cache does: listen on the cached value handle."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    client.notification_subscribers[handle] = {lambda v: queue.put_nowait(bytes(v))}
    return queue


# -----------------------------------------------------------------------------
# 1. late_reconnect
# -----------------------------------------------------------------------------
async def scenario_reconnect(snooper: GatedSnooper, truth: Truth) -> None:
    phone, strap = await setup(snooper)  # logged from power-on
    strap.battery_level = RECONNECT_BATTERY_READ
    connection, strap_connection = await sc.connect(phone, strap.device, strap.address)
    client = connection.gatt_client
    assert await client.request_mtu(hr.ATT_MTU) == hr.ATT_MTU
    hr_queue = subscribe_cached(client, HANDLES["hrm"])
    battery_queue = subscribe_cached(client, HANDLES["battery_level"])
    await client.write_value(HANDLES["hrm_cccd"], b"\x01\x00", with_response=True)
    level = await client.read_value(HANDLES["battery_level"])
    assert level == bytes([RECONNECT_BATTERY_READ])
    truth.battery("read_response", connection.handle, level[0])
    await client.write_value(HANDLES["battery_cccd"], b"\x01\x00", with_response=True)

    levels = iter(RECONNECT_BATTERY_NOTIFIED)
    for n, i in enumerate(RECONNECT_HR, start=1):
        await send_hr(strap, hr_queue, truth, connection, i, RECONNECT_CONTACT_SUPPORTED)
        if n % RECONNECT_BATTERY_EVERY == 0:
            await send_battery(strap, battery_queue, truth, connection, next(levels))
    assert next(levels, None) is None

    location = await client.read_value(HANDLES["body_sensor_location"])
    truth.body_sensor_location(connection.handle, location)
    await client.write_value(
        HANDLES["hr_control_point"], bytes([hr.HR_CONTROL_POINT_RESET_ENERGY_EXPENDED]),
        with_response=True,
    )
    await asyncio.wait_for(strap.reset_event.wait(), 5)
    await sc.disconnect(connection, strap_connection)
    await sc.settle()
    truth.segments.append({"connection_complete_logged": True, "discovery_logged": False})


# -----------------------------------------------------------------------------
# 2. late_midstream
# -----------------------------------------------------------------------------
async def scenario_midstream(snooper: GatedSnooper, truth: Truth) -> None:
    phone, strap = await setup(snooper)  # not logged
    strap.battery_level = MIDSTREAM_BATTERY_START
    connection, strap_connection = await sc.connect(phone, strap.device, strap.address)
    peer = Peer(connection)
    await peer.request_mtu(hr.ATT_MTU)
    await sc.full_discovery(peer)
    check_client_handles(peer)
    hr_queue: asyncio.Queue[bytes] = asyncio.Queue()
    battery_queue: asyncio.Queue[bytes] = asyncio.Queue()
    battery_char = sc.find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC)
    await peer.subscribe(sc.find_char(peer, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
                         lambda v: hr_queue.put_nowait(bytes(v)))
    await peer.subscribe(battery_char, lambda v: battery_queue.put_nowait(bytes(v)))
    await sc.settle()

    snooper.enable()  # the user switches the snoop log on
    levels = iter(MIDSTREAM_BATTERY_NOTIFIED)
    for n, i in enumerate(MIDSTREAM_HR, start=1):
        await send_hr(strap, hr_queue, truth, connection, i, MIDSTREAM_CONTACT_SUPPORTED)
        if n % MIDSTREAM_BATTERY_EVERY == 0:
            await send_battery(strap, battery_queue, truth, connection, next(levels))
        if n == MIDSTREAM_READ_AFTER:
            level = bytes(await peer.read_value(battery_char))
            assert level == bytes([strap.battery_level])
            truth.battery("read_response", connection.handle, level[0])
    assert next(levels, None) is None
    await sc.disconnect(connection, strap_connection)
    await sc.settle()
    truth.segments.append({"connection_complete_logged": False, "discovery_logged": False})


# -----------------------------------------------------------------------------
# 3. late_concat
# -----------------------------------------------------------------------------
async def scenario_concat(snooper: GatedSnooper, truth: Truth) -> None:
    phone, strap = await setup(snooper)  # part 1 logged from power-on
    connection, strap_connection = await sc.connect(phone, strap.device, strap.address)
    peer = Peer(connection)
    await peer.request_mtu(hr.ATT_MTU)
    await sc.full_discovery(peer)
    check_client_handles(peer)
    hr_queue: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(sc.find_char(peer, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
                         lambda v: hr_queue.put_nowait(bytes(v)))
    for i in CONCAT_HR_1:
        await send_hr(strap, hr_queue, truth, connection, i, CONCAT_CONTACT_SUPPORTED_1)
    await sc.disconnect(connection, strap_connection)
    await sc.settle()
    snooper.disable()
    truth.segments.append({"connection_complete_logged": True, "discovery_logged": True})

    # Not logged: reconnect, MTU, subscribe by the cached handle.
    connection, strap_connection = await sc.connect(phone, strap.device, strap.address)
    client = connection.gatt_client
    await client.request_mtu(hr.ATT_MTU)
    hr_queue = subscribe_cached(client, HANDLES["hrm"])
    await client.write_value(HANDLES["hrm_cccd"], b"\x01\x00", with_response=True)
    await sc.settle()

    snooper.enable()  # part 2
    for i in CONCAT_HR_2:
        await send_hr(strap, hr_queue, truth, connection, i, CONCAT_CONTACT_SUPPORTED_2)
    await sc.disconnect(connection, strap_connection)
    await sc.settle()
    truth.segments.append({"connection_complete_logged": False, "discovery_logged": False})


# -----------------------------------------------------------------------------
# Verification (reads the written file back)
# -----------------------------------------------------------------------------
def is_le_connection_complete(flags: int, packet: bytes) -> bool:
    return flags == 3 and packet[0] == 0x04 and packet[1] == 0x3E and packet[3] in (0x01, 0x0A)


def verify(path: str, truth: Truth) -> dict:
    with open(path, "rb") as f:
        records = parse_btsnoop(f.read())
    kinds = {"cmd": 0, "evt": 0, "nocp": 0, "acl_tx": 0, "acl_rx": 0}
    values = []
    pending_read = None
    att_requests = {"discovery": 0}
    for flags, _ts, packet in records:
        if flags == 2:
            kinds["cmd"] += 1
        elif flags == 3:
            kinds["evt"] += 1
            kinds["nocp"] += packet[1] == 0x13
        else:
            kinds["acl_tx" if flags == 0 else "acl_rx"] += 1
        pdu = att_pdu(flags, packet)
        if pdu is None:
            continue
        if flags == 0 and pdu[0] == 0x0A:
            pending_read = struct.unpack("<H", pdu[1:3])[0]
        if flags == 0 and pdu[0] in (0x04, 0x08, 0x10):
            att_requests["discovery"] += 1
        if flags == 1 and pdu[0] == 0x1B:
            values.append(("notification", struct.unpack("<H", pdu[1:3])[0], pdu[3:].hex()))
        if flags == 1 and pdu[0] == 0x0B:
            values.append(("read_response", pending_read, pdu[1:].hex()))
    expected = [(v["opcode"], v["handle"], v["hex"]) for v in truth.values]
    assert values == expected, "file values differ from the truth"
    starts = [s["first_record"] for s in truth.segments] + [len(records)]
    for segment, (start, end) in zip(truth.segments, zip(starts, starts[1:])):
        complete = [r for r in range(start, end) if is_le_connection_complete(*records[r][::2])]
        assert bool(complete) == segment["connection_complete_logged"], (segment, complete)
    # Sensor Contact Supported (HRM flags bit 2) static within each connection (each
    # segment here is one connection): HRS 1.0 3.1.1.1.
    for start, end in zip(starts, starts[1:]):
        supported = set()
        for flags, _ts, packet in records[start:end]:
            pdu = att_pdu(flags, packet)
            if is_hr_notification(flags, packet):
                supported.add(bool(pdu[3] & 0x04))
        assert len(supported) <= 1, f"records {start}..{end - 1}: contact-supported bit varies"
    if not truth.segments[0]["connection_complete_logged"]:
        assert not is_le_connection_complete(records[0][0], records[0][2])
    times = [ts for _f, ts, _p in records]
    assert times == sorted(times) and len(set(times)) == len(times)
    return {
        "records": len(records),
        **kinds,
        "notifications": sum(1 for v in values if v[0] == "notification"),
        "hr_notifications": sum(1 for v in values if v[:2] == ("notification", HANDLES["hrm"])),
        "read_responses": sum(1 for v in values if v[0] == "read_response"),
        "discovery_requests": att_requests["discovery"],
        "seconds": round((times[-1] - times[0]) / 1e6, 3),
    }


# -----------------------------------------------------------------------------
SCENARIOS = {
    "late_reconnect": (scenario_reconnect, True),
    "late_midstream": (scenario_midstream, False),
    "late_concat": (scenario_concat, True),
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

    for name in args.only or list(SCENARIOS):
        function, logged_from_start = SCENARIOS[name]
        start = time.monotonic()
        snooper = GatedSnooper(enabled=logged_from_start)
        truth = Truth(f"{name}.btsnoop")
        asyncio.run(function(snooper, truth))
        starts = snooper.segment_starts
        ends = starts[1:] + [snooper.records]
        for segment, first, end in zip(truth.segments, starts, ends):
            segment.update({"first_record": first, "records": end - first})
            # key order: first_record, records, then the flags
            for key in ("connection_complete_logged", "discovery_logged"):
                segment[key] = segment.pop(key)
        data = retime(snooper.buffer.getvalue(), starts, BASE_TIMES[name])
        path = os.path.join(args.out_dir, f"{name}.btsnoop")
        with open(path, "wb") as f:
            f.write(data)
        truth.write(os.path.join(args.out_dir, f"{name}.truth.json"))
        summary = verify(path, truth)
        size = os.path.getsize(path)
        assert size < 64 * 1024, (path, size)
        print(f"[{name}] {time.monotonic() - start:.1f} s: {path}: {size} bytes, {summary}, "
              f"segments {truth.segments}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
