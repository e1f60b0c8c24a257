#!/usr/bin/env python3
"""Record PAIRS of heart-rate captures for ``bledissect diff A B``, with ground truth.

Same set-up as make_scenarios.py / make_late_start.py (both imported, with
make_hr_session.py): one process, one ``bumble.link.LocalLink``, one emulated
``bumble.controller.Controller`` per device, each driven by its own
``bumble.host.Host`` + ``bumble.device.Device``.  Only the PHONE's HCI traffic
is recorded, by Bumble's ``BtSnooper`` (btsnoop v1, datalink 1002 = H4), via
make_late_start.GatedSnooper (always on here).  The strap is
``make_hr_session.Strap`` "bledissect HR", static random address
D0:B1:ED:00:48:52 (controller 00:B1:ED:00:00:02) in every file.  The phone is
the central / GATT client (controller public address 00:B1:ED:00:00:01).

Every session (healthy_a, healthy_b, broken_b) does, in this order, as seen by
the phone:
  1. power on (HCI Reset + Bumble's init sequence, incl. LE Set Random Address
     with the phone's static random address);
  2. the strap advertises (legacy ADV_IND, not in the phone's log); the phone
     connects by address with LE Create Connection (no scanning),
     connection_interval_min = max = CONNECTION_INTERVAL_MS, max latency 0,
     supervision timeout 720 ms; LE Connection Complete;
  3. ATT Exchange MTU: the phone asks CLIENT_MTU, the strap answers 517;
  4. full discovery: all primary services (Read By Group Type), the
     characteristics of each service (Read By Type 0x2803), the descriptors of
     each characteristic whose value handle is below its end handle (Find
     Information); Bumble ends each procedure with an Attribute Not Found
     Error Response (0x0A), as usual;
  5. Read Body Sensor Location (0x2A38, handle 19 -> 01 chest), Read Battery
     Level (0x2A19 -> 87);
  6. subscribe: Write Request 01 00 to the HRM CCCD (17), then Write Request
     01 00 to the Battery Level CCCD (25) (direct CCCD writes after discovery,
     like a phone; no extra Find Information);
  7. HR_COUNT = 60 Heart Rate Measurement notifications on handle 16, flags
     0x16 (uint8 bpm, sensor contact detected, RR intervals present), ~1 s
     apart; after the 40th a Battery Level notification (86);
  8. unsubscribe: Write Request 00 00 to 17, then 00 00 to 25;
  9. the phone disconnects: HCI Disconnect reason 0x13 (Remote User Terminated
     Connection) -> Command Status -> Disconnection Complete, whose reason is
     also 0x13 (Bumble's emulated controller echoes the command's reason;
     a real controller would report 0x16 locally).

healthy_a.btsnoop (seed SEEDS["healthy_a"]) and healthy_b.btsnoop (seed
SEEDS["healthy_b"]): that session, identical except what the seed decides,
i.e. what may legitimately differ between two recordings of the same session:
  * the phone's static random address (C0:B1:ED + 3 seeded bytes; the strap's
    identity is the same) and the connection handle the phone's controller
    assigns (seeded, via an instance override of the emulated controller's
    allocate_connection_handle(), which otherwise always picks 0x0001);
  * HR values: bpm = round(warm-up curve(k)) + uniform integer -2..+2, the
    curve being 74 + 50 (1 - exp(-k/15)) + 3 sin(k/6) (74 -> about 122 bpm);
    RR intervals: a seeded beat train (each beat 60/curve(t) s x (1 + N(0, 0.02)),
    first beat at a seeded -2.0..-1.5 s), each notification k carrying the beats
    that ended in (k-1 s, k s] (1 to 3 RR values, 1/1024 s);
  * timestamps (see Timestamps): HR notification jitter and the small gaps
    between other records;
  * nothing else: no pairing/encryption, so there are no random nonces.

broken_b.btsnoop: the session with healthy_a's seed (same phone address,
connection handle, HR values, HR timing jitter), plus exactly these injected
differences, each once:
  (a) subscription_missing: the phone never writes the Battery Level CCCD
      (neither 01 00 in step 6 nor 00 00 in step 8); consequently the strap
      sends no Battery Level notification (healthy: 1);
  (b) att_error: the strap's Body Sensor Location requires authentication
      (Bumble permission READ_REQUIRES_AUTHENTICATION; the link is not
      encrypted), so the Read Request 0x0A on handle 19 gets an Error Response
      01 0A 13 00 05 (Insufficient Authentication) instead of 0B 01;
  (c) mtu: the phone asks 185 (server 517 -> MTU 185 instead of 247); every
      PDU of the session fits either way, so nothing else changes;
  (d) connection_interval: LE Create Connection with interval min = max =
      24 (30 ms) instead of 12 (15 ms); LE Connection Complete carries 0x0018
      instead of 0x000C (latency 0, supervision timeout 72 = 720 ms in both);
  (e) disconnect_reason: no HCI Disconnect; after step 8 the link is lost:
      both emulated controllers report Disconnection Complete reason 0x08
      (Connection Timeout) to their hosts, which is what a real controller
      does on a supervision timeout (Bumble's LocalLink has no radio, so the
      script calls the controllers' on_le_disconnected(connection, 0x08)
      directly; no LL_TERMINATE_IND is exchanged).  The event is timestamped
      720 ms (the supervision timeout) after the previous record;
  (f) gatt_characteristic_missing: the strap's Heart Rate service has no
      Heart Rate Control Point (0x2A39; in healthy strap: declaration 20,
      value 21), so every later attribute moves down by 2 (Battery service
      22 -> 20, Battery Level 24 -> 22, its CCCD 25 -> 23, Device Information
      26 -> 24, ...), and the Heart Rate service ends at 19 instead of 21.
      Bumble never sends a Find Information for 0x2A39 in healthy sessions
      either (value handle = end handle), so discovery has the same requests;
  (g) notification_gap: the 31st HR notification (index 30) comes 15 s late
      (16 s + jitter after the 30th instead of 1 s + jitter); all 60 values
      are still sent (same values as healthy_a), only everything from index
      30 on is 15 s later.
Nothing else differs from healthy_a, apart from record counts and the
timestamps of non-HR records after the first differing record (the small
inter-record gaps are drawn in record order).

Strap handle layouts (decimal; checked on every run from the strap's GATT
server and from the phone's discovery):
  healthy: GAP 1-5, GATT 6-13, Heart Rate 14-21: HRM decl 15, value 16, CCCD 17;
           Body Sensor Location decl 18, value 19; HR Control Point decl 20,
           value 21; Battery 22-25: decl 23, value 24, CCCD 25; Device
           Information 26-34.
  broken:  Heart Rate 14-19 (no HR Control Point); Battery 20-23: decl 21,
           value 22, CCCD 23; Device Information 24-32.
  (pairs.truth.json lists every attribute of both layouts.)

Timestamps: Bumble writes wall-clock times; after the run every record is
re-timed deterministically (order and bytes unchanged), so reruns produce
identical files.  Record 0 is at the file's base time (BASE_TIMES).  HR
notification k (0-based) is at: k = 0: previous record + 250 ms; k > 0:
HR notification k-1 + 1.000 s + jitter(k) (+ 15 s for broken_b's k = 30),
jitter(k) a seeded uniform integer in -8..+8 ms.  Any other record directly
after an HR notification: + 300..700 ms (seeded); broken_b's Disconnection
Complete: + 720 ms; every other record: + 2.000..3.000 ms (seeded, in
microseconds).  The timestamps do not model the connection interval: an ATT
request, its Number Of Completed Packets and the response are 2-3 ms apart in
all files (request -> response 4-6 ms), so (d) has no timing consequence.

Ground truth: captures/diff/pairs.truth.json (written from what this script
did, then every file is read back and checked against it):
  {"generator", "seeds", "schema", "files": {name: {"seed", "base_time",
   "records", "record_kinds", "bytes", "phone": {"random_address",
   "public_address", "connection_handle", "connection_handle_hex"}, "strap":
   {"name", "address", "address_type", "public_address", "appearance"},
   "connection": {"interval_units", "interval_ms", "latency",
   "supervision_timeout_units", "supervision_timeout_ms", "mtu":
   {"client_rx_mtu", "server_rx_mtu", "mtu"}, "encryption", "phy_update",
   "data_length_update", "disconnect": {"initiator", "hci_disconnect_command",
   "command_reason", "event_reason", "event_reason_name"}},
   "strap_handles" (named map as in make_late_start.py; null = absent),
   "strap_attributes" [[handle, kind, uuid, end_group_handle or null]],
   "operations" [{"index", "op", "characteristic", "service", "handle",
   "outcome", ...}], "notifications" {uuid: {"handle", "count"}},
   "battery_notifications" [values], "hr" [{"k", "t_s", "bpm", "rr",
   "hex"}], "hr_stats" {...}}},
   "pairs": [{"a", "b", "expected" ("equivalent" | "different"),
   "differences": [{"kind", "characteristic", "a", "b", "details"}],
   "legitimate_variations" (healthy pair only)}]}
  kind / characteristic / a / b of the seven differences of healthy_a vs
  broken_b: subscription_missing 2a19 "notify" / null; att_error 2a38
  {outcome ok, value 01} / {outcome error, error_code 5, error_name};
  mtu null 247 / 185; connection_interval null 15.0 / 30.0 (ms; units 12 /
  24 in details); disconnect_reason null 19 (0x13) / 8 (0x08);
  gatt_characteristic_missing 2a39 {declaration_handle 20, value_handle 21}
  / null (details: handle_shift delta -2 from 22); notification_gap 2a37
  null / {start_s, length_s} (start = the last notification before the
  silence, length = the interval to the next one, about 16 s).
  Operations are the phone's ATT procedures, normalized (no handles needed):
  op = exchange_mtu | discover_services | discover_characteristics (service) |
  discover_descriptors (characteristic) | read (characteristic) |
  write_cccd (characteristic, value "notify" / "none"); outcome = "ok" or
  "error:0x05 Insufficient Authentication".  A procedure is one op even when
  it takes several requests.  t_s in "hr" is seconds since the file's first
  HR notification (exact microseconds / 1e6).

Usage:  python3 Scripts/captures/make_diff_pairs.py [--out-dir captures/diff]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import math
import os
import random
import statistics
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402
import make_late_start as ls  # noqa: E402
import make_scenarios as sc  # noqa: E402

from bumble import att, hci  # noqa: E402
from bumble.device import ConnectionParametersPreferences, Device, Peer  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BATTERY_SERVICE,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_HEART_RATE_SERVICE,
    GATT_PRIMARY_SERVICE_ATTRIBUTE_TYPE,
    Characteristic,
    CharacteristicDeclaration,
    Descriptor,
    Service,
)
from bumble.link import LocalLink  # noqa: E402

# -----------------------------------------------------------------------------
# Fixed values
# -----------------------------------------------------------------------------
SEEDS = {"healthy_a": 1001, "healthy_b": 2002, "broken_b": 1001}
BASE_TIMES = {
    "healthy_a": datetime.datetime(2025, 3, 2, 8, 0, 0, tzinfo=datetime.UTC),
    "healthy_b": datetime.datetime(2025, 3, 2, 18, 30, 0, tzinfo=datetime.UTC),
    "broken_b": datetime.datetime(2025, 3, 3, 8, 0, 0, tzinfo=datetime.UTC),
}
HR_COUNT = 60
BATTERY_AFTER = 40  # Battery Level notification after this many HR notifications
BATTERY_READ = 87
BATTERY_NOTIFIED = 86
SERVER_MTU = 517  # what Bumble's GATT server answers

HEALTHY_MTU = 247
BROKEN_MTU = 185
HEALTHY_INTERVAL_MS = 15.0
BROKEN_INTERVAL_MS = 30.0
SUPERVISION_TIMEOUT_MS = 720
GAP_INDEX = 30  # the HR notification that comes late in broken_b
GAP_EXTRA_US = 15_000_000
HR_PERIOD_US = 1_000_000
HR_JITTER_MS = 8

REASON_NAMES = {
    0x08: "Connection Timeout",
    0x13: "Remote User Terminated Connection",
    0x16: "Connection Terminated By Local Host",
}
ATT_ERROR_NAMES = {0x05: "Insufficient Authentication", 0x0A: "Attribute Not Found"}

HEALTHY = {
    "subscribe_battery": True,
    "bsl_requires_authentication": False,
    "mtu": HEALTHY_MTU,
    "interval_ms": HEALTHY_INTERVAL_MS,
    "supervision_timeout": False,
    "control_point": True,
    "gap": False,
}
BROKEN = {
    "subscribe_battery": False,
    "bsl_requires_authentication": True,
    "mtu": BROKEN_MTU,
    "interval_ms": BROKEN_INTERVAL_MS,
    "supervision_timeout": True,
    "control_point": False,
    "gap": True,
}
SESSIONS = {"healthy_a": HEALTHY, "healthy_b": HEALTHY, "broken_b": BROKEN}

HANDLES_HEALTHY = dict(ls.HANDLES)  # hrm 16, hrm_cccd 17, bsl 19, hrcp 21, battery 24/25
HANDLES_BROKEN = {
    "hrm": 16,
    "hrm_cccd": 17,
    "body_sensor_location": 19,
    "hr_control_point": None,
    "battery_level": 22,
    "battery_cccd": 23,
}


def uuid_text(uuid) -> str:
    if len(uuid.uuid_bytes) == 2:
        return uuid.uuid_bytes[::-1].hex()
    return str(uuid).lower()


# -----------------------------------------------------------------------------
# Seeded values
# -----------------------------------------------------------------------------
class SeededSession:
    """Everything a seed decides (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        ident = random.Random(f"{seed}:identity")
        tail = [ident.randrange(256) for _ in range(3)]
        self.phone_address = "C0:B1:ED:" + ":".join(f"{b:02X}" for b in tail)
        self.connection_handle = ident.randrange(0x0001, 0x0F00)
        values = random.Random(f"{seed}:values")
        self.hr = self._hr_values(values)
        timing = random.Random(f"{seed}:hr-timing")
        self.hr_jitter_ms = [timing.randint(-HR_JITTER_MS, HR_JITTER_MS) for _ in range(HR_COUNT)]
        self.other_timing = random.Random(f"{seed}:other-timing")

    @staticmethod
    def curve(t: float) -> float:
        return 74 + 50 * (1 - math.exp(-t / 15)) + 3 * math.sin(t / 6)

    def _hr_values(self, rng: random.Random) -> list[tuple[int, tuple[int, ...]]]:
        bpms = [round(self.curve(k)) + rng.randint(-2, 2) for k in range(HR_COUNT)]
        beat = rng.uniform(0.0, 0.5) - 2.0  # a beat well before the first window
        beats = []
        while beat <= HR_COUNT:
            rr = 60 / self.curve(max(beat, 0.0)) * (1 + rng.gauss(0, 0.02))
            beat += rr
            beats.append((beat, rr))
        values = []
        for k in range(HR_COUNT):
            rr = tuple(round(r * 1024) for end, r in beats if k - 1 < end <= k)
            assert 1 <= len(rr) <= 3, (k, rr)
            values.append((bpms[k], rr))
        return values


def hrm_value(bpm: int, rr: tuple[int, ...]) -> bytes:
    value = hr.encode_hr_measurement(bpm, False, hr.DETECTED, None, rr)
    assert value[0] == 0x16, value.hex()
    return value


# -----------------------------------------------------------------------------
# Strap without the Heart Rate Control Point
# -----------------------------------------------------------------------------
class StrapWithoutControlPoint(hr.Strap):
    """make_hr_session.Strap whose Heart Rate service lacks 0x2A39."""

    def __init__(self, stack) -> None:
        device = stack.device

        def add_services(services):
            for service in services:
                if service.uuid == GATT_HEART_RATE_SERVICE:
                    service.characteristics = [
                        c for c in service.characteristics
                        if c.uuid != GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC
                    ]
            device.gatt_server.add_services(services)

        device.add_services = add_services
        try:
            super().__init__(stack)
        finally:
            del device.add_services


def make_strap(link: LocalLink, control_point: bool) -> hr.Strap:
    name, random_address, public_address = sc.STRAP
    stack = sc.Stack(link, name, random_address, public_address, None,
                     gap_appearance=hr.APPEARANCE_HEART_RATE_BELT)
    strap = (hr.Strap if control_point else StrapWithoutControlPoint)(stack)
    strap.address = random_address
    return strap


def strap_attributes(strap: hr.Strap) -> list[list]:
    """[[handle, kind, uuid, end_group_handle or None]] of the strap's GATT server."""
    rows = []
    for attribute in strap.device.gatt_server.attributes:
        if isinstance(attribute, Service):
            assert attribute.type == GATT_PRIMARY_SERVICE_ATTRIBUTE_TYPE
            rows.append([attribute.handle, "service", uuid_text(attribute.uuid),
                         attribute.end_group_handle])
        elif isinstance(attribute, CharacteristicDeclaration):
            rows.append([attribute.handle, "characteristic",
                         uuid_text(attribute.characteristic.uuid), None])
        elif isinstance(attribute, Characteristic):
            rows.append([attribute.handle, "value", uuid_text(attribute.uuid), None])
        else:
            assert isinstance(attribute, Descriptor), attribute
            rows.append([attribute.handle, "descriptor", uuid_text(attribute.type), None])
    return rows


def named_handles(strap: hr.Strap) -> dict:
    server = strap.device.gatt_server

    def value_handle(service, uuid):
        found = server.get_characteristic_attributes(service, uuid)
        return found[1].handle if found else None

    def cccd(service, uuid):
        found = server.get_descriptor_attribute(
            service, uuid, GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR)
        return found.handle if found else None

    return {
        "hrm": value_handle(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "hrm_cccd": cccd(GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC),
        "body_sensor_location": value_handle(
            GATT_HEART_RATE_SERVICE, GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC),
        "hr_control_point": value_handle(
            GATT_HEART_RATE_SERVICE, GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC),
        "battery_level": value_handle(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
        "battery_cccd": cccd(GATT_BATTERY_SERVICE, GATT_BATTERY_LEVEL_CHARACTERISTIC),
    }


# -----------------------------------------------------------------------------
# Session
# -----------------------------------------------------------------------------
class Record:
    """What the script did (becomes the file's truth)."""

    def __init__(self) -> None:
        self.operations: list[dict] = []
        self.hr: list[dict] = []
        self.battery_notifications: list[int] = []
        self.facts: dict = {}

    def op(self, op: str, characteristic=None, outcome: str = "ok", **extra) -> None:
        entry = {"index": len(self.operations), "op": op,
                 "characteristic": characteristic}
        entry.update(extra)
        entry["outcome"] = outcome
        self.operations.append(entry)


async def run_session(snooper, seeded: SeededSession, cfg: dict, record: Record) -> None:
    link = LocalLink()
    phone_stack = sc.Stack(link, hr.PHONE_NAME, seeded.phone_address, hr.PHONE_PUBLIC_ADDRESS,
                           None, peripheral=False)
    phone_stack.snooper = phone_stack.host.snooper = snooper
    handle = seeded.connection_handle
    phone_stack.controller.allocate_connection_handle = lambda: handle
    strap = make_strap(link, cfg["control_point"])
    handles = named_handles(strap)
    assert handles == (HANDLES_HEALTHY if cfg["control_point"] else HANDLES_BROKEN), handles
    record.facts["strap_handles"] = handles
    record.facts["strap_attributes"] = strap_attributes(strap)
    if cfg["bsl_requires_authentication"]:
        bsl = strap.hrs.body_sensor_location_characteristic
        bsl.permissions = bsl.permissions | att.Attribute.READ_REQUIRES_AUTHENTICATION
    strap.battery_level = BATTERY_READ
    await strap.device.power_on()
    phone = phone_stack.device
    await phone.power_on()

    # --- connect by address ----------------------------------------------------
    loop = asyncio.get_running_loop()
    strap_connected = loop.create_future()
    strap.device.once(Device.EVENT_CONNECTION, strap_connected.set_result)
    await strap.device.start_advertising(
        advertising_interval_min=100.0, advertising_interval_max=100.0)
    interval = cfg["interval_ms"]
    preferences = ConnectionParametersPreferences(
        connection_interval_min=interval, connection_interval_max=interval,
        max_latency=0, supervision_timeout=SUPERVISION_TIMEOUT_MS)
    connection = await phone.connect(
        hci.Address(strap.address, hci.Address.RANDOM_DEVICE_ADDRESS),
        connection_parameters_preferences={hci.HCI_LE_1M_PHY: preferences})
    strap_connection = await asyncio.wait_for(strap_connected, 5)
    assert connection.handle == handle, connection.handle
    record.facts["interval_units"] = round(interval / 1.25)
    assert connection.parameters.connection_interval == interval, connection.parameters

    # --- MTU, discovery -------------------------------------------------------
    peer = Peer(connection)
    mtu = await peer.request_mtu(cfg["mtu"])
    assert mtu == min(cfg["mtu"], SERVER_MTU), mtu
    record.op("exchange_mtu")
    record.facts["mtu"] = mtu
    await peer.discover_services()
    record.op("discover_services")
    for service in peer.services:
        await service.discover_characteristics()
        record.op("discover_characteristics", service=uuid_text(service.uuid))
    for service in peer.services:
        for characteristic in service.characteristics:
            before = characteristic.handle < characteristic.end_group_handle
            await characteristic.discover_descriptors()
            if before:  # Bumble sends Find Information only for a non-empty range
                record.op("discover_descriptors", uuid_text(characteristic.uuid),
                          service=uuid_text(service.uuid))
    discovered = sc.handle_map(peer)
    for uuid, key, cccd_key in (
        (GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, "hrm", "hrm_cccd"),
        (GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC, "body_sensor_location", None),
        (GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC, "hr_control_point", None),
        (GATT_BATTERY_LEVEL_CHARACTERISTIC, "battery_level", "battery_cccd"),
    ):
        expected = None if handles[key] is None else (
            handles[key], handles[cccd_key] if cccd_key else None)
        assert discovered.get(str(uuid)) == expected, (uuid, discovered.get(str(uuid)), expected)

    # --- reads ----------------------------------------------------------------
    bsl_char = sc.find_char(peer, GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC)
    battery_char = sc.find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC)
    try:
        value = bytes(await peer.read_value(bsl_char))
        assert not cfg["bsl_requires_authentication"]
        assert value == b"\x01", value
        record.op("read", "2a38", value=value.hex(), handle=bsl_char.handle)
    except att.ATT_Error as error:
        assert cfg["bsl_requires_authentication"]
        assert error.error_code == 0x05, error
        record.op("read", "2a38", outcome="error:0x05 Insufficient Authentication",
                  handle=bsl_char.handle)
    value = bytes(await peer.read_value(battery_char))
    assert value == bytes([BATTERY_READ])
    record.op("read", "2a19", value=value.hex(), handle=battery_char.handle)

    # --- subscribe (direct CCCD writes) -----------------------------------------
    client = connection.gatt_client
    hr_queue: asyncio.Queue[bytes] = asyncio.Queue()
    battery_queue: asyncio.Queue[bytes] = asyncio.Queue()
    client.notification_subscribers[handles["hrm"]] = {lambda v: hr_queue.put_nowait(bytes(v))}
    await client.write_value(handles["hrm_cccd"], b"\x01\x00", with_response=True)
    record.op("write_cccd", "2a37", value="notify", handle=handles["hrm_cccd"])
    if cfg["subscribe_battery"]:
        client.notification_subscribers[handles["battery_level"]] = {
            lambda v: battery_queue.put_nowait(bytes(v))}
        await client.write_value(handles["battery_cccd"], b"\x01\x00", with_response=True)
        record.op("write_cccd", "2a19", value="notify", handle=handles["battery_cccd"])

    # --- notifications --------------------------------------------------------
    for k, (bpm, rr) in enumerate(seeded.hr):
        value = hrm_value(bpm, rr)
        await strap.notify_hr(value)
        got = await asyncio.wait_for(hr_queue.get(), 5)
        assert got == value
        record.hr.append({"k": k, "bpm": bpm, "rr": list(rr), "hex": value.hex()})
        if k + 1 == BATTERY_AFTER:
            await strap.notify_battery(BATTERY_NOTIFIED)
            if cfg["subscribe_battery"]:
                got = await asyncio.wait_for(battery_queue.get(), 5)
                assert got == bytes([BATTERY_NOTIFIED])
                record.battery_notifications.append(BATTERY_NOTIFIED)
            else:
                await sc.settle()
                assert battery_queue.empty()

    # --- unsubscribe ------------------------------------------------------------
    await sc.settle()
    await client.write_value(handles["hrm_cccd"], b"\x00\x00", with_response=True)
    record.op("write_cccd", "2a37", value="none", handle=handles["hrm_cccd"])
    if cfg["subscribe_battery"]:
        await client.write_value(handles["battery_cccd"], b"\x00\x00", with_response=True)
        record.op("write_cccd", "2a19", value="none", handle=handles["battery_cccd"])
    await sc.settle()

    # --- end of the connection ------------------------------------------------
    if cfg["supervision_timeout"]:
        phone_done = loop.create_future()
        strap_done = loop.create_future()
        connection.once(connection.EVENT_DISCONNECTION, phone_done.set_result)
        strap_connection.once(strap_connection.EVENT_DISCONNECTION, strap_done.set_result)
        (phone_link,) = phone_stack.controller.le_connections.values()
        (strap_link,) = strap.stack.controller.le_connections.values()
        timeout = hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR
        phone_stack.controller.on_le_disconnected(phone_link, timeout)
        strap.stack.controller.on_le_disconnected(strap_link, timeout)
        assert await asyncio.wait_for(phone_done, 5) == 0x08
        assert await asyncio.wait_for(strap_done, 5) == 0x08
        record.facts["disconnect"] = {"command_reason": None, "event_reason": 0x08}
    else:
        await sc.disconnect(connection, strap_connection)
        record.facts["disconnect"] = {"command_reason": 0x13, "event_reason": 0x13}
    await sc.settle()


# -----------------------------------------------------------------------------
# Re-timing
# -----------------------------------------------------------------------------
def is_disconnection_complete(flags: int, packet: bytes) -> bool:
    return flags == 3 and packet[:2] == b"\x04\x05"


def retime(data: bytes, seeded: SeededSession, cfg: dict, base: datetime.datetime) -> bytes:
    records = ls.parse_btsnoop(data)
    out = bytearray(data[:16])
    rng = seeded.other_timing
    t = None
    last_hr = None
    previous_was_hr = False
    k = 0
    for flags, _ts, packet in records:
        hr_record = ls.is_hr_notification(flags, packet)
        if t is None:
            t = ls.btsnoop_time(base)
        elif hr_record:
            if last_hr is None:
                new = t + 250_000
            else:
                new = last_hr + HR_PERIOD_US + seeded.hr_jitter_ms[k] * 1000
                if cfg["gap"] and k == GAP_INDEX:
                    new += GAP_EXTRA_US
            assert new > t + 1000, (k, new - t)
            t = new
        elif cfg["supervision_timeout"] and is_disconnection_complete(flags, packet):
            t += SUPERVISION_TIMEOUT_MS * 1000
        elif previous_was_hr:
            t += rng.randint(300_000, 700_000)
        else:
            t += rng.randint(2000, 3000)
        if hr_record:
            last_hr = t
            k += 1
        previous_was_hr = hr_record
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, t) + packet
    assert k == HR_COUNT, k
    return bytes(out)


# -----------------------------------------------------------------------------
# Reading a file back
# -----------------------------------------------------------------------------
class Parsed:
    """Facts decoded from a written file, independently of the Record."""

    def __init__(self, path: str, attributes: list[list]) -> None:
        with open(path, "rb") as f:
            self.records = ls.parse_btsnoop(f.read())
        self.kinds = {"cmd": 0, "evt": 0, "nocp": 0, "acl_tx": 0, "acl_rx": 0}
        self.random_addresses = []
        self.create_connection = []
        self.connection_complete = []
        self.disconnect_commands = []
        self.disconnection_complete = []
        self.att_errors = []
        self.mtu_requests = []
        self.mtu_responses = []
        self.cccd_writes = []
        self.hr = []  # (timestamp, value hex)
        self.battery = []
        self.acl_handles = set()
        self.att = []  # (direction, pdu)
        self.other_le_commands = []
        value_to_uuid = {h: u for h, kind, u, _e in attributes if kind == "value"}
        cccd_to_char = {}
        last_value = None
        for h, kind, u, _e in attributes:
            if kind == "value":
                last_value = u
            elif kind == "descriptor" and u == "2902":
                cccd_to_char[h] = last_value
        self.value_to_uuid = value_to_uuid
        for flags, ts, packet in self.records:
            if flags == 2:
                self.kinds["cmd"] += 1
                opcode = struct.unpack("<H", packet[1:3])[0]
                params = packet[4:]
                if opcode == 0x2005:
                    self.random_addresses.append(":".join(f"{b:02X}" for b in params[5::-1]))
                elif opcode == 0x200D:
                    self.create_connection.append(struct.unpack("<HHBB6sBHHHHHH", params))
                elif opcode == 0x0406:
                    self.disconnect_commands.append(struct.unpack("<HB", params))
                elif opcode in (0x2013, 0x2032, 0x2022, 0x2019):  # update / PHY / DLE / encrypt
                    self.other_le_commands.append(opcode)
            elif flags == 3:
                self.kinds["evt"] += 1
                code = packet[1]
                if code == 0x13:
                    self.kinds["nocp"] += 1
                elif code == 0x05:
                    self.disconnection_complete.append(struct.unpack("<BHB", packet[3:7]))
                elif code == 0x3E and packet[3] == 0x01:
                    status, handle, role, peer_type = struct.unpack("<BHBB", packet[4:9])
                    peer = ":".join(f"{b:02X}" for b in packet[9:15][::-1])
                    interval, latency, timeout = struct.unpack("<HHH", packet[15:21])
                    self.connection_complete.append({
                        "status": status, "handle": handle, "role": role, "peer": peer,
                        "interval": interval, "latency": latency, "timeout": timeout})
            else:
                self.kinds["acl_tx" if flags == 0 else "acl_rx"] += 1
                self.acl_handles.add(struct.unpack("<H", packet[1:3])[0] & 0x0FFF)
                pdu = ls.att_pdu(flags, packet)
                if pdu is None:
                    continue
                self.att.append((flags, pdu))
                op = pdu[0]
                if op == 0x01:
                    self.att_errors.append(struct.unpack("<BHB", pdu[1:5]))
                elif op == 0x02:
                    self.mtu_requests.append(struct.unpack("<H", pdu[1:3])[0])
                elif op == 0x03:
                    self.mtu_responses.append(struct.unpack("<H", pdu[1:3])[0])
                elif op == 0x12 and flags == 0:
                    h = struct.unpack("<H", pdu[1:3])[0]
                    self.cccd_writes.append((cccd_to_char.get(h), h, pdu[3:].hex()))
                elif op == 0x1B:
                    h = struct.unpack("<H", pdu[1:3])[0]
                    if value_to_uuid.get(h) == "2a37":
                        self.hr.append((ts, pdu[3:].hex()))
                    elif value_to_uuid.get(h) == "2a19":
                        self.battery.append(pdu[3])

    def operations(self) -> list[dict]:
        """Normalized phone ATT procedures, decoded from the PDUs."""
        ops = []
        services = []  # (start, end, uuid) from Read By Group Type responses

        def service_of(handle):
            for start, end, uuid in services:
                if start <= handle <= end:
                    return uuid
            return None

        i = 0
        att = self.att
        while i < len(att):
            flags, pdu = att[i]
            i += 1
            if flags != 0:
                continue
            op = pdu[0]
            response = None
            while i < len(att) and att[i][0] != 1:
                i += 1
            if op in (0x02, 0x10, 0x08, 0x04, 0x0A, 0x12):
                while i < len(att) and att[i][1][0] == 0x1B:  # notifications in between
                    i += 1
                response = att[i][1]
                i += 1
            outcome = "ok"
            if response is not None and response[0] == 0x01 and response[4] != 0x0A:
                code = response[4]
                outcome = f"error:0x{code:02X} {ATT_ERROR_NAMES[code]}"
            if op == 0x02:
                entry = {"op": "exchange_mtu", "characteristic": None}
            elif op == 0x10:
                start = struct.unpack("<H", pdu[1:3])[0]
                if response[0] == 0x11:
                    length = response[1]
                    for j in range(2, len(response), length):
                        s, e = struct.unpack("<HH", response[j:j + 4])
                        services.append((s, e, response[j + 4:j + length][::-1].hex()))
                if start != 1:
                    continue  # continuation of the same procedure
                entry = {"op": "discover_services", "characteristic": None}
            elif op == 0x08:
                start, end = struct.unpack("<HH", pdu[1:5])
                if any(start == s for s, _e, _u in services):
                    entry = {"op": "discover_characteristics", "characteristic": None,
                             "service": service_of(start)}
                else:
                    continue  # continuation
            elif op == 0x04:
                start = struct.unpack("<H", pdu[1:3])[0]
                if start - 1 not in self.value_to_uuid:
                    continue  # continuation of the same procedure
                entry = {"op": "discover_descriptors",
                         "characteristic": self.value_to_uuid[start - 1],
                         "service": service_of(start)}
            elif op == 0x0A:
                h = struct.unpack("<H", pdu[1:3])[0]
                entry = {"op": "read", "characteristic": self.value_to_uuid[h]}
                if outcome == "ok":
                    entry["value"] = response[1:].hex()
                entry["handle"] = h
            elif op == 0x12:
                h = struct.unpack("<H", pdu[1:3])[0]
                char = next(c for c, hh, _v in self.cccd_writes if hh == h)
                entry = {"op": "write_cccd", "characteristic": char,
                         "value": {"0100": "notify", "0000": "none"}[pdu[3:].hex()],
                         "handle": h}
            else:
                raise AssertionError(f"unexpected ATT request {pdu.hex()}")
            entry["outcome"] = outcome
            ops.append(entry)
        for n, entry in enumerate(ops):
            entry["index"] = n
        return ops


def normalized(ops: list[dict]) -> list[tuple]:
    return [(o["op"], o["characteristic"], o.get("service"), o.get("value"), o["outcome"])
            for o in ops]


# -----------------------------------------------------------------------------
# Truth
# -----------------------------------------------------------------------------
def hr_stats(hr_rows: list[dict]) -> dict:
    bpm = [r["bpm"] for r in hr_rows]
    rr_ms = [x * 1000 / 1024 for r in hr_rows for x in r["rr"]]
    times = [r["t_s"] for r in hr_rows]
    gaps = [b - a for a, b in zip(times, times[1:])]
    return {
        "count": len(hr_rows),
        "duration_s": round(times[-1] - times[0], 6),
        "interval_median_s": round(statistics.median(gaps), 6),
        "interval_max_s": round(max(gaps), 6),
        "bpm_min": min(bpm), "bpm_mean": round(statistics.mean(bpm), 3), "bpm_max": max(bpm),
        "rr_count": len(rr_ms),
        "rr_mean_ms": round(statistics.mean(rr_ms), 3),
        "rr_sd_ms": round(statistics.stdev(rr_ms), 3),
        "rr_min_ms": round(min(rr_ms), 3), "rr_max_ms": round(max(rr_ms), 3),
    }


def file_truth(name: str, seeded: SeededSession, cfg: dict, record: Record,
               parsed: Parsed, size: int) -> dict:
    facts = record.facts
    t0 = parsed.hr[0][0]
    hr_rows = []
    for row, (ts, _hex) in zip(record.hr, parsed.hr):
        hr_rows.append({"k": row["k"], "t_s": (ts - t0) / 1e6, "bpm": row["bpm"],
                        "rr": row["rr"], "hex": row["hex"]})
    disconnect = facts["disconnect"]
    units = facts["interval_units"]
    return {
        "seed": seeded.seed,
        "base_time": BASE_TIMES[name].isoformat().replace("+00:00", "Z"),
        "records": len(parsed.records),
        "record_kinds": parsed.kinds,
        "bytes": size,
        "phone": {"random_address": seeded.phone_address,
                  "public_address": hr.PHONE_PUBLIC_ADDRESS,
                  "connection_handle": seeded.connection_handle,
                  "connection_handle_hex": f"0x{seeded.connection_handle:04X}"},
        "strap": {"name": hr.STRAP_NAME, "address": hr.STRAP_RANDOM_ADDRESS,
                  "address_type": "random", "public_address": hr.STRAP_PUBLIC_ADDRESS,
                  "appearance": hr.APPEARANCE_HEART_RATE_BELT},
        "connection": {
            "interval_units": units,
            "interval_ms": units * 1.25,
            "latency": 0,
            "supervision_timeout_units": SUPERVISION_TIMEOUT_MS // 10,
            "supervision_timeout_ms": SUPERVISION_TIMEOUT_MS,
            "mtu": {"client_rx_mtu": cfg["mtu"], "server_rx_mtu": SERVER_MTU,
                    "mtu": facts["mtu"]},
            "encryption": False,
            "phy_update": None,
            "data_length_update": None,
            "disconnect": {
                "initiator": "link (supervision timeout)" if cfg["supervision_timeout"]
                else "phone (HCI Disconnect)",
                "hci_disconnect_command": disconnect["command_reason"] is not None,
                "command_reason": disconnect["command_reason"],
                "event_reason": disconnect["event_reason"],
                "event_reason_name": REASON_NAMES[disconnect["event_reason"]],
            },
        },
        "strap_handles": facts["strap_handles"],
        "strap_attributes": facts["strap_attributes"],
        "operations": record.operations,
        "notifications": {
            "2a37": {"handle": facts["strap_handles"]["hrm"], "count": len(record.hr)},
            "2a19": {"handle": facts["strap_handles"]["battery_level"],
                     "count": len(record.battery_notifications)},
        },
        "battery_notifications": record.battery_notifications,
        "hr": hr_rows,
        "hr_stats": hr_stats(hr_rows),
    }


def pair_truth(files: dict) -> list[dict]:
    a = files["healthy_a.btsnoop"]
    b = files["broken_b.btsnoop"]
    hb = files["healthy_b.btsnoop"]
    attrs_a = {row[0]: row for row in a["strap_attributes"]}
    attrs_b = {row[0]: row for row in b["strap_attributes"]}
    moved = [h for h in attrs_a if h > 21]
    assert all(attrs_b[h - 2][1:3] == attrs_a[h][1:3] for h in moved)
    assert all(attrs_b[h][:3] == attrs_a[h][:3] for h in attrs_a if h < 14) and attrs_b[14][3] == 19
    ta = [r["t_s"] for r in a["hr"]]
    tb = [r["t_s"] for r in b["hr"]]
    gap_b = tb[GAP_INDEX] - tb[GAP_INDEX - 1]
    gap_a = ta[GAP_INDEX] - ta[GAP_INDEX - 1]
    differences = [
        {
            "kind": "subscription_missing",
            "characteristic": "2a19",
            "a": "notify",
            "b": None,
            "details": {
                "service": "180f",
                "cccd_handle_a": a["strap_handles"]["battery_cccd"],
                "cccd_handle_b": b["strap_handles"]["battery_cccd"],
                "cccd_writes_a": ["0100", "0000"],
                "cccd_writes_b": [],
                "consequence": "no Battery Level notification in B (A: 1 notification, value "
                               f"{BATTERY_NOTIFIED}); the operations write_cccd 2a19 notify and "
                               "write_cccd 2a19 none are absent from B",
                "battery_notifications_a": a["notifications"]["2a19"]["count"],
                "battery_notifications_b": b["notifications"]["2a19"]["count"],
            },
        },
        {
            "kind": "att_error",
            "characteristic": "2a38",
            "a": {"outcome": "ok", "opcode": "0x0B Read Response", "value": "01"},
            "b": {"outcome": "error", "opcode": "0x01 Error Response", "error_code": 5,
                  "error_code_hex": "0x05", "error_name": "Insufficient Authentication"},
            "details": {
                "request": "0x0A Read Request", "handle_a": 19, "handle_b": 19,
                "error_response_pdu_b": "010a130005",
                "error_code": 5, "error_name": "Insufficient Authentication",
            },
        },
        {
            "kind": "mtu",
            "characteristic": None,
            "a": a["connection"]["mtu"]["mtu"],
            "b": b["connection"]["mtu"]["mtu"],
            "details": {"client_rx_mtu_a": HEALTHY_MTU, "client_rx_mtu_b": BROKEN_MTU,
                        "server_rx_mtu_a": SERVER_MTU, "server_rx_mtu_b": SERVER_MTU,
                        "requested_by": "phone (ATT Exchange MTU Request)"},
        },
        {
            "kind": "connection_interval",
            "characteristic": None,
            "a": a["connection"]["interval_ms"],
            "b": b["connection"]["interval_ms"],
            "details": {
                "unit": "ms", "units_a": a["connection"]["interval_units"],
                "units_b": b["connection"]["interval_units"], "unit_ms": 1.25,
                "units_a_hex": f"0x{a['connection']['interval_units']:04X}",
                "units_b_hex": f"0x{b['connection']['interval_units']:04X}",
                "source": "LE Create Connection (interval min = max) and LE Connection Complete",
                "latency_a": 0, "latency_b": 0,
                "supervision_timeout_ms_a": SUPERVISION_TIMEOUT_MS,
                "supervision_timeout_ms_b": SUPERVISION_TIMEOUT_MS,
                "no_connection_update": True,
            },
        },
        {
            "kind": "disconnect_reason",
            "characteristic": None,
            "a": 0x13,
            "b": 0x08,
            "details": {
                "a": {"reason_hex": "0x13", "reason_name": REASON_NAMES[0x13],
                      "initiator": "phone", "hci_disconnect_command": True,
                      "command_reason": 0x13, "event_reason": 0x13},
                "b": {"reason_hex": "0x08", "reason_name": REASON_NAMES[0x08],
                      "initiator": "link (supervision timeout)", "hci_disconnect_command": False,
                      "command_reason": None, "event_reason": 0x08,
                      "silence_before_event_ms": SUPERVISION_TIMEOUT_MS},
                "note": "Bumble's emulated controller reports the command's reason 0x13 in the "
                        "phone's own Disconnection Complete (a real controller: 0x16)",
            },
        },
        {
            "kind": "gatt_characteristic_missing",
            "characteristic": "2a39",
            "a": {"declaration_handle": 20, "value_handle": 21, "properties": "write",
                  "properties_hex": "0x08", "service": "180d"},
            "b": None,
            "details": {
                "uuid": "2a39", "name": "Heart Rate Control Point", "service": "180d",
                "declaration_handle_a": 20, "value_handle_a": 21,
                "service_end_handle_a": 21, "service_end_handle_b": 19,
                "handle_shift": {"first_handle_a": 22, "last_handle_a": max(attrs_a),
                                 "delta": -2,
                                 "first_handle_b": 20, "last_handle_b": max(attrs_b)},
                "moved": {"battery_service": [22, 20], "battery_level": [24, 22],
                          "battery_cccd": [25, 23], "device_information_service": [26, 24]},
                "unchanged": "handles 1-19 (GAP, GATT, Heart Rate up to Body Sensor Location)",
                "operations": "none: Bumble sends no Find Information for 2a39 in A either",
            },
        },
        {
            "kind": "notification_gap",
            "characteristic": "2a37",
            "a": None,
            "b": {"start_s": round(tb[GAP_INDEX - 1], 6), "length_s": round(gap_b, 6)},
            "details": {
                "after_notification": GAP_INDEX - 1, "resumes_with_notification": GAP_INDEX,
                "start_s": round(tb[GAP_INDEX - 1], 6),
                "end_s": round(tb[GAP_INDEX], 6),
                "length_s": round(gap_b, 6),
                "length_s_a_same_place": round(gap_a, 6),
                "silence_beyond_period_s": round(gap_b - HR_PERIOD_US / 1e6, 6),
                "missed_periods_s": GAP_EXTRA_US / 1e6,
                "nominal": "notifications stop for 15 s: the interval is 16 s (+ jitter) "
                           "instead of 1 s; times relative to the first HR notification",
                "counts_equal": len(ta) == len(tb) == HR_COUNT,
                "values_equal": [r["hex"] for r in a["hr"]] == [r["hex"] for r in b["hr"]],
            },
        },
    ]
    assert round((gap_b - gap_a) * 1e6) == GAP_EXTRA_US
    return [
        {
            "a": "healthy_a.btsnoop",
            "b": "healthy_b.btsnoop",
            "expected": "equivalent",
            "differences": [],
            "legitimate_variations": {
                "phone_random_address": [a["phone"]["random_address"],
                                         hb["phone"]["random_address"]],
                "connection_handle": [a["phone"]["connection_handle_hex"],
                                      hb["phone"]["connection_handle_hex"]],
                "hr_values": "bpm = same curve + uniform -2..+2; RR from a differently seeded "
                             "beat train (1-3 per notification)",
                "hr_stats": [a["hr_stats"], hb["hr_stats"]],
                "timestamps": "base time, HR jitter -8..+8 ms, 2-3 ms gaps between other records",
                "same": "strap identity and GATT table, operations, MTU 247, interval 15 ms, "
                        "60 HR + 1 battery notifications, disconnect 0x13",
            },
        },
        {
            "a": "healthy_a.btsnoop",
            "b": "broken_b.btsnoop",
            "expected": "different",
            "differences": differences,
        },
    ]


def compact_json(obj, indent: int = 0) -> str:
    """Pretty JSON with short containers on one line."""
    flat = json.dumps(obj)
    if len(flat) + indent <= 100 or not isinstance(obj, (dict, list)) or not obj:
        return flat
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {compact_json(v, indent + 2)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + compact_json(v, indent + 2) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


# -----------------------------------------------------------------------------
# Verification against the bytes
# -----------------------------------------------------------------------------
def verify(name: str, cfg: dict, seeded: SeededSession, record: Record, parsed: Parsed) -> None:
    facts = record.facts
    # identity, connection
    assert parsed.random_addresses == [seeded.phone_address], parsed.random_addresses
    (cc,) = parsed.create_connection
    peer = ":".join(f"{b:02X}" for b in cc[4][::-1])
    assert peer == hr.STRAP_RANDOM_ADDRESS and cc[3] == 1 and cc[5] == 1, cc
    units = facts["interval_units"]
    assert cc[6] == cc[7] == units and cc[8] == 0 and cc[9] == SUPERVISION_TIMEOUT_MS // 10, cc
    (complete,) = parsed.connection_complete
    assert complete == {"status": 0, "handle": seeded.connection_handle, "role": 0,
                        "peer": hr.STRAP_RANDOM_ADDRESS, "interval": units, "latency": 0,
                        "timeout": SUPERVISION_TIMEOUT_MS // 10}, complete
    assert parsed.acl_handles == {seeded.connection_handle}, parsed.acl_handles
    assert not parsed.other_le_commands, parsed.other_le_commands
    # MTU
    assert parsed.mtu_requests == [cfg["mtu"]] and parsed.mtu_responses == [SERVER_MTU]
    # ATT errors: only Attribute Not Found, plus 0x05 on the BSL read in broken_b
    auth = [e for e in parsed.att_errors if e[2] != 0x0A]
    assert auth == ([(0x0A, 19, 0x05)] if cfg["bsl_requires_authentication"] else []), auth
    # CCCD writes
    expected_cccd = [("2a37", 17, "0100")]
    if cfg["subscribe_battery"]:
        expected_cccd.append(("2a19", facts["strap_handles"]["battery_cccd"], "0100"))
    expected_cccd.append(("2a37", 17, "0000"))
    if cfg["subscribe_battery"]:
        expected_cccd.append(("2a19", facts["strap_handles"]["battery_cccd"], "0000"))
    assert parsed.cccd_writes == expected_cccd, parsed.cccd_writes
    # notifications
    assert [h for _t, h in parsed.hr] == [r["hex"] for r in record.hr]
    assert parsed.battery == record.battery_notifications
    times = [t for t, _h in parsed.hr]
    gaps = [b - a for a, b in zip(times, times[1:])]
    for k, g in enumerate(gaps, start=1):
        expected = HR_PERIOD_US + seeded.hr_jitter_ms[k] * 1000
        if cfg["gap"] and k == GAP_INDEX:
            expected += GAP_EXTRA_US
        assert g == expected, (k, g, expected)
    # disconnect
    d = facts["disconnect"]
    if d["command_reason"] is None:
        assert parsed.disconnect_commands == []
    else:
        assert parsed.disconnect_commands == [(seeded.connection_handle, d["command_reason"])]
    assert parsed.disconnection_complete == [(0, seeded.connection_handle, d["event_reason"])]
    # operations decoded from the bytes == operations the script performed
    assert normalized(parsed.operations()) == normalized(record.operations), (
        normalized(parsed.operations()), normalized(record.operations))
    # timestamps strictly increasing
    all_times = [ts for _f, ts, _p in parsed.records]
    assert all_times == sorted(all_times) and len(set(all_times)) == len(all_times)


def tshark_check(path: str, cfg: dict, seeded: SeededSession, record: Record) -> str:
    import shutil
    import subprocess

    if not shutil.which("tshark"):
        return "tshark not installed"

    def fields(display_filter: str, *names: str) -> list[list[str]]:
        out = subprocess.run(
            ["tshark", "-r", path, "-Y", display_filter, "-T", "fields",
             *sum((["-e", n] for n in names), [])],
            check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    interval = fields("bthci_evt.le_meta_subevent == 0x01", "bthci_evt.le_con_interval",
                      "bthci_evt.connection_handle")
    mtu = fields("btatt.opcode == 0x02", "btatt.client_rx_mtu")
    errors = fields("btatt.opcode == 0x01 && btatt.error_code != 0x0a",
                    "btatt.error_code", "btatt.handle")
    reasons = fields("bthci_evt.code == 0x05", "bthci_evt.reason")
    hr_values = fields("btatt.opcode == 0x1b && btatt.handle == 0x0010",
                       "btatt.heart_rate_measurement.value.8",
                       "btatt.heart_rate_measurement.rr_interval")
    hr_count = len(hr_values)
    assert [(int(v[0]), [int(x) for x in v[1].split(",")]) for v in hr_values] == [
        (r["bpm"], r["rr"]) for r in record.hr], "tshark HR values differ"
    create = fields("bthci_cmd.opcode == 0x200d", "bthci_cmd.le_con_interval_min",
                    "bthci_cmd.le_con_interval_max")
    units = round(cfg["interval_ms"] / 1.25)
    assert [[int(x, 0) for x in c] for c in create] == [[units, units]], create
    assert len(interval) == 1 and int(interval[0][0], 0) == units, interval
    assert int(interval[0][1], 0) == seeded.connection_handle, interval
    assert [int(m[0]) for m in mtu] == [cfg["mtu"]], mtu
    if cfg["bsl_requires_authentication"]:
        assert len(errors) == 1 and int(errors[0][0], 0) == 5 and int(errors[0][1], 0) == 19, errors
    else:
        assert errors == [], errors
    reason = 0x08 if cfg["supervision_timeout"] else 0x13
    assert [int(r[0], 0) for r in reasons] == [reason], reasons
    assert hr_count == HR_COUNT, hr_count
    return (f"tshark ok: create {create[0]}, complete interval {interval[0][0]}, handle "
            f"{interval[0][1]}, MTU {mtu[0][0]}, errors {errors}, reasons "
            f"{[r[0] for r in reasons]}, {hr_count} HRM values + RR equal")


# -----------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "captures", "diff"))
    parser.add_argument("--out-dir", default=default_out)
    parser.add_argument("--no-tshark", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)
    os.makedirs(args.out_dir, exist_ok=True)

    files = {}
    for name, cfg in SESSIONS.items():
        start = time.monotonic()
        seeded = SeededSession(SEEDS[name])
        snooper = ls.GatedSnooper(enabled=True)
        record = Record()
        asyncio.run(run_session(snooper, seeded, cfg, record))
        data = retime(snooper.buffer.getvalue(), seeded, cfg, BASE_TIMES[name])
        path = os.path.join(args.out_dir, f"{name}.btsnoop")
        with open(path, "wb") as f:
            f.write(data)
        size = os.path.getsize(path)
        assert size < 64 * 1024, (path, size)
        parsed = Parsed(path, record.facts["strap_attributes"])
        verify(name, cfg, seeded, record, parsed)
        files[f"{name}.btsnoop"] = file_truth(name, seeded, cfg, record, parsed, size)
        note = "" if args.no_tshark else "; " + tshark_check(path, cfg, seeded, record)
        print(f"[{name}] {time.monotonic() - start:.1f} s: {path}: {size} bytes, "
              f"{len(parsed.records)} records {parsed.kinds}, phone {seeded.phone_address} "
              f"handle 0x{seeded.connection_handle:04X}{note}")

    # The healthy pair: same operations, same strap, same connection story.
    ha, hb = files["healthy_a.btsnoop"], files["healthy_b.btsnoop"]
    for key in ("operations", "strap_handles", "strap_attributes", "notifications",
                "battery_notifications", "strap"):
        assert ha[key] == hb[key], key
    assert ha["connection"] == hb["connection"]
    assert ha["phone"]["random_address"] != hb["phone"]["random_address"]
    assert ha["phone"]["connection_handle"] != hb["phone"]["connection_handle"]
    # broken_b: same seed-decided facts as healthy_a
    br = files["broken_b.btsnoop"]
    assert br["phone"] == ha["phone"]
    assert [r["hex"] for r in br["hr"]] == [r["hex"] for r in ha["hr"]]

    truth = {
        "generator": "Scripts/captures/make_diff_pairs.py (bumble 0.0.236)",
        "seeds": SEEDS,
        "schema": {
            "difference": {"kind": "subscription_missing | att_error | mtu | connection_interval"
                           " | disconnect_reason | gatt_characteristic_missing | notification_gap",
                           "characteristic": "16-bit UUID as 4 lower-case hex digits, or null",
                           "a": "value in A (null = absent)", "b": "value in B (null = absent)",
                           "details": "exact values, per kind"},
            "times": "seconds relative to the file's first Heart Rate Measurement notification",
        },
        "files": files,
        "pairs": pair_truth(files),
    }
    text = compact_json(truth) + "\n"
    json.loads(text)
    truth_path = os.path.join(args.out_dir, "pairs.truth.json")
    with open(truth_path, "w") as f:
        f.write(text)
    print(f"{truth_path}: {os.path.getsize(truth_path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
