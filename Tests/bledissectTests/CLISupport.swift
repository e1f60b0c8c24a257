import Foundation
import Testing
import BLERender
import BLETestSupport
@testable import bledissect

func capturePath(_ name: String) -> String { repositoryRoot.appendingPathComponent("captures/\(name)").path }

/// `../shared/corpus` beside the repository, when present (it is not in a fresh clone).
let corpusRoot = sharedCorpusRoot

struct CLIResult {
  var status: Int32
  var stdout: String
  var stderr: String
  /// The bytes written, before decoding as UTF-8 (which would hide invalid sequences).
  var stdoutBytes: [UInt8] = []
  var stderrBytes: [UInt8] = []
}

/// Runs the command line in-process with captured output.
func runCLI(_ arguments: [String], environment: [String: String] = [:], terminal: Bool = false, columns: Int? = nil) -> CLIResult {
  runCLI(words: arguments.map { Argument($0) }, environment: environment, terminal: terminal, columns: columns)
}

/// Runs the command line in-process with words given as bytes (file names need not be UTF-8).
func runCLI(words: [Argument], environment: [String: String] = [:], terminal: Bool = false, columns: Int? = nil) -> CLIResult {
  let context = CLIContext(
    stdout: OutputBuffer(fd: nil), stderr: OutputBuffer(fd: nil), environment: environment, stdoutIsTerminal: terminal, terminalColumns: columns)
  let status = BLEDissectCLI.run(arguments: words, context)
  return CLIResult(
    status: status, stdout: context.stdout.text, stderr: context.stderr.text, stdoutBytes: context.stdout.bytes, stderrBytes: context.stderr.bytes)
}

/// The built `bledissect` binary, next to the test bundle.
func binaryPath() -> String? {
  var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
  for _ in 0..<4 {
    let candidate = directory.appendingPathComponent("bledissect")
    if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
    directory = directory.deletingLastPathComponent()
  }
  let fallback = repositoryRoot.appendingPathComponent(".build/debug/bledissect").path
  return FileManager.default.isExecutableFile(atPath: fallback) ? fallback : nil
}

func temporaryFile(_ bytes: [UInt8]) -> String {
  let path = NSTemporaryDirectory() + "bledissect-cli-\(UUID().uuidString)"
  _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
  return path
}

/// The environment for programs the tests start: the binary's GATT cache goes to a directory
/// of this test run, so tests neither read nor fill the user's cache.
let hermeticEnvironment: [String: String] = {
  var environment = ProcessInfo.processInfo.environment
  environment["XDG_CACHE_HOME"] = NSTemporaryDirectory() + "bledissect-tests-cache-\(getpid())"
  return environment
}()

/// Runs a program in the hermetic environment, returning its exit status and standard output.
func runProgram(_ path: String, _ arguments: [String]) throws -> (Int32, Data) {
  try runTool(path, arguments, environment: hermeticEnvironment)
}

/// The real binary started with pipes for standard input and output (standard error is
/// discarded): for tests that feed it bytes as a writer would.
func launchReadingStandardInput(_ binary: String, _ arguments: [String]) throws -> (process: Process, input: Pipe, output: Pipe) {
  let process = Process()
  process.environment = hermeticEnvironment
  process.executableURL = URL(fileURLWithPath: binary)
  process.arguments = arguments
  let input = Pipe()
  let output = Pipe()
  process.standardInput = input
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  try process.run()
  return (process, input, output)
}

/// How the real binary ends when the reader of its output leaves after `bytes` bytes (`| head -c`).
struct ClosedPipeResult {
  var bytesRead: Int
  var reason: Process.TerminationReason
  var status: Int32
  var stderr: String
}

func runWithOutputClosedEarly(_ binary: String, _ arguments: [String], after bytes: Int) throws -> ClosedPipeResult {
  let process = Process()
  process.environment = hermeticEnvironment
  process.executableURL = URL(fileURLWithPath: binary)
  process.arguments = arguments
  let output = Pipe()
  let errors = Pipe()
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  let read = output.fileHandleForReading.readData(ofLength: bytes).count
  try output.fileHandleForReading.close()
  let stderrText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  return ClosedPipeResult(bytesRead: read, reason: process.terminationReason, status: process.terminationStatus, stderr: stderrText)
}
