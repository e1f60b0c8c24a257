#!/usr/bin/env python3
"""Record a real-stack BLE heart-rate session with Google Bumble.

One process, one ``bumble.link.LocalLink``, two emulated ``bumble.controller.Controller``
instances, each driven by its own ``bumble.host.Host`` + ``bumble.device.Device``:

* "phone"  - GAP central / GATT client, static random address C0:B1:ED:00:50:48
             (controller public address 00:B1:ED:00:00:01).
* "strap"  - GAP peripheral / GATT server named "bledissect HR", static random
             address D0:B1:ED:00:48:52 (controller public address 00:B1:ED:00:00:02).

The strap's GATT database: GAP (device name, appearance 0x0341 Heart Rate Belt),
GATT (service changed + CCCD, database hash, ...), Heart Rate 0x180D (Heart Rate
Measurement 0x2A37 notify + CCCD, Body Sensor Location 0x2A38 read = chest, Heart
Rate Control Point 0x2A39 write), Battery 0x180F (Battery Level 0x2A19 read+notify
+ CCCD) and Device Information 0x180A (manufacturer name, model number, serial
number, firmware revision).  Bumble's own profile classes are used
(bumble.profiles.heart_rate_service / battery_service / device_information_service
/ gap).

Advertising (legacy HCI advertising commands, ADV_IND, see NOTE below):
  adv data (31 bytes):  Flags 0x06, Complete Local Name "bledissect HR",
                        Complete List of 16-bit UUIDs {0x180D, 0x180F},
                        Manufacturer Specific Data company 0xFFFF + 'b','d','1'
  scan rsp data:        Appearance 0x0341, TX Power Level 0 dBm,
                        Peripheral Connection Interval Range 24..40 (30..50 ms),
                        Service Data 0x180F (battery 87 %)
  (everything the brief lists does not fit in 31 bytes, so Appearance moved to the
  scan response; the phone also reads it from the GAP Appearance characteristic.)

Session, in order (as seen by the phone):
  power on (HCI Reset + Bumble's init sequence), active extended scan until the
  strap is seen, stop scan, LE Create Connection, ATT Exchange MTU (247), discover
  all primary services, all characteristics, all descriptors; read GAP device name
  + appearance, DIS manufacturer/model/serial/firmware, body sensor location,
  battery level; the strap sends an L2CAP LE Connection Parameter Update Request
  (Bumble's central host accepts it and issues HCI LE Connection Update); the phone
  enables notifications on 0x2A37 and 0x2A19 (CCCD Write Requests); the strap sends
  the first block of Heart Rate Measurement notifications; the phone writes 0x01
  (Reset Energy Expended) to the control point with a Write Request; the strap
  sends the remaining notifications (energy expended restarting at 0) plus one
  battery level notification; the phone requests a connection parameter update
  (HCI LE Connection Update) and finally disconnects (0x13 remote user terminated).

The heart-rate measurements are the fixed list HR_MEASUREMENTS below (21 entries)
and cover every flag combination of interest within one connection: 8-bit and
16-bit value format (including 16-bit format carrying small values such as 80 and
180 bpm), sensor contact supported-but-not-detected / detected (the Sensor Contact
Supported bit, flags bit 2, is set in all of them: HRS 1.0 3.1.1.1 wants it static
while in a connection; "not supported", 0b00 and 0b01, is in late_concat.btsnoop's
second connection, make_late_start.py), energy expended present/absent (incl. 0
after the reset), and 0, 1 and several RR intervals, including one 20-byte value
(max for MTU 23) and one 21-byte value (which the strap's host sends as two ACL
fragments).  Notifications are --interval seconds apart (default 1.0 s, like a
real strap).

Outputs (BTSnooper from bumble/snoop.py, attached as ``Host.snooper``, i.e. the
host<->controller HCI traffic of that device; datalink 1002 = H4, timestamps are
wall clock, so every run produces different timestamps):
  captures/hr_strap_session.btsnoop      - the phone's (central's) HCI traffic
  captures/hr_strap_peripheral.btsnoop   - the strap's (peripheral's) HCI traffic

--timestamps-from DIR: give each record the timestamp of the same record in DIR's
file of the same name (read before the run, so DIR may be --out-dir) instead of the
wall clock.  The run must match that file record by record (same count, same btsnoop
flags, same lengths, same bytes except the values of Heart Rate Measurement
notifications), else nothing is written.  The committed files are made this way
(`--timestamps-from captures`): when issue 28 changed five measurement values, the
first recording's times (2026-11-30) were kept, so the samples derived from this
session (the sniffed copies in captures/air/, which place packets by these times)
keep their connection events; reruns give identical bytes.

Usage:  python3 Scripts/captures/make_hr_session.py [--out-dir captures]
                                                    [--interval 1.0]
                                                    [--timestamps-from DIR]
Needs: Python 3.11+, bumble (tested with 0.0.236).  Nothing else.

NOTE on Bumble quirks (0.0.236, emulated controller), all kept as-is:
  * BtSnooper writes datalink 1002 (H4) and sets flag bit 0x02 for command/event
    packets (bit 0 = direction: 0 host->controller, 1 controller->host).
  * The emulated controller advertises LE Extended Advertising support, so Bumble
    would use the extended advertising HCI commands.  To get the classic
    (legacy) advertising commands on the strap we clear LE_EXTENDED_ADVERTISING in
    the strap controller's feature mask (a controller *configuration*, nothing is
    patched).  The phone keeps the default and therefore uses LE Set Extended
    Scan Parameters/Enable and receives LE Extended Advertising Reports, but its
    controller does not list LE Extended Create Connection as supported, so the
    phone connects with the legacy LE Create Connection and gets the legacy LE
    Connection Complete event.
  * The emulated controller reports the scan response with the *advertising*
    data (it copies the ADV_IND payload), so the real scan response data only
    appears in the strap's LE Set Scan Response Data command.
  * Controller->host ACL data is never fragmented (whole L2CAP PDUs in one ACL
    packet, even when longer than the advertised 27-byte LE buffer size);
    host->controller ACL data is fragmented by the Bumble host to 27 bytes.
  * Each host->controller ACL packet is answered by a Number Of Completed Packets
    event immediately.
  * The two LE Connection Complete events disagree: the phone's carries the
    requested parameters (interval 0x000C, latency 0, timeout 0x0048), the
    strap's the emulator's placeholders (interval 0x000A, timeout 0x000A).
  * Bumble's GATT client re-runs a Find Information on the characteristic's
    range before each CCCD write (subscribe()), and characteristic discovery
    issues one extra Read By Type per service that ends in Attribute Not Found.

Tooling note: btmon 5.66 (Debian 12) segfaults on these files as soon as it
meets an ATT Read By Type Request for UUID 0x2803 (characteristic discovery);
that is a btmon bug (a one-record file with just that PDU crashes it too).
With those 10 records removed btmon reads the rest of either file.  tshark
4.0 decodes everything, including the heart-rate measurement fields.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import struct
import sys
import time

from bumble import hci
from bumble.controller import Controller
from bumble.core import AdvertisingData
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.gatt import (
    GATT_APPEARANCE_CHARACTERISTIC,
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_DEVICE_NAME_CHARACTERISTIC,
    GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
    GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
    GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC,
)
from bumble.host import Host
from bumble.link import LocalLink
from bumble.profiles.battery_service import BatteryService
from bumble.profiles.device_information_service import DeviceInformationService
from bumble.profiles.gap import GenericAccessService
from bumble.profiles.heart_rate_service import HeartRateService
from bumble.snoop import BtSnooper, Snooper
from bumble.transport.common import AsyncPipeSink

try:
    from bumble import __version__ as BUMBLE_VERSION  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    BUMBLE_VERSION = "unknown"

# -----------------------------------------------------------------------------
# Fixed identities
# -----------------------------------------------------------------------------
STRAP_NAME = "bledissect HR"
PHONE_NAME = "bledissect phone"
STRAP_RANDOM_ADDRESS = "D0:B1:ED:00:48:52"  # static random (top bits 11)
PHONE_RANDOM_ADDRESS = "C0:B1:ED:00:50:48"  # static random
STRAP_PUBLIC_ADDRESS = "00:B1:ED:00:00:02"
PHONE_PUBLIC_ADDRESS = "00:B1:ED:00:00:01"

APPEARANCE_HEART_RATE_BELT = 0x0341
TEST_COMPANY_ID = 0xFFFF
ATT_MTU = 247
BATTERY_LEVELS = (87, 86)  # read value, later notified value

HR_CONTROL_POINT_RESET_ENERGY_EXPENDED = 0x01

# Flags of the Heart Rate Measurement characteristic value.
F_UINT16 = 0x01
F_CONTACT_DETECTED = 0x02
F_CONTACT_SUPPORTED = 0x04
F_ENERGY = 0x08
F_RR = 0x10

NOT_SUPPORTED, NOT_DETECTED, DETECTED = "unsupported", "not-detected", "detected"
# Sensor Contact Status field value 1 (flags bit 1 set, bit 2 clear): also means
# "not supported" per HRS 1.0; real straps send both encodings.
NOT_SUPPORTED_ALT = "unsupported-alt"

# (heart rate bpm, 16-bit format?, sensor contact, energy expended kJ or None,
#  RR intervals in 1/1024 s units)
# Entries 0..12 are sent before the control point write (Reset Energy Expended),
# entries 13..20 after it (energy expended restarts at 0).
HR_MEASUREMENTS: list[tuple[int, bool, str, int | None, tuple[int, ...]]] = [
    (72, False, NOT_DETECTED, None, ()),                   # flags 0x04
    (73, False, NOT_DETECTED, None, ()),                   # flags 0x04
    (74, False, DETECTED, None, (830,)),                   # flags 0x16
    (75, False, DETECTED, 12, (819,)),                     # flags 0x1E
    (78, False, DETECTED, None, (790, 785)),               # flags 0x16
    (80, True, DETECTED, None, ()),                        # flags 0x07
    (82, True, DETECTED, 15, (750,)),                      # flags 0x1F
    (90, False, DETECTED, 18, ()),                         # flags 0x0E
    (96, False, NOT_DETECTED, 20, ()),                     # flags 0x0C
    (99, False, DETECTED, None, (620,)),                   # flags 0x16
    (101, False, NOT_DETECTED, None, (610, 605, 600)),     # flags 0x14
    (118, True, NOT_DETECTED, 27, ()),                     # flags 0x0D
    (135, False, DETECTED, 31, (520, 515, 510)),           # flags 0x1E
    # --- control point: reset energy expended ---
    (150, True, DETECTED, 0, (410, 408)),                  # flags 0x1F
    (160, False, DETECTED, 1, (384,)),                     # flags 0x1E
    (184, False, DETECTED, None,                           # flags 0x16, 20 bytes
     (335, 334, 333, 334, 335, 336, 334, 333, 332)),
    (180, True, DETECTED, 2,                               # flags 0x1F, 21 bytes
     (341, 340, 342, 341, 340, 339, 341, 342)),
    (170, True, NOT_DETECTED, None, (361, 362)),           # flags 0x15
    (140, True, NOT_DETECTED, None, ()),                   # flags 0x05
    (120, False, NOT_DETECTED, 3, (512,)),                 # flags 0x1C
    (95, False, DETECTED, 4, (647, 650)),                  # flags 0x1E
]
# Sensor Contact Supported (flags bit 2) is set in every entry: HRS 1.0 3.1.1.1 wants it
# static while in a connection, and all 21 go over one connection.  (Until issue 28 five
# entries had it clear, 0x00 0x12 0x10 0x09 0x01; each of them now has only bit 2 added.)
RESET_AFTER = 13  # number of notifications sent before the control point write
BATTERY_NOTIFY_AFTER = 17  # battery notification after this many HR notifications


def encode_hr_measurement(
    bpm: int, uint16: bool, contact: str, energy: int | None, rr: tuple[int, ...]
) -> bytes:
    """Encode a Heart Rate Measurement value exactly (HRS 1.0, 3.1.1)."""
    flags = 0
    body = b""
    if uint16 or bpm > 255:
        flags |= F_UINT16
        body += struct.pack("<H", bpm)
    else:
        body += struct.pack("<B", bpm)
    if contact == NOT_SUPPORTED_ALT:
        flags |= F_CONTACT_DETECTED
    elif contact == NOT_DETECTED:
        flags |= F_CONTACT_SUPPORTED
    elif contact == DETECTED:
        flags |= F_CONTACT_SUPPORTED | F_CONTACT_DETECTED
    if energy is not None:
        flags |= F_ENERGY
        body += struct.pack("<H", energy)
    if rr:
        flags |= F_RR
        body += b"".join(struct.pack("<H", v) for v in rr)
    return bytes([flags]) + body


def hr_measurement_values() -> list[bytes]:
    values = [encode_hr_measurement(*m) for m in HR_MEASUREMENTS]
    # Cross-check against Bumble's own decoder.
    for (bpm, _u16, contact, energy, rr), value in zip(HR_MEASUREMENTS, values):
        decoded = HeartRateService.HeartRateMeasurement.from_bytes(value)
        assert decoded.heart_rate == bpm
        assert decoded.energy_expended == energy
        assert decoded.sensor_contact_detected == {
            NOT_SUPPORTED: None, NOT_SUPPORTED_ALT: None, NOT_DETECTED: False, DETECTED: True
        }[contact]
        assert tuple(round(x * 1024) for x in (decoded.rr_intervals or ())) == rr
    return values


def advertising_data() -> bytes:
    def ad(ad_type: int, payload: bytes) -> bytes:
        return bytes([len(payload) + 1, ad_type]) + payload

    data = (
        ad(AdvertisingData.FLAGS, bytes([0x06]))
        + ad(AdvertisingData.COMPLETE_LOCAL_NAME, STRAP_NAME.encode())
        + ad(
            AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
            struct.pack("<HH", 0x180D, 0x180F),
        )
        + ad(
            AdvertisingData.MANUFACTURER_SPECIFIC_DATA,
            struct.pack("<H", TEST_COMPANY_ID) + b"bd1",
        )
    )
    assert len(data) <= 31, len(data)
    return data


def scan_response_data() -> bytes:
    def ad(ad_type: int, payload: bytes) -> bytes:
        return bytes([len(payload) + 1, ad_type]) + payload

    data = (
        ad(AdvertisingData.APPEARANCE, struct.pack("<H", APPEARANCE_HEART_RATE_BELT))
        + ad(AdvertisingData.TX_POWER_LEVEL, bytes([0x00]))
        + ad(AdvertisingData.PERIPHERAL_CONNECTION_INTERVAL_RANGE, struct.pack("<HH", 24, 40))
        + ad(AdvertisingData.SERVICE_DATA_16_BIT_UUID, struct.pack("<HB", 0x180F, BATTERY_LEVELS[0]))
    )
    assert len(data) <= 31, len(data)
    return data


# -----------------------------------------------------------------------------
# Setup
# -----------------------------------------------------------------------------
class Stack:
    """A Controller + Host + Device triple on a shared LocalLink."""

    def __init__(
        self,
        link: LocalLink,
        name: str,
        public_address: str,
        random_address: str,
        snoop,
        legacy_advertising_only: bool = False,
        gap_appearance: int = 0,
    ) -> None:
        self.controller = Controller(name, link=link, public_address=public_address)
        if legacy_advertising_only:
            self.controller.le_features = (
                self.controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
            )
        self.host = Host(self.controller, AsyncPipeSink(self.controller))
        # ``snoop`` may be a binary file (wrapped in Bumble's BtSnooper), a ready
        # made bumble.snoop.Snooper, or None (no capture for this side).
        if snoop is None or isinstance(snoop, Snooper):
            self.snooper = snoop
        else:
            self.snooper = BtSnooper(snoop)
        self.host.snooper = self.snooper
        config = DeviceConfiguration()
        config.name = name
        config.address = hci.Address(random_address)
        config.irk = (bytes(config.address) * 3)[:16]
        config.gap_service_enabled = False
        config.gatt_service_enabled = False
        self.device = Device(config=config, host=self.host)
        # GAP first (with a real appearance), then GATT, like most stacks.
        self.device.add_service(GenericAccessService(name, appearance=gap_appearance))
        self.device.add_default_services(add_gap_service=False, add_gatt_service=True)


class Strap:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.device = stack.device
        self.energy_resets = 0
        self.hrs = HeartRateService(
            read_heart_rate_measurement=lambda _conn: HeartRateService.HeartRateMeasurement(
                heart_rate=0
            ),
            body_sensor_location=HeartRateService.BodySensorLocation.CHEST,
            reset_energy_expended=self._on_reset_energy_expended,
        )
        self.battery_level = BATTERY_LEVELS[0]
        self.bas = BatteryService(read_battery_level=lambda _conn: self.battery_level)
        self.dis = DeviceInformationService(
            manufacturer_name="bledissect labs",
            model_number="HRS-1",
            serial_number="0001-2025",
            firmware_revision="1.2.3",
        )
        self.device.add_services([self.hrs, self.bas, self.dis])
        self.device.advertising_data = advertising_data()
        self.device.scan_response_data = scan_response_data()
        self.reset_event = asyncio.Event()

    def _on_reset_energy_expended(self, _connection) -> None:
        self.energy_resets += 1
        self.reset_event.set()

    async def notify_hr(self, value: bytes) -> None:
        # SerializableCharacteristicAdapter.encode_value() is bytes(value), so
        # raw bytes pass through unchanged; this lets us send exact encodings
        # (e.g. a 16-bit value format for small bpm values).
        await self.device.notify_subscribers(
            self.hrs.heart_rate_measurement_characteristic, value
        )

    async def notify_battery(self, level: int) -> None:
        self.battery_level = level
        await self.device.notify_subscribers(
            self.bas.battery_level_characteristic, level
        )


# -----------------------------------------------------------------------------
# Session
# -----------------------------------------------------------------------------
async def run_session(
    central_snoop,
    peripheral_snoop,
    measurements: list[bytes] | None = None,
    interval: float = 1.0,
    reset_after: int = RESET_AFTER,
    battery_after: int = BATTERY_NOTIFY_AFTER,
    bulk_measurements=None,
    bulk_battery_read_every: int = 0,
    mark=None,
    log=print,
) -> dict:
    """Run the whole phone <-> strap session.

    ``bulk_measurements`` (optional) is an iterable of bytes sent as extra
    notifications right after the fixed list (used by the benchmark generator);
    they are sent back to back with at most 8 notifications in flight.  If
    ``bulk_battery_read_every`` is > 0, the phone additionally reads the battery
    level (ATT Read Request/Response) every that many bulk notifications.
    ``mark(name)`` (optional) is called at 'bulk_start' and 'bulk_end'.
    """
    if measurements is None:
        measurements = hr_measurement_values()

    link = LocalLink()
    phone_stack = Stack(link, PHONE_NAME, PHONE_PUBLIC_ADDRESS, PHONE_RANDOM_ADDRESS, central_snoop)
    strap_stack = Stack(
        link,
        STRAP_NAME,
        STRAP_PUBLIC_ADDRESS,
        STRAP_RANDOM_ADDRESS,
        peripheral_snoop,
        legacy_advertising_only=True,
        gap_appearance=APPEARANCE_HEART_RATE_BELT,
    )
    strap = Strap(strap_stack)
    phone = phone_stack.device

    stats: dict = {}

    await strap.device.power_on()
    await phone.power_on()

    strap_connected = asyncio.get_running_loop().create_future()
    strap.device.once(Device.EVENT_CONNECTION, strap_connected.set_result)
    await strap.device.start_advertising(
        advertising_interval_min=100.0, advertising_interval_max=100.0
    )

    # --- phone: active scan until the strap shows up -------------------------
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement) -> None:
        name = advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME)
        if name == STRAP_NAME and not found.done():
            found.set_result(advertisement)

    phone.on(Device.EVENT_ADVERTISEMENT, on_advertisement)
    await phone.start_scanning(active=True, filter_duplicates=True)
    advertisement = await found
    await phone.stop_scanning()
    phone.remove_listener(Device.EVENT_ADVERTISEMENT, on_advertisement)
    log(f"found {STRAP_NAME} at {advertisement.address}")

    connection = await phone.connect(advertisement.address)
    strap_connection = await strap_connected
    log(f"connected: phone handle 0x{connection.handle:04X}, strap handle 0x{strap_connection.handle:04X}")

    peer = Peer(connection)
    mtu = await peer.request_mtu(ATT_MTU)
    log(f"ATT MTU {mtu}")

    # --- discovery ----------------------------------------------------------
    await peer.discover_services()
    for service in peer.services:
        await peer.discover_characteristics(service=service)
    for service in peer.services:
        for characteristic in service.characteristics:
            await peer.discover_descriptors(characteristic=characteristic)
    stats["services"] = [str(s.uuid) for s in peer.services]

    def char(uuid):
        found_chars = peer.get_characteristics_by_uuid(uuid)
        assert found_chars, f"characteristic {uuid} not found"
        return found_chars[0]

    # --- reads --------------------------------------------------------------
    reads = {}
    for label, uuid in (
        ("device_name", GATT_DEVICE_NAME_CHARACTERISTIC),
        ("appearance", GATT_APPEARANCE_CHARACTERISTIC),
        ("manufacturer", GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC),
        ("model", GATT_MODEL_NUMBER_STRING_CHARACTERISTIC),
        ("serial", GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC),
        ("firmware", GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC),
        ("body_sensor_location", GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC),
        ("battery_level", GATT_BATTERY_LEVEL_CHARACTERISTIC),
    ):
        reads[label] = bytes(await peer.read_value(char(uuid)))
    stats["reads"] = {k: v.hex() for k, v in reads.items()}
    log("reads: " + ", ".join(f"{k}={v!r}" for k, v in reads.items()))

    # --- strap asks for new connection parameters over L2CAP signalling ---------
    phone_update = asyncio.get_running_loop().create_future()
    connection.once(
        connection.EVENT_CONNECTION_PARAMETERS_UPDATE,
        lambda *_: phone_update.done() or phone_update.set_result(None),
    )
    await strap.device.update_connection_parameters(
        strap_connection,
        connection_interval_min=30.0,
        connection_interval_max=50.0,
        max_latency=0,
        supervision_timeout=5000.0,
        use_l2cap=True,
    )
    await phone_update
    log(f"connection parameters after L2CAP request: {connection.parameters}")

    # --- subscriptions ------------------------------------------------------
    hr_queue: asyncio.Queue[bytes] = asyncio.Queue()
    battery_queue: asyncio.Queue[bytes] = asyncio.Queue()
    hr_char = char(GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    battery_char = char(GATT_BATTERY_LEVEL_CHARACTERISTIC)
    await peer.subscribe(hr_char, lambda value: hr_queue.put_nowait(bytes(value)))
    await peer.subscribe(battery_char, lambda value: battery_queue.put_nowait(bytes(value)))

    received: list[bytes] = []

    async def notify_and_wait(value: bytes) -> None:
        await strap.notify_hr(value)
        got = await hr_queue.get()
        assert got == value, (got.hex(), value.hex())
        received.append(got)

    # --- fixed measurement list, with the control point write in the middle ---
    battery_notifications = 0
    for index, value in enumerate(measurements):
        if index == reset_after:
            await peer.write_value(
                char(GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC),
                bytes([HR_CONTROL_POINT_RESET_ENERGY_EXPENDED]),
                with_response=True,
            )
            await asyncio.wait_for(strap.reset_event.wait(), 5)
            log("control point: reset energy expended acknowledged")
        if index and interval:
            await asyncio.sleep(interval)
        await notify_and_wait(value)
        if index + 1 == battery_after:
            await strap.notify_battery(BATTERY_LEVELS[1])
            level = await battery_queue.get()
            assert level == bytes([BATTERY_LEVELS[1]])
            battery_notifications += 1

    # --- optional bulk phase (benchmark) --------------------------------------
    bulk_count = 0
    bulk_reads = 0
    if bulk_measurements is not None:
        if mark:
            mark("bulk_start")
        window = 8
        pending = 0
        for value in bulk_measurements:
            await strap.notify_hr(value)
            pending += 1
            bulk_count += 1
            if pending >= window:
                await hr_queue.get()
                pending -= 1
            if bulk_battery_read_every and bulk_count % bulk_battery_read_every == 0:
                while pending:
                    await hr_queue.get()
                    pending -= 1
                await peer.read_value(battery_char)
                bulk_reads += 1
        while pending:
            await hr_queue.get()
            pending -= 1
        if mark:
            mark("bulk_end")

    # --- phone asks for slower parameters, then disconnects -------------------
    await asyncio.sleep(min(interval, 0.2))
    await connection.update_parameters(
        connection_interval_min=45.0,
        connection_interval_max=60.0,
        max_latency=4,
        supervision_timeout=6000.0,
    )
    log(f"connection parameters after phone update: {connection.parameters}")

    strap_disconnected = asyncio.get_running_loop().create_future()
    strap_connection.once(
        strap_connection.EVENT_DISCONNECTION, strap_disconnected.set_result
    )
    await connection.disconnect()
    reason = await asyncio.wait_for(strap_disconnected, 5)
    log(f"disconnected (strap saw reason 0x{reason:02X})")
    # Let the last events (e.g. Number Of Completed Packets) drain.
    for _ in range(5):
        await asyncio.sleep(0)

    stats["hr_notifications"] = len(received)
    stats["bulk_notifications"] = bulk_count
    stats["bulk_battery_reads"] = bulk_reads
    stats["battery_notifications"] = battery_notifications
    stats["energy_resets"] = strap.energy_resets
    stats["mtu"] = mtu
    return stats


# -----------------------------------------------------------------------------
# btsnoop helpers (used for the summary)
# -----------------------------------------------------------------------------
def read_btsnoop_records(data: bytes) -> list[tuple[int, int, bytes]]:
    """[(btsnoop flags, timestamp, packet)] of a btsnoop v1 file."""
    assert data[:8] == b"btsnoop\0", "not a btsnoop file"
    records = []
    offset = 16
    while offset < len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIQ", data[offset:offset + 24])
        assert orig == incl and drops == 0
        records.append((flags, ts, data[offset + 24:offset + 24 + incl]))
        offset += 24 + incl
    assert offset == len(data)
    return records


def is_hrm_notification(packet: bytes, hrm_handle: int = 0x0010) -> bool:
    """An H4 ACL packet starting an ATT Handle Value Notification on ``hrm_handle`` (the
    whole PDU, or the first fragment of one the host fragments)."""
    if len(packet) < 12 or packet[0] != 0x02:
        return False
    handle_flags, acl_length, l2cap_length, cid = struct.unpack("<HHHH", packet[1:9])
    return ((handle_flags >> 12) & 3 != 1 and acl_length == len(packet) - 5
            and l2cap_length >= acl_length - 4 and cid == 4
            and packet[9] == 0x1B and struct.unpack("<H", packet[10:12])[0] == hrm_handle)


def timestamps_from(data: bytes, reference: bytes, name: str) -> bytes:
    """``data`` with every record's timestamp taken from the same record of ``reference``
    (see --timestamps-from); the two must match record by record but for HRM values."""
    new, old = read_btsnoop_records(data), read_btsnoop_records(reference)
    assert data[:16] == reference[:16], f"{name}: btsnoop header differs"
    assert len(new) == len(old), f"{name}: {len(new)} records, the reference has {len(old)}"
    out = bytearray(data[:16])
    changed = 0
    for n, ((flags, _ts, packet), (old_flags, old_ts, old_packet)) in enumerate(zip(new, old), 1):
        assert flags == old_flags and len(packet) == len(old_packet), f"{name}: record {n} differs in kind"
        if packet != old_packet:
            # (the HRM value handle is 0x0010; its flags byte is in the first fragment)
            assert packet[:12] == old_packet[:12] and is_hrm_notification(packet), \
                f"{name}: record {n} differs outside a Heart Rate Measurement value"
            changed += 1
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, old_ts) + packet
    print(f"{name}: timestamps of the reference kept; {changed} records differ from it "
          "(Heart Rate Measurement values)")
    return bytes(out)


def btsnoop_record_count(path: str) -> int:
    count = 0
    with open(path, "rb") as f:
        header = f.read(16)
        assert header[:8] == b"btsnoop\0", path
        while True:
            rec = f.read(24)
            if len(rec) < 24:
                break
            incl = struct.unpack(">I", rec[4:8])[0]
            f.seek(incl, os.SEEK_CUR)
            count += 1
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "captures"))
    parser.add_argument("--out-dir", default=default_out)
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="seconds between heart-rate notifications (default 1.0, like a real strap)",
    )
    parser.add_argument("--no-peripheral", action="store_true", help="skip the strap-side capture")
    parser.add_argument(
        "--timestamps-from",
        metavar="DIR",
        help="take each record's timestamp from DIR's file of the same name (see the docstring)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)

    os.makedirs(args.out_dir, exist_ok=True)
    central_path = os.path.join(args.out_dir, "hr_strap_session.btsnoop")
    peripheral_path = os.path.join(args.out_dir, "hr_strap_peripheral.btsnoop")
    paths = [central_path] + ([] if args.no_peripheral else [peripheral_path])
    references = {}
    if args.timestamps_from:
        for path in paths:
            with open(os.path.join(args.timestamps_from, os.path.basename(path)), "rb") as f:
                references[path] = f.read()

    start = time.monotonic()
    buffers = {path: io.BytesIO() for path in paths}
    stats = asyncio.run(
        run_session(
            buffers[central_path],
            None if args.no_peripheral else buffers[peripheral_path],
            interval=args.interval,
        )
    )
    elapsed = time.monotonic() - start
    outputs = {path: buffer.getvalue() for path, buffer in buffers.items()}
    if references:
        outputs = {
            path: timestamps_from(data, references[path], os.path.basename(path))
            for path, data in outputs.items()
        }
    for path, data in outputs.items():
        with open(path, "wb") as f:
            f.write(data)

    print(f"bumble {BUMBLE_VERSION}, session took {elapsed:.1f} s")
    print(f"stats: {stats}")
    for path in paths:
        print(f"{path}: {btsnoop_record_count(path)} records, {os.path.getsize(path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
