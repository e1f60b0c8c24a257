#!/usr/bin/env python3
"""Write small LE air-sniffer captures, one per pcap link type bledissect reads as air packets.

Every file holds the same 16 link-layer packets, each framed as its link type frames them
(docs/formats.md), built here from the Core specification's packet layouts (Vol 6 Part B) and
written without the project's writers, so that reading them checks the readers:

   1. ADV_IND on channel 37 from the strap D0:B1:ED:00:48:52 (random): flags, the name
      "bledissect HR", the Heart Rate service;
   2. SCAN_REQ from the phone C0:B1:ED:00:50:48 (random);  3. SCAN_RSP: the connection
      interval range;
   4. CONNECT_IND on channel 38: access address 0x8E3A7C5A, CRCInit 0x9A1B2C, window 2, offset
      0, interval 24 (30 ms), latency 0, timeout 72, all 37 channels, hop 7, SCA 5, CSA #1;
   5.-16. connection events 0-5 on channels 7, 14, 21, 28, 35, 5 (CSA #1), central then
      peripheral: LL_VERSION_IND / empty, empty / LL_VERSION_IND, ATT Read By Group Type
      Request / Response (services 0x1800 at 1-5, 0x180D at 6-9), empty / empty, the
      peripheral's empty PDU again with a damaged CRC (the sniffer says so where the format
      can), LL_TERMINATE_IND (0x13) / empty.

SN and NESN follow Vol 6 Part B 4.5.9; every CRC is computed (4.1.1, initial value 0x555555
for advertising, CRCInit after) except packet 14's. Signal -40 - packet number dBm. Files:

  air_ll.pcap           251  the packets alone
  air_ll_phdr.pcapng    256  RF channel, signal, CRC checked/valid, direction, LE 1M
  air_nordic.pcap       272  nRF Sniffer protocol version 3: ids 2 and 6, firmware time
  air_nordic_v2.pcapng  272  version 2 (every packet id 6), as nRF Sniffer 2 wrote
  air_user10.pcap       157  nRF Sniffer 1: version 1, the first packet in version 0
  air_ppi.pcap          192  PPI, link type 251 inside, Ubertooth's field (frequency, RSSI)

Usage: python3 Scripts/captures/make_air_captures.py [OUT_DIR]   (default: captures/)
"""
import os
import struct
import sys

START = 1_764_480_000  # 2025-11-30 05:20:00 UTC
ADVERTISING_AA = 0x8E89BED6
DATA_AA = 0x8E3A7C5A
CRC_INIT = 0x9A1B2C
STRAP = bytes.fromhex("524800edb1d0")  # D0:B1:ED:00:48:52, little-endian
PHONE = bytes.fromhex("485000edb1c0")  # C0:B1:ED:00:50:48


def crc24(pdu, init):
    """The LE CRC (Vol 6 Part B 3.1.1): a 24-bit LFSR, x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1,
    preset with `init` (its bit 0 in position 0), fed the PDU least significant bit first;
    sent from position 23 down, so the first byte's bit 0 is position 23."""
    state = [(init >> i) & 1 for i in range(24)]
    for byte in pdu:
        for bit in range(8):
            feedback = ((byte >> bit) & 1) ^ state[23]
            new = [feedback] + state[:23]
            for tap in (1, 3, 4, 6, 9, 10):
                new[tap] ^= feedback
            state = new
    out = bytearray(3)
    for n in range(24):
        if state[23 - n]:
            out[n // 8] |= 1 << (n % 8)
    return bytes(out)


def advertising(pdu_type, tx_random, rx_random, payload):
    header = bytes([pdu_type | (0x40 if tx_random else 0) | (0x80 if rx_random else 0), len(payload)])
    pdu = header + payload
    return struct.pack("<I", ADVERTISING_AA) + pdu + crc24(pdu, 0x555555)


def data(llid, nesn, sn, payload, damaged=False):
    header = bytes([llid | (nesn << 2) | (sn << 3), len(payload)])
    pdu = header + payload
    crc = crc24(pdu, CRC_INIT)
    if damaged:
        crc = bytes([crc[0] ^ 0x5A]) + crc[1:]
    return struct.pack("<I", DATA_AA) + pdu + crc


def packets():
    """(channel index, from the central (None: advertising), CRC good, link-layer packet)."""
    name = b"bledissect HR"
    adv_data = bytes([2, 0x01, 0x06, len(name) + 1, 0x09]) + name + bytes([3, 0x03, 0x0D, 0x18])
    connect = (
        PHONE + STRAP + struct.pack("<I", DATA_AA) + CRC_INIT.to_bytes(3, "little")
        + struct.pack("<BHHHH", 2, 0, 24, 0, 72) + bytes.fromhex("ffffffff1f") + bytes([(5 << 5) | 7]))
    request = bytes.fromhex("0700 0400 10 0100 ffff 0028")
    response = bytes.fromhex("0e00 0400 11 06 0100 0500 0018 0600 0900 0d18")
    return [
        (37, None, True, advertising(0x0, True, False, STRAP + adv_data)),
        (37, None, True, advertising(0x3, True, True, PHONE + STRAP)),
        (37, None, True, advertising(0x4, True, False, STRAP + bytes.fromhex("051206000c00"))),
        (38, None, True, advertising(0x5, True, True, connect)),
        (7, True, True, data(3, 0, 0, bytes.fromhex("0c 0b 5900 0100"))),
        (7, False, True, data(1, 1, 0, b"")),
        (14, True, True, data(1, 1, 1, b"")),
        (14, False, True, data(3, 0, 1, bytes.fromhex("0c 0b 5900 0200"))),
        (21, True, True, data(2, 0, 0, request)),
        (21, False, True, data(2, 1, 0, response)),
        (28, True, True, data(1, 1, 1, b"")),
        (28, False, True, data(1, 0, 1, b"")),
        (35, True, True, data(1, 1, 0, b"")),
        (35, False, False, data(1, 0, 1, b"", damaged=True)),
        (5, True, True, data(3, 0, 0, bytes.fromhex("02 13"))),
        (5, False, True, data(1, 1, 0, b"")),
    ]


def rf_channel(index):
    """The RF channel (2402 + 2n MHz) of a channel index (Vol 6 Part B 1.4.1)."""
    return {37: 0, 38: 12, 39: 39}.get(index, index + 1 if index <= 10 else index + 2)


def frames(link_type):
    """(µs since START, packet) for each packet as `link_type` frames it."""
    out = []
    for number, (channel, central, crc_ok, packet) in enumerate(packets(), 1):
        signal = -40 - number
        time = number * 1250 if central is None else 100_000 + number * 15_000
        is_advertising = central is None
        if link_type == 251:
            frame = packet
        elif link_type == 256:
            flags = 0x0001 | 0x0002 | 0x0400 | (0x0800 if crc_ok else 0)
            if central is not None:
                flags |= (2 if central else 3) << 7
            frame = struct.pack("<BbbBIH", rf_channel(channel), signal, 0, 0, 0, flags) + packet
        elif link_type in (272, 157, "v2"):
            flags = (1 if crc_ok else 0) | (2 if central else 0)
            counter = 0 if is_advertising else (number - 5) // 2
            if link_type == 157 and number == 1:
                # Version 0: marker, id, packet counter, 2 unused, payload length.
                head = b"\xbe\xef" + struct.pack("<BHHB", 6, number, 0, 9 + len(packet))
                frame = head + struct.pack("<BBBHI", flags, channel, -signal, counter, 150) + packet
            else:
                event = struct.pack("<BBBBHI", 10, flags, channel, -signal, counter, 150 if link_type != 272 else time)
                if link_type == 157:
                    head = struct.pack("<BBBBHB", 1, 6, 10 + len(packet), 1, number, 6)
                elif link_type == "v2":
                    head = struct.pack("<BHBHB", 1, 10 + len(packet), 2, number, 6)
                else:
                    head = struct.pack("<BHBHB", 1, 10 + len(packet), 3, number, 2 if is_advertising else 6)
                frame = head + event + packet
        elif link_type == 192:
            megahertz = 2402 + 2 * rf_channel(channel)
            rssi = signal + 54  # the CC2400's register: dBm less its offset of -54
            field = struct.pack("<HH", 30006, 12) + struct.pack("<BHBIbbbB", 0, megahertz, 0, number * 12_500, rssi, rssi - 3, rssi - 1, 8)
            frame = struct.pack("<BBHI", 0, 0, 8 + len(field), 251) + field + packet
        out.append((time, frame))
    return out


def pcap(link_type, records):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, link_type)
    for time, frame in records:
        seconds, micros = divmod(time, 1_000_000)
        out += struct.pack("<IIII", START + seconds, micros, len(frame), len(frame)) + frame
    return out


def pcapng(link_type, records):
    def block(kind, body):
        return struct.pack("<II", kind, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", link_type, 0, 262144))
    for time, frame in records:
        stamp = START * 1_000_000 + time
        padded = frame + bytes(-len(frame) % 4)
        out += block(6, struct.pack("<IIIII", 0, stamp >> 32, stamp & 0xFFFFFFFF, len(frame), len(frame)) + padded)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "captures")
    # The CRC as the specification computes it, checked on a packet sniffed by an Ubertooth
    # (crackle's pairing_and_ltk_exchange.pcap, frame 1).
    assert crc24(bytes.fromhex("0009e8dd6ee5c578020105"), 0x555555) == bytes.fromhex("c63c96")
    files = {
        "air_ll.pcap": pcap(251, frames(251)),
        "air_ll_phdr.pcapng": pcapng(256, frames(256)),
        "air_nordic.pcap": pcap(272, frames(272)),
        "air_nordic_v2.pcapng": pcapng(272, frames("v2")),
        "air_user10.pcap": pcap(157, frames(157)),
        "air_ppi.pcap": pcap(192, frames(192)),
    }
    for name, content in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
        print(f"{name}: {len(content)} bytes")


if __name__ == "__main__":
    main()
