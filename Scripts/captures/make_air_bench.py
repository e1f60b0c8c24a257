#!/usr/bin/env python3
"""Write a large LE air-sniffer capture for benchmarks: a sniffed session of N packets.

The packets are built as `make_air_captures.py` builds them (Core Vol 6 Part B layouts, every
CRC computed, CSA #1 hopping) and framed as pcap link type 256 (LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR:
RF channel, signal, CRC checked and valid, direction of data packets, LE 1M). What the sniffer
heard, merged in time order:

  * advertising on channels 37, 38, 39 (one packet each, 400 us apart, every interval):
    the strap "bledissect HR" (ADV_IND, 100 ms, until it is connected), a lamp "bledissect Lamp"
    (ADV_IND, 150 ms), an iBeacon (ADV_NONCONN_IND, 200 ms), an Eddystone URL beacon
    (ADV_NONCONN_IND, 300 ms), and a phone's SCAN_REQ / the lamp's SCAN_RSP every 2 s;
  * connection 1, phone -> strap (CONNECT_IND 1 s in, interval 6 = 7.5 ms, all channels, hop 7):
    LL_VERSION_IND, LL_FEATURE_REQ/RSP, Exchange MTU 247, discovery of the GAP, Heart Rate and
    Battery services, reads of the device name and battery level, both CCCDs written, then a
    Heart Rate Measurement notification every second (flags 0x10, bpm, 1-2 RR intervals; every
    8th with energy expended and 9 RR intervals: 29 bytes of L2CAP, two LL fragments), a Battery
    Level notification every 60 s, an LL_PING_REQ/RSP every 30 s, one LL_CONNECTION_UPDATE_IND
    (to 12 = 15 ms) and an LL_CHANNEL_MAP_IND;
  * connection 2, phone -> lamp (from 20 s, interval 40 = 50 ms, hop 11): the same setup, then
    a Write Command to the lamp every 3 s;
  * every other connection event is a pair of empty PDUs (most of the file); about 1 packet in
    1000 is heard with a bad CRC, and about 1 in 1000 of the peripheral's is lost by the central,
    so the peripheral sends it again (a retransmission: same SN, same payload).

The values come from a fixed seed: reruns give the same bytes. Not committed (1 M packets are
about 34 MB); `Scripts/benchmark.py --air` makes it on first use.

Usage: python3 Scripts/captures/make_air_bench.py [OUT] [--packets N]
       (default /tmp/air_bench_1M.pcap, 1 000 000 packets)
"""
import argparse
import functools
import heapq
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_air_captures import ADVERTISING_AA, START, crc24, rf_channel  # noqa: E402

STRAP = bytes.fromhex("524800edb1d0")    # D0:B1:ED:00:48:52, random
LAMP = bytes.fromhex("4d4c00edb1d0")     # D0:B1:ED:00:4C:4D, random
BEACON = bytes.fromhex("426900edb1d0")   # D0:B1:ED:00:69:42, random
EDDYSTONE = bytes.fromhex("594500edb1d0")  # D0:B1:ED:00:45:59, random
PHONE = bytes.fromhex("485000edb1c0")    # C0:B1:ED:00:50:48, random


@functools.lru_cache(maxsize=4096)
def crc(pdu, init):
    """The LE CRC (`make_air_captures.crc24`, bit by bit), remembered: most PDUs repeat."""
    return crc24(pdu, init)


def ad(kind, payload):
    return bytes([len(payload) + 1, kind]) + payload


def advertising(pdu_type, tx_random, rx_random, payload):
    header = bytes([pdu_type | (0x40 if tx_random else 0) | (0x80 if rx_random else 0), len(payload)])
    pdu = header + payload
    return struct.pack("<I", ADVERTISING_AA) + pdu + crc(pdu, 0x555555)


def advertiser(start, interval, pdus):
    """(time, channel, None, crc ok, packet) for each packet an advertiser sends: one event every
    `interval` µs (plus 0-10 ms of advertising delay), on 37, 38, 39; `pdus` gives the packets of
    an event (a list per channel) or None to stop."""
    rng = random.Random(start)
    time = start
    event = 0
    while True:
        packets = pdus(event, time)
        if packets is None:
            return
        for offset, channel in enumerate((37, 38, 39)):
            at = time + offset * 400
            for extra, packet in enumerate(packets):
                yield at + extra * 150, channel, None, True, packet
        time += interval + rng.randrange(0, 10_000)
        event += 1


def l2cap(att):
    return struct.pack("<HH", len(att), 0x0004) + att


class Link:
    """One connection as the sniffer follows it: CSA #1 hopping, SN/NESN (Vol 6 Part B 4.5.9),
    each side's queue of LL payloads, and what is due when."""

    def __init__(self, name, access_address, crc_init, central, peripheral, start, interval, hop, seed):
        self.name = name
        self.aa = access_address
        self.crc_init = crc_init
        self.central = central
        self.peripheral = peripheral
        self.start = start
        self.interval = interval  # units of 1.25 ms
        self.hop = hop
        self.rng = random.Random(seed)
        self.unmapped = 0
        self.channel_map = list(range(37))
        self.queues = ([], [])  # central's, peripheral's: (llid, payload)
        self.sn = [0, 0]
        self.nesn = [0, 0]
        self.last = [None, None]  # each side's packet not yet acknowledged: (llid, payload)
        self.due = []  # heap of (event, order, side, llid, payload)
        self.order = 0

    def connect_ind(self):
        interval = self.interval
        lldata = (struct.pack("<I", self.aa) + self.crc_init.to_bytes(3, "little")
                  + struct.pack("<BHHHH", 2, 0, interval, 0, 400) + bytes.fromhex("ffffffff1f") + bytes([(5 << 5) | self.hop]))
        return advertising(0x5, True, True, self.central + self.peripheral + lldata)

    def send(self, event, side, llid, payload):
        heapq.heappush(self.due, (event, self.order, side, llid, payload))
        self.order += 1

    def send_l2cap(self, event, side, att):
        pdu = l2cap(att)
        first = True
        while pdu:
            self.send(event, side, 2 if first else 1, pdu[:27])
            pdu = pdu[27:]
            first = False

    def channel(self):
        self.unmapped = (self.unmapped + self.hop) % 37
        if self.unmapped in self.channel_map:
            return self.unmapped
        return self.channel_map[self.unmapped % len(self.channel_map)]

    def packet(self, side, llid, payload, more):
        header = bytes([llid | (self.nesn[side] << 2) | (self.sn[side] << 3) | (0x10 if more else 0), len(payload)])
        pdu = header + payload
        return struct.pack("<I", self.aa) + pdu + crc(pdu, self.crc_init)

    def receive(self, side, sn, nesn):
        """`side` hears the other's packet: new data is acknowledged, and its own last packet is
        acknowledged when NESN moved on."""
        if sn == self.nesn[side]:
            self.nesn[side] ^= 1
        if nesn != self.sn[side]:
            self.sn[side] = nesn
            self.last[side] = None

    def events(self, script):
        """(time, channel, from central, crc ok, packet) of every packet of every event; `script`
        is called with each event number to queue what happens then, and returns False to end."""
        event = 0
        anchor = self.start
        while script(self, event):
            while self.due and self.due[0][0] <= event:
                _, _, side, llid, payload = heapq.heappop(self.due)
                self.queues[side].append((llid, payload))
            channel = self.channel()
            time = anchor
            for _ in range(8):  # at most 8 exchanges an event
                sent = []
                for side in (0, 1):
                    if self.last[side] is None:
                        self.last[side] = self.queues[side].pop(0) if self.queues[side] else (1, b"")
                    llid, payload = self.last[side]
                    more = bool(self.queues[side])
                    packet = self.packet(side, llid, payload, more)
                    crc_ok = self.rng.random() >= 0.001
                    yield time, channel, side == 0, crc_ok, packet
                    time += 150 + 8 * (len(packet) + 1)
                    sent.append(more)
                    # The central misses about 1 in 1000 of the peripheral's packets: no
                    # acknowledgement, so the peripheral sends the same again.
                    lost = side == 1 and self.rng.random() < 0.001
                    if not lost:
                        self.receive(1 - side, self.sn[side], self.nesn[side])
                if not any(sent):
                    break
            event += 1
            anchor += self.interval * 1250


def strap_script(hr_rng):
    """Connection 1: setup, discovery, then notifications for ever."""
    discovery = [
        (0, bytes.fromhex("02 f700")), (1, bytes.fromhex("03 f700")),
        (0, bytes.fromhex("10 0100 ffff 0028")),
        (1, bytes.fromhex("11 06 0100 0500 0018 0600 0900 0d18 0a00 0d00 0f18")),
        (0, bytes.fromhex("10 0e00 ffff 0028")), (1, bytes.fromhex("01 10 0e00 0a")),
        (0, bytes.fromhex("08 0100 ffff 0328")),
        (1, bytes.fromhex("09 07 0200 02 0300 002a 0700 10 0800 372a 0b00 12 0c00 192a")),
        (0, bytes.fromhex("08 0c00 ffff 0328")), (1, bytes.fromhex("01 08 0c00 0a")),
        (0, bytes.fromhex("04 0900 0900")), (1, bytes.fromhex("05 01 0900 0229")),
        (0, bytes.fromhex("04 0d00 0d00")), (1, bytes.fromhex("05 01 0d00 0229")),
        (0, bytes.fromhex("0a 0300")), (1, bytes.fromhex("0b") + b"bledissect HR"),
        (0, bytes.fromhex("0a 0c00")), (1, bytes.fromhex("0b 57")),
        (0, bytes.fromhex("12 0900 0100")), (1, bytes.fromhex("13")),
        (0, bytes.fromhex("12 0d00 0100")), (1, bytes.fromhex("13")),
    ]
    state = {"notifications": 0, "battery": 87, "updated": False}

    def script(link, event):
        per_second = 1_000_000 // (link.interval * 1250)
        if event == 0:
            link.send(0, 0, 3, bytes.fromhex("0c 0d 5900 0100"))  # LL_VERSION_IND
            link.send(1, 1, 3, bytes.fromhex("0c 0d 5900 0200"))
            link.send(2, 0, 3, bytes.fromhex("08 ff79010000000000"))  # LL_FEATURE_REQ
            link.send(3, 1, 3, bytes.fromhex("09 2d01000000000000"))  # LL_FEATURE_RSP
            for step, (side, att) in enumerate(discovery):
                link.send_l2cap(6 + 3 * step, side, att)
        start = 6 + 3 * len(discovery) + 10
        if event >= start and (event - start) % per_second == 0:
            n = state["notifications"]
            bpm = 60 + (n * 7 + hr_rng.randrange(0, 5)) % 80
            rr = round(60 / bpm * 1024)
            if n % 8 == 7:
                value = bytes([0x18, bpm]) + struct.pack("<H", n % 65536) + struct.pack("<9H", *[rr + hr_rng.randrange(-20, 20) for _ in range(9)])
            elif n % 2:
                value = bytes([0x16, bpm]) + struct.pack("<2H", rr, rr + hr_rng.randrange(-20, 20))
            else:
                value = bytes([0x16, bpm]) + struct.pack("<H", rr)
            link.send_l2cap(event, 1, bytes([0x1B]) + struct.pack("<H", 0x0008) + value)
            state["notifications"] = n + 1
            if n % 60 == 59:
                state["battery"] = max(state["battery"] - 1, 5)
                link.send_l2cap(event + 1, 1, bytes([0x1B]) + struct.pack("<H", 0x000C) + bytes([state["battery"]]))
            if n % 30 == 29:
                link.send(event + 2, 0, 3, bytes([0x12]))  # LL_PING_REQ
                link.send(event + 3, 1, 3, bytes([0x13]))  # LL_PING_RSP
            if n == 100:
                instant = (event + 20) & 0xFFFF
                link.send(event + 1, 0, 3, bytes([0x00]) + struct.pack("<BHHHHH", 1, 0, 12, 0, 400, instant))
                state["updated"] = instant
            if n == 200:  # channel 31 is left out from the instant on
                state["map"] = event + 10
                link.send(event + 1, 0, 3, bytes([0x01]) + bytes.fromhex("ffffff7f1f") + struct.pack("<H", state["map"] & 0xFFFF))
        if state["updated"] is not False and event == state["updated"]:
            link.interval = 12
            state["updated"] = False
        if event == state.get("map"):
            link.channel_map = [channel for channel in range(37) if channel != 31]
        return True
    return script


def lamp_script():
    discovery = [
        (0, bytes.fromhex("02 f700")), (1, bytes.fromhex("03 4000")),
        (0, bytes.fromhex("10 0100 ffff 0028")),
        (1, bytes.fromhex("11 06 0100 0500 0018 0600 0800 0f18")),
        (0, bytes.fromhex("08 0100 ffff 0328")),
        (1, bytes.fromhex("09 07 0200 02 0300 002a 0700 12 0800 192a")),
        (0, bytes.fromhex("0a 0800")), (1, bytes.fromhex("0b 64")),
    ]

    def script(link, event):
        if event == 0:
            link.send(0, 0, 3, bytes.fromhex("0c 0d 5900 0300"))
            link.send(1, 1, 3, bytes.fromhex("0c 0d 5900 0400"))
            for step, (side, att) in enumerate(discovery):
                link.send_l2cap(4 + 2 * step, side, att)
        if event > 40 and event % 60 == 0:
            level = (event // 60) % 256
            link.send_l2cap(event, 0, bytes([0x52]) + struct.pack("<H", 0x0010) + bytes([0x01, level, 0x80, 0x20]))
        return True
    return script


def sessions(seed):
    rng = random.Random(seed)
    strap_link = Link("strap", 0x50654C8A, 0x4A1B2C, PHONE, STRAP, 1_000_000 + 1_250, 6, 7, seed + 1)
    lamp_link = Link("lamp", 0x71A2B3C4, 0x2C3D4E, PHONE, LAMP, 20_000_000 + 2_500, 40, 11, seed + 2)
    name = b"bledissect HR"
    strap_adv = advertising(0x0, True, False, STRAP + ad(0x01, b"\x06") + ad(0x09, name) + ad(0x03, b"\x0d\x18"))
    lamp_name = b"bledissect Lamp"
    lamp_adv = advertising(0x0, True, False, LAMP + ad(0x01, b"\x06") + ad(0x09, lamp_name) + ad(0x03, b"\x0f\x18"))
    scan_req = advertising(0x3, True, True, PHONE + LAMP)
    scan_rsp = advertising(0x4, True, False, LAMP + ad(0x12, bytes.fromhex("06000c00")) + ad(0x0A, b"\x00"))
    ibeacon = advertising(0x2, True, False, BEACON + ad(0x01, b"\x04") + ad(0xFF, bytes.fromhex(
        "4c00 0215 b1ed1bea c0de 4e5a 9d1e 0000000000b1 1234 abcd c5")))
    eddystone = advertising(0x2, True, False, EDDYSTONE + ad(0x03, b"\xaa\xfe") + ad(0x16, bytes.fromhex("aafe 10 eb 03") + b"bledissect" + b"\x07"))
    connect = strap_link.connect_ind()

    def strap_pdus(event, time):
        if time >= 1_000_000:
            return None
        return [strap_adv]

    def lamp_pdus(event, time):
        if event % 13 == 0:
            return [lamp_adv, scan_req, scan_rsp]
        return [lamp_adv]

    streams = [
        advertiser(0, 100_000, strap_pdus),
        advertiser(37_000, 150_000, lamp_pdus),
        advertiser(51_000, 200_000, lambda event, time: [ibeacon]),
        advertiser(83_000, 300_000, lambda event, time: [eddystone]),
        iter([(1_000_000 - 1_000, 37, None, True, connect), (20_000_000 - 1_000, 38, None, True, lamp_link.connect_ind())]),
        strap_link.events(strap_script(random.Random(rng.random()))),
        lamp_link.events(lamp_script()),
    ]
    return heapq.merge(*streams, key=lambda item: item[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default="/tmp/air_bench_1M.pcap")
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 256)
    count = 0
    with open(args.out, "wb") as f:
        f.write(header)
        chunk = []
        for time, channel, central, crc_ok, packet in sessions(args.seed):
            flags = 0x0001 | 0x0002 | 0x0400 | (0x0800 if crc_ok else 0)
            if central is not None:
                flags |= (2 if central else 3) << 7
            signal = -45 - (count * 7) % 30
            frame = struct.pack("<BbbBIH", rf_channel(channel), signal, 0, 0, 0, flags) + packet
            seconds, micros = divmod(time, 1_000_000)
            chunk.append(struct.pack("<IIII", START + seconds, micros, len(frame), len(frame)))
            chunk.append(frame)
            count += 1
            if len(chunk) >= 20_000:
                f.write(b"".join(chunk))
                chunk = []
            if count >= args.packets:
                break
        f.write(b"".join(chunk))
    print(f"{args.out}: {count} packets, {os.path.getsize(args.out)} bytes")


if __name__ == "__main__":
    main()
