#!/usr/bin/env python3
"""Turn a central-side HCI capture into the LE link-layer capture a sniffer would have made.

Input: a btsnoop file written by Bumble's BtSnooper on the central (the phone): datalink
1002 (H4), flags bit 0 = direction (0 host->controller, 1 controller->host), ACL sent =
central -> peripheral, ACL received = peripheral -> central.  Output: a pcap of LE
link-layer packets, link type 256 (LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR: RF channel, signal,
noise, access-address offenses, reference access address, flags; then access address ..
CRC) or 251 (LINKTYPE_BLUETOOTH_LE_LL, the packets alone), plus `<name>.truth.json`.

What is modelled (Core 5.4 Vol 6 Part B unless noted):
  * advertising before the connection: two advertising events of ADV_IND on channels
    37/38/39 (100 ms apart), a third ADV_IND on 37, then CONNECT_IND on 37 from the central
    (InitA/AdvA and TxAdd/RxAdd from LE Create Connection / LE Set Random Address / LE
    Connection Complete; AD data from the phone's advertising report if the log has one,
    else flags + the GAP Device Name if the phone read it); access address valid per 2.1.2,
    CRCInit, WinSize 2 / WinOffset 0, interval / latency / timeout from LE Connection
    Complete, all 37 data channels, hop 5..16, SCA, Channel Selection Algorithm #1;
  * connection events at anchor = first anchor + sum of intervals, channel by CSA #1; in each
    event the central sends one PDU (data if it has one ready, else empty), the peripheral
    answers (data or empty), MD set when the sender has another PDU ready, the event goes on
    while either MD is set (and the interval has room); SN / NESN exactly as 4.5.9, so an
    unacknowledged PDU is sent again with the same SN;
  * each L2CAP PDU (reassembled from the HCI ACL fragments by their PB flags) is cut into
    LL data PDUs of at most 27 bytes: LLID 2 first, LLID 1 continuations;
  * a central ACL packet is ready at its HCI timestamp; a peripheral one from the connection
    event that comes last at or before its HCI timestamp; each waits until the packet before
    it in the log in the other direction has been delivered (so request -> response order
    holds); the order per direction is the log's;
  * LL control PDUs: LL_VERSION_IND both ways in the first events; LE Connection Update
    (HCI command, also after the L2CAP-signalled request) -> LL_CONNECTION_UPDATE_IND with
    the parameters of the LE Connection Update Complete event, instant = 7 events after the
    event it is first sent in, new interval from the instant (WinOffset 0, WinSize 1); what
    the log has after the LE Connection Update Complete waits for the instant;
    LE Enable Encryption -> LL_ENC_REQ (Rand, EDIV from the command, SKDm, IVm) /
    LL_ENC_RSP (SKDs, IVs) / LL_START_ENC_REQ (plain) / LL_START_ENC_RSP (encrypted, central
    then peripheral), data paused meanwhile; after that every non-empty PDU is encrypted with
    AES-CCM (Vol 6 Part E: SK = e(LTK, SKDs || SKDm), IV = IVm || IVs, nonce = 39-bit packet
    counter + direction bit (1 = central) + IV, AAD = header byte 0 & 0xE3, 4-byte MIC;
    counter per direction, a retransmission reuses its counter and bytes); HCI Disconnect ->
    LL_TERMINATE_IND with the reason (the link ends when it is acknowledged); a Disconnection
    Complete 0x08 (supervision timeout) without HCI Disconnect -> the peripheral goes silent
    one supervision timeout before it and the central keeps sending; the sniffer records on:
    200 ms after the last packet + the supervision timeout the strap advertises again (three
    advertising events of ADV_IND on 37/38/39, 100 ms apart); any other remote disconnect ->
    LL_TERMINATE_IND from the peripheral;
  * the sniffer: de-whitened packets, CRC checked, signal valid, reference AA valid for data
    packets, PDU type 2/3 (central/peripheral) for data, 0 for advertising, 'decrypted' never
    set (it did not decrypt).  Signal: -50 dBm (central) / -62 dBm (peripheral) / -58 dBm
    (advertiser), noise -95 dBm (not flagged valid).
  * impairments (optional, seeded): `--retransmit N`: N data PDUs whose first transmission
    is answered by a reply that arrives with a bad CRC (written with a damaged CRC, CRC-valid
    flag clear), so the sender sends the PDU again with the same SN (and packet counter);
    `--drop`: the sniffer misses a continuation fragment of a multi-fragment L2CAP PDU and a
    whole one-fragment L2CAP PDU (both omitted from the file; the link itself got them).
  * variants (class Variant; off by default, then the bytes are as without them), for sample
    captures of cases readers get wrong; the truth gets 'variant' and 'scenario' (the facts a
    test asserts: connection updates with instant and the time they take effect, heart-rate
    notifications with frame and bpm, silences on the link, the sniffer's gap, wrong
    direction flags, frames stored decrypted, PPI timestamps):
    `--conn-params I,L,T` (CONNECT_IND parameters instead of LE Connection Complete's),
    `--update-after N:I,L,T` (an LL_CONNECTION_UPDATE_IND once L2CAP PDU N is through, instead
    of the log's updates; later PDUs do not wait for its instant), `--no-updates`,
    `--missed-event E` (the central does not transmit in event E: nothing on air, the counter
    and the hop go on), `--sniffer-gap N:K` (the receiver of L2CAP PDU N has no room for it,
    flow control by NESN (4.5.9), from its first transmission through the K events after, each
    of those events closing after it; the sniffer records none of the K events; the
    retransmission after them is accepted), `--flip-direction N` (N encrypted packets, at
    least one per side, with the other side's PDU type flag), `--store-decrypted` (every
    packet encrypted on air stored as its plaintext: MIC stripped, length of the plaintext,
    CRC over what is stored, no 'decrypted' flag), `--linktype 192` (PPI with link type 251
    inside and the Ubertooth field: MHz, clk100ns = the sniffer's own clock, RSSI) with
    `--ubertooth-timestamps` (ts_usec = ns % 10^9 as libbtbb's PPI writer has it) and
    `--clock-offset US` (the sniffer host's clock less the log's).

Timestamps come from the HCI log (pcap time = the btsnoop record's wall-clock time of the
same moment), so reruns give identical bytes.  `--check` cross-checks a clean unencrypted
output with tshark (every ATT PDU of the HCI log, same order, opcodes, handles, values).

Usage:
  python3 Scripts/captures/make_sniffed_sessions.py            # all files of captures/air/
  python3 Scripts/captures/make_sniffed_sessions.py --check    # ... and the tshark checks
  python3 Scripts/captures/make_sniffed_sessions.py IN.btsnoop OUT.pcap [--linktype 251]
        [--linktype 192] [--seed N] [--retransmit N] [--drop] [--check] [variant options, --help]
  (the default run also writes VARIANT_FILES, each from the options on its line)
The library entry point is sniff(path, ...) -> (pcap bytes, truth dict).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import struct
import subprocess
import sys
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_air_captures as air  # noqa: E402  (crc24, rf_channel, pcap framing)

ADVERTISING_AA = 0x8E89BED6
BTSNOOP_EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # btsnoop µs since year 0 -> Unix µs
MAX_FRAGMENT = 27
T_IFS = 150

# --------------------------------------------------------------------------------------------
# Link-layer primitives
# --------------------------------------------------------------------------------------------


def crc24(pdu: bytes, init: int) -> bytes:
    """The LE CRC (Vol 6 Part B 3.1.1) as make_air_captures.crc24 computes it, with integer
    shifts: bit n of `state` is LFSR position n; output position 23 first."""
    state = init & 0xFFFFFF
    for byte in pdu:
        for bit in range(8):
            feedback = ((byte >> bit) & 1) ^ (state >> 23)
            state = (state << 1) & 0xFFFFFF
            if feedback:
                state ^= 0x00065B  # positions 0, 1, 3, 4, 6, 9, 10
    out = 0
    for n in range(24):
        if (state >> (23 - n)) & 1:
            out |= 1 << n
    return out.to_bytes(3, "little")


def valid_access_address(aa: int) -> bool:
    """Vol 6 Part B 2.1.2 (incl. the extra LE Coded rules, to be safe)."""
    bits = [(aa >> i) & 1 for i in range(32)]  # bit 0 = first on air
    if aa == ADVERTISING_AA or bin(aa ^ ADVERTISING_AA).count("1") == 1:
        return False
    octets = aa.to_bytes(4, "little")
    if len(set(octets)) == 1:
        return False
    run = 1
    for i in range(1, 32):
        run = run + 1 if bits[i] == bits[i - 1] else 1
        if run > 6:
            return False
    transitions = sum(bits[i] != bits[i - 1] for i in range(1, 32))
    if transitions > 24:
        return False
    top6 = bits[26:32]
    if sum(top6[i] != top6[i - 1] for i in range(1, 6)) < 2:
        return False
    low8 = bits[0:8]
    if sum(low8) < 3:
        return False
    if sum(bits[i] != bits[i - 1] for i in range(1, 16)) > 11:
        return False
    return True


def csa1_channels(hop: int):
    """CSA #1 with all 37 channels used: unmapped = (last + hop) mod 37."""
    last = 0
    while True:
        last = (last + hop) % 37
        yield last


def aes_e(key_be: bytes, block_be: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key_be), modes.ECB()).encryptor()
    return encryptor.update(block_be) + encryptor.finalize()


def session_key(ltk_le: bytes, skdm_le: bytes, skds_le: bytes) -> bytes:
    """SK = e(LTK, SKD), SKD = SKDs || SKDm (SKDm least significant); little-endian inputs as
    on air / in HCI; returns SK most significant octet first (the AES key for CCM)."""
    skd_le = skdm_le + skds_le
    return aes_e(ltk_le[::-1], skd_le[::-1])


def ccm_nonce(counter: int, from_central: bool, iv: bytes) -> bytes:
    c = counter & ((1 << 39) - 1)
    return c.to_bytes(5, "little")[:4] + bytes([((c >> 32) & 0x7F) | (0x80 if from_central else 0)]) + iv


def encrypt_pdu(sk: bytes, iv: bytes, counter: int, from_central: bool, header0: int, payload: bytes) -> bytes:
    return AESCCM(sk, tag_length=4).encrypt(ccm_nonce(counter, from_central, iv), payload, bytes([header0 & 0xE3]))


def decrypt_pdu(sk: bytes, iv: bytes, counter: int, from_central: bool, header0: int, data: bytes) -> bytes:
    return AESCCM(sk, tag_length=4).decrypt(ccm_nonce(counter, from_central, iv), data, bytes([header0 & 0xE3]))


def air_time_us(pdu_len: int) -> int:
    return (1 + 4 + pdu_len + 3) * 8  # LE 1M: preamble, AA, PDU, CRC


def self_check(vectors_path: str | None = None) -> None:
    """CRC against make_air_captures.crc24 and the Ubertooth packet; SK and CCM against the
    Core's sample data (Vol 6 Part C 1), from data/ll_encryption_vectors.json."""
    for n in range(40):
        sample = hashlib.sha256(bytes([n])).digest()[: n % 33]
        assert crc24(sample, 0x9A1B2C ^ n) == air.crc24(sample, 0x9A1B2C ^ n)
    assert crc24(bytes.fromhex("0009e8dd6ee5c578020105"), 0x555555) == bytes.fromhex("c63c96")
    assert valid_access_address(0x8E3A7C5A) and not valid_access_address(ADVERTISING_AA)
    path = vectors_path or os.path.join(HERE, "data", "ll_encryption_vectors.json")
    with open(path) as f:
        v = json.load(f)
    s = v["core_sample"]
    le = lambda name: bytes.fromhex(s[name + "_le"])  # noqa: E731
    sk = session_key(le("ltk"), le("skdm"), le("skds"))
    assert sk.hex() == s["sk_msb_first"].lower(), sk.hex()
    iv = le("ivm") + le("ivs")
    assert iv.hex() == s["iv_on_air"].lower()
    for p in s["packets"]:
        plain = bytes.fromhex(p["plaintext_payload"])
        enc = bytes.fromhex(p["encrypted_pdu"])
        header0 = enc[0]
        out = encrypt_pdu(sk, iv, p["packet_counter"], p["direction"] == "central", header0, plain)
        assert out == enc[2:], (p["name"], out.hex())
        assert enc[1] == len(plain) + 4
        assert decrypt_pdu(sk, iv, p["packet_counter"], p["direction"] == "central", header0, enc[2:]) == plain


# --------------------------------------------------------------------------------------------
# Reading the HCI log
# --------------------------------------------------------------------------------------------
@dataclass
class L2capPdu:
    n: int
    direction: str  # "C" (central -> peripheral) or "P"
    data: bytes
    ts: int  # µs (Unix) of the HCI record that completed it
    hci_frames: list[int]


@dataclass
class HciSession:
    path: str
    items: list = field(default_factory=list)  # ("l2cap", L2capPdu) / ("update", ...) / ...
    central_addr: bytes = b""
    central_random: bool = False
    peer_addr: bytes = b""
    peer_random: bool = False
    handle: int | None = None
    connect_ts: int = 0
    interval: int = 0
    latency: int = 0
    timeout: int = 0
    adv_data: bytes | None = None
    version: tuple[int, int, int] = (0x0D, 0xFFFF, 0)


def read_btsnoop(path: str) -> list[tuple[int, int, int, bytes]]:
    """[(1-based frame, Unix µs, flags, H4 packet)]"""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"btsnoop\0" and struct.unpack(">I", data[12:16])[0] == 1002, path
    out, offset, n = [], 16, 0
    while offset + 24 <= len(data):
        _orig, incl, flags, _drops, ts = struct.unpack(">IIIIQ", data[offset:offset + 24])
        n += 1
        out.append((n, ts - BTSNOOP_EPOCH_DELTA_US, flags, data[offset + 24:offset + 24 + incl]))
        offset += 24 + incl
    return out


def parse_hci(path: str) -> HciSession:
    s = HciSession(path=path)
    own_random_addr = None
    own_type = 0
    public_addr = None
    pending_update = None
    acl_buf = {"C": None, "P": None}
    reports = {}
    n_pdu = 0
    disconnect_cmd = None
    for frame, ts, flags, p in read_btsnoop(path):
        kind = p[0]
        if kind == 0x01:  # command
            opcode = struct.unpack("<H", p[1:3])[0]
            params = p[4:]
            if opcode == 0x2005:
                own_random_addr = params[:6]
            elif opcode == 0x200D:
                own_type = params[12]
            elif opcode == 0x2043:  # LE Extended Create Connection
                own_type = params[1]
            elif opcode == 0x2013:
                pending_update = (frame, ts)
            elif opcode == 0x2019:
                handle, = struct.unpack("<H", params[:2])
                s.items.append(("encrypt", ts, frame, params[2:10], struct.unpack("<H", params[10:12])[0], params[12:28]))
            elif opcode == 0x0406:
                disconnect_cmd = (ts, frame, params[2])
                s.items.append(("disconnect", ts, frame, params[2]))
        elif kind == 0x04:  # event
            code = p[1]
            params = p[3:]
            if code == 0x0E and len(params) >= 10 and struct.unpack("<H", params[1:3])[0] == 0x1009:
                public_addr = params[4:10]
            elif code == 0x0E and len(params) >= 12 and struct.unpack("<H", params[1:3])[0] == 0x1001:
                hci_ver, _rev, lmp_ver, manufacturer, lmp_sub = struct.unpack("<BHBHH", params[4:12])
                s.version = (lmp_ver, manufacturer, lmp_sub)
            elif code == 0x3E:
                sub = params[0]
                if sub in (0x01, 0x0A) and s.handle is None and params[1] == 0:
                    s.handle = struct.unpack("<H", params[2:4])[0]
                    s.peer_random = params[5] & 1 == 1
                    s.peer_addr = params[6:12]
                    rest = params[12:] if sub == 0x01 else params[24:]
                    s.interval, s.latency, s.timeout = struct.unpack("<HHH", rest[:6])
                    s.connect_ts = ts
                    s.connect_frame = frame
                elif sub == 0x03 and pending_update and params[1] == 0:
                    interval, latency, timeout = struct.unpack("<HHH", params[4:10])
                    s.items.append(("update", pending_update[1], pending_update[0], interval, latency, timeout))
                    pending_update = None
                elif sub == 0x02:
                    count, off = params[1], 2
                    for _ in range(count):
                        etype, atype = params[off], params[off + 1]
                        addr = params[off + 2:off + 8]
                        length = params[off + 8]
                        data = params[off + 9:off + 9 + length]
                        if etype == 0:
                            reports.setdefault(addr, data)
                        off += 10 + length
                elif sub == 0x0D:
                    count, off = params[1], 2
                    for _ in range(count):
                        etype, = struct.unpack("<H", params[off:off + 2])
                        addr = params[off + 3:off + 9]
                        length = params[off + 23]
                        data = params[off + 24:off + 24 + length]
                        if not etype & 0x0008:  # not a scan response
                            reports.setdefault(addr, data)
                        off += 24 + length
            elif code == 0x05 and s.handle is not None:
                reason = params[3]
                s.items.append(("disconnected", ts, frame, reason, disconnect_cmd is not None))
            elif code == 0x08:
                s.items.append(("encryption_change", ts, frame, params[3]))
        elif kind == 0x02:  # ACL
            word, _length = struct.unpack("<HH", p[1:5])
            pb = (word >> 12) & 3
            direction = "P" if flags & 1 else "C"
            body = p[5:]
            if pb in (0, 2):
                acl_buf[direction] = (bytearray(body), [frame])
            else:
                assert acl_buf[direction] is not None, ("continuation without start", frame)
                acl_buf[direction][0].extend(body)
                acl_buf[direction][1].append(frame)
            buf, frames = acl_buf[direction]
            if len(buf) >= 4 and len(buf) >= 4 + struct.unpack("<H", buf[:2])[0]:
                n_pdu += 1
                s.items.append(("l2cap", L2capPdu(n_pdu, direction, bytes(buf), ts, frames)))
                acl_buf[direction] = None
    s.central_random = own_type & 1 == 1
    s.central_addr = own_random_addr if s.central_random else public_addr
    s.adv_data = reports.get(s.peer_addr)
    assert s.handle is not None, "no LE Connection Complete"
    return s


def device_name(session: HciSession) -> bytes | None:
    """The GAP Device Name the phone read, if it did (Read By Type 0x2803 -> 0x2A00's value
    handle, then a Read Request of it)."""
    name_handle = None
    last_read = None
    for item in session.items:
        if item[0] != "l2cap" or item[1].data[2:4] != b"\x04\x00":
            continue
        att = item[1].data[4:]
        if att[0] == 0x09 and len(att) > 2:
            size = att[1]
            for off in range(2, len(att) - size + 1, size):
                entry = att[off:off + size]
                if size == 7 and entry[5:7] == b"\x00\x2a":
                    name_handle = struct.unpack("<H", entry[3:5])[0]
        elif att[0] == 0x0A:
            last_read = struct.unpack("<H", att[1:3])[0]
        elif att[0] == 0x0B and name_handle is not None and last_read == name_handle:
            return bytes(att[1:])
    return None


# --------------------------------------------------------------------------------------------
# The simulation
# --------------------------------------------------------------------------------------------
LL_NAMES = {0x00: "LL_CONNECTION_UPDATE_IND", 0x02: "LL_TERMINATE_IND", 0x03: "LL_ENC_REQ",
            0x04: "LL_ENC_RSP", 0x05: "LL_START_ENC_REQ", 0x06: "LL_START_ENC_RSP", 0x0C: "LL_VERSION_IND"}


@dataclass(eq=False)
class Item:
    direction: str
    llid: int
    payload: bytes
    ready: int = 0  # µs: not before an event whose anchor is >= ready
    ready_window: bool = False  # peripheral: eligible in the event that is last at or before `ready`
    deps: list = field(default_factory=list)
    l2cap: L2capPdu | None = None
    fragment: int = 0
    fragments: int = 1
    name: str = ""
    builder: object = None  # called at first transmission to build the payload
    starts_encryption: bool = False
    after_instant: "Item | None" = None  # an LL_CONNECTION_UPDATE_IND whose instant must have passed
    instant: int | None = None
    # state
    delivered_event: int | None = None
    delivered_at: int | None = None
    wire: bytes | None = None  # PDU payload as sent (ciphertext + MIC if encrypted)
    counter: int | None = None
    first_frame: int | None = None
    transmissions: int = 0
    impair_reply: bool = False
    drop_first: bool = False


class Side:
    def __init__(self, name: str):
        self.name = name
        self.sn = 0
        self.nesn = 0
        self.last: Item | None = None  # last PDU sent (None = empty)
        self.last_acked = True
        self.last_header_sn = 0
        self.queue: list[Item] = []
        self.encrypting = False
        self.counter = 0
        self.last_frame: int | None = None  # frame of the last transmission (written or not)


@dataclass
class Variant:
    """Departures from the log or from a well-behaved sniffer, for sample captures of cases a
    reader gets wrong. All off by default (a default Variant gives the same bytes as none)."""
    # The CONNECT_IND's interval / latency / timeout instead of LE Connection Complete's.
    conn_params: tuple[int, int, int] | None = None
    # Replace the log's LE Connection Updates: (L2CAP PDU n, interval, latency, timeout): the
    # central sends LL_CONNECTION_UPDATE_IND once PDU n is through (instant 7 events ahead);
    # what follows in the log does not wait for the instant. [] = no update at all.
    updates: list[tuple[int, int, int, int]] | None = None
    # Connection events in which the central does not transmit (its radio busy elsewhere), so
    # neither does the peripheral: silence on air, the event counter and the hop go on.
    missed_events: tuple[int, ...] = ()
    # (L2CAP PDU n, K): the receiver of PDU n cannot take it (no buffer: flow control, Vol 6
    # Part B 4.5.9, NESN not incremented) from its first transmission through the K events
    # after it, so its sender sends it again in every event; the sniffer records nothing in
    # those K events (the link goes on); the retransmission in the event after is accepted.
    gap: tuple[int, int] | None = None
    # N encrypted packets (at least one per side) whose PDU type flag (2 central / 3
    # peripheral, link type 256) names the wrong side.
    flip_direction: int = 0
    # Store every packet encrypted on air as its plaintext (MIC stripped, length field of the
    # plaintext, CRC over what is stored), no 'decrypted' flag: as a decrypting tool writes.
    store_decrypted: bool = False
    # Link type 192: pcap time as libbtbb's lell_pcap_append_ppi_packet writes it, ts_sec =
    # ns / 10^9, ts_usec = ns % 10^9 (nanoseconds in the microsecond field), of the sniffer
    # host's clock = the log's clock + clock_offset_us; the Ubertooth field's clk100ns right.
    ubertooth_timestamps: bool = False
    clock_offset_us: int = 0

    def describe(self) -> dict:
        out = {}
        for name, default in Variant.__dataclass_fields__.items():
            value = getattr(self, name)
            if value != default.default:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


def sniff(path: str, linktype: int = 256, seed: int = 1, retransmit: int = 0, drop: bool = False,
          source_name: str | None = None, variant: Variant | None = None) -> tuple[bytes, dict]:
    variant = variant or Variant()
    session = parse_hci(path)
    if variant.conn_params is not None:
        session.interval, session.latency, session.timeout = variant.conn_params
    if variant.updates is not None:
        items = [it for it in session.items if it[0] != "update"]
        for after_n, ni, nl, nt in variant.updates:
            at = next(k for k, it in enumerate(items) if it[0] == "l2cap" and it[1].n == after_n)
            pdu = items[at][1]
            items.insert(at + 1, ("update", pdu.ts, pdu.hci_frames[-1], ni, nl, nt, "no barrier"))
        session.items = items
    rng = random.Random(f"{seed}:{os.path.basename(path)}")
    while True:
        aa = rng.getrandbits(32)
        if valid_access_address(aa):
            break
    crc_init = rng.getrandbits(24)
    hop = rng.randint(5, 16)
    sca = 5
    win_size, win_offset = 2, 0
    skdm, ivm, skds, ivs = rng.randbytes(8), rng.randbytes(4), rng.randbytes(8), rng.randbytes(4)

    central, peripheral = Side("C"), Side("P")
    sides = {"C": central, "P": peripheral}
    other = {"C": "P", "P": "C"}
    interval = session.interval
    timeline = []  # (from_event, interval, latency, timeout)
    timeline.append({"from_event": 0, "interval": session.interval, "latency": session.latency,
                     "timeout": session.timeout, "instant": None})
    encryption = None

    # ---- build the items, in log order ------------------------------------------------------
    last_of = {"C": None, "P": None}
    first_anchor = session.connect_ts - 2000 + 1250 + win_offset * 1250 + 600
    v_c = Item("C", 3, bytes([0x0C]) + struct.pack("<BHH", *session.version), ready=first_anchor, name="LL_VERSION_IND")
    v_p = Item("P", 3, bytes([0x0C]) + struct.pack("<BHH", *session.version), deps=[v_c], name="LL_VERSION_IND")
    central.queue.append(v_c)
    peripheral.queue.append(v_p)
    barrier: Item | None = None  # every later item waits for it (encryption start)
    end = None  # ("terminate", item) / ("timeout", ts) / ("remote", item)
    state = {"update": None}
    update_barrier: Item | None = None
    pdus: list[L2capPdu] = []
    for item in session.items:
        kind = item[0]
        if kind == "l2cap":
            pdu = item[1]
            pdus.append(pdu)
            d = pdu.direction
            chunks = [pdu.data[i:i + MAX_FRAGMENT] for i in range(0, len(pdu.data), MAX_FRAGMENT)]
            deps = [x for x in (last_of[other[d]], barrier) if x is not None]
            for k, chunk in enumerate(chunks):
                it = Item(d, 2 if k == 0 else 1, chunk, ready=pdu.ts, ready_window=(d == "P"),
                          deps=list(deps), l2cap=pdu, fragment=k + 1, fragments=len(chunks),
                          after_instant=update_barrier)
                sides[d].queue.append(it)
                last_of[d] = it
        elif kind == "update":
            _, ts, frame, new_interval, new_latency, new_timeout = item[:6]
            synthetic = len(item) > 6

            def build(event, ni=new_interval, nl=new_latency, nt=new_timeout):
                instant = (event + 7) & 0xFFFF
                state["update"] = (instant, ni, nl, nt)
                return bytes([0x00]) + struct.pack("<BHHHHH", 1, 0, ni, nl, nt, instant)
            it = Item("C", 3, b"", ready=ts, deps=[x for x in (last_of["P"], barrier) if x], builder=build,
                      name="LL_CONNECTION_UPDATE_IND", after_instant=update_barrier)
            central.queue.append(it)
            last_of["C"] = it
            if not synthetic:
                update_barrier = it  # the log shows LE Connection Update Complete (at the instant) before what follows
        elif kind == "encrypt":
            _, ts, frame, rand, ediv, ltk = item
            sk = session_key(ltk, skdm, skds)
            encryption = {"hci_frame": frame, "ltk": ltk[::-1].hex(), "ltk_le": ltk.hex(), "rand_le": rand.hex(),
                          "ediv": ediv, "skdm_le": skdm.hex(), "skds_le": skds.hex(), "ivm_le": ivm.hex(),
                          "ivs_le": ivs.hex(), "skd_msb_first": (skdm + skds)[::-1].hex(),
                          "sk_msb_first": sk.hex(), "iv_on_air": (ivm + ivs).hex(), "_sk": sk, "_iv": ivm + ivs}
            req = Item("C", 3, bytes([0x03]) + rand + struct.pack("<H", ediv) + skdm + ivm, ready=ts,
                       deps=[x for x in (last_of["P"], barrier) if x], name="LL_ENC_REQ",
                       after_instant=update_barrier)
            rsp = Item("P", 3, bytes([0x04]) + skds + ivs, deps=[req], name="LL_ENC_RSP")
            sreq = Item("P", 3, bytes([0x05]), deps=[rsp], name="LL_START_ENC_REQ")
            srsp_c = Item("C", 3, bytes([0x06]), deps=[sreq], name="LL_START_ENC_RSP", starts_encryption=True)
            srsp_p = Item("P", 3, bytes([0x06]), deps=[srsp_c], name="LL_START_ENC_RSP", starts_encryption=True)
            central.queue += [req, srsp_c]
            peripheral.queue += [rsp, sreq, srsp_p]
            barrier = srsp_p
            last_of["C"], last_of["P"] = srsp_c, srsp_p
        elif kind == "disconnect":
            _, ts, frame, reason = item
            it = Item("C", 3, bytes([0x02, reason]), ready=ts, deps=[x for x in (last_of["P"], barrier) if x],
                      name="LL_TERMINATE_IND", after_instant=update_barrier)
            central.queue.append(it)
            last_of["C"] = it
            end = ("terminate", it)
        elif kind == "disconnected" and end is None:
            _, ts, frame, reason, local = item
            if reason == 0x08:
                end = ("timeout", ts)
            else:
                it = Item("P", 3, bytes([0x02, reason]), ready=ts - 5000, deps=[x for x in (last_of["C"], barrier) if x],
                          name="LL_TERMINATE_IND", after_instant=update_barrier)
                peripheral.queue.append(it)
                end = ("terminate", it)
            break

    # ---- impairments ---------------------------------------------------------------------
    data_items = [it for side in (central, peripheral) for it in side.queue if it.l2cap is not None]
    chosen = set()
    if drop:
        multi = [it for it in data_items if it.fragments >= 3 and 1 < it.fragment < it.fragments]
        if not multi:
            multi = [it for it in data_items if it.fragments == 2 and it.fragment == 2]
        single = [it for it in data_items if it.fragments == 1 and it.l2cap.data[2:4] == b"\x04\x00"]
        if multi:
            pick = multi[len(multi) // 2]
            pick.drop_first = True
            chosen.add(pick.l2cap.n)
        if single:
            pick = single[(2 * len(single)) // 3]
            pick.drop_first = True
            chosen.add(pick.l2cap.n)
    if retransmit:
        candidates = [it for it in data_items if it.l2cap.n not in chosen and it.fragment == 1
                      and it.l2cap.n > 3 and (encryption is None or it.l2cap.ts > encryption_ts(session))]
        step = max(1, len(candidates) // (retransmit + 1))
        for k in range(retransmit):
            idx = min(len(candidates) - 1, step * (k + 1) + (k % 2))
            candidates[idx].impair_reply = True

    # ---- connection events -----------------------------------------------------------------
    packets = []  # written / dropped packet records
    hop_gen = csa1_channels(hop)
    anchor = first_anchor
    event = 0
    silent_from = None
    silent_start = None
    if end and end[0] == "timeout":
        silent_from = end[1] - session.timeout * 10_000
    finished = False
    interval = session.interval
    pending_impair = {"C": False, "P": False}  # the next packet from this side arrives damaged
    gap_state = {"item": None, "first_event": None, "last_event": None, "unrecorded": 0}
    missed = []
    event_anchor = {}  # event -> (anchor µs, channel, interval)

    def eligible(side: Side, now: int, current_interval: int) -> Item | None:
        if not side.queue:
            return None
        it = side.queue[0]
        if it.ready_window:
            if now + current_interval * 1250 <= it.ready:
                return None
        elif now < it.ready:
            return None
        for dep in it.deps:
            if dep.delivered_event is None or dep.delivered_event >= event:
                return None
        if it.after_instant is not None and (it.after_instant.instant is None or event < it.after_instant.instant):
            return None
        return it

    def more_after(side: Side, now: int, current_interval: int, current: Item | None) -> bool:
        if current is not None and side.queue and side.queue[0] is current:
            if len(side.queue) < 2:
                return False
            nxt = side.queue[1]
            saved = side.queue[0]
            side.queue.pop(0)
            ok = eligible(side, now, current_interval) is nxt and not any(d is current for d in nxt.deps)
            side.queue.insert(0, saved)
            return ok
        return eligible(side, now, current_interval) is not None and current is None and False

    def transmit(side: Side, now: int, channel: int, current_interval: int) -> dict:
        """Build side's next packet (new or retransmission)."""
        retrans = not side.last_acked
        if retrans:
            it = side.last
            sn = side.sn
        else:
            it = eligible(side, now, current_interval)
            sn = side.sn
            side.last = it
            side.last_acked = False
        if it is not None and variant.gap and it.transmissions == 0 and it.l2cap is not None \
                and it.l2cap.n == variant.gap[0] and it.fragment == 1:
            gap_state.update(item=it, sent_event=event, first_event=event + 1, last_event=event + variant.gap[1])
        if it is not None and it.wire is None:
            if it.builder is not None:
                it.payload = it.builder(event)
                it.instant = struct.unpack("<H", it.payload[-2:])[0]
            if it.starts_encryption:
                side.encrypting = True
            if side.encrypting and encryption is not None:
                it.counter = side.counter
                side.counter += 1
                header0 = it.llid  # NESN / SN / MD are masked out of the AAD
                it.wire = encrypt_pdu(encryption["_sk"], encryption["_iv"], it.counter, side.name == "C", header0, it.payload)
            else:
                it.wire = it.payload
        md = 1 if more_after(side, now, current_interval, it) else 0
        llid = it.llid if it is not None else 1
        payload = it.wire if it is not None else b""
        header = bytes([llid | (side.nesn << 2) | (sn << 3) | (md << 4), len(payload)])
        rec = {"dir": side.name, "item": it, "sn": sn, "nesn": side.nesn, "md": md, "llid": llid,
               "header": header, "wire": payload, "time": now, "event": event, "channel": channel,
               "retransmission": retrans, "crc_ok": True}
        if it is not None:
            it.transmissions += 1
        return rec

    def receive(receiver: Side, rec: dict) -> None:
        if not rec["crc_ok"]:
            return
        if rec["nesn"] != receiver.sn:  # receiver's last PDU acknowledged
            if not receiver.last_acked:
                receiver.last_acked = True
                receiver.sn ^= 1
                done = receiver.last
                if done is not None:
                    receiver.queue.remove(done)
        if rec["sn"] == receiver.nesn:  # new PDU
            if gap_state["item"] is not None and rec["item"] is gap_state["item"] and event <= gap_state["last_event"]:
                rec["refused"] = True  # no room for it: NESN stays, the sender sends it again
                return
            receiver.nesn ^= 1
            it = rec["item"]
            if it is not None and it.delivered_event is None:
                it.delivered_event = event
                it.delivered_at = rec["time"]

    def emit(rec: dict) -> None:
        it = rec["item"]
        dropped = it is not None and it.drop_first and it.transmissions == 1 and not rec["retransmission"]
        rec["dropped"] = dropped
        if gap_state["first_event"] is not None and gap_state["first_event"] <= event <= gap_state["last_event"]:
            rec["unrecorded"] = True
            gap_state["unrecorded"] += 1
        packets.append(rec)

    max_events = 2_000_000
    while not finished and event < max_events:
        channel = next(hop_gen)
        # connection update at its instant
        if state["update"] and state["update"][0] == event:
            _instant, ni, nl, nt = state["update"]
            interval = ni
            timeline.append({"from_event": event, "interval": ni, "latency": nl, "timeout": nt, "instant": event})
            state["update"] = None
        event_anchor[event] = (anchor, channel, interval)
        if event in variant.missed_events:
            missed.append({"event": event, "channel": channel, "anchor_us": anchor})
            event += 1
            anchor += interval * 1250
            continue
        now = anchor
        limit = anchor + interval * 1250 - 400
        while True:
            c_rec = transmit(central, now, channel, interval)
            if pending_impair["C"]:
                c_rec["crc_ok"] = False
                pending_impair["C"] = False
            emit(c_rec)
            c_item = c_rec["item"]
            if c_item is not None and c_item.impair_reply and c_item.transmissions == 1:
                pending_impair["P"] = True
            now += air_time_us(2 + len(c_rec["wire"])) + T_IFS
            if silent_from is not None and silent_start is None and now >= silent_from and not central.queue \
                    and not peripheral.queue:
                silent_start = now  # the peripheral is gone (after everything in the log was delivered)
            if silent_start is not None:
                break  # the peripheral no longer answers
            receive(peripheral, c_rec)
            p_rec = transmit(peripheral, now, channel, interval)
            if pending_impair["P"]:
                p_rec["crc_ok"] = False
                pending_impair["P"] = False
            emit(p_rec)
            p_item = p_rec["item"]
            if p_item is not None and p_item.impair_reply and p_item.transmissions == 1:
                pending_impair["C"] = True
            now += air_time_us(2 + len(p_rec["wire"])) + T_IFS
            receive(central, p_rec)
            if not p_rec["crc_ok"]:
                break  # the central closes the event after a damaged reply
            if c_rec.get("refused") or p_rec.get("refused"):
                break  # no room for more: the central closes the event
            if end and end[0] == "terminate" and end[1].delivered_event is not None and \
                    (end[1].direction == "P" or central.last_acked):
                finished = True
                break
            if not (c_rec["md"] or p_rec["md"]):
                break
            if now + 2 * (air_time_us(2 + 27 + 4) + T_IFS) > limit:
                break
        if end and end[0] == "timeout" and silent_start is not None and \
                anchor + interval * 1250 > max(end[1], silent_start + timeline[-1]["timeout"] * 10_000):
            finished = True
        if end is None and not central.queue and not peripheral.queue and central.last_acked and peripheral.last_acked:
            finished = True
        event += 1
        anchor += interval * 1250

    assert finished, "simulation did not finish"
    leftovers = central.queue + peripheral.queue
    assert not [it for it in leftovers if it is not (end[1] if end and end[0] == "terminate" else None)], leftovers[:3]

    # A link lost without LL_TERMINATE_IND: the sniffer goes on recording after the central's
    # last retransmission, and the strap, its link gone, advertises again (below).
    lost_timeout_us = timeline[-1]["timeout"] * 10_000 if end and end[0] == "timeout" else None
    content, truth = frame_and_truth(session, packets, pdus, linktype, aa, crc_init, hop, sca, win_size, win_offset,
                                     timeline, encryption, source_name or path, seed, retransmit, drop,
                                     lost_timeout_us, variant)
    if variant.describe():
        truth["variant"] = variant.describe()
        truth["scenario"] = scenario_truth(session, variant, packets, timeline, event_anchor, missed, gap_state, truth)
    return content, truth


def hrm_handle(session: HciSession) -> int | None:
    """The value handle of the Heart Rate Measurement (0x2A37) the phone discovered."""
    for item in session.items:
        if item[0] != "l2cap" or item[1].data[2:4] != b"\x04\x00":
            continue
        att = item[1].data[4:]
        if att[0] == 0x09 and len(att) > 2 and att[1] == 7:
            for off in range(2, len(att) - 6, 7):
                entry = att[off:off + 7]
                if entry[5:7] == b"\x37\x2a":
                    return struct.unpack("<H", entry[3:5])[0]
    return None


def scenario_truth(session, variant, packets, timeline, event_anchor, missed, gap_state, truth) -> dict:
    """What a test asserts about a Variant's capture, from what the simulation did."""
    written = sorted((rec for rec in packets if "index" in rec), key=lambda r: r["index"])

    def params_at(event):
        return [p for p in timeline if p["from_event"] <= event][-1]

    out = {}
    # connection updates
    updates = []
    for rec in written:
        it = rec["item"]
        if it is None or it.name != "LL_CONNECTION_UPDATE_IND" or rec["retransmission"]:
            continue
        new = [p for p in timeline if p["instant"] == it.instant][0]
        old = params_at(it.instant - 1)
        anchor_us = event_anchor[it.instant][0]
        first = min((r["index"] for r in written if r["event"] >= it.instant), default=None)
        updates.append({"frame": rec["index"], "event_sent": rec["event"], "time_us": rec["time"], "instant": it.instant,
                        "interval": new["interval"], "latency": new["latency"], "timeout": new["timeout"],
                        "old": {"interval": old["interval"], "latency": old["latency"], "timeout": old["timeout"]},
                        "takes_effect_event": it.instant, "takes_effect_time_us": anchor_us,
                        "first_frame_with_new_parameters": first,
                        "note": ("the instant's event is at the old spacing (WinOffset 0, WinSize 1), the "
                                 "events after it new interval apart")})
    if updates:
        out["connection_updates"] = updates
    # heart-rate notifications
    handle = hrm_handle(session)
    if handle is not None:
        hr = []
        for rec in written:
            it = rec["item"]
            if it is None or it.l2cap is None or it.fragment != 1 or rec["retransmission"]:
                continue
            data = it.l2cap.data
            if data[2:4] == b"\x04\x00" and data[4] == 0x1B and struct.unpack("<H", data[5:7])[0] == handle:
                value = data[7:]
                bpm = struct.unpack("<H", value[1:3])[0] if value[0] & 1 else value[1]
                entry = {"frame": rec["index"], "event": rec["event"], "time_us": rec["time"], "l2cap_pdu": it.l2cap.n,
                         "bpm": bpm, "value_hex": value.hex(),
                         "frames": [r["index"] for r in written if r["item"] is it]}
                if it.fragments > 1:  # the frame that completes the L2CAP PDU (where tshark shows it)
                    entry["fragments"] = it.fragments
                    entry["last_fragment_frame"] = next(r["index"] for r in written if r["item"] is not None and
                                                        r["item"].l2cap is it.l2cap and r["item"].fragment == it.fragments)
                hr.append(entry)
        out["hr_notifications"] = {"handle": handle, "count": len(hr), "list": hr}
    # silences on the link longer than 1.5 intervals
    silences = []
    for a, b in zip(written, written[1:]):
        p = params_at(b["event"])
        gap = b["time"] - a["time"]
        if gap > 1.5 * p["interval"] * 1250:
            events = list(range(a["event"] + 1, b["event"]))
            why = []
            if any(e in variant.missed_events for e in events):
                why.append("connection event(s) the central did not transmit in (nothing on air)")
            if gap_state["first_event"] is not None and a["event"] < gap_state["first_event"] <= b["event"]:
                why.append("the sniffer recorded nothing (the link went on)")
            silences.append({"after_frame": a["index"], "before_frame": b["index"], "from_us": a["time"], "to_us": b["time"],
                             "silence_us": gap, "events_between": [events[0], events[-1]] if events else [],
                             "interval_in_force": p["interval"], "timeout_in_force": p["timeout"],
                             "longer_than_timeout_in_force": gap > p["timeout"] * 10_000,
                             "why": "; ".join(why) or "normal event spacing"})
    if silences:
        out["silences"] = silences
    if missed:
        out["missed_events"] = missed
    if gap_state["first_event"] is not None:
        it = gap_state["item"]
        before = [r for r in written if r["event"] < gap_state["first_event"]][-1]
        after = [r for r in written if r["event"] > gap_state["last_event"]][0]
        sends = [r for r in written if r["item"] is it]
        pair = [r for r in sends if r["event"] < gap_state["first_event"]][-1], [r for r in sends if r["event"] > gap_state["last_event"]][0]
        p = params_at(gap_state["first_event"])
        first_anchor = event_anchor[gap_state["first_event"]][0]
        last_anchor = event_anchor[gap_state["last_event"]][0]
        out["sniffer_gap"] = {
            "unrecorded_events": [gap_state["first_event"], gap_state["last_event"]],
            "unrecorded_from_us": first_anchor, "unrecorded_to_us": last_anchor + p["interval"] * 1250,
            "unrecorded_packets": gap_state["unrecorded"],
            "last_frame_before": before["index"], "last_time_before_us": before["time"],
            "first_frame_after": after["index"], "first_time_after_us": after["time"],
            "silence_in_file_us": after["time"] - before["time"],
            "interval_in_force": p["interval"], "timeout_in_force": p["timeout"],
            "retransmission_pair": {"frames": [pair[0]["index"], pair[1]["index"]], "direction":
                                    "central" if it.direction == "C" else "peripheral", "sn": pair[0]["sn"],
                                    "same_sn": pair[0]["sn"] == pair[1]["sn"], "l2cap_pdu": it.l2cap.n,
                                    "payload_hex": it.payload.hex(), "events": [pair[0]["event"], pair[1]["event"]],
                                    "transmissions_in_all": it.transmissions},
            "note": ("the receiver had no room for this PDU (flow control, Vol 6 Part B 4.5.9: NESN not "
                     "incremented) from its first transmission to the end of the gap, so its sender sent it "
                     "again in every event; each event closed after it. The link never stopped: the event "
                     "counter and the channel hop go on through the gap; nothing else (no advertising) was "
                     "on air from these devices; the retransmission after the gap is accepted."),
        }
    flips = [{"frame": r["index"], "true_direction": r["direction"], "flag_says": r["direction_flag"]}
             for r in truth["packets"] if "direction_flag" in r]
    if flips:
        out["direction_flag_wrong"] = flips
    if variant.store_decrypted:
        frames = [r["index"] for r in truth["packets"] if r.get("stored_plaintext")]
        out["stored_decrypted"] = {
            "frames": frames, "count": len(frames),
            "note": ("every packet sent encrypted on air (from both LL_START_ENC_RSPs on; empty PDUs are not "
                     "encrypted) is stored as its plaintext: the 4-byte MIC stripped, the length field that of "
                     "the plaintext, the CRC computed over what is stored (a damaged one damaged as on air); "
                     "no 'decrypted' flag (0x0008) is set. on_air_pdu_hex in 'packets' is what was on air."),
        }
    return out


def encryption_ts(session: HciSession) -> int:
    for item in session.items:
        if item[0] == "encryption_change":
            return item[1]
    return 0


# --------------------------------------------------------------------------------------------
# Framing and truth
# --------------------------------------------------------------------------------------------
def frame_and_truth(session, packets, pdus, linktype, aa, crc_init, hop, sca, win_size, win_offset,
                    timeline, encryption, source_name, seed, retransmit, drop, lost_timeout_us=None, variant=None):
    variant = variant or Variant()
    records = []  # (time µs, frame bytes)
    rows = []
    empty_runs = []
    dropped = []
    frame_of_item = {}
    first_time = [None]

    def add(time_us, channel, signal, packet, crc_ok, is_data, from_central, flag_central=None):
        flags = 0x0001 | 0x0002 | 0x0400 | (0x0800 if crc_ok else 0)
        ref = 0
        if is_data:
            flags |= 0x0010 | ((2 if (from_central if flag_central is None else flag_central) else 3) << 7)
            ref = aa
        if first_time[0] is None:
            first_time[0] = time_us
        if linktype == 256:
            frame = struct.pack("<BbbBIH", air.rf_channel(channel), signal, -95, 0, ref, flags) + packet
        elif linktype == 192:
            frame = ppi_frame(channel, signal, ubertooth_clk100ns(time_us, first_time[0]), packet)
        else:
            frame = packet
        records.append((time_us, frame))
        return len(records)

    # Direction flag wrong on a few encrypted packets (seeded; at least one per side).
    flipped = set()
    if variant.flip_direction:
        pool = [k for k, rec in enumerate(packets) if rec["item"] is not None and rec["item"].counter is not None
                and rec["crc_ok"] and not rec["dropped"] and not rec.get("unrecorded") and not rec["retransmission"]
                and all(packets[j]["crc_ok"] for j in (k - 1, k + 1) if 0 <= j < len(packets))]
        pick = random.Random(f"{seed}:flip:{os.path.basename(source_name)}")
        for side in ("C", "P"):
            flipped.add(pick.choice([k for k in pool if packets[k]["dir"] == side]))
        while len(flipped) < variant.flip_direction:
            flipped.add(pick.choice(pool))

    # advertising
    adv_data = session.adv_data
    name = device_name(session)
    if adv_data is None:
        adv_data = bytes([2, 0x01, 0x06])
        if name:
            adv_data += bytes([len(name) + 1, 0x09]) + name
    adv_payload = session.peer_addr + adv_data
    adv_hdr = bytes([0x00 | (0x40 if session.peer_random else 0), len(adv_payload)])
    adv_pdu = adv_hdr + adv_payload
    adv_packet = struct.pack("<I", ADVERTISING_AA) + adv_pdu + crc24(adv_pdu, 0x555555)
    connect_time = session.connect_ts - 2000
    lldata = (struct.pack("<I", aa) + crc_init.to_bytes(3, "little")
              + struct.pack("<BHHHH", win_size, win_offset, session.interval, session.latency, session.timeout)
              + bytes.fromhex("ffffffff1f") + bytes([(sca << 5) | hop]))
    ci_payload = session.central_addr + session.peer_addr + lldata
    ci_hdr = bytes([0x05 | (0x40 if session.central_random else 0) | (0x80 if session.peer_random else 0), len(ci_payload)])
    ci_pdu = ci_hdr + ci_payload
    ci_packet = struct.pack("<I", ADVERTISING_AA) + ci_pdu + crc24(ci_pdu, 0x555555)
    adv_air = air_time_us(len(adv_pdu))
    adv_times = []
    for ev in (2, 1):
        base = connect_time - ev * 100_000
        for k, ch in enumerate((37, 38, 39)):
            adv_times.append((base + k * 400, ch))
    adv_times.append((connect_time - T_IFS - adv_air, 37))
    for t, ch in adv_times:
        idx = add(t, ch, -58, adv_packet, True, False, False)
        rows.append({"index": idx, "time_us": t, "channel": ch, "direction": "peripheral", "kind": "ADV_IND",
                     "crc_ok": True, "pdu_hex": adv_pdu.hex()})
    idx = add(connect_time, 37, -50, ci_packet, True, False, True)
    rows.append({"index": idx, "time_us": connect_time, "channel": 37, "direction": "central", "kind": "CONNECT_IND",
                 "crc_ok": True, "pdu_hex": ci_pdu.hex()})

    run = None
    nibbles = []
    for k_rec, rec in enumerate(packets):
        it = rec["item"]
        header = rec["header"]
        pdu = header + rec["wire"]
        stored_plain = variant.store_decrypted and it is not None and it.counter is not None
        if stored_plain:
            on_air_pdu = pdu
            pdu = bytes([header[0], len(it.payload)]) + it.payload  # as a decrypting writer stores it
        crc = crc24(pdu, crc_init)
        if not rec["crc_ok"]:
            crc = bytes([crc[0] ^ 0x5A, crc[1] ^ 0x01, crc[2]])
        packet = struct.pack("<I", aa) + pdu + crc
        direction = "central" if rec["dir"] == "C" else "peripheral"
        desc = {"direction": direction, "event": rec["event"], "channel": rec["channel"], "time_us": rec["time"],
                "llid": rec["llid"], "sn": rec["sn"], "nesn": rec["nesn"], "md": rec["md"],
                "length": len(rec["wire"])}
        if it is not None and it.l2cap is not None:
            desc.update({"kind": "data", "l2cap_pdu": it.l2cap.n, "fragment": it.fragment, "fragments": it.fragments})
        elif it is not None:
            desc.update({"kind": "control", "opcode": it.payload[0], "opcode_name": LL_NAMES.get(it.payload[0], "?")})
        else:
            desc["kind"] = "empty"
        if it is not None:
            desc["payload_hex"] = it.payload.hex()
            if it.counter is not None:
                desc["encrypted"] = True
                desc["packet_counter"] = it.counter
        if rec["dropped"]:
            desc["reason"] = "not recorded by the sniffer"
            dropped.append(desc)
            continue
        if rec.get("unrecorded"):
            continue  # in the sniffer's gap (truth 'scenario')
        if stored_plain:
            desc["stored_plaintext"] = True
            desc["stored_length"] = len(it.payload)
            desc["on_air_pdu_hex"] = on_air_pdu.hex()
        flag_central = None
        if k_rec in flipped:
            flag_central = rec["dir"] != "C"
            desc["direction_flag"] = "central" if flag_central else "peripheral"
        idx = add(rec["time"], rec["channel"], -50 if rec["dir"] == "C" else -62, packet, rec["crc_ok"], True,
                  rec["dir"] == "C", flag_central)
        desc["index"] = idx
        rec["index"] = idx
        plain_empty = it is None and rec["crc_ok"] and not rec["retransmission"] and k_rec not in flipped
        if rec["retransmission"]:
            desc["retransmission_of"] = frame_of_item.get(("last", rec["dir"]))
        else:
            frame_of_item[("last", rec["dir"])] = idx
        if it is not None:
            frame_of_item.setdefault(id(it), []).append(idx)
        if not rec["crc_ok"]:
            desc["crc_ok"] = False
        if plain_empty:
            nib = rec["sn"] | (rec["nesn"] << 1) | (rec["md"] << 2) | (8 if rec["dir"] == "C" else 0)
            if run is not None and run["last"] == idx - 1 and rec["event"] <= run["last_event"] + 1:
                run["last"] = idx
                run["last_event"] = rec["event"]
                nibbles.append("%x" % nib)
            else:
                if run is not None:
                    run["headers"] = "".join(nibbles)
                    empty_runs.append(run)
                run = {"first": idx, "last": idx, "first_event": rec["event"], "last_event": rec["event"],
                       "first_time_us": rec["time"]}
                nibbles = ["%x" % nib]
            continue
        desc["pdu_hex"] = pdu.hex()
        rows.append(dict(sorted(desc.items(), key=lambda kv: (kv[0] != "index", kv[0]))))
    if run is not None:
        run["headers"] = "".join(nibbles)
        empty_runs.append(run)

    # Link lost (Disconnection Complete 0x08, no LL_TERMINATE_IND): a real sniffer does not stop
    # at the central's last retransmission. It keeps recording, and the strap, whose link is gone
    # (its own supervision timer ran out, Vol 6 Part B 4.5.2), advertises again as it did before
    # the connection. Without these frames the capture would end with the link and nothing would
    # show that the link outlived its supervision timeout in silence; with them, a reader sees
    # the link silent for longer than its timeout while the capture goes on, which is what tells
    # a link loss on air. First ADV_IND 200 ms after last packet + supervision timeout, then
    # three advertising events on 37/38/39, 100 ms apart (as before the connection).
    readvertising = None
    if lost_timeout_us is not None:
        last_time = records[-1][0]
        start = last_time + lost_timeout_us + 200_000
        first_idx = None
        for ev in range(3):
            for k, ch in enumerate((37, 38, 39)):
                t = start + ev * 100_000 + k * 400
                idx = add(t, ch, -58, adv_packet, True, False, False)
                first_idx = first_idx or idx
                rows.append({"index": idx, "time_us": t, "channel": ch, "direction": "peripheral", "kind": "ADV_IND",
                             "crc_ok": True, "pdu_hex": adv_pdu.hex(), "after_link_loss": True})
        readvertising = {"note": ("link lost without LL_TERMINATE_IND (HCI Disconnection Complete 0x08): the "
                                  "sniffer keeps recording and the strap advertises again; first ADV_IND 200 ms "
                                  "after the last data packet + the supervision timeout"),
                         "last_data_frame": first_idx - 1, "last_data_time_us": last_time,
                         "supervision_timeout_us": lost_timeout_us, "first_frame": first_idx,
                         "first_time_us": start, "frames": len(records) - first_idx + 1}

    # sanity: frames are in time order
    times = [t for t, _ in records]
    assert times == sorted(times), "frames out of time order"

    # per L2CAP PDU
    item_frames = {}
    for rec in packets:
        it = rec["item"]
        if it is not None and it.l2cap is not None:
            item_frames.setdefault((it.l2cap.n, it.fragment), [])
    by_pdu = {}
    for row in rows:
        if row.get("kind") == "data":
            by_pdu.setdefault(row["l2cap_pdu"], {}).setdefault(row["fragment"], []).append(row["index"])
    dropped_by_pdu = {}
    for d in dropped:
        if d.get("kind") == "data":
            dropped_by_pdu.setdefault(d["l2cap_pdu"], []).append(d["fragment"])
    l2cap_rows = []
    for pdu in pdus:
        length, cid = struct.unpack("<HH", pdu.data[:4])
        entry = {"n": pdu.n, "direction": "central" if pdu.direction == "C" else "peripheral", "cid": cid,
                 "length": length, "hci_frames": pdu.hci_frames,
                 "frames": [by_pdu.get(pdu.n, {}).get(k, []) for k in range(1, (len(pdu.data) + 26) // 27 + 1)],
                 "pdu_hex": pdu.data.hex()}
        if pdu.n in dropped_by_pdu:
            entry["dropped_fragments"] = dropped_by_pdu[pdu.n]
        if cid == 4 and len(pdu.data) > 4:
            att = pdu.data[4:]
            entry["att"] = {"opcode": att[0]}
            if att[0] in (0x0A, 0x12, 0x52, 0x1B, 0x1D) and len(att) >= 3:  # handle + value
                entry["att"]["handle"] = struct.unpack("<H", att[1:3])[0]
                entry["att"]["value_hex"] = att[3:].hex()
            elif att[0] in (0x0C, 0x16, 0x17) and len(att) >= 5:  # handle + offset (+ value)
                entry["att"]["handle"] = struct.unpack("<H", att[1:3])[0]
                entry["att"]["offset"] = struct.unpack("<H", att[3:5])[0]
                entry["att"]["value_hex"] = att[5:].hex()
            elif att[0] in (0x04, 0x06, 0x08, 0x10) and len(att) >= 5:  # handle range
                entry["att"]["handle"] = struct.unpack("<H", att[1:3])[0]
                entry["att"]["end_handle"] = struct.unpack("<H", att[3:5])[0]
            elif att[0] == 0x01 and len(att) >= 5:  # Error Response
                entry["att"]["request_opcode"] = att[1]
                entry["att"]["handle"] = struct.unpack("<H", att[2:4])[0]
                entry["att"]["error"] = att[4]
            elif att[0] in (0x02, 0x03) and len(att) >= 3:
                entry["att"]["mtu"] = struct.unpack("<H", att[1:3])[0]
            else:
                entry["att"]["value_hex"] = att[1:].hex()
        l2cap_rows.append(entry)

    stamp = None
    if variant.ubertooth_timestamps:
        stamp = lambda t: ubertooth_stamp(t, variant.clock_offset_us)  # noqa: E731
    content = pcap_bytes(linktype, records, stamp)
    if linktype == 192:
        for row in rows:
            t = row["time_us"]
            row["clk100ns"] = ubertooth_clk100ns(t, first_time[0])
            if stamp is not None:
                row["pcap_ts_sec"], row["pcap_ts_usec"] = stamp(t)
    enc = None
    if encryption:
        enc = {k: v for k, v in encryption.items() if not k.startswith("_")}
        enc["note"] = ("ltk = the key of HCI LE Enable Encryption (for LE legacy pairing the STK), most significant "
                       "octet first; *_le fields little-endian as on air / in HCI")
    truth = {
        "source": source_name,
        "generator": "Scripts/captures/make_sniffed_sessions.py",
        "link_type": linktype,
        "seed": seed,
        "impairments": {"retransmit": retransmit, "drop": drop},
        "advertiser": {"address": ":".join("%02X" % b for b in session.peer_addr[::-1]),
                       "random": session.peer_random, "adv_data_hex": adv_data.hex()},
        "initiator": {"address": ":".join("%02X" % b for b in session.central_addr[::-1]),
                      "random": session.central_random},
        "connection": {"access_address": "0x%08X" % aa, "crc_init": "0x%06X" % crc_init, "hop": hop, "sca": sca,
                       "win_size": win_size, "win_offset": win_offset, "channel_map": "ffffffff1f", "csa": 1,
                       "hci_connection_handle": session.handle, "parameters": timeline},
        "encryption": enc,
        "frames": len(records),
        "packets_note": ("'packets' lists every written frame except plain empty data PDUs (CRC good, not a "
                         "retransmission); those are in 'empty_runs': consecutive frames first..last, events "
                         "first_event..last_event, one hex digit per frame in 'headers': bit 0 SN, bit 1 NESN, "
                         "bit 2 MD, bit 3 set = sent by the central. time_us = Unix µs of the frame's pcap "
                         "timestamp. retransmission_of = the frame of the earlier transmission of that PDU "
                         "(by the same side); it may be an empty run frame."),
        "packets": rows,
        "empty_runs": empty_runs,
        "dropped": dropped,
        "l2cap_pdus": l2cap_rows,
    }
    if readvertising is not None:
        truth["advertising_after_link_loss"] = readvertising
    if linktype == 192:
        truth["timestamps"] = ubertooth_timestamps_truth(records, first_time[0], stamp, variant, timeline, l2cap_rows)
    return content, truth


def ubertooth_timestamps_truth(records, first, stamp, variant, timeline, l2cap_rows) -> dict:
    clocks = [ubertooth_clk100ns(t, first) for t, _ in records]
    assert clocks == sorted(clocks), "clk100ns wrapped"
    out = {"clk100ns": ("the Ubertooth field's clk100ns = %d + (time_us - %d) * 10: the sniffer's own clock, "
                        "100 ns units, monotonic (no wrap in this file); clkn_high 0" % (UBERTOOTH_CLK_START, first)),
           "first_clk100ns": clocks[0], "last_clk100ns": clocks[-1]}
    if stamp is None:
        out["pcap"] = "ts_sec / ts_usec = time_us (correct)"
        return out
    stamps = [stamp(t) for t, _ in records]
    naive = [sec * 1_000_000 + usec for sec, usec in stamps]  # as a reader adding µs to s computes it
    pairing = sorted(f for p in l2cap_rows if p["cid"] == 6 for frag in p["frames"] for f in frag)
    timeout_us = max(p["timeout"] for p in timeline) * 10_000
    back = []
    for n in range(1, len(records)):
        if naive[n] < naive[n - 1]:
            back.append({"frame": n + 1, "previous_frame": n, "pcap_previous": list(stamps[n - 1]),
                         "pcap": list(stamps[n]), "back_by_us": naive[n - 1] - naive[n],
                         "true_step_us": records[n][0] - records[n - 1][0],
                         "in_pairing": bool(pairing) and pairing[0] < n + 1 <= pairing[-1]})
    assert any(b["in_pairing"] and b["back_by_us"] > timeout_us for b in back), "no backward step in the pairing"
    out.update({
        "pcap": ("libbtbb's PPI writer (lell_pcap_append_ppi_packet): ts_sec = ns / 10^9, ts_usec = ns % 10^9 "
                 "with ns = (time_us + clock_offset_us) * 1000, the sniffer host's clock in ns: the microsecond "
                 "field holds nanoseconds. True time of a frame (the HCI log's clock, as time_us everywhere in "
                 "this truth) = ts_sec * 10^6 + ts_usec / 1000 - clock_offset_us, exactly; read as microseconds "
                 "the time runs 1000x fast within each second and falls back at every second boundary."),
        "clock_offset_us": variant.clock_offset_us,
        "records_usec_ge_1e6": sum(1 for _, u in stamps if u >= 1_000_000),
        "records_usec_lt_1e6": sum(1 for _, u in stamps if u < 1_000_000),
        "pairing_frames": [pairing[0], pairing[-1]] if pairing else [],
        "supervision_timeout_us": timeout_us,
        "backward_steps": back,
    })
    return out


def pcap_bytes(linktype: int, records, stamp=None) -> bytes:
    """stamp(t) -> (ts_sec, ts_usec) of a record; default the time itself."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype))
    for t, frame in records:
        sec, usec = divmod(t, 1_000_000) if stamp is None else stamp(t)
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return bytes(out)


UBERTOOTH_CLK_START = 15_000_000  # clk100ns of the first frame: 1.5 s after the sniffer started


def ubertooth_clk100ns(t: int, first: int) -> int:
    """The Ubertooth's own clock in 100 ns units (32 bits) for the frame at t (µs)."""
    return (UBERTOOTH_CLK_START + (t - first) * 10) & 0xFFFFFFFF


def ubertooth_stamp(t: int, offset_us: int) -> tuple[int, int]:
    """libbtbb's PPI writer (lell_pcap_append_ppi_packet): ts_sec = ns / 10^9, ts_usec =
    ns % 10^9 of the host's time in ns, so the microsecond field holds nanoseconds."""
    ns = (t + offset_us) * 1000
    return ns // 1_000_000_000, ns % 1_000_000_000


def ppi_frame(channel: int, signal: int, clk100ns: int, packet: bytes) -> bytes:
    """Link type 192 as the Ubertooth writes it: PPI header (version 0, flags 0, length,
    inner link type; 251 here as make_air_captures.py's air_ppi.pcap), one field of type 30006
    (PPI_BTLE): version 0, frequency in MHz, clkn_high, clk100ns, RSSI max / min / avg (the
    CC2400's register, dBm + 54), count; then the packet (access address .. CRC)."""
    megahertz = 2402 + 2 * air.rf_channel(channel)
    rssi = signal + 54
    field = struct.pack("<HH", 30006, 12) + struct.pack("<BHBIbbbB", 0, megahertz, 0, clk100ns, rssi, rssi - 3, rssi - 1, 8)
    return struct.pack("<BBHI", 0, 0, 8 + len(field), 251) + field + packet


def compact_json(obj) -> str:
    """One list entry per line (keeps diffs readable, files small)."""
    lines = ["{"]
    keys = list(obj)
    for k, key in enumerate(keys):
        value = obj[key]
        comma = "," if k < len(keys) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"  {json.dumps(key)}: [")
            for j, entry in enumerate(value):
                lines.append("    " + json.dumps(entry, separators=(",", ":")) + ("," if j < len(value) - 1 else ""))
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------
def tshark_att(path: str) -> list[tuple[str, str, str]]:
    out = subprocess.run(["tshark", "-r", path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode",
                          "-e", "btatt.handle", "-e", "btatt.value"],
                         capture_output=True, text=True, check=True).stdout
    return [tuple(line.split("\t")) for line in out.splitlines()]


def check_with_tshark(hci_path: str, pcap_path: str) -> str:
    want = tshark_att(hci_path)
    got = tshark_att(pcap_path)
    assert want == got, f"{pcap_path}: {len(got)} ATT PDUs vs {len(want)} in {hci_path}; first difference " + \
        str(next(((i, a, b) for i, (a, b) in enumerate(zip(want, got)) if a != b), None))
    return f"{os.path.basename(pcap_path)}: {len(got)} ATT PDUs equal to {os.path.basename(hci_path)} (tshark)"


def check_truth(content: bytes, truth: dict, linktype: int) -> None:
    """Reads the pcap back: CRCs, headers, decryption of every encrypted frame."""
    offset = 24
    frames = []
    while offset < len(content):
        _s, _u, incl, _o = struct.unpack("<IIII", content[offset:offset + 16])
        frames.append(content[offset + 16:offset + 16 + incl])
        offset += 16 + incl
    assert len(frames) == truth["frames"]
    aa = int(truth["connection"]["access_address"], 16)
    crc_init = int(truth["connection"]["crc_init"], 16)
    enc = truth["encryption"]
    by_index = {row["index"]: row for row in truth["packets"]}
    for n, frame in enumerate(frames, 1):
        packet = frame[10:] if linktype == 256 else frame[24:] if linktype == 192 else frame
        if linktype == 192:
            assert struct.unpack("<BBHIHH", frame[:12]) == (0, 0, 24, 251, 30006, 12), n
        pkt_aa = struct.unpack("<I", packet[:4])[0]
        pdu, crc = packet[4:-3], packet[-3:]
        good = crc == crc24(pdu, 0x555555 if pkt_aa == ADVERTISING_AA else crc_init)
        row = by_index.get(n)
        if row is not None:
            assert good == row.get("crc_ok", True), n
            if "pdu_hex" in row:
                assert pdu.hex() == row["pdu_hex"], n
            if row.get("encrypted"):
                sk, iv = bytes.fromhex(enc["sk_msb_first"]), bytes.fromhex(enc["iv_on_air"])
                on_air = bytes.fromhex(row["on_air_pdu_hex"]) if row.get("stored_plaintext") else pdu
                plain = decrypt_pdu(sk, iv, row["packet_counter"], row["direction"] == "central", on_air[0], on_air[2:])
                assert plain.hex() == row["payload_hex"], n
                if row.get("stored_plaintext"):
                    assert pdu[2:] == plain and pdu[1] == len(plain) and pdu[0] == on_air[0], n
        else:
            assert good and pkt_aa == aa and pdu[1] == 0, n
        if linktype == 256:
            flags = struct.unpack("<H", frame[8:10])[0]
            assert bool(flags & 0x0800) == good and not flags & 0x0008
            if pkt_aa != ADVERTISING_AA:
                says_central = (flags >> 7) & 7 == 2
                central = row["direction_flag" if row and "direction_flag" in row else "direction"] == "central" \
                    if row else None
                assert central is None or says_central == central, n


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
DEFAULT_FILES = [
    # (output name, source, link type, retransmit, drop)
    ("hr_strap_session_sniffed.pcap", "captures/hr_strap_session.btsnoop", 256, 0, False),
    ("hr_strap_session_sniffed_impaired.pcap", "captures/hr_strap_session.btsnoop", 256, 3, True),
    ("hr_strap_session_sniffed_ll.pcap", "captures/hr_strap_session.btsnoop", 251, 0, False),
    # A noisy link: 60 damaged replies (diff's air comparison).
    ("hr_strap_session_sniffed_noisy.pcap", "captures/hr_strap_session.btsnoop", 256, 60, False),
    ("encrypted_hr_session_sniffed.pcap", "captures/encrypted_hr_session.btsnoop", 256, 2, False),
    # A sniffer records every connection event: 60 s at 15 ms is 8000 packets, mostly empty,
    # so these two are kept gzipped (bledissect and tshark read them as they are).
    ("diff_healthy_a_sniffed.pcap.gz", "captures/diff/healthy_a.btsnoop", 256, 0, False),
    ("diff_broken_b_sniffed.pcap.gz", "captures/diff/broken_b.btsnoop", 256, 0, False),
]


# Sample captures of cases readers get wrong, each from the options on its line (the README gives
# the same command per file): python3 Scripts/captures/make_sniffed_sessions.py SOURCE OUT OPTIONS
VARIANT_FILES = [
    # 30 ms -> 1020 ms (timeout 720 ms -> 6 s) after the subscriptions; event 72 missed (2 s silence)
    ("hr_strap_slow_update_sniffed.pcap", "captures/hr_strap_session.btsnoop",
     "--conn-params 24,0,72 --update-after 58:816,0,600 --missed-event 72"),
    # 30 ms / 720 ms throughout; the sniffer misses 100 events (3 s) around a flow-controlled notification
    ("hr_strap_sniffer_gap_sniffed.pcap", "captures/hr_strap_session.btsnoop",
     "--conn-params 24,0,72 --no-updates --sniffer-gap 66:100"),
    # the link of encrypted_hr_session_sniffed.pcap, 3 encrypted packets with the wrong direction flag
    ("encrypted_hr_session_flipped_sniffed.pcap", "captures/encrypted_hr_session.btsnoop",
     "--retransmit 2 --flip-direction 3"),
    # the same link as a decrypting tool stores it
    ("encrypted_hr_session_plaintext_sniffed.pcap", "captures/encrypted_hr_session.btsnoop",
     "--retransmit 2 --store-decrypted"),
    # Ubertooth (PPI, link type 192) with libbtbb's timestamps; a second boundary in the pairing
    ("hr_strap_clock_back_sniffed.pcap", "captures/encrypted_hr_session.btsnoop",
     "--linktype 192 --ubertooth-timestamps --clock-offset=-120000"),
]


def write(source: str, out: str, linktype: int, seed: int, retransmit: int, drop: bool, check: bool,
          variant: Variant | None = None) -> None:
    variant = variant or Variant()
    rel = os.path.relpath(os.path.abspath(source), REPO)
    content, truth = sniff(source, linktype, seed, retransmit, drop, source_name=rel, variant=variant)
    check_truth(content, truth, linktype)
    with open(out, "wb") as f:
        # mtime 0 and no name: the same bytes on every run
        f.write(gzip.compress(content, compresslevel=9, mtime=0) if out.endswith(".gz") else content)
    truth_path = os.path.splitext(out.removesuffix(".gz"))[0] + ".truth.json"
    with open(truth_path, "w") as f:
        f.write(compact_json(truth))
    kinds = {}
    for row in truth["packets"]:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    empties = sum(r["last"] - r["first"] + 1 for r in truth["empty_runs"])
    retrans = sum(1 for r in truth["packets"] if "retransmission_of" in r)
    bad = sum(1 for r in truth["packets"] if r.get("crc_ok") is False)
    print(f"{out}: {truth['frames']} frames, {len(content)} bytes (+ truth {os.path.getsize(truth_path)} bytes); "
          f"{kinds}, plain empty {empties}, retransmissions {retrans}, bad CRC {bad}, dropped {len(truth['dropped'])}")
    if check and variant.describe():
        print("  " + check_variant_with_tshark(source, out, truth))
    elif check and truth["encryption"] is None and not drop and not retransmit:
        print("  " + check_with_tshark(source, out))
    elif check and truth["encryption"] is None:
        # impaired: tshark decodes a retransmitted PDU again and never sees a dropped one
        want, got = tshark_att(source), tshark_att(out)
        lost = sum(1 for p in truth["l2cap_pdus"] if p.get("dropped_fragments") and p["cid"] == 4)
        # (tshark infers a Read Response's handle and value field from the discovery it saw, and a
        # dropped fragment of a discovery response changes that: compare the opcodes only)
        assert {o for o, _h, _v in got} <= {o for o, _h, _v in want} and len(got) >= len(want) - lost, \
            (len(got), len(want), lost)
        print(f"  {os.path.basename(out)}: tshark sees {len(got)} ATT PDUs; {len(want)} in the HCI log, "
              f"{lost} of them hit by a dropped fragment, the rest there (retransmissions decoded again)")


def check_variant_with_tshark(hci_path: str, pcap_path: str, truth: dict) -> str:
    """tshark's ATT list of a Variant's capture against the HCI log's: one entry per written
    first fragment of an ATT PDU that is readable as stored (not encrypted, or stored in the
    clear), in frame order (a retransmission is decoded again), with the HCI entry of its PDU;
    and no malformed packet."""
    want = tshark_att(hci_path)
    att_pdus = [p["n"] for p in truth["l2cap_pdus"] if p["cid"] == 4]
    assert len(att_pdus) == len(want), (len(att_pdus), len(want))
    of_pdu = dict(zip(att_pdus, want))
    expected = []
    for row in sorted(truth["packets"], key=lambda r: r["index"]):
        if row["kind"] == "data" and row["fragment"] == 1 and row["l2cap_pdu"] in of_pdu and \
                (not row.get("encrypted") or row.get("stored_plaintext")):  # (tshark decodes a bad CRC's too)
            expected.append(of_pdu[row["l2cap_pdu"]])
    got = tshark_att(pcap_path)
    assert got == expected, f"{pcap_path}: tshark {len(got)} ATT PDUs, expected {len(expected)}; first difference " + \
        str(next(((i, a, b) for i, (a, b) in enumerate(zip(expected, got)) if a != b), None))
    malformed = subprocess.run(["tshark", "-r", pcap_path, "-Y", "_ws.malformed || _ws.expert.severity >= error"],
                               capture_output=True, text=True, check=True).stdout.strip()
    return (f"{os.path.basename(pcap_path)}: tshark's {len(got)} ATT PDUs are the truth's ({len(want)} in the HCI "
            f"log); malformed / error: {len(malformed.splitlines()) if malformed else 0}")


def variant_options(parser: argparse.ArgumentParser) -> None:
    def triple(text):
        values = tuple(int(v) for v in text.split(","))
        assert len(values) == 3
        return values

    def update(text):
        after, params = text.split(":")
        return (int(after),) + triple(params)

    def pair(text):
        a, b = text.split(":")
        return int(a), int(b)
    g = parser.add_argument_group("variants (all off by default; see Variant)")
    g.add_argument("--conn-params", type=triple, metavar="I,L,T", help="CONNECT_IND interval, latency, timeout")
    g.add_argument("--update-after", type=update, action="append", metavar="N:I,L,T",
                   help="LL_CONNECTION_UPDATE_IND once L2CAP PDU N is through, instead of the log's updates")
    g.add_argument("--no-updates", action="store_true", help="leave out the log's connection updates")
    g.add_argument("--missed-event", type=int, action="append", default=[], metavar="E",
                   help="the central does not transmit in connection event E")
    g.add_argument("--sniffer-gap", type=pair, metavar="N:K",
                   help="L2CAP PDU N refused (flow control) for K events after its first transmission, "
                        "which the sniffer does not record")
    g.add_argument("--flip-direction", type=int, default=0, metavar="N",
                   help="N encrypted packets with the wrong PDU type (direction) flag")
    g.add_argument("--store-decrypted", action="store_true", help="store encrypted packets as their plaintext")
    g.add_argument("--ubertooth-timestamps", action="store_true",
                   help="link type 192: ts_usec = ns %% 10^9 as libbtbb writes it")
    g.add_argument("--clock-offset", type=int, default=0, metavar="US", help="sniffer host clock - the log's (µs)")


def variant_from(args) -> Variant:
    updates = args.update_after if args.update_after else ([] if args.no_updates else None)
    return Variant(conn_params=args.conn_params, updates=updates, missed_events=tuple(args.missed_event),
                   gap=args.sniffer_gap, flip_direction=args.flip_direction, store_decrypted=args.store_decrypted,
                   ubertooth_timestamps=args.ubertooth_timestamps, clock_offset_us=args.clock_offset)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--linktype", type=int, choices=(192, 251, 256), default=256)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retransmit", type=int, default=0)
    parser.add_argument("--drop", action="store_true")
    parser.add_argument("--check", action="store_true", help="cross-check clean unencrypted outputs with tshark")
    parser.add_argument("--out-dir", default=os.path.join(REPO, "captures", "air"))
    variant_options(parser)
    args = parser.parse_args()
    self_check()
    if args.source:
        assert args.out, "give OUT too"
        write(args.source, args.out, args.linktype, args.seed, args.retransmit, args.drop, args.check, variant_from(args))
        return 0
    os.makedirs(args.out_dir, exist_ok=True)
    for name, source, linktype, retransmit, drop in DEFAULT_FILES:
        write(os.path.join(REPO, source), os.path.join(args.out_dir, name), linktype, args.seed, retransmit, drop, args.check)
    for name, source, options in VARIANT_FILES:
        sub = parser.parse_args([source, name] + options.split() + (["--check"] if args.check else [])
                                + ["--seed", str(args.seed)])
        write(os.path.join(REPO, source), os.path.join(args.out_dir, name), sub.linktype, sub.seed, sub.retransmit,
              sub.drop, sub.check, variant_from(sub))
    return 0


if __name__ == "__main__":
    sys.exit(main())
