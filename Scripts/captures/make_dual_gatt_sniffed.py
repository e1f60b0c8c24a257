#!/usr/bin/env python3
"""A sniffed LE connection in which BOTH sides are GATT servers (and clients): link type 256
(RF header, direction said), built from the Core specification's layouts by ll_link.py and
gatt_model.py (no Bumble), with `both_sides_serve_gatt_sniffed.truth.json`.

    python3 Scripts/captures/make_dual_gatt_sniffed.py [--out DIR]

The phone C0:B1:ED:00:50:48 (random; central) connects to the mouse "bledissect Mouse"
D0:B1:ED:00:4D:53 (random; peripheral; ADV_IND on 37 with flags, appearance 0x03C2 mouse,
HID service 0x1812 and the name, then CONNECT_IND on 37: interval 12 = 15 ms, latency 0,
timeout 72, all channels, CSA #1).  LL_FEATURE_REQ / RSP and LL_VERSION_IND both ways, then
two ATT conversations on the one ATT bearer (CID 4), interleaved as the two hosts send them:
one request outstanding per direction, a server answers one connection event after a request
arrives, a client sends its next request one event (sometimes a few) after a response; when a
side has a response and a request ready in one event it sets MD and sends both.  ATT_MTU 23
(the phone asks 185, the mouse answers 23; the mouse asks 23, the phone answers 185), so every
ATT PDU fits one data PDU.

  phone as client, mouse as server: Exchange MTU; full discovery of the mouse (Read By Group
  Type, Read By Type 0x2803 per service, Find Information per characteristic); Read Device
  Name, Manufacturer Name, Model Number, PnP ID, Battery Level; Read HID Information ->
  Error Response Insufficient Authentication (0x05); Write Request Battery Level CCCD 0x0016
  <- 01 00; one Battery Level notification (0x0015 = 59) 1 s later.
  mouse as client, phone as server (starts 4 events after the phone): Exchange MTU; full
  discovery of the phone (GAP, GATT, ANCS 7905F431-B5CE-4E99-A40F-4B1E122D00D0 with
  Notification Source, Control Point, Data Source, Device Information); Read 0x0045
  Manufacturer Name -> "Apple Inc."; Write Request ANCS Notification Source CCCD 0x0033 <-
  01 00 -> Error Response Insufficient Authentication (0x05), as an iPhone answers an
  unpaired accessory.
  then the phone's LL_TERMINATE_IND (0x13).

Attribute tables (handles hex; the mouse's from 0x0001 up, the phone's with gaps, no handle
of one table holds the same attribute as the other's):
  mouse: GAP 0x0001-0x0007 (Device Name 0x0003 "bledissect Mouse", Appearance 0x0005 = 03C2,
  PPCP 0x0007), GATT 0x0008-0x000B (Service Changed 0x000A + CCCD 0x000B), Device Information
  0x000C-0x0012 (Manufacturer Name 0x000E "bledissect labs", Model Number 0x0010 "BM-1", PnP ID
  0x0012), Battery 0x0013-0x0016 (Battery Level 0x0015 = 5A + CCCD 0x0016), Human Interface
  Device 0x0017-0x0023 (HID Information 0x0019, Report Map 0x001B, Report 0x001D + CCCD 0x001E +
  Report Reference 0x001F, Protocol Mode 0x0021, HID Control Point 0x0023; values need an
  encrypted link).
  phone: GAP 0x0001-0x0005 (Device Name 0x0003 "iPhone", Appearance 0x0005 = 0040), GATT
  0x0006-0x0009, ANCS 0x0030-0x0038 (Notification Source 0x0032 + CCCD 0x0033, Control Point
  0x0035, Data Source 0x0037 + CCCD 0x0038), Device Information 0x0043-0x0047 (Manufacturer
  Name 0x0045 "Apple Inc.", Model Number 0x0047 "iPhone14,5").

Truth: both tables (handle, type, UUID, value), and per ATT frame the link-layer sender, the
client side and the server side.  Fixed values and timestamps: reruns give identical bytes.
The script reads the file back (CRCs) and checks tshark's ATT list against the truth.
"""
from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gatt_model as g  # noqa: E402
import ll_link as ll  # noqa: E402
from ll_link import C, P  # noqa: E402

PHONE = bytes.fromhex("485000edb1c0")  # C0:B1:ED:00:50:48
MOUSE = bytes.fromhex("534d00edb1d0")  # D0:B1:ED:00:4D:53
MOUSE_NAME = b"bledissect Mouse"
START_S = 1_764_580_000
AA, CRC_INIT, HOP = 0x3A9C56E4, 0x52C0B7, 11
ANCS = "7905F431-B5CE-4E99-A40F-4B1E122D00D0"
ANCS_NOTIFICATION_SOURCE = "9FBF120D-6301-42D9-8C58-25E699A21DBD"
ANCS_CONTROL_POINT = "69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9"
ANCS_DATA_SOURCE = "22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB"
DEVICE = {C: "phone", P: "mouse"}


def mouse_db() -> g.Db:
    db = g.Db("mouse", mtu=23)
    db.service(0x1800, name="GAP")
    db.characteristic(0x2A00, g.READ, MOUSE_NAME, name="Device Name")
    db.characteristic(0x2A01, g.READ, b"\xc2\x03", name="Appearance")
    db.characteristic(0x2A04, g.READ, bytes.fromhex("06000c0000006400"), name="Peripheral Preferred Connection Parameters")
    db.service(0x1801, name="GATT")
    db.characteristic(0x2A05, g.INDICATE, b"", name="Service Changed", cccd=True)
    db.service(0x180A, name="Device Information")
    db.characteristic(0x2A29, g.READ, b"bledissect labs", name="Manufacturer Name String")
    db.characteristic(0x2A24, g.READ, b"BM-1", name="Model Number String")
    db.characteristic(0x2A50, g.READ, bytes.fromhex("02edb1534d0001"), name="PnP ID")
    db.service(0x180F, name="Battery")
    db.characteristic(0x2A19, g.READ | g.NOTIFY, b"\x5a", name="Battery Level", cccd=True)
    db.service(0x1812, name="Human Interface Device")
    db.characteristic(0x2A4A, g.READ, bytes.fromhex("11010002"), read="auth", name="HID Information")
    db.characteristic(0x2A4B, g.READ, bytes.fromhex("05010902a1010901a100050919012903150025019503750181020500"),
                      read="auth", name="Report Map")
    db.characteristic(0x2A4D, g.READ | g.NOTIFY, bytes(4), read="auth", name="Report", cccd=True,
                      descriptors=[(0x2908, b"\x01\x01", "Report Reference")])
    db.characteristic(0x2A4E, g.READ | g.WRITE_NO_RSP, b"\x01", read="auth", write="auth", name="Protocol Mode")
    db.characteristic(0x2A4C, g.WRITE_NO_RSP, b"", write="auth", name="HID Control Point")
    for a in db.attrs:  # the HID descriptors too need an encrypted link to be written
        if a.name == "Report CCCD":
            a.write = "auth"
    return db


def phone_db() -> g.Db:
    db = g.Db("phone", mtu=185)
    db.service(0x1800, name="GAP")
    db.characteristic(0x2A00, g.READ, b"iPhone", name="Device Name")
    db.characteristic(0x2A01, g.READ, b"\x40\x00", name="Appearance")
    db.service(0x1801, name="GATT")
    db.characteristic(0x2A05, g.INDICATE, b"", name="Service Changed", cccd=True)
    db.service(ANCS, handle=0x0030, name="Apple Notification Center Service")
    db.characteristic(ANCS_NOTIFICATION_SOURCE, g.NOTIFY, b"", name="ANCS Notification Source", cccd=True)
    db.characteristic(ANCS_CONTROL_POINT, g.WRITE, b"", write="auth", name="ANCS Control Point")
    db.characteristic(ANCS_DATA_SOURCE, g.NOTIFY, b"", name="ANCS Data Source", cccd=True)
    for a in db.attrs:
        if a.name in ("ANCS Notification Source CCCD", "ANCS Data Source CCCD"):
            a.write = "auth"  # ANCS asks an unpaired accessory to pair first
    db.service(0x180A, handle=0x0043, name="Device Information")
    db.characteristic(0x2A29, g.READ, b"Apple Inc.", name="Manufacturer Name String")
    db.characteristic(0x2A24, g.READ, b"iPhone14,5", name="Model Number String")
    return db


PHONE_PAUSE = [0, 1, 0, 0, 2, 0, 1, 0, 0, 0]
MOUSE_PAUSE = [0, 0, 2, 0, 1, 0, 0, 3, 0, 1]


def phone_client(found):
    yield ("req", bytes([0x02]) + struct.pack("<H", 185))
    yield from g.discover_all(found, pause=lambda n: PHONE_PAUSE[n % len(PHONE_PAUSE)])
    for handle, extra in ((0x0003, 1), (0x000E, 0), (0x0010, 0), (0x0012, 2), (0x0015, 0), (0x0019, 1)):
        yield ("req_after", extra, g.read_req(handle))
    yield ("req", g.write_req(0x0016, b"\x01\x00"))


def mouse_client(found):
    yield ("req", bytes([0x02]) + struct.pack("<H", 23))
    yield from g.discover_all(found, pause=lambda n: MOUSE_PAUSE[n % len(MOUSE_PAUSE)])
    yield ("req_after", 1, g.read_req(0x0045))
    yield ("req_after", 2, g.write_req(0x0033, b"\x01\x00"))


def build():
    t0 = START_S * 1_000_000
    adv_data = (bytes([2, 0x01, 0x05, 3, 0x19, 0xC2, 0x03, 3, 0x03, 0x12, 0x18, len(MOUSE_NAME) + 1, 0x09])
                + MOUSE_NAME)
    adv = ll.advertising_frame(t0, 37, 0x0, True, False, MOUSE + adv_data, "advertiser", "ADV_IND")
    t_conn = t0 + ll.air_time_us(len(adv.pdu)) + ll.T_IFS
    conn = ll.advertising_frame(t_conn, 37, 0x5, True, True,
                                ll.connect_ind_payload(PHONE, MOUSE, AA, CRC_INIT, 2, 0, 12, 0, 72, HOP, 5),
                                "initiator", "CONNECT_IND")
    link = ll.Link(AA, CRC_INIT, 12, HOP, t_conn + ll.air_time_us(len(conn.pdu)) + 1250 + 625)
    link.frames += [adv, conn]
    mdb, pdb = mouse_db(), phone_db()
    tables = {"mouse": mdb.table(), "phone": pdb.table()}  # as at connection time
    found = {C: {}, P: {}}
    engine = g.AttEngine(link, {C: g.Bearer(C, db=pdb, client=phone_client(found[C])),
                                P: g.Bearer(P, db=mdb, client=mouse_client(found[P]))})

    def on_write(db_, handle, value, event):
        if handle == 0x0016 and value == b"\x01\x00":
            start = link.anchor(event)

            def script():
                yield ("wait_until", start + 1_000_000)
                yield ("notify", g.notification(0x0015, b"\x59"))
            engine.start_server_script(P, script(), event + 1)
    mdb.on_write = on_write

    link.send(C, 3, bytes([0x08]) + bytes.fromhex("ff7f000000000000"), 0)  # LL_FEATURE_REQ
    link.send(P, 3, bytes([0x09]) + bytes.fromhex("2d00000000000000"), 1)  # LL_FEATURE_RSP
    link.send(C, 3, bytes([0x0C, 0x0D, 0xFF, 0xFF, 0x02, 0x00]), 1)  # LL_VERSION_IND
    link.send(P, 3, bytes([0x0C, 0x0D, 0xFF, 0xFF, 0x03, 0x00]), 2)
    engine.start_client(C, 2)
    engine.start_client(P, 6)
    while not engine.finished():
        link.run_event()
        assert link.event < 5000
    link.send(C, 3, b"\x02\x13", link.event + 2)
    while not link.terminated:
        link.run_event()
    return link, engine, tables, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ll.REPO, "captures", "air"))
    args = parser.parse_args()
    ll.self_check()
    link, engine, tables, found = build()
    frames = ll.number(link.frames)
    content = ll.pcap_bytes(256, frames)
    path = os.path.join(args.out, "both_sides_serve_gatt_sniffed.pcap")

    att_rows = []
    for event, sender, role, pdu, item in engine.log:
        f = item.frame
        client = sender if role == "client" else ll.other(sender)
        row = {"index": f.index, "time_us": f.time_us, "event": f.event, "sender": sender,
               "sender_device": DEVICE[sender], "sender_role": role,
               "client": DEVICE[client], "server": DEVICE[ll.other(client)], "sn": f.sn, "nesn": f.nesn, "md": f.md}
        row.update(ll.att_summary(pdu))
        row["pdu_hex"] = f.pdu.hex()
        att_rows.append(row)
    att_rows.sort(key=lambda r: r["index"])
    # The discoveries each client made match the other side's table.
    assert [s[0] for s in found[C]["services"]] == [0x0001, 0x0008, 0x000C, 0x0013, 0x0017]
    assert [s[0] for s in found[P]["services"]] == [0x0001, 0x0006, 0x0030, 0x0043]
    assert any(s[2] == ANCS for s in found[P]["services"])

    def first(pred):
        return next(r["index"] for r in att_rows if pred(r))
    key = {
        "phone_exchange_mtu_request": first(lambda r: r["opcode"] == "0x02" and r["client"] == "phone"),
        "mouse_exchange_mtu_request": first(lambda r: r["opcode"] == "0x02" and r["client"] == "mouse"),
        "phone_first_read_by_group_type": first(lambda r: r["opcode"] == "0x10" and r["client"] == "phone"),
        "mouse_first_read_by_group_type": first(lambda r: r["opcode"] == "0x10" and r["client"] == "mouse"),
        "mouse_read_phone_manufacturer_request": first(lambda r: r["opcode"] == "0x0A" and r["handle"] == "0x0045"),
        "phone_manufacturer_response": first(lambda r: r["opcode"] == "0x0B" and r["value_hex"] == b"Apple Inc.".hex()),
        "phone_read_mouse_manufacturer_request": first(lambda r: r["opcode"] == "0x0A" and r["handle"] == "0x000E"),
        "mouse_manufacturer_response": first(lambda r: r["opcode"] == "0x0B" and r["value_hex"] == b"bledissect labs".hex()),
        "mouse_error_hid_information": first(lambda r: r["opcode"] == "0x01" and r["handle"] == "0x0019"),
        "phone_error_ancs_cccd": first(lambda r: r["opcode"] == "0x01" and r["handle"] == "0x0033"),
        "battery_notification": first(lambda r: r["opcode"] == "0x1B"),
        "ll_terminate_ind": next(f.index for f in frames if f.kind == "LL_TERMINATE_IND"),
    }
    att_frames = {r["index"] for r in att_rows}
    same_event_both = sorted({(r["event"], r["sender"]) for r in att_rows if r["md"]})
    truth = {
        "file": "captures/air/both_sides_serve_gatt_sniffed.pcap",
        "generator": "Scripts/captures/make_dual_gatt_sniffed.py",
        "link_type": 256,
        "frames": len(frames),
        "bytes": len(content),
        "central": {"address": ll.mac_text(PHONE), "random": True, "device": "phone", "gatt": "client and server"},
        "peripheral": {"address": ll.mac_text(MOUSE), "random": True, "device": "mouse", "name": MOUSE_NAME.decode(),
                       "gatt": "client and server"},
        "connection": {"access_address": f"0x{AA:08X}", "crc_init": f"0x{CRC_INIT:06X}", "interval": 12,
                       "latency": 0, "timeout": 72, "hop": HOP, "sca": 5, "csa": 1, "att_mtu": engine.mtu,
                       "events": link.event},
        "key_frames": key,
        "att_frames": len(att_rows),
        "att_frames_by_client": {"phone": sum(r["client"] == "phone" for r in att_rows),
                                 "mouse": sum(r["client"] == "mouse" for r in att_rows)},
        "md_frames_note": "frames with md 1: the sender had a second ATT PDU (a response and a request of the other "
                          "conversation) in the same connection event",
        "md_events": [list(x) for x in same_event_both],
        "tables_note": "values as at connection time (the writes are in att); read / write: auth = needs an "
                       "encrypted link (Insufficient Authentication here), not permitted = no such property",
        "mouse_attributes": tables["mouse"],
        "phone_attributes": tables["phone"],
        "att_note": "sender = who sent it on the link; sender_role = that side's ATT role for this PDU; client / "
                    "server = the devices of the conversation it belongs to (a Handle Value Confirmation is sent "
                    "by the client)",
        "att": att_rows,
        "packets_note": "every frame that is neither an ATT PDU (those are in att, with pdu_hex as written) nor a "
                        "plain empty PDU; empty PDUs in empty_runs (one hex digit per frame: bit 0 SN, bit 1 NESN, "
                        "bit 2 MD, bit 3 set = sent by the central)",
        "packets": [ll.frame_entry(f) for f in frames if f.kind != "empty" and f.index not in att_frames],
        "empty_runs": ll.empty_runs(frames),
    }
    check(content, truth)
    ll.write_file(path, content)
    ll.write_file(os.path.join(args.out, "both_sides_serve_gatt_sniffed.truth.json"), ll.compact_json(truth))
    note = "tshark not found: not checked"
    if shutil.which("tshark"):
        rows = ll.tshark_att(path)
        want = [(r["index"], r["att_hex"]) for r in att_rows]
        assert rows == want, [(a, b) for a, b in zip(rows, want) if a != b][:3]
        note = f"tshark: the same {len(rows)} ATT PDUs, byte for byte, in the same frames"
    print(f"{path}: {len(frames)} frames, {len(content)} bytes, {len(att_rows)} ATT PDUs "
          f"(phone as client {truth['att_frames_by_client']['phone']}, mouse as client "
          f"{truth['att_frames_by_client']['mouse']}); {note}")
    return 0


def check(content: bytes, truth: dict) -> None:
    crc_init = int(truth["connection"]["crc_init"], 16)
    off, n = 24, 0
    while off < len(content):
        _s, _u, incl, _o = struct.unpack("<IIII", content[off:off + 16])
        body = content[off + 16:off + 16 + incl]
        off += 16 + incl
        n += 1
        aa = struct.unpack("<I", body[10:14])[0]
        assert body[-3:] == ll.crc24(body[14:-3], 0x555555 if aa == ll.ADVERTISING_AA else crc_init)
    assert n == truth["frames"]


if __name__ == "__main__":
    sys.exit(main())
