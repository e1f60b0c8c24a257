// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "bledissect",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "bledissect", targets: ["bledissect"]),
    // The types every other library's API uses (records, addresses, `RecordSource`).
    .library(name: "BLECore", targets: ["BLECore"]),
    .library(name: "BLEDecoder", targets: ["BLEDecoder"]),
    .library(name: "BLECapture", targets: ["BLECapture"]),
    .library(name: "BLEEngine", targets: ["BLEEngine"]),
  ],
  targets: [
    // libpcap through pkg-config; reads pcap and pcapng (also from pipes).
    .systemLibrary(
      name: "CPcap",
      pkgConfig: "libpcap",
      providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]
    ),
    // zlib: gzip input, Android bugreports (btsnooz, zip entries). Has no pkg-config file on macOS,
    // where the SDK's libz is found without it.
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    // Byte reader, errors, the normalized capture record, field lists. No Foundation.
    .target(name: "BLECore"),
    // File formats: detection, readers and writers (capture I/O; the CLI writes caches and side files).
    .target(name: "BLECapture", dependencies: ["BLECore", "CPcap", "CZlib"]),
    // Protocol decoders: pure, no I/O, never print.
    .target(name: "BLEDecoder", dependencies: ["BLECore"]),
    // The engine every command runs on: FrameStream (read, dissect, hand frames to a consumer).
    // Reads any `RecordSource` (BLECore): capture readers are one kind, so no capture format here.
    .target(name: "BLEEngine", dependencies: ["BLECore", "BLEDecoder"]),
    // Analyses over decoded frames (summary, diff, heart-rate series), statistics, plots.
    .target(name: "BLEAnalysis", dependencies: ["BLECore", "BLEDecoder", "BLEEngine"]),
    // Every output: frame renderers (text, JSON Lines), the report writers of each analysis
    // (summary, gatt, hr, diff, info), the one escaper's users and the buffered output writer.
    .target(name: "BLERender", dependencies: ["BLECore", "BLEDecoder", "BLEEngine", "BLEAnalysis"]),
    .executableTarget(name: "bledissect", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine", "BLERender", "BLEAnalysis"]),
    // What each fuzz target runs on one input: built with libFuzzer by Scripts/fuzz (Fuzz/), and
    // replayed over the saved crashes by the tests.
    .target(name: "BLEFuzzTargets", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLERender", "BLEEngine", "BLEAnalysis"]),
    // A library example through the public API only: a capture's heart-rate values, one line
    // each (`swift run HeartRateList FILE`). The tests build and run it (ExampleTests).
    .executableTarget(name: "HeartRateList", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine"], path: "Examples/HeartRateList"),
    // Shared by the tests only: seeded random numbers, hex literals.
    .target(name: "BLETestSupport", dependencies: ["BLECore"]),

    .testTarget(name: "BLECoreTests", dependencies: ["BLECore", "BLETestSupport"]),
    .testTarget(name: "BLECaptureTests", dependencies: ["BLECore", "BLECapture", "BLETestSupport"]),
    .testTarget(name: "BLEDecoderTests", dependencies: ["BLECore", "BLEDecoder", "BLERender", "BLETestSupport"]),
    .testTarget(name: "BLEEngineTests", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine", "BLERender", "BLETestSupport"]),
    .testTarget(name: "BLEAnalysisTests", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine", "BLEAnalysis", "BLETestSupport"]),
    .testTarget(
      name: "BLERenderTests", dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEAnalysis", "BLERender", "BLETestSupport"], exclude: ["Snapshots"]),
    .testTarget(
      name: "bledissectTests",
      dependencies: ["BLECore", "BLECapture", "BLEDecoder", "BLEEngine", "BLERender", "BLEAnalysis", "BLEFuzzTargets", "BLETestSupport", "bledissect", "HeartRateList"]),
  ],
  swiftLanguageModes: [.v6]
)
