#!/usr/bin/env python3
"""Record real-stack BLE captures for the L2CAP / ATT / GATT / profile decoders.

Same set-up as make_hr_session.py (which this script imports and reuses: the
heart-rate strap class, the fixed identities of the phone, the HR measurement
encoder and the btsnoop record counter): one process, one
``bumble.link.LocalLink``, one emulated ``bumble.controller.Controller`` per
device, each driven by its own ``bumble.host.Host`` + ``bumble.device.Device``,
HCI traffic written by Bumble's ``BtSnooper`` (btsnoop v1, datalink 1002 = H4,
wall-clock timestamps, so only the timestamps change from run to run).  The
phone is always the central / GATT client, static random address
C0:B1:ED:00:50:48 (controller public address 00:B1:ED:00:00:01).  The phone
connects to each peripheral directly by address (LE Create Connection to the
static random address, no scanning); the peripherals advertise with the legacy
advertising commands (as in make_hr_session.py).

Scenarios (one btsnoop file each, the phone's HCI traffic unless noted):

1. two_straps.btsnoop
   Two heart-rate straps (make_hr_session.Strap, identical GATT databases and
   therefore identical handles): strap A "bledissect HR A" D0:B1:ED:00:48:52
   (controller 00:B1:ED:00:00:02), strap B "bledissect HR B" D0:B1:ED:00:48:53
   (controller 00:B1:ED:00:00:03).  The phone connects to A (connection handle
   0x0001), exchanges MTU 247, runs the full discovery, reads the GAP device
   name and the battery level (A: 87 %), subscribes to the Heart Rate
   Measurement; then the same on B (connection handle 0x0002; battery 55 %).
   Then 21 + 21 notifications, strictly interleaved A, B, A, B, ...:
   A = 60..80 bpm, B = 140..160 bpm, each value flags 0x06 (8-bit, sensor
   contact detected) + bpm.  Then disconnect A, then B (reason 0x13).

2. reconnect_cached.btsnoop
   One strap (make_hr_session.Strap, "bledissect HR" D0:B1:ED:00:48:52).
   Connection 1: MTU 247, full discovery, read body sensor location (chest),
   subscribe HRM (CCCD write 01 00), notifications 70..74 bpm, disconnect.
   Connection 2 (same strap, the controller re-uses connection handle 0x0001):
   MTU 247, then, WITHOUT any discovery, a Write Request 01 00 to the HRM CCCD
   by its cached handle, a Read Request of the Battery Level by its cached
   handle (value 86), notifications 75..79 bpm, a Write Request 0x01 to the HR
   Control Point by its cached handle, disconnect.

3. long_values.btsnoop + long_values_peripheral.btsnoop (both sides)
   Peripheral "bledissect LV" D0:B1:ED:00:4C:56 (controller 00:B1:ED:00:00:04):
   GAP, GATT (with Client Supported Features), Device Information
   (manufacturer name = the 120-byte MANUFACTURER_LONG, model "LV-1",
   firmware "2.0.1"), Battery (87 %), and a vendor service LV_SERVICE with
   LV_LONG (read/write, initial value b"INITIAL-VALUE"), LV_SHORT (read,
   value 34 12) and LV_NOTIFY (notify).  At ATT MTU 23 (no MTU exchange yet):
   full discovery; read of the manufacturer name = Read + 5 Read Blob
   (22+22+22+22+22+10 bytes); long write of the 50-byte LONG_WRITE_VALUE to
   LV_LONG = 3 Prepare Write (18+18+14 bytes) + Execute Write 0x01, read back
   (Read + 2 Read Blob, 22+22+6); a cancelled queue: 2 Prepare Write of
   CANCELLED_VALUE (18+7 bytes) + Execute Write flags 0x00, read back (still
   LONG_WRITE_VALUE); Read Multiple (0x0E) of {battery, LV_SHORT, model} =
   57 34 12 4C 56 2D 31; Read Multiple Variable (0x20) of {model, firmware,
   battery}; write 0x04 (multiple handle value notifications) to the Client
   Supported Features; subscribe LV_NOTIFY and Battery Level; one 20-byte
   LV_NOTIFY notification; one Multiple Handle Value Notification (0x23,
   crafted by the peripheral, Bumble has no API for it) carrying LV_NOTIFY =
   01 02 03 04 and battery = 0x56; then ATT Exchange MTU 100 (late, so all of
   the above ran at MTU 23); the manufacturer name again (Read 99 bytes +
   Read Blob 21 bytes); LV_NOTIFY notifications of 40 and 97 bytes (the
   peripheral's host fragments the 47- and 104-byte L2CAP PDUs into 27-byte
   ACL packets: 27+20 and 27+27+27+23, like the 99-byte Read Response; the
   emulated controller delivers them unfragmented to the phone); disconnect.

4. vendor_services.btsnoop
   Peripheral "bledissect VS" D0:B1:ED:00:56:53 (controller 00:B1:ED:00:00:05):
   GAP, GATT, Nordic UART Service (RX 6E400002 write + write-without-response,
   TX 6E400003 notify), Polar PMD service (FB005C80: control point FB005C81
   read/write/indicate, data FB005C82 notify), Battery (87 % then 86 %).
   MTU 247, discovery, battery read, NUS subscribe + NUS_LINES exchange
   (Write Command / Write Request / notifications), PMD: read control point
   (feature bitmap 0F 05 00 = ECG + ACC), subscribe control point
   (indications, CCCD 02 00) and data (notifications), the PMD_EXCHANGE
   requests/responses (get ECG settings, start ECG 130 Hz / 14 bit, three ECG
   data frames, stop ECG), battery read again.

5. le_coc.btsnoop
   Peripheral "bledissect CoC" D0:B1:ED:00:43:43 (controller 00:B1:ED:00:00:06)
   with an LE credit based L2CAP server on SPSM 0x0080 (MTU 512, MPS 64,
   4 initial credits).  The phone opens a channel (LE Credit Based Connection
   Request, MTU 512, MPS 64, 8 credits), sends COC_SDU_1 (300 bytes) = 5
   K-frames (62+64+64+64+46 SDU bytes; the phone runs out of its 4 credits
   and waits for an LE Flow Control Credit), the peripheral answers with
   COC_SDU_2 (300 bytes) and COC_SDU_3, the phone sends COC_SDU_4; the phone
   disconnects the channel (L2CAP Disconnection Request/Response) and the
   link.

6. eatt.btsnoop
   Peripheral "bledissect EATT" D0:B1:ED:00:45:41 (controller 00:B1:ED:00:00:07),
   a heart-rate strap (make_hr_session.Strap) with Bumble's EATT support
   enabled (DeviceConfiguration.eatt_enabled: GATT Server Supported Features
   = 01, ECRED server on PSM 0x0027).  Over the unenhanced bearer (CID 4) the
   phone exchanges MTU 247, discovers the GATT service, reads Server Supported
   Features, writes Client Supported Features = 02 (EATT).  Then it opens two
   EATT bearers with one L2CAP Credit Based Connection Request (code 0x17,
   PSM 0x0027, MTU 247, MPS 247, 10 credits).  Over EATT bearer 1: full
   discovery, read body sensor location; over EATT bearer 2: subscribe HRM
   (CCCD write on that bearer), notifications 100..104 bpm (sent by the strap
   on bearer 2 only).  Disconnect.

Usage:  python3 Scripts/captures/make_scenarios.py [--out-dir captures]
                                                   [--only NAME ...]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hr_session as hr  # noqa: E402

from bumble import att, gatt, hci, l2cap  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.device import Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    GATT_CLIENT_SUPPORTED_FEATURES_CHARACTERISTIC,
    GATT_DEVICE_NAME_CHARACTERISTIC,
    GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
    GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
    GATT_SERVER_SUPPORTED_FEATURES_CHARACTERISTIC,
    Characteristic,
    CharacteristicValue,
    Service,
)
from bumble.host import Host  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.profiles.battery_service import BatteryService  # noqa: E402
from bumble.profiles.device_information_service import (  # noqa: E402
    DeviceInformationService,
)
from bumble.profiles.gap import GenericAccessService  # noqa: E402
from bumble.snoop import BtSnooper  # noqa: E402
from bumble.transport.common import AsyncPipeSink  # noqa: E402

# -----------------------------------------------------------------------------
# Fixed identities and values
# -----------------------------------------------------------------------------
STRAP_A = ("bledissect HR A", "D0:B1:ED:00:48:52", "00:B1:ED:00:00:02")
STRAP_B = ("bledissect HR B", "D0:B1:ED:00:48:53", "00:B1:ED:00:00:03")
STRAP = (hr.STRAP_NAME, hr.STRAP_RANDOM_ADDRESS, hr.STRAP_PUBLIC_ADDRESS)
LV_DEVICE = ("bledissect LV", "D0:B1:ED:00:4C:56", "00:B1:ED:00:00:04")
VS_DEVICE = ("bledissect VS", "D0:B1:ED:00:56:53", "00:B1:ED:00:00:05")
COC_DEVICE = ("bledissect CoC", "D0:B1:ED:00:43:43", "00:B1:ED:00:00:06")
EATT_DEVICE = ("bledissect EATT", "D0:B1:ED:00:45:41", "00:B1:ED:00:00:07")

# 1. two straps
STRAP_A_BPM = list(range(60, 81))  # 21 values
STRAP_B_BPM = list(range(140, 161))  # 21 values
STRAP_A_BATTERY = 87
STRAP_B_BATTERY = 55

# 2. reconnect
RECONNECT_BPM_1 = [70, 71, 72, 73, 74]
RECONNECT_BPM_2 = [75, 76, 77, 78, 79]
RECONNECT_BATTERY_2 = 86

# 3. long values
MANUFACTURER_LONG = b"bledissect labs long manufacturer name: " + b"0123456789" * 8
assert len(MANUFACTURER_LONG) == 120
LV_MODEL = b"LV-1"
LV_FIRMWARE = b"2.0.1"
LV_BATTERY = 0x57  # 87 %
LV_BATTERY_NOTIFIED = 0x56  # 86 %, in the multiple handle value notification
LV_SHORT_VALUE = bytes([0x34, 0x12])
LV_LONG_INITIAL = b"INITIAL-VALUE"
LONG_WRITE_VALUE = b"prepared write, fifty bytes: " + b"ABCDEFGHIJKLMNOPQRSTU"
assert len(LONG_WRITE_VALUE) == 50
CANCELLED_VALUE = b"this write is cancelled!!"
assert len(CANCELLED_VALUE) == 25
LV_NOTIFY_20 = bytes(range(0x10, 0x10 + 20))
LV_MULTI_NOTIFY_VALUE = bytes([0x01, 0x02, 0x03, 0x04])
LV_LATE_MTU = 100
LV_NOTIFY_40 = bytes(range(0x40, 0x40 + 40))
LV_NOTIFY_97 = bytes((0xA0 + i) & 0xFF for i in range(97))

LV_SERVICE_UUID = "B1ED0001-5CA7-4E5A-9D1E-0000000000B1"
LV_LONG_UUID = "B1ED0002-5CA7-4E5A-9D1E-0000000000B1"
LV_SHORT_UUID = "B1ED0003-5CA7-4E5A-9D1E-0000000000B1"
LV_NOTIFY_UUID = "B1ED0004-5CA7-4E5A-9D1E-0000000000B1"

# 4. vendor services
NUS_SERVICE_UUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
NUS_RX_UUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
NUS_TX_UUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
PMD_SERVICE_UUID = "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_CP_UUID = "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_DATA_UUID = "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8"
VS_BATTERY_LEVELS = (87, 86)

# (direction, method, text): "phone" lines are written to RX (command = Write
# Command 0x52, request = Write Request 0x12), "device" lines are TX notifications.
NUS_LINES: list[tuple[str, str, bytes]] = [
    ("phone", "command", b"hello from bledissect\n"),
    ("device", "notify", b"hello phone, this is NUS\n"),
    ("phone", "request", b"battery?\n"),
    ("device", "notify", b"battery=87%\n"),
    ("phone", "command", b"bye\n"),
    ("device", "notify", b"bye\n"),
]

# PMD (see /work/shared/reference/gatt-payloads.md section 8)
PMD_FEATURES = bytes([0x0F, 0x05, 0x00])  # byte 1: ECG (bit 0) + ACC (bit 2)
PMD_ECG = 0x00
ECG_SAMPLE_RATE = 130
ECG_RESOLUTION = 14
PMD_ECG_SETTINGS = struct.pack("<BBH", 0, 1, ECG_SAMPLE_RATE) + struct.pack(
    "<BBH", 1, 1, ECG_RESOLUTION
)  # 00 01 82 00 01 01 0E 00
PMD_GET_SETTINGS = bytes([0x01, PMD_ECG])
PMD_GET_SETTINGS_RESPONSE = bytes([0xF0, 0x01, PMD_ECG, 0x00, 0x00]) + PMD_ECG_SETTINGS
PMD_START = bytes([0x02, PMD_ECG]) + PMD_ECG_SETTINGS
PMD_START_RESPONSE = bytes([0xF0, 0x02, PMD_ECG, 0x00, 0x00])
PMD_STOP = bytes([0x03, PMD_ECG])
PMD_STOP_RESPONSE = bytes([0xF0, 0x03, PMD_ECG, 0x00, 0x00])
ECG_SHAPE = [-48, -40, -30, -12, 25, 180, 820, 1350, 620, -210,
             -330, -150, -60, -20, 0, 15, 40, 70, 60, 20]  # µV
ECG_FRAMES = 3
# Nanoseconds from 2000-01-01T00:00:00Z to 2025-01-01T00:00:00Z.
PMD_EPOCH_OFFSET_NS = int(
    (datetime.datetime(2025, 1, 1) - datetime.datetime(2000, 1, 1)).total_seconds()
) * 1_000_000_000
assert PMD_EPOCH_OFFSET_NS == 789_004_800_000_000_000


def ecg_samples(frame: int) -> list[int]:
    return [v + 10 * frame for v in ECG_SHAPE]


def ecg_timestamp(frame: int) -> int:
    """Time of the last sample of frame `frame` (ns since 2000-01-01)."""
    samples = (frame + 1) * len(ECG_SHAPE)
    return PMD_EPOCH_OFFSET_NS + (samples * 1_000_000_000) // ECG_SAMPLE_RATE


def ecg_frame(frame: int) -> bytes:
    body = b"".join(v.to_bytes(3, "little", signed=True) for v in ecg_samples(frame))
    return bytes([PMD_ECG]) + struct.pack("<Q", ecg_timestamp(frame)) + b"\x00" + body


# 5. LE CoC
COC_SPSM = 0x0080
COC_MTU = 512
COC_MPS = 64
COC_PHONE_CREDITS = 8  # credits the phone gives the peripheral
COC_DEVICE_CREDITS = 4  # credits the peripheral gives the phone
COC_SDU_1 = bytes(i & 0xFF for i in range(300))  # phone -> device
COC_SDU_2 = bytes((0xFF - i) & 0xFF for i in range(300))  # device -> phone
COC_SDU_3 = b"coc: 300 bytes received\n"  # device -> phone
COC_SDU_4 = b"coc: closing\n"  # phone -> device

# 6. EATT
EATT_SPEC_MTU = 247
EATT_SPEC_MPS = 247
EATT_CREDITS = 10
EATT_BPM = [100, 101, 102, 103, 104]


def hrm(bpm: int) -> bytes:
    """Heart Rate Measurement: flags 0x06 (uint8, contact detected) + bpm."""
    return hr.encode_hr_measurement(bpm, False, hr.DETECTED, None, ())


# -----------------------------------------------------------------------------
# Set-up helpers
# -----------------------------------------------------------------------------
class Stack:
    """Controller + Host + Device on a LocalLink (as make_hr_session.Stack, plus
    an EATT switch)."""

    def __init__(
        self,
        link: LocalLink,
        name: str,
        random_address: str,
        public_address: str,
        snoop_file=None,
        peripheral: bool = True,
        gap_appearance: int = 0,
        eatt_enabled: bool = False,
    ) -> None:
        self.controller = Controller(name, link=link, public_address=public_address)
        if peripheral:
            # Legacy advertising commands (see make_hr_session.py NOTE).
            self.controller.le_features = (
                self.controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
            )
        self.host = Host(self.controller, AsyncPipeSink(self.controller))
        self.snooper = BtSnooper(snoop_file) if snoop_file is not None else None
        self.host.snooper = self.snooper
        config = DeviceConfiguration()
        config.name = name
        config.address = hci.Address(random_address)
        config.irk = (bytes(config.address) * 3)[:16]
        config.gap_service_enabled = False
        config.gatt_service_enabled = False
        config.eatt_enabled = eatt_enabled
        self.device = Device(config=config, host=self.host)
        self.device.add_service(GenericAccessService(name, appearance=gap_appearance))
        self.device.add_default_services(add_gap_service=False, add_gatt_service=True)
        self.address = random_address


def make_phone(link: LocalLink, snoop_file) -> Stack:
    return Stack(
        link,
        hr.PHONE_NAME,
        hr.PHONE_RANDOM_ADDRESS,
        hr.PHONE_PUBLIC_ADDRESS,
        snoop_file,
        peripheral=False,
    )


def make_strap(link: LocalLink, identity, snoop_file=None, eatt_enabled=False) -> hr.Strap:
    name, random_address, public_address = identity
    stack = Stack(
        link,
        name,
        random_address,
        public_address,
        snoop_file,
        gap_appearance=hr.APPEARANCE_HEART_RATE_BELT,
        eatt_enabled=eatt_enabled,
    )
    strap = hr.Strap(stack)  # HRS + BAS + DIS, advertising data as in make_hr_session
    strap.address = random_address
    return strap


async def connect(phone: Device, peripheral: Device, address: str):
    """Peripheral advertises, phone connects by address.  Returns both ends."""
    loop = asyncio.get_running_loop()
    peripheral_connected = loop.create_future()
    peripheral.once(Device.EVENT_CONNECTION, peripheral_connected.set_result)
    await peripheral.start_advertising(
        advertising_interval_min=100.0, advertising_interval_max=100.0
    )
    connection = await phone.connect(
        hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS)
    )
    peripheral_connection = await asyncio.wait_for(peripheral_connected, 5)
    return connection, peripheral_connection


async def disconnect(connection, peripheral_connection) -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    peripheral_connection.once(peripheral_connection.EVENT_DISCONNECTION, done.set_result)
    await connection.disconnect()
    await asyncio.wait_for(done, 5)


async def settle(rounds: int = 10) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)
    await asyncio.sleep(0.02)


async def full_discovery(client) -> None:
    """Services, then characteristics per service, then descriptors per
    characteristic (a Peer or a gatt_client.Client)."""
    await client.discover_services()
    for service in client.services:
        await service.discover_characteristics()
    for service in client.services:
        for characteristic in service.characteristics:
            await characteristic.discover_descriptors()


def find_char(client, uuid):
    found = client.get_characteristics_by_uuid(uuid)
    assert found, f"characteristic {uuid} not found"
    return found[0]


def cccd_of(characteristic) -> int:
    descriptor = characteristic.get_descriptor(
        GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
    )
    assert descriptor is not None
    return descriptor.handle


def handle_map(client) -> dict:
    """{uuid string: (value handle, cccd handle or None)} for every characteristic."""
    result = {}
    for service in client.services:
        for characteristic in service.characteristics:
            descriptor = characteristic.get_descriptor(
                GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
            )
            result[str(characteristic.uuid)] = (
                characteristic.handle,
                descriptor.handle if descriptor else None,
            )
    return result


# -----------------------------------------------------------------------------
# 1. Two straps
# -----------------------------------------------------------------------------
async def scenario_two_straps(phone_file, _peripheral_file, log) -> dict:
    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    strap_a = make_strap(link, STRAP_A)
    strap_b = make_strap(link, STRAP_B)
    strap_a.battery_level = STRAP_A_BATTERY
    strap_b.battery_level = STRAP_B_BATTERY
    phone = phone_stack.device
    for device in (strap_a.device, strap_b.device, phone):
        await device.power_on()

    facts: dict = {}
    sessions = []
    for label, strap in (("A", strap_a), ("B", strap_b)):
        connection, strap_connection = await connect(phone, strap.device, strap.address)
        peer = Peer(connection)
        await peer.request_mtu(hr.ATT_MTU)
        await full_discovery(peer)
        name = bytes(await peer.read_value(find_char(peer, GATT_DEVICE_NAME_CHARACTERISTIC)))
        battery = bytes(
            await peer.read_value(find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC))
        )
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        hrm_char = find_char(peer, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
        await peer.subscribe(hrm_char, lambda v, q=queue: q.put_nowait(bytes(v)))
        facts[label] = {
            "connection_handle": connection.handle,
            "name": name.decode(),
            "battery": battery[0],
            "hrm_handle": hrm_char.handle,
            "hrm_cccd": cccd_of(hrm_char),
            "handles": handle_map(peer),
        }
        log(f"strap {label}: {facts[label]['connection_handle']:#06x} {name!r} battery {battery[0]}")
        sessions.append((strap, connection, strap_connection, queue))

    assert facts["A"]["handles"] == facts["B"]["handles"]
    (_, _, _, queue_a), (_, _, _, queue_b) = sessions
    for bpm_a, bpm_b in zip(STRAP_A_BPM, STRAP_B_BPM):
        for strap, queue, bpm in ((strap_a, queue_a, bpm_a), (strap_b, queue_b, bpm_b)):
            await strap.notify_hr(hrm(bpm))
            got = await asyncio.wait_for(queue.get(), 5)
            assert got == hrm(bpm), (got.hex(), bpm)

    for _strap, connection, strap_connection, _queue in sessions:
        await disconnect(connection, strap_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
# 2. Reconnect with cached handles
# -----------------------------------------------------------------------------
async def scenario_reconnect(phone_file, _peripheral_file, log) -> dict:
    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    strap = make_strap(link, STRAP)
    phone = phone_stack.device
    await strap.device.power_on()
    await phone.power_on()
    facts: dict = {}

    # --- connection 1: full discovery ---
    connection, strap_connection = await connect(phone, strap.device, strap.address)
    peer = Peer(connection)
    await peer.request_mtu(hr.ATT_MTU)
    await full_discovery(peer)
    location = bytes(
        await peer.read_value(find_char(peer, GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC))
    )
    hrm_char = find_char(peer, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    cached = {
        "hrm": hrm_char.handle,
        "hrm_cccd": cccd_of(hrm_char),
        "battery": find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC).handle,
        "control_point": find_char(peer, GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC).handle,
    }
    facts["cached_handles"] = cached
    facts["handles"] = handle_map(peer)
    facts["connection_1_handle"] = connection.handle
    facts["body_sensor_location"] = location.hex()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(hrm_char, lambda v: queue.put_nowait(bytes(v)))
    for bpm in RECONNECT_BPM_1:
        await strap.notify_hr(hrm(bpm))
        assert await asyncio.wait_for(queue.get(), 5) == hrm(bpm)
    await disconnect(connection, strap_connection)
    log(f"connection 1 done, cached handles {cached}")

    # --- connection 2: no discovery, cached handles only ---
    strap.battery_level = RECONNECT_BATTERY_2
    connection, strap_connection = await connect(phone, strap.device, strap.address)
    facts["connection_2_handle"] = connection.handle
    client = connection.gatt_client
    await client.request_mtu(hr.ATT_MTU)
    queue2: asyncio.Queue[bytes] = asyncio.Queue()
    # Register the subscriber for the cached value handle by hand (what a client
    # with a GATT cache does), then write the CCCD by its cached handle.
    client.notification_subscribers[cached["hrm"]] = {lambda v: queue2.put_nowait(bytes(v))}
    await client.write_value(cached["hrm_cccd"], b"\x01\x00", with_response=True)
    battery = await client.read_value(cached["battery"])
    assert battery == bytes([RECONNECT_BATTERY_2])
    for bpm in RECONNECT_BPM_2:
        await strap.notify_hr(hrm(bpm))
        assert await asyncio.wait_for(queue2.get(), 5) == hrm(bpm)
    await client.write_value(
        cached["control_point"], bytes([hr.HR_CONTROL_POINT_RESET_ENERGY_EXPENDED]),
        with_response=True,
    )
    await asyncio.wait_for(strap.reset_event.wait(), 5)
    await disconnect(connection, strap_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
# 3. Long values
# -----------------------------------------------------------------------------
class LongValuesDevice:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.device = stack.device
        self.dis = DeviceInformationService(
            manufacturer_name=MANUFACTURER_LONG.decode(),
            model_number=LV_MODEL.decode(),
            firmware_revision=LV_FIRMWARE.decode(),
        )
        self.bas = BatteryService(read_battery_level=lambda _c: LV_BATTERY)
        self.long_char = Characteristic(
            LV_LONG_UUID,
            Characteristic.Properties.READ | Characteristic.Properties.WRITE,
            Characteristic.Permissions.READABLE | Characteristic.Permissions.WRITEABLE,
            LV_LONG_INITIAL,
        )
        self.short_char = Characteristic(
            LV_SHORT_UUID,
            Characteristic.Properties.READ,
            Characteristic.Permissions.READABLE,
            LV_SHORT_VALUE,
        )
        self.notify_char = Characteristic(
            LV_NOTIFY_UUID,
            Characteristic.Properties.NOTIFY,
            Characteristic.Permissions.READABLE,
            b"",
        )
        self.service = Service(
            LV_SERVICE_UUID, [self.long_char, self.short_char, self.notify_char]
        )
        self.device.add_services([self.dis, self.bas, self.service])


async def scenario_long_values(phone_file, peripheral_file, log) -> dict:
    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    name, random_address, public_address = LV_DEVICE
    lv = LongValuesDevice(Stack(link, name, random_address, public_address, peripheral_file))
    phone = phone_stack.device
    await lv.device.power_on()
    await phone.power_on()
    facts: dict = {}

    connection, lv_connection = await connect(phone, lv.device, random_address)
    peer = Peer(connection)
    client = connection.gatt_client
    assert client.mtu == att.ATT_DEFAULT_MTU
    await full_discovery(peer)
    handles = {
        "manufacturer": find_char(peer, GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC).handle,
        "model": find_char(peer, GATT_MODEL_NUMBER_STRING_CHARACTERISTIC).handle,
        "firmware": find_char(peer, GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC).handle,
        "battery": find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC).handle,
        "client_supported_features": find_char(
            peer, GATT_CLIENT_SUPPORTED_FEATURES_CHARACTERISTIC
        ).handle,
        "lv_long": find_char(peer, gatt.UUID(LV_LONG_UUID)).handle,
        "lv_short": find_char(peer, gatt.UUID(LV_SHORT_UUID)).handle,
        "lv_notify": find_char(peer, gatt.UUID(LV_NOTIFY_UUID)).handle,
    }
    handles["lv_notify_cccd"] = cccd_of(find_char(peer, gatt.UUID(LV_NOTIFY_UUID)))
    handles["battery_cccd"] = cccd_of(find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC))
    facts["handles"] = handles
    facts["all_handles"] = handle_map(peer)
    log(f"long values handles: {handles}")

    # Read + Read Blob (MTU 23)
    value = await client.read_value(handles["manufacturer"])
    assert value == MANUFACTURER_LONG, value

    # Long write: Prepare Write x3 + Execute Write (flags 0x01)
    await client.write_value(handles["lv_long"], LONG_WRITE_VALUE, with_response=True)
    assert lv.long_char.value == LONG_WRITE_VALUE
    assert await client.read_value(handles["lv_long"]) == LONG_WRITE_VALUE

    # Cancelled queue: Prepare Write x2 + Execute Write (flags 0x00)
    part_size = client.mtu - 5
    for offset in range(0, len(CANCELLED_VALUE), part_size):
        response = await client.send_request(
            att.ATT_Prepare_Write_Request(
                attribute_handle=handles["lv_long"],
                value_offset=offset,
                part_attribute_value=CANCELLED_VALUE[offset : offset + part_size],
            )
        )
        assert response.op_code == att.Opcode.ATT_PREPARE_WRITE_RESPONSE
    response = await client.send_request(att.ATT_Execute_Write_Request(flags=0x00))
    assert response.op_code == att.Opcode.ATT_EXECUTE_WRITE_RESPONSE
    assert await client.read_value(handles["lv_long"]) == LONG_WRITE_VALUE

    # Read Multiple (0x0E) and Read Multiple Variable (0x20): no client API in
    # Bumble, sent with the low-level request API.
    response = await client.send_request(
        att.ATT_Read_Multiple_Request(
            set_of_handles=[handles["battery"], handles["lv_short"], handles["model"]]
        )
    )
    assert response.op_code == att.Opcode.ATT_READ_MULTIPLE_RESPONSE, response
    facts["read_multiple"] = response.set_of_values.hex()
    assert response.set_of_values == bytes([LV_BATTERY]) + LV_SHORT_VALUE + LV_MODEL
    response = await client.send_request(
        att.ATT_Read_Multiple_Variable_Request(
            set_of_handles=[handles["model"], handles["firmware"], handles["battery"]]
        )
    )
    assert response.op_code == att.Opcode.ATT_READ_MULTIPLE_VARIABLE_RESPONSE, response
    facts["read_multiple_variable"] = bytes(response)[1:].hex()
    assert list(response.length_value_tuple_list) == [
        (4, LV_MODEL), (5, LV_FIRMWARE), (1, bytes([LV_BATTERY]))
    ], response.length_value_tuple_list

    # Client Supported Features: multiple handle value notifications (bit 2)
    await client.write_value(
        handles["client_supported_features"],
        bytes([gatt.ClientSupportedFeatures.MULTIPLE_HANDLE_VALUE_NOTIFICATIONS]),
        with_response=True,
    )

    notify_queue: asyncio.Queue[bytes] = asyncio.Queue()
    battery_queue: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(
        find_char(peer, gatt.UUID(LV_NOTIFY_UUID)), lambda v: notify_queue.put_nowait(bytes(v))
    )
    await peer.subscribe(
        find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC),
        lambda v: battery_queue.put_nowait(bytes(v)),
    )

    await lv.device.notify_subscribers(lv.notify_char, LV_NOTIFY_20)
    assert await asyncio.wait_for(notify_queue.get(), 5) == LV_NOTIFY_20

    # Multiple Handle Value Notification (0x23): Bumble 0.0.236 has no opcode /
    # PDU class / server API for it, so the peripheral sends the raw ATT PDU on
    # the ATT fixed channel.  The phone's Bumble GATT client looks up a handler
    # named after the (unknown) opcode, "on_opcode[35]"; we install one on this
    # client instance so the phone can check what it received.
    multi_received: asyncio.Future = asyncio.get_running_loop().create_future()
    setattr(client, "on_opcode[35]", lambda pdu: multi_received.set_result(bytes(pdu.payload)))
    multi_payload = (
        struct.pack("<HH", handles["lv_notify"], len(LV_MULTI_NOTIFY_VALUE))
        + LV_MULTI_NOTIFY_VALUE
        + struct.pack("<HH", handles["battery"], 1)
        + bytes([LV_BATTERY_NOTIFIED])
    )
    lv.device.send_l2cap_pdu(lv_connection.handle, att.ATT_CID, b"\x23" + multi_payload)
    assert await asyncio.wait_for(multi_received, 5) == multi_payload
    facts["multiple_handle_value_notification"] = ("23" + multi_payload.hex())

    # Late MTU exchange, then a long read and ACL-fragmented notifications.
    mtu = await client.request_mtu(LV_LATE_MTU)
    assert mtu == LV_LATE_MTU, mtu
    value = await client.read_value(handles["manufacturer"])
    assert value == MANUFACTURER_LONG
    for payload in (LV_NOTIFY_40, LV_NOTIFY_97):
        await lv.device.notify_subscribers(lv.notify_char, payload)
        assert await asyncio.wait_for(notify_queue.get(), 5) == payload

    await disconnect(connection, lv_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
# 4. Vendor services (Nordic UART + Polar PMD)
# -----------------------------------------------------------------------------
class VendorDevice:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.device = stack.device
        self.rx_queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.cp_queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.battery_level = VS_BATTERY_LEVELS[0]
        self.nus_rx = Characteristic(
            NUS_RX_UUID,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(write=lambda _c, v: self.rx_queue.put_nowait(bytes(v))),
        )
        self.nus_tx = Characteristic(
            NUS_TX_UUID,
            Characteristic.Properties.NOTIFY,
            Characteristic.Permissions.READABLE,
            b"",
        )
        self.pmd_cp = Characteristic(
            PMD_CP_UUID,
            Characteristic.Properties.READ
            | Characteristic.Properties.WRITE
            | Characteristic.Properties.INDICATE,
            Characteristic.Permissions.READABLE | Characteristic.Permissions.WRITEABLE,
            CharacteristicValue(
                read=lambda _c: PMD_FEATURES,
                write=lambda _c, v: self.cp_queue.put_nowait(bytes(v)),
            ),
        )
        self.pmd_data = Characteristic(
            PMD_DATA_UUID,
            Characteristic.Properties.NOTIFY,
            Characteristic.Permissions.READABLE,
            b"",
        )
        self.bas = BatteryService(read_battery_level=lambda _c: self.battery_level)
        self.device.add_services(
            [
                Service(NUS_SERVICE_UUID, [self.nus_rx, self.nus_tx]),
                Service(PMD_SERVICE_UUID, [self.pmd_cp, self.pmd_data]),
                self.bas,
            ]
        )


async def scenario_vendor(phone_file, _peripheral_file, log) -> dict:
    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    name, random_address, public_address = VS_DEVICE
    vs = VendorDevice(Stack(link, name, random_address, public_address))
    phone = phone_stack.device
    await vs.device.power_on()
    await phone.power_on()
    facts: dict = {}

    connection, vs_connection = await connect(phone, vs.device, random_address)
    peer = Peer(connection)
    await peer.request_mtu(hr.ATT_MTU)
    await full_discovery(peer)
    battery_char = find_char(peer, GATT_BATTERY_LEVEL_CHARACTERISTIC)
    rx = find_char(peer, gatt.UUID(NUS_RX_UUID))
    tx = find_char(peer, gatt.UUID(NUS_TX_UUID))
    cp = find_char(peer, gatt.UUID(PMD_CP_UUID))
    data = find_char(peer, gatt.UUID(PMD_DATA_UUID))
    facts["handles"] = {
        "nus_rx": rx.handle,
        "nus_tx": tx.handle,
        "nus_tx_cccd": cccd_of(tx),
        "pmd_cp": cp.handle,
        "pmd_cp_cccd": cccd_of(cp),
        "pmd_data": data.handle,
        "pmd_data_cccd": cccd_of(data),
        "battery": battery_char.handle,
    }
    facts["all_handles"] = handle_map(peer)
    log(f"vendor handles: {facts['handles']}")

    assert bytes(await peer.read_value(battery_char)) == bytes([VS_BATTERY_LEVELS[0]])

    # --- Nordic UART ---
    tx_queue: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(tx, lambda v: tx_queue.put_nowait(bytes(v)))
    for direction, method, text in NUS_LINES:
        if direction == "phone":
            await peer.write_value(rx, text, with_response=(method == "request"))
            assert await asyncio.wait_for(vs.rx_queue.get(), 5) == text
        else:
            await vs.device.notify_subscribers(vs.nus_tx, text)
            assert await asyncio.wait_for(tx_queue.get(), 5) == text

    # --- Polar PMD ---
    features = bytes(await peer.read_value(cp))
    assert features == PMD_FEATURES
    cp_queue: asyncio.Queue[bytes] = asyncio.Queue()
    data_queue: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(cp, lambda v: cp_queue.put_nowait(bytes(v)), prefer_notify=False)
    await peer.subscribe(data, lambda v: data_queue.put_nowait(bytes(v)))

    async def control(request: bytes, response: bytes) -> None:
        await peer.write_value(cp, request, with_response=True)
        assert await asyncio.wait_for(vs.cp_queue.get(), 5) == request
        await vs.device.indicate_subscribers(vs.pmd_cp, response)
        assert await asyncio.wait_for(cp_queue.get(), 5) == response

    await control(PMD_GET_SETTINGS, PMD_GET_SETTINGS_RESPONSE)
    await control(PMD_START, PMD_START_RESPONSE)
    for frame in range(ECG_FRAMES):
        await vs.device.notify_subscribers(vs.pmd_data, ecg_frame(frame))
        assert await asyncio.wait_for(data_queue.get(), 5) == ecg_frame(frame)
    await control(PMD_STOP, PMD_STOP_RESPONSE)

    vs.battery_level = VS_BATTERY_LEVELS[1]
    assert bytes(await peer.read_value(battery_char)) == bytes([VS_BATTERY_LEVELS[1]])

    await disconnect(connection, vs_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
# 5. LE credit based connection-oriented channel
# -----------------------------------------------------------------------------
async def scenario_le_coc(phone_file, _peripheral_file, log) -> dict:
    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    name, random_address, public_address = COC_DEVICE
    coc_stack = Stack(link, name, random_address, public_address)
    device = coc_stack.device
    phone = phone_stack.device
    await device.power_on()
    await phone.power_on()
    loop = asyncio.get_running_loop()
    facts: dict = {}

    device_channel_future = loop.create_future()
    device_rx: asyncio.Queue[bytes] = asyncio.Queue()

    def on_channel(channel) -> None:
        channel.sink = lambda sdu: device_rx.put_nowait(bytes(sdu))
        device_channel_future.set_result(channel)

    device.create_l2cap_server(
        l2cap.LeCreditBasedChannelSpec(
            psm=COC_SPSM, mtu=COC_MTU, mps=COC_MPS, max_credits=COC_DEVICE_CREDITS
        ),
        handler=on_channel,
    )

    connection, device_connection = await connect(phone, device, random_address)
    channel = await connection.create_l2cap_channel(
        l2cap.LeCreditBasedChannelSpec(
            psm=COC_SPSM, mtu=COC_MTU, mps=COC_MPS, max_credits=COC_PHONE_CREDITS
        )
    )
    device_channel = await asyncio.wait_for(device_channel_future, 5)
    phone_rx: asyncio.Queue[bytes] = asyncio.Queue()
    channel.sink = lambda sdu: phone_rx.put_nowait(bytes(sdu))
    facts["phone_cid"] = channel.source_cid
    facts["device_cid"] = device_channel.source_cid
    log(f"CoC open: phone CID {channel.source_cid:#06x}, device CID {device_channel.source_cid:#06x}")

    channel.write(COC_SDU_1)
    assert await asyncio.wait_for(device_rx.get(), 5) == COC_SDU_1
    device_channel.write(COC_SDU_2)
    assert await asyncio.wait_for(phone_rx.get(), 5) == COC_SDU_2
    device_channel.write(COC_SDU_3)
    assert await asyncio.wait_for(phone_rx.get(), 5) == COC_SDU_3
    channel.write(COC_SDU_4)
    assert await asyncio.wait_for(device_rx.get(), 5) == COC_SDU_4
    await channel.drain()
    await settle()

    await channel.disconnect()
    await settle()
    await disconnect(connection, device_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
# 6. EATT
# -----------------------------------------------------------------------------
async def scenario_eatt(phone_file, _peripheral_file, log) -> dict:
    from bumble import gatt_client

    link = LocalLink()
    phone_stack = make_phone(link, phone_file)
    strap = make_strap(link, EATT_DEVICE, eatt_enabled=True)
    phone = phone_stack.device
    await strap.device.power_on()
    await phone.power_on()
    facts: dict = {}

    connection, strap_connection = await connect(phone, strap.device, strap.address)
    peer = Peer(connection)
    await peer.request_mtu(hr.ATT_MTU)
    # Unenhanced bearer: find the GATT service, features.
    await peer.discover_service(gatt.GATT_GENERIC_ATTRIBUTE_SERVICE)
    gatt_service = peer.services[0]
    await peer.discover_characteristics(service=gatt_service)
    server_features = bytes(
        await peer.read_value(find_char(peer, GATT_SERVER_SUPPORTED_FEATURES_CHARACTERISTIC))
    )
    facts["server_supported_features"] = server_features.hex()
    await peer.write_value(
        find_char(peer, GATT_CLIENT_SUPPORTED_FEATURES_CHARACTERISTIC),
        bytes([gatt.ClientSupportedFeatures.ENHANCED_ATT_BEARER]),
        with_response=True,
    )

    bearers = await gatt_client.Client.connect_eatt(
        connection,
        l2cap.LeCreditBasedChannelSpec(
            psm=att.EATT_PSM, mtu=EATT_SPEC_MTU, mps=EATT_SPEC_MPS, max_credits=EATT_CREDITS
        ),
        count=2,
    )
    bearer_1, bearer_2 = bearers
    facts["eatt_cids"] = [b.bearer.source_cid for b in bearers]
    facts["eatt_peer_cids"] = [b.bearer.destination_cid for b in bearers]
    log(f"EATT bearers: CIDs {facts['eatt_cids']} -> {facts['eatt_peer_cids']}")

    await full_discovery(bearer_1)
    location = await bearer_1.read_value(
        find_char(bearer_1, GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC)
    )
    facts["body_sensor_location"] = bytes(location).hex()
    hrm_char = find_char(bearer_1, GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC)
    facts["hrm_handle"] = hrm_char.handle
    facts["hrm_cccd"] = cccd_of(hrm_char)
    facts["handles"] = handle_map(bearer_1)

    queue: asyncio.Queue[bytes] = asyncio.Queue()
    bearer_2.notification_subscribers[hrm_char.handle] = {lambda v: queue.put_nowait(bytes(v))}
    await bearer_2.write_value(facts["hrm_cccd"], b"\x01\x00", with_response=True)
    for bpm in EATT_BPM:
        await strap.notify_hr(hrm(bpm))
        assert await asyncio.wait_for(queue.get(), 5) == hrm(bpm)

    await disconnect(connection, strap_connection)
    await settle()
    return facts


# -----------------------------------------------------------------------------
SCENARIOS = {
    "two_straps": (scenario_two_straps, "two_straps.btsnoop", None),
    "reconnect_cached": (scenario_reconnect, "reconnect_cached.btsnoop", None),
    "long_values": (
        scenario_long_values,
        "long_values.btsnoop",
        "long_values_peripheral.btsnoop",
    ),
    "vendor_services": (scenario_vendor, "vendor_services.btsnoop", None),
    "le_coc": (scenario_le_coc, "le_coc.btsnoop", None),
    "eatt": (scenario_eatt, "eatt.btsnoop", None),
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
        function, phone_name, peripheral_name = SCENARIOS[key]
        phone_path = os.path.join(args.out_dir, phone_name)
        peripheral_path = os.path.join(args.out_dir, peripheral_name) if peripheral_name else None
        start = time.monotonic()
        with open(phone_path, "wb") as phone_file:
            if peripheral_path:
                with open(peripheral_path, "wb") as peripheral_file:
                    facts = asyncio.run(function(phone_file, peripheral_file, print))
            else:
                facts = asyncio.run(function(phone_file, None, print))
        print(f"[{key}] {time.monotonic() - start:.1f} s, facts: {facts}")
        for path in (phone_path, peripheral_path):
            if path:
                size = os.path.getsize(path)
                assert size < 64 * 1024, (path, size)
                print(f"  {path}: {hr.btsnoop_record_count(path)} records, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
