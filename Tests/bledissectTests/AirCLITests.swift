import Foundation
import Testing

@testable import bledissect

/// Air captures on the command line: one line per packet, the empty PDUs that keep a connection
/// alive left out and counted unless asked for.
@Suite struct AirCLITests {
  @Test func oneLineOutputLeavesOutEmptyPDUsAndSaysHowMany() {
    let path = capturePath("air_ll_phdr.pcapng")
    let short = runCLI(["-1", path])
    #expect(short.status == 0)
    let lines = short.stdout.split(separator: "\n")
    // 16 packets, 7 of them empty PDUs (captures/README.md); #14, one of those, arrived with a
    // wrong CRC, so it is shown as such, not as an empty PDU.
    #expect(lines.count == 10)
    #expect(lines.contains { $0.hasPrefix("#14 ") && $0.contains("CRC error: data PDU, 0 bytes, not decoded") })
    #expect(!lines.contains { $0.contains("Empty PDU") })
    #expect(lines.contains { $0.contains("CONNECT_IND") } && lines.contains { $0.contains("LL_TERMINATE_IND") })
    #expect(short.stderr.contains(": 6 empty link-layer PDUs not shown (--empty shows them)"))
    let all = runCLI(["-1", "--empty", path])
    #expect(all.stdout.split(separator: "\n").count == 16)
    #expect(all.stdout.split(separator: "\n").filter { $0.contains("Empty PDU") }.count == 6)
    #expect(!all.stderr.contains("not shown"))
    // Full output and JSON show every packet.
    #expect(runCLI(["--json", path]).stdout.split(separator: "\n").count == 16)
  }
}

/// Keys on the command line: `--ltk`, `--keys`, `--keys-from`, and what a bad one says.
@Suite struct AirKeyOptionTests {
  static let sniffed = capturePath("air/encrypted_hr_session_sniffed.pcap")
  /// The STK of the session's Just Works pairing (LE Enable Encryption #41 of the HCI capture).
  static let key = "CE6093D700DA36128D5F4441D115D03D"

  @Test func aKeyGivenDecryptsAndEachPacketNamesIt() {
    let result = runCLI(["--json", Self.sniffed, "--ltk", Self.key + "@D0:B1:ED:00:48:52"])
    #expect(result.status == 0)
    let decrypted = result.stdout.split(separator: "\n").filter { $0.contains(#""key":"--ltk""#) }
    #expect(decrypted.count >= 50)
    // Outputs that do not show frames name the key on stderr.
    let rows = runCLI(["hr", "--no-cache", Self.sniffed, "--ltk", Self.key])
    #expect(rows.status == 0 && rows.stdout.split(separator: "\n").count == 7)
    #expect(rows.stderr.contains(": 59 packets decrypted with --ltk"))
    // A key for another device is not tried: the pairing's own STK opens the link instead.
    let other = runCLI(["--json", Self.sniffed, "--ltk", Self.key + "@11:22:33:44:55:66"])
    #expect(!other.stdout.contains(#""key":"--ltk""#) && other.stdout.contains(#""key":"the STK worked out from the pairing"#))
  }

  @Test func keysFileAndHCICapture() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bledissect-keys-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("keys.txt")
    try "# the strap\n\(Self.key.lowercased()) D0:B1:ED:00:48:52\n".write(to: file, atomically: true, encoding: .utf8)
    let fromFile = runCLI(["-1", Self.sniffed, "--keys", file.path])
    #expect(fromFile.status == 0 && fromFile.stdout.contains("Read Response 0x0018: 87 % — Battery Level"))
    let full = runCLI([Self.sniffed, "--keys", file.path])
    #expect(full.stdout.contains("Decrypted with: \(file.path) line 2"))
    let fromCapture = runCLI([Self.sniffed, "--keys-from", capturePath("encrypted_hr_session.btsnoop")])
    #expect(fromCapture.stdout.contains("Decrypted with: \(capturePath("encrypted_hr_session.btsnoop")) frame 41 (LE Enable Encryption)"))
  }

  @Test func badKeysAreOneLineErrors() throws {
    let short = runCLI([Self.sniffed, "--ltk", "1234"])
    // A usage error: one line saying what is wrong, then where the help is.
    #expect(short.status == 64 && short.stderr.split(separator: "\n").first?.contains("--ltk needs 32 hex digits") == true)
    let missing = runCLI([Self.sniffed, "--keys", "/nonexistent/keys.txt"])
    #expect(missing.status == 64 && missing.stderr.contains("cannot open the keys file"))
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bledissect-badkeys-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("keys.txt")
    try "\(Self.key)\nnot a key\n".write(to: file, atomically: true, encoding: .utf8)
    let bad = runCLI([Self.sniffed, "--keys", file.path])
    #expect(bad.status == 64 && bad.stderr.contains("line 2: not a key"))
    // A capture with no key in it.
    let none = runCLI([Self.sniffed, "--keys-from", capturePath("hr_strap_session.btsnoop")])
    #expect(none.status == 64 && none.stderr.contains("shows no long-term key"))
  }
}

/// A sniffer's pcap stream piped into `live -`: decoded as it comes, decrypted with the key its
/// own pairing gives away.
@Suite struct AirLiveTests {
  @Test func aSniffersStreamOnStandardInput() throws {
    let binary = try #require(binaryPath())
    let process = Process()
    process.environment = hermeticEnvironment
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["live", "-1", "--no-cache", "-"]
    let (input, output, errors) = (Pipe(), Pipe(), Pipe())
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(try Data(contentsOf: URL(fileURLWithPath: capturePath("air/encrypted_hr_session_sniffed.pcap"))))
    try input.fileHandleForWriting.close()
    let shown = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(shown.contains("Notify 0x0010: ") && shown.contains(" — Heart Rate Measurement"))
    #expect(said.contains("59 packets decrypted with the STK worked out from the pairing"), "\(said)")
    #expect(said.contains("live: 878 frames"), "\(said)")
  }
}
