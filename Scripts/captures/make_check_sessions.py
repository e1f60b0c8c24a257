#!/usr/bin/env python3
"""Record small phone <-> heart-rate strap sessions for ``bledissect check``:
one per conformance rule, each breaking exactly that rule once, and healthy
sessions full of legal edge cases that break none.

The rules are those of /work/shared/reference/conformance.md section 2 (ids
ATT-01, GATT-06, L2C-03, SMP-02, HRS-04, BAS-01, ...).  Ground truth:
captures/check/truth.json (see "Truth" below).

Set-up (as make_scenarios.py, make_late_start.py and make_diff_scenarios.py,
whose helpers this script imports, with make_hr_session.py): one process, one
``bumble.link.LocalLink``, two emulated ``bumble.controller.Controller``s, each
driven by its own ``bumble.host.Host`` + ``bumble.device.Device`` (Bumble
0.0.236):

* the phone: central / GATT client, static random address C0:B1:ED:00:50:48
  (controller 00:B1:ED:00:00:01); connects by address (LE Create Connection,
  no scanning, except in adv_03; interval 15-30 ms asked, the LE Connection
  Complete says 15 ms, latency 0, supervision timeout 720 ms);
* the strap "bledissect HR", static random address D0:B1:ED:00:48:52
  (controller 00:B1:ED:00:00:02, legacy advertising): peripheral / GATT
  server, ``CheckStrap``: GAP, GATT, Heart Rate, Battery, Device Information
  and a vendor service.  Handles (decimal, checked on every run):
    GAP 1-5: Device Name 3, Appearance 5 (41 03 = 0x0341 Heart Rate Belt)
    GATT 6-13: Service Changed 8 (indicate) + CCCD 9, Client Supported
      Features 11, Database Hash 13
    Heart Rate 14-21: Measurement 16 (notify) + CCCD 17, Body Sensor Location
      19 (01 chest), Control Point 21 (write)
    Battery 22-25: Battery Level 24 (read, notify) + CCCD 25
    Device Information 26-36: Manufacturer Name 28 "bledissect labs", Model
      Number 30 "HRS-1", Serial Number 32 "0001-2025", Firmware Revision 34
      "1.2.3", PnP ID 36 (01 FF FF 01 00 10 01: SIG company 0xFFFF, product 1,
      version 0x0110)
    vendor service B1ED2001-5CA7-4E5A-9D1E-0000000000B1 37-47:
      command B1ED2002 39 (write, write without response),
      settings B1ED2003 41 (read, write; 40-byte value),
      events B1ED2004 43 (indicate) + CCCD 44,
      stream B1ED2005 46 (notify) + CCCD 47
  hrs_06 has no Heart Rate Control Point (Heart Rate 14-19, every later
  handle 2 lower).

Only the PHONE's HCI traffic is recorded (Bumble's ``BtSnooper``, btsnoop v1,
datalink 1002 = H4, behind make_diff_scenarios.ClockedSnooper).  The phone's
host fragments what it sends into 27-byte ACL packets; its emulated
controller delivers what it receives unfragmented.

Where Bumble would refuse or correct a malformed PDU, the offending side
sends the raw ATT / L2CAP / SMP bytes on the fixed channel
(``Device.send_l2cap_pdu``, as make_scenarios.py does for the Multiple Handle
Value Notification), and instance hooks on the strap's ATT channel drop or
replace what Bumble's GATT server would have answered.  Two policies hold in
every session (instance overrides, spec behaviour): the phone rejects an
L2CAP Connection Parameter Update Request whose values are out of range
(result 0x0001, no LE Connection Update) and accepts a valid one (Bumble:
LE Connection Update); the strap answers a Connection Parameter Update
Request it receives (it is the peripheral) with Command Reject 0x0000
instead of Bumble's Connection Parameter Update Response.  SMP is scripted
too (both SMP fixed channels are taken from Bumble's SMP managers), except in
healthy_pairing.  In adv_03 the phone's controller reports the ADV_IND once,
as a real controller does in a passive scan (``report_advertising_once``:
Bumble's emulated controller reports it twice, the second time as a scan
response carrying the advertising data, which would itself break ADV-02).

Every session (unless said otherwise): power on (HCI Reset + Bumble's init),
LE Create Connection, Exchange MTU 247 (the strap answers 517), full
discovery by Bumble's GATT client (services, characteristics of each
service, descriptors of each characteristic, each procedure ending with
Error Response Attribute Not Found), the session's own steps, HCI Disconnect
0x13.  No request is left open at the disconnect, every indication is
confirmed, notifications only where the CCCD enables them.

Sessions with one violation (file = rule id in lower case with _; the
violating PDU is in the truth's "offending_frames"):
  att_01  Read Request 24 (battery), then a Write Request of 32 bytes to 41
          (two ACL fragments) before the Read Response; the strap answers both,
          in order (0B 57, 13); then HRM subscribe and 2 notifications.
  att_02  Read Request 19 never answered (the strap drops it); no more ATT
          traffic; disconnect 35 s later.
  att_03  Write Command 01 to 39 (command characteristic, has write without
          response), the strap answers it with a Write Response (13).
  att_03_wrong_opcode  Read Request 0x00F0 (no such handle), the strap's
          Error Response names request opcode 0x12 (01 12 F0 00 01) instead
          of 0x0A.
  att_04  subscribe 43 (indications), the phone sends a Handle Value
          Confirmation (1E) with no indication outstanding; later a real
          indication, confirmed.
  att_05  subscribe 43 (indications); the strap sends two indications on 43
          back to back; the phone confirms each (after it got both).
  att_06  no MTU exchange (ATT_MTU 23); subscribe 46; notifications on 46 of
          20 bytes (PDU 23) and one of 27 bytes (PDU 30 > 23).
  att_07  Exchange MTU 247 twice (the strap answers 517 both times).
  att_08  Exchange MTU Request with Client Rx MTU 20 (strap 517, ATT_MTU
          stays 23); everything after fits 23.
  att_09  discovery at ATT_MTU 23, then: both servers answer 247; the phone
          asks 247, then the strap (as a client) asks 100: its request (100)
          differs from its response (247).  Only a Read follows (every PDU of
          the file fits 23).
  att_13  Read Request 24, Error Response with error code 0x00 (01 0A 18 00 00).
  att_17  Find Information Request 16-17 answered (17, 2902), (16, 2A37):
          handles not ascending (both in range, both true).
  att_17_out_of_range  Find Information Request 17-17 answered (17, 2902),
          (18, 2803): handle 18 is outside the range.
  att_18  Read By Type 0x2803 over 14-21: response of 7-byte entries 15, 18
          and 5 bytes of the entry 20 (split entry, 19 bytes of data); the
          phone goes on from 19 (entry 20) and 21 (Attribute Not Found).
  att_18_out_of_range  Read By Type 0x2803 over 14-19 answered with the
          entries 15, 18 and 20 (20 is outside 14-19; all entries are the
          strap's real declarations).
  att_19  no MTU exchange; Prepare Write 41 offset 0 (18 bytes), the
          response echoes the handle and offset but one value byte differs;
          the phone cancels (Execute Write flags 00).
  att_20  Exchange MTU 517 / 517; subscribe 46; one notification on 46 with a
          514-byte value (PDU 517 = ATT_MTU, value > 512).
  gatt_06 Write Request to the HRM CCCD 17 with one octet (01); the strap
          answers Error Response 0x0D (Invalid Attribute Value Length); then
          01 00 and notifications.
  gatt_07 Write Request 01 00 to the Service Changed CCCD 9 (Service Changed
          has Indicate only).
  gatt_08 subscribe HRM, 3 notifications, CCCD 17 <- 00 00 (Write Response),
          1 s later one more HRM notification.
  gatt_09 Write Command to 41 (settings: write, no write without response).
  l2c_02  the phone (central) sends a Connection Parameter Update Request
          (24-40, 0, 500); the strap answers Command Reject 0x0000.
  l2c_03  the strap asks 24-40 (30-50 ms), latency 4, timeout 40 (400 ms <=
          (1+4) x 50 ms x 2 = 500 ms); the phone rejects it (result 0x0001).
  hrs_01  subscribe HRM; notifications 06 48, 16 49 50 03, then
          16 4A 40 03 03 (RR flag, one RR interval and an odd trailing byte).
  hrs_04  subscribe HRM; notifications 06 48, 06 49 (contact supported),
          then 00 4A (contact-supported bit cleared).
  hrs_06  no HR Control Point in the Heart Rate service; notifications 06 48,
          06 49 and one 0E 4A 0C 00 (Energy Expended 12 kJ).
  hrs_07  HR Control Point 21 <- 01 (Write Response: fine), then <- 02
          (reserved) answered with a Write Response instead of Error 0x80.
  hrs_09  Read Body Sensor Location 19 -> 09 (reserved).
  bas_01  Read Battery Level 24 -> 0x65 (101 %).
  smp_02  the phone's Pairing Request has Maximum Encryption Key Size 6
          (01 03 00 01 06 00 01); the strap answers Pairing Failed 0x06.
  smp_03  Pairing Request with Responder Key Distribution 01 (EncKey), the
          strap's Pairing Response sets 03 (EncKey + IdKey); the phone
          answers Pairing Failed 0x0A (Invalid Parameters).
  smp_05  Pairing Request / Response (legacy, Just Works, responder
          distributes EncKey), the strap sends Encryption Information (its
          LTK) right away, on the unencrypted link; the phone answers
          Pairing Failed 0x08.
  adv_03  the strap advertises Flags 06, Complete List of 16-bit UUIDs with
          3 octets (04 03 0D 18 0F), Complete Local Name; the phone scans
          passively (LE Extended Advertising Report), stops, connects.
  gap_01  Read Appearance 5 -> 41 03 00 (3 octets).
  dis_01  Read PnP ID 36 -> 01 FF FF 01 00 10 (6 octets).

Healthy sessions (no violation at all; legal edge cases):
  healthy_hr  two connections.  1: MTU 247/517, full discovery, reads (Device
          Name, Appearance 41 03, PnP ID (7 octets), Body Sensor Location 01,
          Battery Level 100 = 0x64), a valid L2CAP Connection Parameter Update
          Request from the strap (24-40, latency 0, timeout 500: 5 s >
          (1+0) x 50 ms x 2) accepted (LE Connection Update), subscribe HRM and
          Battery Level, 6 HRM with the contact-supported bit set throughout
          (flags 06, 04, 0E, 16, 1E, 0C: Energy Expended 40, 41, 42 only because
          the HR Control Point exists), Control Point 01 -> Write Response, 02
          -> Error Response 0x80 (handle 21), 2 HRM (Energy Expended 0, 1 after
          the reset), Battery Level notification 0, HRM CCCD <- 00 00, disconnect.
          2 (5 s later, same strap): MTU 247, no discovery (handles known from
          connection 1), HRM CCCD <- 01 00, 3 HRM with flags 00 (contact not
          supported: the bit is steady within each connection), disconnect.
  healthy_att  ATT_MTU 23 throughout (no Exchange MTU).  Full discovery at 23;
          Read 0x00F0 (no such handle) -> Error Response Invalid Handle
          (01 0A F0 00 01); two Write Commands to 39 (write without response
          allowed); long read of 41 (Read 22 + Read Blob 18); long write of 41
          (41 bytes: Prepare Write 18 + 18 + 5, each echoed, Execute Write 01)
          and read back; 46 <- 01 00, then 3 notifications of 20 value bytes
          (PDU 23 = ATT_MTU); a 25 s pause, then a Read of 24 answered at once;
          46 <- 00 00; disconnect.
  healthy_indications  MTU 247/517, full discovery; 9 <- 02 00 (Service
          Changed), 43 <- 02 00, 46 <- 01 00; indication on 43 confirmed; an
          indication on 43, a notification on 46, then the confirmation (legal:
          notifications need no confirmation); Service Changed indication
          (37-47, the vendor service) confirmed; the phone re-discovers 37-47
          (Read By Type, Find Information 44, 47) and writes 43 <- 02 00 and
          46 <- 00 00 again; a last indication on 43, confirmed.
  healthy_pairing  Bumble's own SMP on both sides: LE legacy pairing, Just
          Works (NoInputNoOutput, bonding, key size 16, both key distributions
          EncKey + IdKey), LE Enable Encryption with the STK, Encryption
          Change, then the strap's Encryption Information, Central
          Identification, Identity Information, Identity Address Information,
          then the phone's (all over the encrypted link); MTU 247/517, full
          discovery, Battery Level 87, HRM subscribe, 3 HRM.  Bumble's random
          values are seeded (secrets.token_bytes, random), so the file is
          deterministic.

Timestamps: Bumble writes wall-clock times; every record is re-timed
deterministically (make_diff_scenarios.Clock / retime: first record at
BASE_TIME, each next one 2.000-3.000 ms later, seeded by the file name, plus
scripted pauses: 1.0 s before each Heart Rate Measurement notification and
the pauses a scenario names), so reruns give identical bytes.

Truth (captures/check/truth.json): a list, one object per file, in file
order: {"file", "healthy", "description", "records", "violations": [{"rule",
"frames" (1-based btsnoop record numbers of every PDU that proves the
violation, all ACL fragments of each, ascending), "offending_frames" (the
records of the one PDU that breaks the rule), "side" ("client" | "server" |
"central" | "peripheral"), "severity" ("error" | "warning", as the catalogue
says), "pdu" (hex of the offending L2CAP payload, or of the HCI event for
adv_03)}]}.  Frames are found by reading the written file back (own btsnoop
parser with L2CAP reassembly) and locating the bytes the script sent, never
by hand; each offending PDU is checked to carry the expected channel and
opcode, and with tshark (when installed, unless --no-tshark) the frame's ATT
opcode / L2CAP signalling code / SMP opcode / HCI LE subevent is checked too.
Finally ``audit()``, the script's own plain reading of the catalogue for the
rules targeted here and their neighbours (see its comment), must find exactly
the truth's violations in every file (rule and offending frame) and nothing in
the healthy ones.  Frame numbers are decimal, handles in the text decimal.

Usage:  python3 Scripts/captures/make_check_sessions.py [--out-dir captures/check]
                                                        [--only NAME ...] [--no-tshark]
Needs: Python 3.11+, bumble (tested with 0.0.236).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import os
import random
import secrets
import shutil
import struct
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_diff_scenarios as dsc  # noqa: E402
import make_hr_session as hr  # noqa: E402
import make_late_start as ls  # noqa: E402
import make_scenarios as sc  # noqa: E402

from bumble import att, gatt, hci, l2cap, ll, pairing, smp  # noqa: E402
from bumble.device import Device, Peer  # noqa: E402
from bumble.gatt import (  # noqa: E402
    GATT_APPEARANCE_CHARACTERISTIC,
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC,
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    GATT_DEVICE_INFORMATION_SERVICE,
    GATT_GENERIC_ACCESS_SERVICE,
    GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC,
    GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC,
    GATT_PNP_ID_CHARACTERISTIC,
    Characteristic,
    CharacteristicValue,
    Service,
)
from bumble.link import LocalLink  # noqa: E402
from bumble.profiles.battery_service import BatteryService  # noqa: E402
from bumble.profiles.device_information_service import DeviceInformationService  # noqa: E402
from bumble.profiles.heart_rate_service import HeartRateService  # noqa: E402

# -----------------------------------------------------------------------------
# Fixed values
# -----------------------------------------------------------------------------
GENERATOR = "Scripts/captures/make_check_sessions.py (bumble 0.0.236)"
BASE_TIME = datetime.datetime(2025, 4, 2, 9, 0, 0, tzinfo=datetime.UTC)
STRAP = (hr.STRAP_NAME, hr.STRAP_RANDOM_ADDRESS, hr.STRAP_PUBLIC_ADDRESS)
ATT_CID = att.ATT_CID  # 0x0004
SIGNALING_CID = 0x0005  # LE signalling channel
SMP_CID = smp.SMP_CID  # 0x0006

HR_PAUSE_US = 1_000_000  # before every Heart Rate Measurement notification
DISCONNECT_PAUSE_US = 400_000

VENDOR_SERVICE_UUID = "B1ED2001-5CA7-4E5A-9D1E-0000000000B1"
VENDOR_COMMAND_UUID = "B1ED2002-5CA7-4E5A-9D1E-0000000000B1"  # write + write w/o response
VENDOR_SETTINGS_UUID = "B1ED2003-5CA7-4E5A-9D1E-0000000000B1"  # read + write
VENDOR_EVENTS_UUID = "B1ED2004-5CA7-4E5A-9D1E-0000000000B1"  # indicate
VENDOR_STREAM_UUID = "B1ED2005-5CA7-4E5A-9D1E-0000000000B1"  # notify
SETTINGS_INITIAL = b"bledissect settings v1: mode=run, zone=3"
assert len(SETTINGS_INITIAL) == 40
PNP_ID = bytes([0x01, 0xFF, 0xFF, 0x01, 0x00, 0x10, 0x01])  # SIG source, 0xFFFF, 1, 0x0110
BATTERY_DEFAULT = 87
NO_SUCH_HANDLE = 0x00F0

HANDLES = {
    "device_name": 3, "appearance": 5, "service_changed": 8, "service_changed_cccd": 9,
    "client_supported_features": 11, "database_hash": 13,
    "hrm": 16, "hrm_cccd": 17, "body_sensor_location": 19, "hr_control_point": 21,
    "battery_level": 24, "battery_cccd": 25,
    "manufacturer": 28, "model": 30, "serial": 32, "firmware": 34, "pnp_id": 36,
    "vendor_command": 39, "vendor_settings": 41, "vendor_events": 43,
    "vendor_events_cccd": 44, "vendor_stream": 46, "vendor_stream_cccd": 47,
}
# Without the HR Control Point (hrs_06) every handle after 19 is 2 lower.
HANDLES_NO_CONTROL_POINT = {
    k: (v - 2 if v > 19 else v) for k, v in HANDLES.items() if k != "hr_control_point"
}

SEVERITY = {  # from conformance.md section 2 (the variant each file breaks), except where
    # bledissect's catalogue (docs/check.md) asks for an assumption: HRS-06 (that the
    # discovery listed the whole service) and ADV-03 seen in an HCI report (that the
    # controller passed the data on as sent) are warnings.
    "ATT-01": "error", "ATT-02": "error", "ATT-03": "error", "ATT-04": "error",
    "ATT-05": "error", "ATT-06": "error", "ATT-07": "error", "ATT-08": "error",
    "ATT-09": "error", "ATT-13": "error", "ATT-17": "error", "ATT-18": "error",
    "ATT-19": "error", "ATT-20": "error", "GATT-06": "error", "GATT-07": "error",
    "GATT-08": "error", "GATT-09": "warning", "L2C-02": "error", "L2C-03": "error",
    "HRS-01": "error", "HRS-04": "error", "HRS-06": "warning", "HRS-07": "error",
    "HRS-09": "warning", "BAS-01": "error", "SMP-02": "error", "SMP-03": "error",
    "SMP-05": "error", "ADV-03": "warning", "GAP-01": "error", "DIS-01": "error",
}


def hrm(bpm: int, flags: int = 0x06, extra: bytes = b"") -> bytes:
    """Heart Rate Measurement: flags, uint8 bpm, then `extra` (EE / RR bytes)."""
    return bytes([flags, bpm]) + extra


def u16(*values: int) -> bytes:
    return b"".join(struct.pack("<H", v) for v in values)


# -----------------------------------------------------------------------------
# The strap
# -----------------------------------------------------------------------------
class CheckStrap:
    """GAP + GATT (from make_scenarios.Stack), Heart Rate, Battery, Device
    Information (with PnP ID) and the vendor service."""

    def __init__(self, stack: sc.Stack, control_point: bool = True,
                 body_sensor_location: int = 1, appearance: bytes | None = None,
                 pnp_id: bytes = PNP_ID, battery: int = BATTERY_DEFAULT) -> None:
        self.stack = stack
        self.device = stack.device
        self.address = stack.address
        self.battery_level = battery
        self.resets = 0
        self.commands: list[bytes] = []
        self.hrs = HeartRateService(
            read_heart_rate_measurement=lambda _c: HeartRateService.HeartRateMeasurement(
                heart_rate=0),
            body_sensor_location=HeartRateService.BodySensorLocation(body_sensor_location),
            reset_energy_expended=self._on_reset if control_point else None,
        )
        self.bas = BatteryService(read_battery_level=lambda _c: self.battery_level)
        self.dis = DeviceInformationService(
            manufacturer_name="bledissect labs", model_number="HRS-1",
            serial_number="0001-2025", firmware_revision="1.2.3")
        # Bumble's DIS has no PnP ID (its TODO): add the characteristic.
        self.dis.characteristics.append(Characteristic(
            GATT_PNP_ID_CHARACTERISTIC, Characteristic.Properties.READ,
            Characteristic.READABLE, pnp_id))
        self.dis = Service(GATT_DEVICE_INFORMATION_SERVICE, self.dis.characteristics)
        self.command = Characteristic(
            VENDOR_COMMAND_UUID,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.WRITEABLE,
            CharacteristicValue(write=lambda _c, v: self.commands.append(bytes(v))))
        self.settings = Characteristic(
            VENDOR_SETTINGS_UUID,
            Characteristic.Properties.READ | Characteristic.Properties.WRITE,
            Characteristic.READABLE | Characteristic.WRITEABLE, SETTINGS_INITIAL)
        self.events = Characteristic(
            VENDOR_EVENTS_UUID, Characteristic.Properties.INDICATE, Characteristic.READABLE, b"")
        self.stream = Characteristic(
            VENDOR_STREAM_UUID, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        self.vendor = Service(VENDOR_SERVICE_UUID,
                              [self.command, self.settings, self.events, self.stream])
        self.device.add_services([self.hrs, self.bas, self.dis, self.vendor])
        self.device.advertising_data = hr.advertising_data()
        self.device.scan_response_data = hr.scan_response_data()
        if appearance is not None:
            self.characteristic(GATT_GENERIC_ACCESS_SERVICE,
                                GATT_APPEARANCE_CHARACTERISTIC).value = appearance
        self.handles = self.server_handles()
        expected = HANDLES if control_point else HANDLES_NO_CONTROL_POINT
        assert self.handles == expected, self.handles

    def _on_reset(self, _connection) -> None:
        self.resets += 1

    def characteristic(self, service, uuid):
        return self.device.gatt_server.get_characteristic_attributes(service, uuid)[1]

    def server_handles(self) -> dict:
        server = self.device.gatt_server
        found = {}
        cccd_uuid = GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
        names = {
            gatt.GATT_DEVICE_NAME_CHARACTERISTIC: "device_name",
            gatt.GATT_APPEARANCE_CHARACTERISTIC: "appearance",
            gatt.GATT_SERVICE_CHANGED_CHARACTERISTIC: "service_changed",
            gatt.GATT_CLIENT_SUPPORTED_FEATURES_CHARACTERISTIC: "client_supported_features",
            gatt.GATT_DATABASE_HASH_CHARACTERISTIC: "database_hash",
            GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC: "hrm",
            GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC: "body_sensor_location",
            GATT_HEART_RATE_CONTROL_POINT_CHARACTERISTIC: "hr_control_point",
            GATT_BATTERY_LEVEL_CHARACTERISTIC: "battery_level",
            gatt.GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC: "manufacturer",
            gatt.GATT_MODEL_NUMBER_STRING_CHARACTERISTIC: "model",
            gatt.GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC: "serial",
            gatt.GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC: "firmware",
            GATT_PNP_ID_CHARACTERISTIC: "pnp_id",
            gatt.UUID(VENDOR_COMMAND_UUID): "vendor_command",
            gatt.UUID(VENDOR_SETTINGS_UUID): "vendor_settings",
            gatt.UUID(VENDOR_EVENTS_UUID): "vendor_events",
            gatt.UUID(VENDOR_STREAM_UUID): "vendor_stream",
        }
        cccd_names = {"service_changed": "service_changed_cccd", "hrm": "hrm_cccd",
                      "battery_level": "battery_cccd", "vendor_events": "vendor_events_cccd",
                      "vendor_stream": "vendor_stream_cccd"}
        for service in server.services:
            for characteristic in service.characteristics:
                name = names[characteristic.uuid]
                found[name] = characteristic.handle
                if name in cccd_names:
                    descriptor = server.get_descriptor_attribute(
                        service.uuid, characteristic.uuid, cccd_uuid)
                    found[cccd_names[name]] = descriptor.handle
        return found

    def declaration(self, value_handle: int) -> tuple[int, bytes]:
        """(handle, value) of the characteristic declaration of `value_handle`."""
        for attribute in self.device.gatt_server.attributes:
            if isinstance(attribute, gatt.CharacteristicDeclaration) and \
                    attribute.value_handle == value_handle:
                return attribute.handle, bytes(attribute.value)
        raise KeyError(value_handle)


# -----------------------------------------------------------------------------
# One session
# -----------------------------------------------------------------------------
class Session:
    """Phone + CheckStrap on a LocalLink, the phone's HCI traffic snooped on a
    deterministic clock; raw-PDU helpers, hooks and marks (PDUs to locate)."""

    def __init__(self, name: str, scripted_smp: bool = True, **strap_options) -> None:
        self.name = name
        self.scripted_smp = scripted_smp
        self.clock = dsc.Clock()
        self.snooper = dsc.ClockedSnooper(self.clock)
        self.link = LocalLink()
        phone_stack = sc.make_phone(self.link, None)
        phone_stack.snooper = phone_stack.host.snooper = self.snooper
        self.phone = phone_stack.device
        self.phone_controller = phone_stack.controller
        self.strap = CheckStrap(
            sc.Stack(self.link, *STRAP, gap_appearance=hr.APPEARANCE_HEART_RATE_BELT),
            **strap_options)
        self.h = self.strap.handles
        self.marks: dict[str, tuple] = {}
        self.violations: list[dict] = []
        self.description = ""
        self.facts: dict = {}
        self.connection = self.strap_connection = None
        # ATT PDUs the phone received, in order (tap on its ATT channel)
        self.rx: list[bytes] = []
        self.rx_event = asyncio.Event()
        # one-shot hooks on what the strap's ATT channel receives / answers
        self.request_hooks: list[tuple] = []
        self.response_hooks: list[tuple] = []
        self.deferred_confirmations: list | None = None
        # SMP PDUs received (both sides), for the scripted pairings
        self.smp_rx = {"phone": [], "strap": []}
        self.smp_event = asyncio.Event()
        self._install_taps()

    # --- taps and hooks --------------------------------------------------------
    def _install_taps(self) -> None:
        phone_manager = self.phone.l2cap_channel_manager
        phone_att = phone_manager.fixed_channels[ATT_CID]

        def phone_tap(handle: int, pdu: bytes) -> None:
            self.rx.append(bytes(pdu))
            self.rx_event.set()
            phone_att(handle, pdu)

        phone_manager.register_fixed_channel(ATT_CID, phone_tap)

        strap_manager = self.strap.device.l2cap_channel_manager
        strap_att = strap_manager.fixed_channels[ATT_CID]

        def strap_tap(handle: int, pdu: bytes) -> None:
            for n, (predicate, action) in enumerate(self.request_hooks):
                if predicate(bytes(pdu)):
                    del self.request_hooks[n]
                    if action == "drop":
                        return
                    if isinstance(action, tuple) and action[0] == "also":
                        strap_att(handle, pdu)
                        self.strap.device.send_l2cap_pdu(handle, ATT_CID, action[1])
                        return
                    assert isinstance(action, bytes)
                    self.strap.device.send_l2cap_pdu(handle, ATT_CID, action)
                    return
            strap_att(handle, pdu)

        strap_manager.register_fixed_channel(ATT_CID, strap_tap)

        server = self.strap.device.gatt_server
        send_response = server.send_response

        def strap_send_response(bearer, response) -> None:
            for n, (predicate, change) in enumerate(self.response_hooks):
                if predicate(bytes(response)):
                    del self.response_hooks[n]
                    server.send_gatt_pdu(bearer, change(bytes(response)))
                    return
            send_response(bearer, response)

        server.send_response = strap_send_response

        # SMP is scripted: neither Bumble SMP manager sees a PDU (except in
        # healthy_pairing, where Bumble pairs).
        for side, device in ((("phone", self.phone), ("strap", self.strap.device))
                             if self.scripted_smp else ()):
            def smp_tap(_handle: int, pdu: bytes, side=side) -> None:
                self.smp_rx[side].append(bytes(pdu))
                self.smp_event.set()
            device.l2cap_channel_manager.register_fixed_channel(SMP_CID, smp_tap)

        # Connection parameter update policies (see the module docstring).
        manager = self.phone.l2cap_channel_manager
        accept = manager.on_l2cap_connection_parameter_update_request

        def phone_on_update_request(connection, cid, request) -> None:
            if valid_connection_parameters(request.interval_min, request.interval_max,
                                           request.latency, request.timeout):
                accept(connection, cid, request)
                return
            manager.send_control_frame(connection, cid,
                                       l2cap.L2CAP_Connection_Parameter_Update_Response(
                                           identifier=request.identifier,
                                           result=l2cap.L2CAP_CONNECTION_PARAMETERS_REJECTED_RESULT))

        manager.on_l2cap_connection_parameter_update_request = phone_on_update_request
        strap_l2cap = self.strap.device.l2cap_channel_manager

        def strap_on_update_request(connection, cid, request) -> None:
            strap_l2cap.send_control_frame(connection, cid, l2cap.L2CAP_Command_Reject(
                identifier=request.identifier,
                reason=l2cap.L2CAP_COMMAND_NOT_UNDERSTOOD_REASON, data=b""))

        strap_l2cap.on_l2cap_connection_parameter_update_request = strap_on_update_request

    def on_strap_request(self, predicate, action) -> None:
        """One-shot: when the strap receives an ATT PDU matching `predicate`:
        "drop" it, answer raw `bytes` instead of Bumble, or ("also", bytes):
        let Bumble handle it and send these bytes as well."""
        self.request_hooks.append((predicate, action))

    def on_strap_response(self, predicate, change) -> None:
        """One-shot: replace the strap's next response matching `predicate`."""
        self.response_hooks.append((predicate, change))

    def defer_confirmations(self) -> None:
        """The phone's GATT client holds its Handle Value Confirmations until
        flush_confirmations() (it still confirms every indication)."""
        client = self.connection.gatt_client
        self.deferred_confirmations = []
        client.send_confirmation = lambda c: self.deferred_confirmations.append(c)

    def flush_confirmations(self) -> None:
        client = self.connection.gatt_client
        for confirmation in self.deferred_confirmations:
            self.mark_next("tx", ATT_CID, bytes(confirmation))
            client.send_gatt_pdu(bytes(confirmation))
        self.deferred_confirmations = []
        del client.send_confirmation

    # --- marks ----------------------------------------------------------------
    def mark(self, key: str, direction: str, cid: int, pdu: bytes) -> None:
        """Note a PDU about to be sent (direction "tx" = by the phone, "rx" = to
        the phone): it is the first such PDU from the current record on."""
        assert key not in self.marks, key
        self.marks[key] = (direction, cid, bytes(pdu), self.snooper.records)

    def mark_next(self, direction: str, cid: int, pdu: bytes) -> None:
        self.mark(f"_auto{len(self.marks)}", direction, cid, pdu)

    def violation(self, rule: str, side: str, proof: list[str], offending: str | None = None,
                  opcode: tuple[int, int] | None = None) -> None:
        """`proof`: mark keys of every PDU that proves it; `offending`: the one
        that breaks the rule (default: the last of `proof`); `opcode`: (cid,
        first payload byte) the offending PDU must have."""
        offending = offending or proof[-1]
        if opcode is None:
            direction, cid, pdu, _ = self.marks[offending]
            opcode = (cid, pdu[0])
        self.violations.append({"rule": rule, "side": side, "proof": proof,
                                "offending": offending, "opcode": opcode})

    # --- basic steps ------------------------------------------------------------
    async def pause(self, us: int) -> None:
        """The next record comes `us` later than it would."""
        await sc.settle()
        self.clock.pause(us)

    async def power_on(self) -> None:
        await self.strap.device.power_on()
        await self.phone.power_on()

    async def open(self, mtu: int | None = hr.ATT_MTU, discover: bool = True,
                   power_on: bool = True, connected: bool = False) -> None:
        if power_on:
            await self.power_on()
        if not connected:
            self.connection, self.strap_connection = await sc.connect(
                self.phone, self.strap.device, self.strap.address)
        self.client = self.connection.gatt_client
        self.peer = Peer(self.connection)
        if mtu:
            assert await self.peer.request_mtu(mtu) == min(mtu, 517)
        if discover:
            await sc.full_discovery(self.peer)
            found = sc.handle_map(self.peer)
            for key, (value_handle, cccd) in found.items():
                assert value_handle in self.h.values(), (key, value_handle)
                if cccd is not None:
                    assert cccd in self.h.values(), (key, cccd)
            assert len(found) == len([k for k in self.h if not k.endswith("_cccd")])
        await sc.settle()

    async def close(self) -> None:
        await self.pause(DISCONNECT_PAUSE_US)
        await sc.disconnect(self.connection, self.strap_connection)
        await sc.settle()

    async def wait_rx(self, predicate, start: int, timeout: float = 5.0) -> bytes:
        """The first ATT PDU the phone received at index >= start matching."""
        async def scan() -> bytes:
            while True:
                for pdu in self.rx[start:]:
                    if predicate(pdu):
                        return pdu
                self.rx_event.clear()
                await self.rx_event.wait()
        return await asyncio.wait_for(scan(), timeout)

    def phone_send(self, pdu: bytes, cid: int = ATT_CID, key: str | None = None) -> int:
        """Send raw bytes from the phone; returns the rx index to wait from."""
        start = len(self.rx)
        if key:
            self.mark(key, "tx", cid, pdu)
        self.phone.send_l2cap_pdu(self.connection.handle, cid, pdu)
        return start

    def strap_send(self, pdu: bytes, cid: int = ATT_CID, key: str | None = None) -> None:
        if key:
            self.mark(key, "rx", cid, pdu)
        self.strap.device.send_l2cap_pdu(self.strap_connection.handle, cid, pdu)

    async def phone_request(self, pdu: bytes, key: str | None = None,
                            answer: str | None = None) -> bytes:
        """Raw ATT request from the phone; waits for the response (or Error
        Response) and marks it as `answer`."""
        start = self.phone_send(pdu, key=key)
        response = await self.wait_rx(lambda p: p[0] in (pdu[0] + 1, 0x01), start)
        if answer:
            self.marks[answer] = ("rx", ATT_CID, response, self.marks[key][3] if key else 0)
        await sc.settle()
        return response

    async def read(self, handle: int, expected: bytes | None = None,
                   key: str | None = None, answer: str | None = None) -> bytes:
        request = bytes([0x0A]) + u16(handle)
        first = self.snooper.records
        if key:
            self.mark(key, "tx", ATT_CID, request)
        value = bytes(await self.client.read_value(handle))
        if expected is not None:
            assert value == expected, (handle, value.hex(), expected.hex())
        if answer:
            self.marks[answer] = ("rx", ATT_CID, bytes([0x0B]) + value, first)
        return value

    async def write(self, handle: int, value: bytes, with_response: bool = True,
                    key: str | None = None, answer: str | None = None) -> None:
        request = bytes([0x12 if with_response else 0x52]) + u16(handle) + value
        first = self.snooper.records
        if key:
            self.mark(key, "tx", ATT_CID, request)
        start = len(self.rx)
        await self.client.write_value(handle, value, with_response=with_response)
        if answer:
            response = await self.wait_rx(lambda p: p[0] in (0x13, 0x01), start)
            self.marks[answer] = ("rx", ATT_CID, response, first)
        await sc.settle()

    async def subscribe(self, name: str, value: bytes = b"\x01\x00",
                        key: str | None = None) -> asyncio.Queue:
        """CCCD write (Write Request) after discovery; queue of values received."""
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        handle = self.h[name]
        callback = {lambda v: queue.put_nowait(bytes(v))}
        if value[0] & 1:
            self.client.notification_subscribers[handle] = callback
        if value[0] & 2:
            self.client.indication_subscribers[handle] = callback
        cccd = "battery_cccd" if name == "battery_level" else name + "_cccd"
        await self.write(self.h[cccd], value, key=key)
        return queue

    async def notify(self, characteristic, value: bytes, queue: asyncio.Queue | None = None,
                     key: str | None = None, pause_us: int = 0, force: bool = False,
                     send_value=None) -> None:
        """A notification by the strap through Bumble (after `pause_us`);
        `send_value`: what Bumble's characteristic adapter encodes to `value`."""
        if send_value is None:
            send_value = value
        if pause_us:
            await self.pause(pause_us)
        if key:
            self.mark(key, "rx", ATT_CID, bytes([0x1B]) + u16(characteristic.handle) + value)
        start = len(self.rx)
        if force:
            await self.strap.device.notify_subscriber(
                self.strap_connection, characteristic, send_value, force=True)
        else:
            await self.strap.device.notify_subscribers(characteristic, send_value)
        if queue is not None:
            assert await asyncio.wait_for(queue.get(), 5) == value
        else:
            await self.wait_rx(lambda p: p[0] == 0x1B and p[3:] == value, start)
        await sc.settle()

    async def notify_hr(self, value: bytes, queue=None, key: str | None = None,
                        force: bool = False) -> None:
        await self.notify(self.strap.hrs.heart_rate_measurement_characteristic, value,
                          queue, key=key, pause_us=HR_PAUSE_US, force=force)

    async def indicate(self, characteristic, value: bytes, queue: asyncio.Queue,
                       key: str | None = None) -> None:
        """An indication through Bumble; returns once it is confirmed."""
        if key:
            self.mark(key, "rx", ATT_CID, bytes([0x1D]) + u16(characteristic.handle) + value)
        await asyncio.wait_for(
            self.strap.device.indicate_subscribers(characteristic, value), 5)
        assert await asyncio.wait_for(queue.get(), 5) == value
        await sc.settle()

    async def wait_smp(self, side: str, count: int) -> bytes:
        async def scan() -> bytes:
            while len(self.smp_rx[side]) < count:
                self.smp_event.clear()
                await self.smp_event.wait()
            return self.smp_rx[side][count - 1]
        return await asyncio.wait_for(scan(), 5)


def report_advertising_once(controller) -> None:
    """Bumble 0.0.236's emulated controller reports every ADV_IND twice while
    scanning (Controller.on_advertising_pdu): as connectable advertising
    without the legacy bit and again as a SCAN_RESPONSE carrying the
    advertising data, even in a passive scan.  This instance override makes
    the phone's controller do what a real one does in a passive scan: one LE
    Extended Advertising Report per ADV_IND, event type 0x0013 (legacy PDU,
    scannable, connectable = ADV_IND); the rest (connection creation) is
    Bumble's own."""
    original = controller.on_advertising_pdu

    def on_advertising_pdu(pdu) -> None:
        if controller.le_scan_enable and isinstance(pdu, ll.AdvInd):
            Event = hci.HCI_LE_Extended_Advertising_Report_Event
            report = Event.Report(
                event_type=(Event.EventType.LEGACY_ADVERTISING_PDU_USED
                            | Event.EventType.SCANNABLE_ADVERTISING
                            | Event.EventType.CONNECTABLE_ADVERTISING),
                address_type=pdu.advertiser_address.address_type,
                address=pdu.advertiser_address,
                primary_phy=hci.Phy.LE_1M, secondary_phy=0, advertising_sid=0xFF,
                tx_power=Event.TX_POWER_INFORMATION_NOT_AVAILABLE, rssi=-50,
                periodic_advertising_interval=0, direct_address_type=0,
                direct_address=hci.Address.ANY, data=pdu.data)
            controller.send_hci_packet(Event([report]))
            controller.le_scan_enable = False
            try:
                original(pdu)
            finally:
                controller.le_scan_enable = True
        else:
            original(pdu)

    controller.on_advertising_pdu = on_advertising_pdu


def valid_connection_parameters(interval_min: int, interval_max: int, latency: int,
                                timeout: int) -> bool:
    """Core Vol 3 Part A 4.20 with the ranges of Vol 4 Part E 7.8.18."""
    return (6 <= interval_min <= interval_max <= 3200 and latency <= 499
            and 10 <= timeout <= 3200
            and timeout * 10 * 4 > (1 + latency) * interval_max * 5 * 2)  # 10 ms vs 1.25 ms units


# -----------------------------------------------------------------------------
# Violating sessions
# -----------------------------------------------------------------------------
async def att_01(s: Session) -> None:
    s.description = ("Client sends a Write Request (settings 41 <- 32 bytes, an L2CAP PDU the "
                     "phone's host sends as two ACL fragments) while its Read Request for the "
                     "Battery Level (24) is unanswered; the strap answers both, in order (Read "
                     "Response 57, Write Response). Then HRM subscribe and 2 notifications.")
    await s.open()
    read = bytes([0x0A]) + u16(s.h["battery_level"])
    value = b"bledissect settings: mode=tempo!"
    assert len(value) == 32
    write = bytes([0x12]) + u16(s.h["vendor_settings"]) + value
    start = s.phone_send(read, key="read")
    s.phone_send(write, key="write")
    read_rsp = await s.wait_rx(lambda p: p[0] == 0x0B, start)
    assert read_rsp == bytes([0x0B, BATTERY_DEFAULT])
    await s.wait_rx(lambda p: p[0] == 0x13, start)
    await sc.settle()
    assert s.strap.settings.value == value
    s.violation("ATT-01", "client", ["read", "write"])
    queue = await s.subscribe("hrm")
    for bpm in (72, 73):
        await s.notify_hr(hrm(bpm), queue)
    await s.close()


async def att_02(s: Session) -> None:
    s.description = ("Read Request for the Body Sensor Location (19) that the strap never "
                     "answers; no more ATT traffic; the phone disconnects 35 s later.")
    await s.open()
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    request = bytes([0x0A]) + u16(s.h["body_sensor_location"])
    s.on_strap_request(lambda p: p == request, "drop")
    s.phone_send(request, key="read")
    await sc.settle()
    s.violation("ATT-02", "server", ["read"])
    await s.pause(35_000_000 - DISCONNECT_PAUSE_US)
    await s.close()


async def att_03(s: Session) -> None:
    s.description = ("Write Command 01 to the command characteristic (39, write without "
                     "response allowed) answered by the strap with a Write Response.")
    await s.open()
    command = bytes([0x52]) + u16(s.h["vendor_command"]) + b"\x01"
    s.on_strap_request(lambda p: p == command, ("also", b"\x13"))
    s.mark("response", "rx", ATT_CID, b"\x13")
    await s.write(s.h["vendor_command"], b"\x01", with_response=False, key="command")
    await s.wait_rx(lambda p: p == b"\x13", 0)
    await sc.settle()
    assert s.strap.commands == [b"\x01"]
    s.violation("ATT-03", "server", ["command", "response"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_03_wrong_opcode(s: Session) -> None:
    s.description = ("Read Request for handle 0x00F0 (no such attribute) answered by an Error "
                     "Response whose Request Opcode In Error is 0x12 (Write Request) instead "
                     "of 0x0A; handle 0x00F0 and code 0x01 Invalid Handle are right.")
    await s.open()
    request = bytes([0x0A]) + u16(NO_SUCH_HANDLE)
    error = bytes([0x01, 0x12]) + u16(NO_SUCH_HANDLE) + b"\x01"
    s.on_strap_request(lambda p: p == request, error)
    response = await s.phone_request(request, key="read", answer="error")
    assert response == error
    s.violation("ATT-03", "server", ["read", "error"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_04(s: Session) -> None:
    s.description = ("After subscribing to indications on 43, the phone sends a Handle Value "
                     "Confirmation with no indication outstanding; later one indication, "
                     "confirmed once.")
    await s.open()
    queue = await s.subscribe("vendor_events", b"\x02\x00")
    s.phone_send(b"\x1E", key="confirmation")
    await sc.settle()
    s.violation("ATT-04", "client", ["confirmation"])
    await s.pause(500_000)
    await s.indicate(s.strap.events, b"\x01event", queue)
    await s.close()


async def att_05(s: Session) -> None:
    s.description = ("The strap sends a second indication on 43 before the confirmation of "
                     "the first; the phone confirms each (both after receiving the second).")
    await s.open()
    queue = await s.subscribe("vendor_events", b"\x02\x00")
    await s.pause(500_000)
    s.defer_confirmations()
    first = bytes([0x1D]) + u16(s.h["vendor_events"]) + b"\x01first"
    second = bytes([0x1D]) + u16(s.h["vendor_events"]) + b"\x02second"
    start = len(s.rx)
    s.strap_send(first, key="first")
    s.strap_send(second, key="second")
    await s.wait_rx(lambda p: p == second, start)
    assert [await queue.get(), await queue.get()] == [first[3:], second[3:]]
    await sc.settle()
    s.flush_confirmations()
    await sc.settle()
    s.violation("ATT-05", "server", ["first", "second"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_06(s: Session) -> None:
    s.description = ("No MTU exchange (ATT_MTU 23). After subscribing to 46, notifications on "
                     "46 with 20-byte values (PDU 23) and one with a 27-byte value (PDU 30 "
                     "> ATT_MTU 23).")
    await s.open(mtu=None)
    queue = await s.subscribe("vendor_stream")
    await s.notify(s.strap.stream, bytes(range(0x20, 0x34)), queue, pause_us=200_000)
    long = bytes([0x1B]) + u16(s.h["vendor_stream"]) + bytes(range(0x40, 0x5B))
    assert len(long) == 30
    await s.pause(200_000)
    start = len(s.rx)
    s.strap_send(long, key="notification")
    await s.wait_rx(lambda p: p == long, start)
    assert await queue.get() == long[3:]
    s.violation("ATT-06", "server", ["notification"])
    await s.notify(s.strap.stream, bytes(range(0x60, 0x74)), queue, pause_us=200_000)
    await s.close()


async def att_07(s: Session) -> None:
    s.description = ("The phone sends Exchange MTU Request (247) twice in one connection; "
                     "the strap answers 517 both times.")
    await s.open(mtu=None, discover=False)
    s.mark("first", "tx", ATT_CID, b"\x02" + u16(hr.ATT_MTU))
    assert await s.peer.request_mtu(hr.ATT_MTU) == hr.ATT_MTU
    await sc.full_discovery(s.peer)
    response = await s.phone_request(b"\x02" + u16(hr.ATT_MTU), key="second")
    assert response == b"\x03" + u16(517)
    s.violation("ATT-07", "client", ["first", "second"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_08(s: Session) -> None:
    s.description = ("Exchange MTU Request with Client Rx MTU 20 (< 23); the strap answers "
                     "517, ATT_MTU stays 23; everything after fits 23.")
    await s.power_on()
    await s.open(mtu=None, discover=False, power_on=False)
    response = await s.phone_request(b"\x02" + u16(20), key="request")
    assert response == b"\x03" + u16(517)
    s.violation("ATT-08", "client", ["request"])
    await sc.full_discovery(s.peer)
    await s.read(s.h["device_name"], hr.STRAP_NAME.encode())
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_09(s: Session) -> None:
    s.description = ("No exchange at first: discovery at ATT_MTU 23. Both GATT servers answer "
                     "Exchange MTU with 247. The phone asks 247 (its request = its response), "
                     "then the strap, as a client, asks 100: the strap's request (100) differs "
                     "from its own response (247). Only small PDUs follow (a Read of the "
                     "Battery Level), so every PDU of the file fits 23.")
    s.phone.gatt_server.max_mtu = hr.ATT_MTU
    s.strap.device.gatt_server.max_mtu = hr.ATT_MTU
    await s.open(mtu=None)
    s.mark("strap_response", "rx", ATT_CID, b"\x03" + u16(hr.ATT_MTU))
    assert await s.peer.request_mtu(hr.ATT_MTU) == hr.ATT_MTU
    await sc.settle()
    s.mark("strap_request", "rx", ATT_CID, b"\x02" + u16(100))
    s.mark("phone_response", "tx", ATT_CID, b"\x03" + u16(hr.ATT_MTU))
    assert await s.strap_connection.gatt_client.request_mtu(100) == 100
    await sc.settle()
    s.violation("ATT-09", "peripheral", ["strap_response", "strap_request"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def att_13(s: Session) -> None:
    s.description = "Read Request for the Battery Level (24) answered by Error Response code 0x00."
    await s.open()
    request = bytes([0x0A]) + u16(s.h["battery_level"])
    error = bytes([0x01, 0x0A]) + u16(s.h["battery_level"]) + b"\x00"
    s.on_strap_request(lambda p: p == request, error)
    assert await s.phone_request(request, key="read", answer="error") == error
    s.violation("ATT-13", "server", ["read", "error"])
    await s.read(s.h["body_sensor_location"], b"\x01")
    await s.close()


async def att_17(s: Session) -> None:
    s.description = ("Find Information Request 16-17 (the HRM value and its descriptor) answered "
                     "with (17, 0x2902) then (16, 0x2A37): handles not in ascending order (both "
                     "in range, both the strap's real attribute types).")
    await s.open()
    value, cccd = s.h["hrm"], s.h["hrm_cccd"]
    request = bytes([0x04]) + u16(value, cccd)
    response = bytes([0x05, 0x01]) + u16(cccd, 0x2902, value, 0x2A37)
    s.on_strap_request(lambda p: p == request, response)
    assert await s.phone_request(request, key="request", answer="response") == response
    s.violation("ATT-17", "server", ["request", "response"])
    queue = await s.subscribe("hrm")
    for bpm in (72, 73):
        await s.notify_hr(hrm(bpm), queue)
    await s.close()


async def att_17_out_of_range(s: Session) -> None:
    s.description = ("Find Information Request 17-17 (the HRM's descriptors) answered with "
                     "(17, 0x2902) and (18, 0x2803): handle 18 is outside the requested range "
                     "(it is the Body Sensor Location declaration, as discovered: no descriptor).")
    await s.open()
    cccd = s.h["hrm_cccd"]
    request = bytes([0x04]) + u16(cccd, cccd)
    response = bytes([0x05, 0x01]) + u16(cccd, 0x2902, cccd + 1, 0x2803)
    assert s.strap.declaration(s.h["body_sensor_location"])[0] == cccd + 1
    s.on_strap_request(lambda p: p == request, response)
    assert await s.phone_request(request, key="request", answer="response") == response
    s.violation("ATT-17", "server", ["request", "response"])
    queue = await s.subscribe("hrm")
    for bpm in (72, 73):
        await s.notify_hr(hrm(bpm), queue)
    await s.close()


def declarations(s: Session, names: list[str]) -> list[bytes]:
    entries = []
    for name in names:
        handle, value = s.strap.declaration(s.h[name])
        entries.append(u16(handle) + value)
        assert len(entries[-1]) == 7
    return entries


async def att_18(s: Session) -> None:
    s.description = ("Read By Type 0x2803 over 14-21 (Heart Rate service) answered with "
                     "entry length 7 and 19 bytes: entries 15 and 18, then 5 bytes of the "
                     "entry 20 (split). The phone goes on from 19 (entry 20, complete) and "
                     "21 (Attribute Not Found).")
    await s.open(discover=False)
    await s.peer.discover_services()
    first, last = 14, 21
    e15, e18, e20 = declarations(s, ["hrm", "body_sensor_location", "hr_control_point"])
    request = bytes([0x08]) + u16(first, last, 0x2803)
    response = bytes([0x09, 7]) + e15 + e18 + e20[:5]
    s.on_strap_request(lambda p: p == request, response)
    assert await s.phone_request(request, key="request", answer="response") == response
    assert await s.phone_request(bytes([0x08]) + u16(19, last, 0x2803)) == bytes([0x09, 7]) + e20
    assert (await s.phone_request(bytes([0x08]) + u16(21, last, 0x2803)))[0] == 0x01
    s.violation("ATT-18", "server", ["request", "response"])
    await s.read(s.h["body_sensor_location"], b"\x01")
    await s.close()


async def att_18_out_of_range(s: Session) -> None:
    s.description = ("Read By Type 0x2803 over 14-19 answered with the entries 15, 18 and 20: "
                     "20 is outside the requested range (the entries are the strap's real "
                     "declarations, in the Heart Rate service 14-21).")
    await s.open(discover=False)
    await s.peer.discover_services()
    e15, e18, e20 = declarations(s, ["hrm", "body_sensor_location", "hr_control_point"])
    request = bytes([0x08]) + u16(14, 19, 0x2803)
    response = bytes([0x09, 7]) + e15 + e18 + e20
    s.on_strap_request(lambda p: p == request, response)
    assert await s.phone_request(request, key="request", answer="response") == response
    s.violation("ATT-18", "server", ["request", "response"])
    await s.read(s.h["body_sensor_location"], b"\x01")
    await s.close()


async def att_19(s: Session) -> None:
    s.description = ("No MTU exchange. Prepare Write Request to 41 (settings) offset 0 with 18 "
                     "bytes; the Prepare Write Response echoes handle and offset but its value "
                     "differs in one byte; the phone cancels (Execute Write flags 00).")
    await s.open(mtu=None)
    part = b"mode=race, zone=5;"
    assert len(part) == 18
    request = bytes([0x16]) + u16(s.h["vendor_settings"], 0) + part
    bad = bytearray(request)
    bad[0] = 0x17
    bad[-1] ^= 0x01  # ';' -> ':'
    s.on_strap_response(lambda r: r[0] == 0x17, lambda r: bytes(bad))
    assert await s.phone_request(request, key="request", answer="response") == bytes(bad)
    assert await s.phone_request(b"\x18\x00") == b"\x19"
    s.violation("ATT-19", "server", ["request", "response"])
    await s.read(s.h["vendor_settings"], SETTINGS_INITIAL)
    await s.close()


async def att_20(s: Session) -> None:
    s.description = ("Exchange MTU 517 / 517. After subscribing to 46, one notification on 46 "
                     "of 514 value bytes (ATT PDU 517 = ATT_MTU; attribute value > 512).")
    await s.open(mtu=517)
    queue = await s.subscribe("vendor_stream")
    value = bytes(i & 0xFF for i in range(514))
    await s.notify(s.strap.stream, value, queue, key="notification", pause_us=200_000)
    s.violation("ATT-20", "server", ["notification"])
    await s.close()


async def gatt_06(s: Session) -> None:
    s.description = ("Write Request to the HRM CCCD (17) with one octet (01); the strap "
                     "answers Error Response 0x0D Invalid Attribute Value Length; then the "
                     "phone writes 01 00 and gets notifications.")
    await s.open()
    request = bytes([0x12]) + u16(s.h["hrm_cccd"]) + b"\x01"
    error = bytes([0x01, 0x12]) + u16(s.h["hrm_cccd"]) + b"\x0D"
    s.on_strap_request(lambda p: p == request, error)
    assert await s.phone_request(request, key="write", answer="error") == error
    s.violation("GATT-06", "client", ["write"])
    queue = await s.subscribe("hrm")
    for bpm in (72, 73):
        await s.notify_hr(hrm(bpm), queue)
    await s.close()


async def gatt_07(s: Session) -> None:
    s.description = ("Write Request 01 00 (notify bit) to the Service Changed CCCD (9); "
                     "Service Changed has the Indicate property only. The strap accepts.")
    await s.open()
    await s.write(s.h["service_changed_cccd"], b"\x01\x00", key="write")
    s.violation("GATT-07", "client", ["write"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def gatt_08(s: Session) -> None:
    s.description = ("Subscribe HRM (17 <- 01 00), 3 notifications, unsubscribe (17 <- 00 00, "
                     "Write Response), then 1 s later one more HRM notification.")
    await s.open()
    queue = await s.subscribe("hrm")
    for bpm in (72, 73, 74):
        await s.notify_hr(hrm(bpm), queue)
    await s.write(s.h["hrm_cccd"], b"\x00\x00", key="disable")
    await s.notify_hr(hrm(75), queue, key="notification", force=True)
    s.violation("GATT-08", "server", ["disable", "notification"])
    await s.close()


async def gatt_09(s: Session) -> None:
    s.description = ("Write Command to the settings characteristic (41: read + write, no "
                     "write without response).")
    await s.open()
    await s.write(s.h["vendor_settings"], b"mode=rest", with_response=False, key="command")
    await s.pause(200_000)
    await s.read(s.h["vendor_settings"], b"mode=rest")
    s.violation("GATT-09", "client", ["command"])
    await s.close()


async def l2c_02(s: Session) -> None:
    s.description = ("The phone (central) sends an L2CAP Connection Parameter Update Request "
                     "(interval 24-40, latency 0, timeout 500); the strap answers Command "
                     "Reject (0x0000 command not understood).")
    await s.open()
    identifier = s.phone.l2cap_channel_manager.next_identifier(s.connection)
    request = bytes([0x12, identifier]) + u16(8, 24, 40, 0, 500)
    reject = bytes([0x01, identifier]) + u16(2, 0)
    s.mark("reject", "rx", SIGNALING_CID, reject)
    s.phone_send(request, cid=SIGNALING_CID, key="request")
    await asyncio.sleep(0.05)
    await sc.settle()
    s.violation("L2C-02", "central", ["request"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def l2c_03(s: Session) -> None:
    s.description = ("The strap asks for interval 24-40 (30-50 ms), latency 4, timeout 40 "
                     "(400 ms <= (1+4) x 50 ms x 2 = 500 ms); the phone rejects (result 1).")
    await s.open()
    manager = s.strap.device.l2cap_channel_manager
    identifier = manager.identifiers.get(s.strap_connection.handle, 0) + 1
    s.mark("request", "rx", SIGNALING_CID, bytes([0x12, identifier]) + u16(8, 24, 40, 4, 40))
    s.mark("response", "tx", SIGNALING_CID, bytes([0x13, identifier]) + u16(2, 1))
    result = await manager.update_connection_parameters(s.strap_connection, 24, 40, 4, 40)
    assert result == 1, result
    await sc.settle()
    s.violation("L2C-03", "peripheral", ["request"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def hrs_01(s: Session) -> None:
    s.description = ("HRM notifications 06 48, 16 49 50 03 (one RR interval), then "
                     "16 4A 40 03 03: RR flag, one RR interval and an odd trailing byte.")
    await s.open()
    queue = await s.subscribe("hrm")
    await s.notify_hr(hrm(72), queue)
    await s.notify_hr(hrm(73, 0x16, u16(848)), queue)
    await s.notify_hr(hrm(74, 0x16, u16(832) + b"\x03"), queue, key="notification")
    s.violation("HRS-01", "server", ["notification"])
    await s.close()


async def hrs_04(s: Session) -> None:
    s.description = ("HRM notifications 06 48, 06 49 (sensor contact supported and detected), "
                     "then 00 4A (contact not supported) in the same connection.")
    await s.open()
    queue = await s.subscribe("hrm")
    await s.notify_hr(hrm(72), queue)
    await s.notify_hr(hrm(73), queue, key="before")
    await s.notify_hr(hrm(74, 0x00), queue, key="after")
    s.violation("HRS-04", "server", ["before", "after"])
    await s.close()


async def hrs_06(s: Session) -> None:
    s.description = ("The Heart Rate service (14-19) has no Heart Rate Control Point (full "
                     "discovery shows it); HRM notifications 06 48, 06 49, then 0E 4A 0C 00 "
                     "(Energy Expended 12 kJ).")
    await s.open()
    queue = await s.subscribe("hrm")
    await s.notify_hr(hrm(72), queue)
    await s.notify_hr(hrm(73), queue)
    await s.notify_hr(hrm(74, 0x0E, u16(12)), queue, key="notification")
    s.violation("HRS-06", "server", ["notification"])
    await s.close()


async def hrs_07(s: Session) -> None:
    s.description = ("HR Control Point (21) <- 01 (Reset Energy Expended): Write Response; "
                     "<- 02 (reserved): Write Response instead of Error 0x80.")
    await s.open()
    await s.write(s.h["hr_control_point"], b"\x01")
    assert s.strap.resets == 1
    request = bytes([0x12]) + u16(s.h["hr_control_point"]) + b"\x02"
    s.on_strap_request(lambda p: p == request, b"\x13")
    assert await s.phone_request(request, key="write", answer="response") == b"\x13"
    s.violation("HRS-07", "server", ["write", "response"])
    await s.close()


async def hrs_09(s: Session) -> None:
    s.description = "Read Body Sensor Location (19) -> 09 (reserved; 0-6 are defined)."
    await s.open()
    await s.read(s.h["body_sensor_location"], b"\x09", key="read", answer="response")
    s.violation("HRS-09", "server", ["read", "response"])
    await s.close()


async def bas_01(s: Session) -> None:
    s.description = "Read Battery Level (24) -> 0x65 (101 %)."
    await s.open()
    await s.read(s.h["battery_level"], bytes([101]), key="read", answer="response")
    s.violation("BAS-01", "server", ["read", "response"])
    await s.close()


PAIRING_REQUEST = bytes([0x01, 0x03, 0x00, 0x01, 0x10, 0x00, 0x01])  # NoInputNoOutput, bonding
PAIRING_RESPONSE = bytes([0x02, 0x03, 0x00, 0x01, 0x10, 0x00, 0x01])


async def smp_pairing(s: Session, request: bytes, answer: bytes) -> None:
    s.phone_send(request, cid=SMP_CID, key="request")
    assert await s.wait_smp("strap", 1) == request
    s.strap_send(answer, cid=SMP_CID, key="answer")
    assert await s.wait_smp("phone", 1) == answer


async def smp_02(s: Session) -> None:
    s.description = ("Pairing Request with Maximum Encryption Key Size 6 "
                     "(01 03 00 01 06 00 01); the strap answers Pairing Failed 0x06 "
                     "(Encryption Key Size).")
    await s.open()
    await smp_pairing(s, bytes([0x01, 0x03, 0x00, 0x01, 0x06, 0x00, 0x01]), b"\x05\x06")
    await sc.settle()
    s.violation("SMP-02", "central", ["request"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def smp_03(s: Session) -> None:
    s.description = ("Pairing Request with Responder Key Distribution 01 (EncKey); the "
                     "Pairing Response sets 03 (EncKey + IdKey); the phone answers Pairing "
                     "Failed 0x0A (Invalid Parameters).")
    await s.open()
    response = PAIRING_RESPONSE[:6] + b"\x03"
    await smp_pairing(s, PAIRING_REQUEST, response)
    s.phone_send(b"\x05\x0A", cid=SMP_CID, key="failed")
    assert await s.wait_smp("strap", 2) == b"\x05\x0A"
    await sc.settle()
    s.violation("SMP-03", "peripheral", ["request", "answer"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def smp_05(s: Session) -> None:
    s.description = ("Pairing Request / Pairing Response (legacy, Just Works, bonding, the "
                     "strap distributes EncKey); the strap then sends Encryption Information "
                     "(its LTK) on the unencrypted link; the phone answers Pairing Failed "
                     "0x08.")
    await s.open()
    await smp_pairing(s, PAIRING_REQUEST, PAIRING_RESPONSE)
    ltk = bytes(range(0xA0, 0xB0))
    s.strap_send(b"\x06" + ltk, cid=SMP_CID, key="key")
    assert await s.wait_smp("phone", 2) == b"\x06" + ltk
    s.phone_send(b"\x05\x08", cid=SMP_CID, key="failed")
    assert await s.wait_smp("strap", 2) == b"\x05\x08"
    await sc.settle()
    s.violation("SMP-05", "peripheral", ["key"])
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


BAD_UUID_LIST = bytes([0x04, 0x03, 0x0D, 0x18, 0x0F])  # Complete List of 16-bit UUIDs, 3 octets


def bad_advertising_data() -> bytes:
    name = hr.STRAP_NAME.encode()
    data = bytes([0x02, 0x01, 0x06]) + BAD_UUID_LIST + bytes([len(name) + 1, 0x09]) + name
    assert len(data) <= 31
    return data


async def adv_03(s: Session) -> None:
    s.description = ("The strap advertises Flags 06, a Complete List of 16-bit Service UUIDs "
                     "with 3 octets (0D 18 0F), Complete Local Name; the phone scans "
                     "passively, stops at the first report, connects by address.")
    s.strap.device.advertising_data = bad_advertising_data()
    report_advertising_once(s.phone_controller)
    await s.power_on()
    await s.strap.device.start_advertising(advertising_interval_min=100.0,
                                           advertising_interval_max=100.0)
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement) -> None:
        if not found.done():
            found.set_result(advertisement)

    s.phone.on(Device.EVENT_ADVERTISEMENT, on_advertisement)
    s.marks["report"] = ("event", None, bad_advertising_data(), s.snooper.records)
    await s.phone.start_scanning(active=False, filter_duplicates=True,
                                 scanning_phys=[hci.HCI_LE_1M_PHY])
    advertisement = await asyncio.wait_for(found, 5)
    await s.phone.stop_scanning()
    s.phone.remove_listener(Device.EVENT_ADVERTISEMENT, on_advertisement)
    assert str(advertisement.address).startswith(hr.STRAP_RANDOM_ADDRESS)
    await s.strap.device.stop_advertising()
    await s.pause(300_000)
    await s.open(power_on=False)
    s.violation("ADV-03", "peripheral", ["report"], opcode=(None, 0x0D))
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.close()


async def gap_01(s: Session) -> None:
    s.description = "Read Appearance (5) -> 41 03 00 (3 octets; must be 2)."
    await s.open()
    await s.read(s.h["device_name"], hr.STRAP_NAME.encode())
    await s.read(s.h["appearance"], b"\x41\x03\x00", key="read", answer="response")
    s.violation("GAP-01", "server", ["read", "response"])
    await s.close()


async def dis_01(s: Session) -> None:
    s.description = "Read PnP ID (36) -> 01 FF FF 01 00 10 (6 octets; must be 7)."
    await s.open()
    await s.read(s.h["manufacturer"], b"bledissect labs")
    await s.read(s.h["pnp_id"], PNP_ID[:6], key="read", answer="response")
    s.violation("DIS-01", "server", ["read", "response"])
    await s.close()


# -----------------------------------------------------------------------------
# Healthy sessions
# -----------------------------------------------------------------------------
async def healthy_hr(s: Session) -> None:
    s.description = (
        "Two connections. 1: MTU 247/517, full discovery, reads (Device Name, Appearance "
        "41 03, PnP ID 7 octets, Body Sensor Location 01, Battery Level 100), valid L2CAP "
        "Connection Parameter Update Request from the strap (24-40, 0, 500) accepted (LE "
        "Connection Update), subscribe HRM and Battery Level, HRM with Energy Expended "
        "(Control Point exists) and the contact-supported bit set throughout, Control Point "
        "01 -> Write Response (Energy Expended restarts at 0), Control Point 02 -> Error "
        "0x80, Battery Level notification 0, unsubscribe HRM. 2: MTU 247, no discovery, "
        "subscribe HRM, HRM with the contact-supported bit clear throughout.")
    s.strap.battery_level = 100
    await s.open()
    await s.read(s.h["device_name"], hr.STRAP_NAME.encode())
    await s.read(s.h["appearance"], u16(hr.APPEARANCE_HEART_RATE_BELT))
    await s.read(s.h["pnp_id"], PNP_ID)
    await s.read(s.h["body_sensor_location"], b"\x01")
    await s.read(s.h["battery_level"], b"\x64")
    # valid connection parameter update request from the strap, accepted
    done = asyncio.get_running_loop().create_future()
    s.connection.once(s.connection.EVENT_CONNECTION_PARAMETERS_UPDATE,
                      lambda *_: done.done() or done.set_result(None))
    assert valid_connection_parameters(24, 40, 0, 500)
    result = await s.strap.device.l2cap_channel_manager.update_connection_parameters(
        s.strap_connection, 24, 40, 0, 500)
    assert result == 0
    await asyncio.wait_for(done, 5)
    hr_queue = await s.subscribe("hrm")
    battery_queue = await s.subscribe("battery_level")
    energy = 40
    values = [hrm(72), hrm(74, 0x04), hrm(76, 0x0E, u16(energy)),
              hrm(78, 0x16, u16(787)), hrm(80, 0x1E, u16(energy + 1, 768, 770)),
              hrm(81, 0x0C, u16(energy + 2))]
    for value in values:
        await s.notify_hr(value, hr_queue)
    await s.write(s.h["hr_control_point"], b"\x01")
    assert s.strap.resets == 1
    error = bytes([0x01, 0x12]) + u16(s.h["hr_control_point"]) + b"\x80"
    start = len(s.rx)
    try:
        await s.write(s.h["hr_control_point"], b"\x02")
        raise AssertionError("control point 02 accepted")
    except att.ATT_Error as e:
        assert e.error_code == 0x80
    assert error in s.rx[start:]
    for value in (hrm(82, 0x0E, u16(0)), hrm(83, 0x1E, u16(1, 740))):
        await s.notify_hr(value, hr_queue)
    s.strap.battery_level = 0
    await s.notify(s.strap.bas.battery_level_characteristic, b"\x00", battery_queue,
                   pause_us=500_000, send_value=0)
    await s.write(s.h["hrm_cccd"], b"\x00\x00")
    await s.close()
    # connection 2: contact support clear throughout (legal: it is per connection)
    await s.pause(5_000_000)
    s.rx.clear()
    await s.open(discover=False, power_on=False)
    hr_queue = await s.subscribe("hrm")
    for bpm in (90, 91, 92):
        await s.notify_hr(hrm(bpm, 0x00), hr_queue)
    await s.close()


async def healthy_att(s: Session) -> None:
    s.description = (
        "ATT_MTU 23 throughout (no exchange). Full discovery; Read of handle 0x00F0 (none) "
        "-> Error Response Invalid Handle with handle 0x00F0; Write Command to 39 (write "
        "without response allowed, twice); long read of 41 (Read 22 + Read Blob 18 bytes); "
        "long write of 41 (Prepare Write 18 + 18 + 5 bytes, each echoed, Execute Write 01) "
        "and read back; subscribe 46, notifications of 20 value bytes (PDU 23 = ATT_MTU) only "
        "after the CCCD write; 25 s pause, then a Read of 24 (answered at once); "
        "unsubscribe 46.")
    await s.open(mtu=None)
    response = await s.phone_request(bytes([0x0A]) + u16(NO_SUCH_HANDLE))
    assert response == bytes([0x01, 0x0A]) + u16(NO_SUCH_HANDLE) + b"\x01", response.hex()
    await s.write(s.h["vendor_command"], b"\x01", with_response=False)
    await s.write(s.h["vendor_command"], b"\x02\x10", with_response=False)
    await s.read(s.h["vendor_settings"], SETTINGS_INITIAL)
    new = b"bledissect settings v2: mode=race, zone=5"
    assert len(new) == 41
    await s.write(s.h["vendor_settings"], new)
    assert s.strap.settings.value == new
    await s.read(s.h["vendor_settings"], new)
    queue = await s.subscribe("vendor_stream")
    for k in range(3):
        await s.notify(s.strap.stream, bytes((k * 20 + i) & 0xFF for i in range(20)),
                       queue, pause_us=200_000)
    await s.pause(25_000_000)
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    await s.write(s.h["vendor_stream_cccd"], b"\x00\x00")
    await s.close()


async def healthy_indications(s: Session) -> None:
    s.description = (
        "MTU 247/517, full discovery. Subscribe Service Changed (9 <- 02 00), the vendor "
        "events (43 <- 02 00) and stream (46 <- 01 00); indications on 43, each confirmed "
        "before the next, the second with a notification on 46 between it and its "
        "confirmation; Service Changed indication 37-47 (the vendor service) confirmed; the "
        "phone re-discovers 37-47 (characteristics, descriptors) and writes the CCCDs again "
        "(43 <- 02 00, 46 <- 00 00); one more indication on 43, confirmed.")
    await s.open()
    sc_queue = await s.subscribe("service_changed", b"\x02\x00")
    events = await s.subscribe("vendor_events", b"\x02\x00")
    stream = await s.subscribe("vendor_stream")
    await s.pause(300_000)
    await s.indicate(s.strap.events, b"\x01start", events)
    # indication, then a notification, then the confirmation
    await s.pause(300_000)
    s.defer_confirmations()
    start = len(s.rx)
    task = asyncio.create_task(s.strap.device.indicate_subscribers(s.strap.events, b"\x02lap"))
    await s.wait_rx(lambda p: p[0] == 0x1D, start)
    await s.strap.device.notify_subscribers(s.strap.stream, b"\x10\x20\x30")
    await s.wait_rx(lambda p: p[0] == 0x1B, start)
    assert await events.get() == b"\x02lap" and await stream.get() == b"\x10\x20\x30"
    await sc.settle()
    s.flush_confirmations()
    await asyncio.wait_for(task, 5)
    await sc.settle()
    await s.pause(300_000)
    service = s.strap.vendor
    first, last = service.handle, service.end_group_handle
    assert (first, last) == (37, 47)
    await s.indicate(s.strap.device.gatt_service.service_changed_characteristic,
                     u16(first, last), sc_queue)
    # re-discovery of the changed range: characteristics, then descriptors
    assert (await s.phone_request(bytes([0x08]) + u16(first, last, 0x2803)))[0] == 0x09
    assert (await s.phone_request(bytes([0x08]) + u16(46, last, 0x2803)))[0] == 0x01
    for handle in (s.h["vendor_events_cccd"], s.h["vendor_stream_cccd"]):
        response = await s.phone_request(bytes([0x04]) + u16(handle, handle))
        assert response == bytes([0x05, 0x01]) + u16(handle, 0x2902), response.hex()
    await s.write(s.h["vendor_events_cccd"], b"\x02\x00")
    await s.write(s.h["vendor_stream_cccd"], b"\x00\x00")
    await s.pause(300_000)
    await s.indicate(s.strap.events, b"\x03stop", events)
    await s.close()


def legacy_just_works(_connection) -> pairing.PairingConfig:
    return pairing.PairingConfig(
        sc=False, mitm=False, bonding=True,
        delegate=pairing.PairingDelegate(
            io_capability=pairing.PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT))


async def healthy_pairing(s: Session) -> None:
    s.description = (
        "Bumble's own SMP on both sides: LE legacy pairing, Just Works (NoInputNoOutput, "
        "bonding, key size 16), the phone encrypts the link (LE Enable Encryption, "
        "Encryption Change), then each side distributes its keys over the encrypted link "
        "(Encryption Information, Central Identification, Identity Information, Identity "
        "Address Information), as agreed in the Pairing Request / Response. Then MTU "
        "247/517, full discovery, Battery Level read 87, HRM subscribe and notifications.")
    s.phone.pairing_config_factory = legacy_just_works
    s.strap.device.pairing_config_factory = legacy_just_works
    await s.power_on()
    s.connection, s.strap_connection = await sc.connect(
        s.phone, s.strap.device, s.strap.address)
    await s.connection.pair()
    assert s.connection.is_encrypted
    await sc.settle()
    await s.open(power_on=False, connected=True)
    await s.read(s.h["battery_level"], bytes([BATTERY_DEFAULT]))
    queue = await s.subscribe("hrm")
    for bpm in (66, 67, 69):
        await s.notify_hr(hrm(bpm), queue)
    await s.close()


# -----------------------------------------------------------------------------
# Reading the file back
# -----------------------------------------------------------------------------
def l2cap_pdus(records) -> list[dict]:
    """Reassembled L2CAP PDUs of a phone-side btsnoop: {"dir" ("tx" | "rx"),
    "handle", "cid", "payload", "records" (1-based)}."""
    pdus = []
    partial: dict[tuple, dict] = {}
    for number, (flags, _ts, packet) in enumerate(records, start=1):
        if packet[0] != 0x02:
            continue
        direction = "tx" if flags == 0 else "rx"
        header, length = struct.unpack("<HH", packet[1:5])
        handle, pb = header & 0x0FFF, (header >> 12) & 3
        data = packet[5:5 + length]
        key = (direction, handle)
        if pb == 1:
            pdu = partial[key]
            pdu["buffer"] += data
            pdu["records"].append(number)
        else:
            assert key not in partial, (number, "unfinished PDU")
            pdu = partial[key] = {"dir": direction, "handle": handle, "buffer": data,
                                  "records": [number]}
        if len(pdu["buffer"]) >= 4:
            size, cid = struct.unpack("<HH", pdu["buffer"][:4])
            if len(pdu["buffer"]) == 4 + size:
                del partial[key]
                pdus.append({"dir": direction, "handle": handle, "cid": cid,
                             "payload": bytes(pdu["buffer"][4:]), "records": pdu["records"]})
    assert not partial, partial
    return pdus


def locate(mark: tuple, records, pdus: list[dict]) -> list[int]:
    direction, cid, payload, start = mark
    if direction == "event":  # LE Extended / legacy Advertising Reports holding `payload`
        found = [n for n, (flags, _ts, packet) in enumerate(records, start=1)
                 if flags == 3 and packet[1] == 0x3E and packet[3] in (0x02, 0x0D)
                 and payload in packet and n > start]
        assert found, "advertising report not found"
        return found
    for pdu in pdus:
        if (pdu["dir"], pdu["cid"], pdu["payload"]) == (direction, cid, payload) and \
                pdu["records"][0] > start:
            return pdu["records"]
    raise AssertionError(f"PDU not found: {direction} cid {cid} {payload.hex()}")


# -----------------------------------------------------------------------------
# Independent audit of the written file
# -----------------------------------------------------------------------------
# The script's own, deliberately plain reading of conformance.md section 2 for
# the rules these files target and the neighbours a crafted PDU could set off
# (ATT-01..09, 13, 15..20, GATT-06..09, 11, L2C-01..03, SMP-01..07, HRS-01..09,
# BAS-01, GAP-01..02, DIS-01, ADV-01..03, HCI-01, HCI-03).  It runs on every file after
# writing it and must find exactly the truth's violations (rule and offending
# frame), and nothing in a healthy file.  A development check of the samples
# only: `bledissect check` is written separately and does not use it.
ATT_REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}
ATT_RESPONSES = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21}
ATT_FIXED_LENGTH = {0x02: 3, 0x03: 3, 0x04: 5, 0x0A: 3, 0x0C: 5, 0x13: 1, 0x18: 2,
                    0x19: 1, 0x1E: 1}
RANGE_REQUESTS = {0x04, 0x06, 0x08, 0x10}
SMP_LENGTH = {0x01: 7, 0x02: 7, 0x03: 17, 0x04: 17, 0x05: 2, 0x06: 17, 0x07: 11, 0x08: 17,
              0x09: 8, 0x0A: 17, 0x0B: 2, 0x0C: 65, 0x0D: 17, 0x0E: 2}
OTHER = {"tx": "rx", "rx": "tx"}


def ad_structures(data: bytes) -> list[tuple[int, bytes]] | None:
    """AD structures of advertising data; None if a Length runs past the data."""
    out, i = [], 0
    while i < len(data):
        length = data[i]
        if length == 0:
            break
        if i + 1 + length > len(data):
            return None
        out.append((data[i + 1], data[i + 2:i + 1 + length]))
        i += 1 + length
    return out


def advertising_findings(data: bytes, scan_response: bool) -> list[str]:
    found = []
    structures = ad_structures(data)
    if structures is None:
        return ["ADV-01"]
    sizes = {0x02: 2, 0x03: 2, 0x04: 4, 0x05: 4, 0x06: 16, 0x07: 16}
    for ad_type, payload in structures:
        if ad_type in sizes and len(payload) % sizes[ad_type]:
            found.append("ADV-03")
        if (ad_type == 0x0A and len(payload) != 1) or (ad_type == 0x19 and len(payload) != 2) \
                or (ad_type == 0xFF and len(payload) < 2):
            found.append("ADV-03")
    flags = [p for t, p in structures if t == 0x01]
    if (scan_response and flags) or len(flags) > 1:
        found.append("ADV-02")
    return found


class Connection:
    def __init__(self, interval_us: int) -> None:
        self.interval_us = interval_us
        self.requests = {"tx": [], "rx": []}  # outstanding (opcode, pdu, frame, time)
        self.indications = {"tx": [], "rx": []}  # unconfirmed (frame, time)
        self.mtu = 23
        self.mtu_requests = {"tx": [], "rx": []}
        self.mtu_responses = {"tx": [], "rx": []}
        self.cccd: dict[int, tuple[int, int]] = {}  # CCCD handle -> (value, time)
        self.contact_supported = None
        self.energy = None
        self.energy_reset = False
        self.body_sensor_location = None
        self.encrypted = False
        self.pairing: dict = {}
        self.pairing_failed = False


def audit(records) -> list[tuple[str, int]]:
    findings: list[tuple[str, int]] = []
    pdus = l2cap_pdus(records)
    by_last = {p["records"][-1]: p for p in pdus}
    declarations: dict[int, tuple[int, int, int]] = {}  # value handle -> (decl, props, uuid16)
    descriptors: dict[int, int] = {}  # handle -> uuid16
    services: list[tuple[int, int, int]] = []  # (start, end, uuid16)
    conn: Connection | None = None
    time_of = [0] + [ts for _f, ts, _p in records]

    def find(rule: str, frame: int) -> None:
        findings.append((rule, frame))

    def uuid16(raw: bytes) -> int:
        return struct.unpack("<H", raw)[0] if len(raw) == 2 else -1

    def characteristic_of(handle: int):
        """(value handle, props, uuid) of the characteristic whose value or
        descriptor `handle` is."""
        best = None
        for value_handle, (decl, props, uuid) in declarations.items():
            if value_handle <= handle and (best is None or value_handle > best[0]):
                best = (value_handle, props, uuid)
        return best

    def cccd_of(value_handle: int) -> int | None:
        nxt = min([d for d, _p, _u in declarations.values() if d > value_handle] + [0x10000])
        for handle, uuid in descriptors.items():
            if value_handle < handle < nxt and uuid == 0x2902:
                return handle
        return None

    def close(frame_time: int) -> None:
        for side in ("tx", "rx"):
            for _op, _pdu, frame, t in conn.requests[side]:
                if frame_time - t > 30_000_000:
                    find("ATT-02", frame)
            for frame, t in conn.indications[side]:
                if frame_time - t > 30_000_000:
                    find("ATT-02", frame)

    def value_rules(handle: int, value: bytes, frame: int, t: int, how: str) -> None:
        if len(value) > 512:
            find("ATT-20", frame)
        if descriptors.get(handle) == 0x2902 and len(value) != 2:
            find("GATT-06", frame)
        found = declarations.get(handle)
        if not found:
            return
        _decl, props, uuid = found
        if uuid == 0x2A37:
            if how != "notification":
                find("HRS-05", frame)
            hr_measurement(value, frame)
        elif uuid == 0x2A38:
            if len(value) != 1:
                find("HRS-09", frame)
            elif value[0] > 6:
                find("HRS-09", frame)
            if conn.body_sensor_location not in (None, value):
                find("HRS-09", frame)
            conn.body_sensor_location = value
        elif uuid == 0x2A19:
            if len(value) != 1 or value[0] > 100 or how == "indication":
                find("BAS-01", frame)
        elif uuid == 0x2A01 and len(value) != 2:
            find("GAP-01", frame)
        elif uuid == 0x2A00 and len(value) > 248:
            find("GAP-01", frame)
        elif uuid == 0x2A50 and (len(value) != 7 or value[0] not in (1, 2)):
            find("DIS-01", frame)
        elif uuid == 0x2A23 and len(value) != 8:
            find("DIS-01", frame)
        elif uuid == 0x2A05:
            if how != "indication" or len(value) != 4:
                find("GATT-11", frame)
            else:
                start, end = struct.unpack("<HH", value)
                if start == 0 or start > end:
                    find("GATT-11", frame)

    def hr_measurement(value: bytes, frame: int) -> None:
        if not value:
            find("HRS-01", frame)
            return
        flags = value[0]
        need = 1 + (2 if flags & 1 else 1) + (2 if flags & 8 else 0)
        rest = len(value) - need
        if rest < 0 or (flags & 0x10 and rest % 2) or (not flags & 0x10 and rest):
            find("HRS-01", frame)
            return
        if flags & 0x10 and rest == 0:
            find("HRS-02", frame)
        if flags & 0xE0 or (flags & 1 and struct.unpack("<H", value[1:3])[0] <= 255):
            find("HRS-03", frame)
        supported = bool(flags & 4)
        if conn.contact_supported is not None and supported != conn.contact_supported:
            find("HRS-04", frame)
        conn.contact_supported = supported
        if flags & 8:
            hr_services = [s for s in services if s[2] == 0x180D]
            if hr_services:
                start, end, _ = hr_services[0]
                if not any(start <= v <= end and u == 0x2A39
                           for v, (_d, _p, u) in declarations.items()):
                    find("HRS-06", frame)
            energy = struct.unpack("<H", value[need - 2:need])[0]
            if conn.energy is not None and energy < conn.energy and not conn.energy_reset:
                find("HRS-08", frame)
            conn.energy, conn.energy_reset = energy, False

    def write_rules(op: int, handle: int, value: bytes, frame: int) -> None:
        if descriptors.get(handle) == 0x2902:
            if len(value) != 2:
                find("GATT-06", frame)
                return
            bits = struct.unpack("<H", value)[0]
            char = characteristic_of(handle)
            if op == 0x52 or bits & 0xFFFC or (char and (
                    (bits & 1 and not char[1] & 0x10) or (bits & 2 and not char[1] & 0x20))):
                find("GATT-07" if not bits & 0xFFFC else "GATT-06", frame)
            return
        found = declarations.get(handle)
        if not found:
            return
        _decl, props, uuid = found
        if (op == 0x52 and not props & 0x04) or (op in (0x12, 0x16) and not props & 0x08):
            find("GATT-09", frame)
        if uuid == 0x2A39 and (op == 0x52 or len(value) != 1):
            find("HRS-07", frame)

    def att(p: dict, frame: int, t: int) -> None:
        nonlocal conn
        sender, payload = p["dir"], p["payload"]
        op = payload[0]
        if len(payload) > conn.mtu and op not in (0x02, 0x03):
            find("ATT-06", frame)
        if op in ATT_FIXED_LENGTH and len(payload) != ATT_FIXED_LENGTH[op]:
            find("ATT-16", frame)
        if op == 0x01 and len(payload) != 5:
            find("ATT-13", frame)
        if (op == 0x18 and payload[1] not in (0, 1)) or \
                (op in (0x08, 0x10) and len(payload) not in (7, 21)):
            find("ATT-16", frame)
        if op in ATT_REQUESTS:
            if conn.requests[sender]:
                find("ATT-01", frame)
            conn.requests[sender].append((op, payload, frame, t))
            if op == 0x02:
                value = uuid16(payload[1:3])
                conn.mtu_requests[sender].append(value)
                if len(conn.mtu_requests[sender]) > 1:
                    find("ATT-07", frame)
                if value < 23:
                    find("ATT-08", frame)
                if conn.mtu_responses[sender] and conn.mtu_responses[sender][0] != value:
                    find("ATT-09", frame)
            if op in (0x12, 0x16) and len(payload) >= 3:
                write_rules(op, uuid16(payload[1:3]), payload[3 if op == 0x12 else 5:], frame)
            return
        if op == 0x52:
            write_rules(op, uuid16(payload[1:3]), payload[3:], frame)
            return
        if op in (0x1B, 0x1D):
            handle, value = uuid16(payload[1:3]), payload[3:]
            if op == 0x1D:
                if conn.indications[sender]:
                    find("ATT-05", frame)
                conn.indications[sender].append((frame, t))
            char = declarations.get(handle)
            if char:
                bit, prop = (1, 0x10) if op == 0x1B else (2, 0x20)
                cccd = cccd_of(handle)
                state = conn.cccd.get(cccd) if cccd else None
                if not char[1] & prop:
                    find("GATT-08", frame)
                elif state is None:
                    if not conn.encrypted:
                        find("GATT-08", frame)
                elif not state[0] & bit and t - state[1] > conn.interval_us:
                    find("GATT-08", frame)
            value_rules(handle, value, frame, t, "notification" if op == 0x1B else "indication")
            return
        if op == 0x1E:
            if not conn.indications[OTHER[sender]]:
                find("ATT-04", frame)
            else:
                indication_frame, indication_time = conn.indications[OTHER[sender]].pop(0)
                if t - indication_time > 30_000_000:
                    find("ATT-02", indication_frame)
            return
        if op not in ATT_RESPONSES:
            return
        queue = conn.requests[OTHER[sender]]
        if not queue:
            find("ATT-03", frame)
            return
        req_op, request, req_frame, req_time = queue.pop(0)
        if t - req_time > 30_000_000:
            find("ATT-02", req_frame)
        if op == 0x01:
            if len(payload) != 5:
                return
            code, handle = payload[4], uuid16(payload[2:4])
            if payload[1] != req_op:
                find("ATT-03", frame)
                return
            if code == 0 or 0x14 <= code <= 0x7F or 0xA0 <= code <= 0xDF:
                find("ATT-13", frame)
            if req_op in RANGE_REQUESTS and code in (0x01, 0x0A) and \
                    handle != uuid16(request[1:3]):
                find("ATT-15", frame)
            elif code in (0x04, 0x06) and handle != 0:
                find("ATT-15", frame)
            elif req_op in (0x0A, 0x0C, 0x12, 0x16) and handle != uuid16(request[1:3]):
                find("ATT-15", frame)
            if req_op == 0x12:
                target = declarations.get(uuid16(request[1:3]))
                if target and target[2] == 0x2A39 and request[3:] == b"\x01":
                    find("HRS-07", frame)
                if target and target[2] == 0x2A39 and request[3:] != b"\x01" and code != 0x80:
                    find("HRS-07", frame)
                if target and target[2] in (0x2A01, 0x2A00) and code in (0x05, 0x08, 0x0F):
                    find("GAP-02", frame)
            return
        if op != req_op + 1:
            find("ATT-03", frame)
            return
        if op == 0x03:
            value = uuid16(payload[1:3])
            if value < 23:
                find("ATT-08", frame)
            conn.mtu_responses[sender].append(value)
            if conn.mtu_requests[sender] and conn.mtu_requests[sender][0] != value:
                find("ATT-09", frame)
            client = uuid16(request[1:3])
            if client >= 23 and value >= 23:
                conn.mtu = min(client, value)
        elif op == 0x05:
            start, end = struct.unpack("<HH", request[1:5])
            size = {1: 4, 2: 18}.get(payload[1])
            data = payload[2:]
            if size is None or not data or len(data) % size:
                find("ATT-17", frame)
                return
            handles = [uuid16(data[i:i + 2]) for i in range(0, len(data), size)]
            if handles != sorted(set(handles)) or not all(start <= h <= end for h in handles):
                find("ATT-17", frame)
            for i in range(0, len(data), size):
                descriptors[uuid16(data[i:i + 2])] = uuid16(data[i + 2:i + size])
        elif op in (0x09, 0x11):
            start, end = struct.unpack("<HH", request[1:5])
            length, data = payload[1], payload[2:]
            if length < (2 if op == 0x09 else 4) or not data or len(data) % length:
                find("ATT-18", frame)
            entries = [data[i:i + length] for i in range(0, len(data) - len(data) % length,
                                                           length)]
            handles = [uuid16(e[:2]) for e in entries]
            if handles != sorted(set(handles)) or not all(start <= h <= end for h in handles):
                find("ATT-18", frame)
            kind = uuid16(request[5:7])
            for entry in entries:
                if op == 0x11 and kind == 0x2800 and length == 6:
                    services.append((uuid16(entry[:2]), uuid16(entry[2:4]), uuid16(entry[4:6])))
                if op == 0x09 and kind == 0x2803 and length in (7, 21):
                    decl, props, value_handle = uuid16(entry[:2]), entry[2], uuid16(entry[3:5])
                    declarations[value_handle] = (decl, props, uuid16(entry[5:7])
                                                  if length == 7 else -1)
        elif op == 0x0B:
            value_rules(uuid16(request[1:3]), payload[1:], frame, t, "read")
        elif op == 0x0D:
            if uuid16(request[3:5]) + len(payload) - 1 > 512:
                find("ATT-20", frame)
        elif op == 0x13:
            handle, value = uuid16(request[1:3]), request[3:]
            if descriptors.get(handle) == 0x2902 and len(value) == 2:
                conn.cccd[handle] = (uuid16(value), t)
            target = declarations.get(handle)
            if target and target[2] == 0x2A39:
                if value == b"\x01":
                    conn.energy_reset = True
                else:
                    find("HRS-07", frame)
        elif op == 0x17:
            if payload[1:] != request[1:]:
                find("ATT-19", frame)
            if uuid16(request[3:5]) + len(request) - 5 > 512:
                find("ATT-20", frame)

    def signaling(p: dict, frame: int) -> None:
        payload = p["payload"]
        code, identifier = payload[0], payload[1]
        if identifier == 0 or uuid16(payload[2:4]) != len(payload) - 4:
            find("L2C-01", frame)
        if code == 0x12:
            if p["dir"] == "tx":
                find("L2C-02", frame)
            if not valid_connection_parameters(*struct.unpack("<HHHH", payload[4:12])):
                find("L2C-03", frame)
        if code == 0x13:
            if p["dir"] == "rx":
                find("L2C-02", frame)
            if uuid16(payload[4:6]) not in (0, 1):
                find("L2C-03", frame)

    def security(p: dict, frame: int) -> None:
        payload, sender = p["payload"], p["dir"]
        op = payload[0]
        if SMP_LENGTH.get(op) != len(payload):
            find("SMP-01", frame)
            return
        if conn.pairing_failed:
            find("SMP-07", frame)
        if op in (0x01, 0x02):
            io, oob, auth, size, initiator, responder = payload[1:7]
            if (op == 0x01) != (sender == "tx"):
                find("SMP-04", frame)
            if not 7 <= size <= 16 or io > 4 or oob > 1 or auth & 0xC0 or auth & 3 > 1 \
                    or initiator & 0xF0 or responder & 0xF0:
                find("SMP-02", frame)
            if op == 0x01:
                conn.pairing = {"request": (initiator, responder, auth)}
            elif "request" in conn.pairing:
                req_initiator, req_responder, req_auth = conn.pairing["request"]
                if initiator & ~req_initiator or responder & ~req_responder:
                    find("SMP-03", frame)
                conn.pairing["agreed"] = (initiator & req_initiator, responder & req_responder,
                                          bool(auth & req_auth & 0x08))
        elif op == 0x0B and sender == "tx":
            find("SMP-04", frame)
        elif op == 0x05:
            conn.pairing_failed = True
            if payload[1] == 0 or payload[1] > 0x10:
                find("SMP-07", frame)
        elif 0x06 <= op <= 0x0A:
            if not conn.encrypted:
                find("SMP-05", frame)
            agreed = conn.pairing.get("agreed")
            bit = {0x06: 1, 0x07: 1, 0x08: 2, 0x09: 2, 0x0A: 4}[op]
            if agreed is None or not agreed[0 if sender == "tx" else 1] & bit or \
                    (op in (0x06, 0x07) and agreed[2]):
                find("SMP-06", frame)

    acl_length = None
    for frame, (flags, ts, packet) in enumerate(records, start=1):
        if flags == 3 and packet[1] == 0x0E and packet[4:6] in (b"\x02\x20", b"\x60\x20"):
            acl_length = uuid16(packet[7:9])  # LE Read Buffer Size [v1 / v2]
        if flags == 0 and packet[0] == 0x02 and acl_length is not None and \
                uuid16(packet[3:5]) > acl_length:
            find("HCI-01", frame)
        if flags == 2 and packet[1:3] in (b"\x0d\x20", b"\x13\x20"):  # LE Create Conn / Update
            offset = 17 if packet[1] == 0x0D else 6
            if not valid_connection_parameters(*struct.unpack("<HHHH",
                                                             packet[offset:offset + 8])):
                find("HCI-03", frame)
        if flags == 3 and packet[1] == 0x3E and packet[3] == 0x01 and packet[4] == 0:
            conn = Connection(uuid16(packet[15:17]) * 1250)
        elif flags == 3 and packet[1] == 0x3E and packet[3] == 0x03 and packet[4] == 0:
            conn.interval_us = uuid16(packet[7:9]) * 1250
        elif flags == 3 and packet[1] == 0x3E and packet[3] == 0x0D:
            data_length = packet[4 + 1 + 23]
            data = packet[4 + 1 + 24:4 + 1 + 24 + data_length]
            scan_response = bool(uuid16(packet[5:7]) & 0x08)
            for rule in advertising_findings(data, scan_response):
                find(rule, frame)
        elif flags == 3 and packet[1] == 0x08 and packet[3] == 0 and packet[6] == 1:
            conn.encrypted = True
        elif flags == 3 and packet[1] == 0x05 and packet[3] == 0:
            close(ts)
            conn = None
        if frame in by_last:
            p = by_last[frame]
            if p["cid"] == ATT_CID:
                att(p, frame, ts)
            elif p["cid"] == SIGNALING_CID:
                signaling(p, frame)
            elif p["cid"] == SMP_CID:
                security(p, frame)
    if conn is not None:
        close(records[-1][1])
    return sorted(findings, key=lambda f: (f[1], f[0]))


def record_kinds(records) -> dict:
    kinds = {"cmd": 0, "evt": 0, "acl_tx": 0, "acl_rx": 0}
    for flags, _ts, _p in records:
        kinds[{0: "acl_tx", 1: "acl_rx", 2: "cmd", 3: "evt"}[flags]] += 1
    return kinds


def check_file(s: Session, records) -> dict:
    """Locate every mark, build the truth entry, check the offending PDUs."""
    pdus = l2cap_pdus(records)
    violations = []
    for v in s.violations:
        frames = sorted({n for key in v["proof"] for n in locate(s.marks[key], records, pdus)})
        offending = locate(s.marks[v["offending"]], records, pdus)
        direction, cid, payload, _ = s.marks[v["offending"]]
        if direction == "event":
            pdu_hex = records[offending[0] - 1][2].hex()
            for n in offending:
                assert records[n - 1][2][1] == 0x3E and records[n - 1][2][3] == v["opcode"][1]
        else:
            (pdu,) = [p for p in pdus if p["records"] == offending]
            assert (pdu["cid"], pdu["payload"][0]) == v["opcode"], (v, pdu)
            pdu_hex = pdu["payload"].hex()
        violations.append({
            "rule": v["rule"], "frames": frames, "offending_frames": offending,
            "side": v["side"], "severity": SEVERITY[v["rule"]], "pdu": pdu_hex,
            "_check": (direction, cid, v["opcode"][1]),
        })
    # Other marks (responses etc.) must be there too.
    for key, mark in s.marks.items():
        locate(mark, records, pdus)
    times = [ts for _f, ts, _p in records]
    assert times == sorted(times) and len(set(times)) == len(times)
    # No ATT request left unanswered unless the scenario says so (att_02).
    return {"violations": violations, "pdus": pdus}


def tshark_check(path: str, violations: list[dict]) -> str:
    fields = ["frame.number", "btatt.opcode", "btl2cap.cmd_code", "btsmp.opcode",
              "bthci_evt.le_meta_subevent"]
    out = subprocess.run(
        ["tshark", "-r", path, "-T", "fields", "-E", "separator=|",
         *sum((["-e", f] for f in fields), [])],
        check=True, capture_output=True, text=True).stdout
    rows = {int(line.split("|")[0]): line.split("|")[1:] for line in out.splitlines()}
    checked = []
    for v in violations:
        direction, cid, opcode = v["_check"]
        for frame in v["offending_frames"][-1:] if direction != "event" else v["offending_frames"]:
            att_op, l2cap_code, smp_op, subevent = rows[frame]
            column = {ATT_CID: att_op, SIGNALING_CID: l2cap_code, SMP_CID: smp_op,
                      None: subevent}[cid]
            assert column and int(column.split(",")[0], 0) == opcode, (path, frame, rows[frame], v)
            checked.append(frame)
    return f"tshark agrees on frames {checked}" if checked else "tshark: nothing to check"


# -----------------------------------------------------------------------------
SCENARIOS = {
    "att_01": (att_01, {}), "att_02": (att_02, {}), "att_03": (att_03, {}),
    "att_03_wrong_opcode": (att_03_wrong_opcode, {}), "att_04": (att_04, {}),
    "att_05": (att_05, {}), "att_06": (att_06, {}), "att_07": (att_07, {}),
    "att_08": (att_08, {}), "att_09": (att_09, {}), "att_13": (att_13, {}),
    "att_17": (att_17, {}), "att_17_out_of_range": (att_17_out_of_range, {}),
    "att_18": (att_18, {}),
    "att_18_out_of_range": (att_18_out_of_range, {}), "att_19": (att_19, {}),
    "att_20": (att_20, {}), "gatt_06": (gatt_06, {}), "gatt_07": (gatt_07, {}),
    "gatt_08": (gatt_08, {}), "gatt_09": (gatt_09, {}), "l2c_02": (l2c_02, {}),
    "l2c_03": (l2c_03, {}), "hrs_01": (hrs_01, {}), "hrs_04": (hrs_04, {}),
    "hrs_06": (hrs_06, {"control_point": False}), "hrs_07": (hrs_07, {}),
    "hrs_09": (hrs_09, {"body_sensor_location": 9}), "bas_01": (bas_01, {"battery": 101}),
    "smp_02": (smp_02, {}), "smp_03": (smp_03, {}), "smp_05": (smp_05, {}),
    "adv_03": (adv_03, {}), "gap_01": (gap_01, {"appearance": b"\x41\x03\x00"}),
    "dis_01": (dis_01, {"pnp_id": PNP_ID[:6]}),
    "healthy_hr": (healthy_hr, {}), "healthy_att": (healthy_att, {}),
    "healthy_indications": (healthy_indications, {}),
    "healthy_pairing": (healthy_pairing, {"scripted_smp": False}),
}


def run_one(name: str, out_dir: str, use_tshark: bool) -> dict:
    function, options = SCENARIOS[name]

    async def go() -> Session:
        s = Session(name, **options)
        await function(s)
        return s

    # Bumble's SMP values (secrets.token_bytes: random, LTK, EDIV / Rand) and
    # the emulated controller's LE Rand (random) are seeded, for healthy_pairing.
    rng = random.Random(f"check:{name}:secrets")
    token_bytes, random_state = secrets.token_bytes, random.getstate()
    secrets.token_bytes = lambda n=32: rng.randbytes(n)
    random.seed(f"check:{name}:random")
    try:
        s = asyncio.run(go())
    finally:
        secrets.token_bytes = token_bytes
        random.setstate(random_state)
    assert bool(s.violations) != name.startswith("healthy"), name
    seeded = types.SimpleNamespace(timing_seed=f"check:{name}")
    data = dsc.retime(s.snooper.buffer.getvalue(), s.snooper.indices,
                      s.clock.times(seeded, BASE_TIME))
    assert len(data) < 16 * 1024, (name, len(data))
    path = os.path.join(out_dir, f"{name}.btsnoop")
    with open(path, "wb") as f:
        f.write(data)
    records = ls.parse_btsnoop(data)
    checked = check_file(s, records)
    expected = sorted(((v["rule"], v["offending_frames"][-1]) for v in checked["violations"]),
                      key=lambda f: (f[1], f[0]))
    found = audit(records)
    assert found == expected, (name, "audit", found, "truth", expected)
    note = ""
    if use_tshark and checked["violations"]:
        note = tshark_check(path, checked["violations"])
    for v in checked["violations"]:
        del v["_check"]
    kinds = record_kinds(records)
    seconds = (records[-1][1] - records[0][1]) / 1e6
    entry = {"file": f"{name}.btsnoop", "healthy": not checked["violations"],
             "description": s.description, "records": len(records),
             "violations": checked["violations"]}
    print(f"[{name}] {len(records)} records ({kinds}), {len(data)} bytes, {seconds:.3f} s; "
          + "; ".join(f"{v['rule']} frames {v['frames']} offending {v['offending_frames']}"
                      for v in checked["violations"]) + (f"; {note}" if note else ""))
    entry["_summary"] = {"kinds": kinds, "bytes": len(data), "seconds": round(seconds, 3)}
    return entry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "captures", "check"))
    parser.add_argument("--out-dir", default=default_out)
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS))
    parser.add_argument("--no-tshark", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.CRITICAL)
    os.makedirs(args.out_dir, exist_ok=True)
    use_tshark = not args.no_tshark and shutil.which("tshark") is not None

    truth_path = os.path.join(args.out_dir, "truth.json")
    entries = {}
    if args.only and os.path.exists(truth_path):
        with open(truth_path) as f:
            entries = {e["file"]: e for e in json.load(f)}
    start = time.monotonic()
    for name in args.only or list(SCENARIOS):
        entry = run_one(name, args.out_dir, use_tshark)
        entry.pop("_summary")
        entries[entry["file"]] = entry
    order = [f"{n}.btsnoop" for n in SCENARIOS]
    truth = [entries[f] for f in order if f in entries]
    lines = ["["]
    for n, entry in enumerate(truth):
        lines.append("  {")
        for key in ("file", "healthy", "description", "records"):
            lines.append(f"    {json.dumps(key)}: {json.dumps(entry[key])},")
        violations = [f"      {json.dumps(v)}" for v in entry["violations"]]
        lines.append('    "violations": [' + ("" if violations else "]"))
        if violations:
            lines.append(",\n".join(violations))
            lines.append("    ]")
        lines.append("  }" + ("," if n + 1 < len(truth) else ""))
    lines.append("]")
    assert json.loads("\n".join(lines)) == truth
    with open(truth_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(truth)} files, truth in {truth_path}, {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
