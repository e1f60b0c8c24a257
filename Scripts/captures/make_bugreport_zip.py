#!/usr/bin/env python3
"""Writes a small Android-bugreport-like zip around snoop logs, with Python's zipfile (an
independent zip writer for the tests of ZipArchive; capture-formats.md §5.1).

    make_bugreport_zip.py [--method stored|deflated] [--stream] --log FILE [--last FILE] [--text FILE] OUT.zip

The archive holds version.txt, the directory FS/data/misc/bluetooth/logs/, FILE as
btsnoop_hci.log in it (and --last as btsnoop_hci.log.last, written first), and --text as the
main bugreport-*.txt. --stream writes through an unseekable stream, so zipfile puts the sizes and
CRC in data descriptors after each entry (flag bit 3) and only the central directory has them
before the data.
"""
import argparse
import io
import zipfile


class Unseekable(io.RawIOBase):
    """A write-only stream without tell/seek: zipfile then writes data descriptors."""

    def __init__(self, sink):
        self.sink = sink

    def writable(self):
        return True

    def write(self, data):
        self.sink.write(data)
        return len(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", choices=["stored", "deflated"], default="deflated")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--log", required=True)
    parser.add_argument("--last")
    parser.add_argument("--text")
    parser.add_argument("out")
    args = parser.parse_args()
    method = zipfile.ZIP_STORED if args.method == "stored" else zipfile.ZIP_DEFLATED
    logs = "FS/data/misc/bluetooth/logs/"
    with open(args.out, "wb") as sink:
        target = Unseekable(sink) if args.stream else sink
        with zipfile.ZipFile(target, "w", compression=method) as archive:
            archive.writestr("version.txt", "2.0")
            archive.writestr(zipfile.ZipInfo(logs), b"")
            if args.last:
                archive.write(args.last, logs + "btsnoop_hci.log.last")
            archive.write(args.log, logs + "btsnoop_hci.log")
            if args.text:
                archive.write(args.text, "bugreport-synthetic-2026-11-30-06-30-00.txt")


if __name__ == "__main__":
    main()
