import BLECore

/// Meanings guessed from values, for handles that no table explains (a capture without
/// discovery and without a map). Only what values show beyond reasonable doubt is guessed:
///
/// - Heart Rate Measurement: notifications (or reads) that parse exactly as one, with reserved
///   flags clear, 25–250 bpm and RR intervals of 200–2500 ms, arriving 0.2–5 s apart: guessed
///   after three such values in a row.
/// - Battery Level: one-byte values 0–100 that never rise, read, or notified at least 10 s
///   apart: guessed at the second.
/// - Client Characteristic Configuration: a write of 00 00, 01 00, 02 00 or 03 00 (of the
///   characteristic whose value is the handle before, when that one is known or guessed).
///
/// Confidence is the share of the handle's values that fit the guess. Guesses never override a
/// table (the caller asks only for handles no table knows), and the table is bounded.
///
/// The values of a run that made a guess came before it: their frames are kept (at most two
/// per handle) until the guess is made, then listed in `settled`, so that a stream that still
/// holds those frames can label them in hindsight.
struct HandleGuesses: Sendable {
  static let maximumHandles = 256
  /// Plausible heart-rate values in a row, at a plausible rate, before the guess.
  static let heartRateRun = 3

  enum Guess: Sendable, Equatable {
    case heartRateMeasurement, batteryLevel, clientCharacteristicConfiguration
  }

  struct Observation: Sendable {
    var handle: UInt16
    var guess: Guess?
    /// Values seen (of the kind the guess is about) and how many fit it.
    var seen: UInt32 = 0
    var fits: UInt32 = 0
    var heartRateRun = 0
    var lastTime: Int64?
    var lastPercent: UInt8?
    var batteryFits = 0
    /// Frames whose values count toward a guess not yet made (the current run's).
    var pendingFrames: [Int] = []
  }

  var observations: [Observation] = []
  /// Values waiting for a guess, over all handles.
  private(set) var pendingCount = 0
  /// Frames labelled by a guess made since the list was last taken: the frame, the handle.
  var settled: [(frame: Int, handle: UInt16)] = []

  /// Takes in a value of `handle` (in frame `frame`); returns its meaning once guessed.
  mutating func observe(_ handle: UInt16, value: ByteView, operation: GATTOperation, time: Int64, frame: Int = 0) -> ResolvedHandle? {
    let index: Int
    if let found = observations.firstIndex(where: { $0.handle == handle }) {
      index = found
    } else {
      guard observations.count < Self.maximumHandles else { return nil }
      observations.append(Observation(handle: handle))
      index = observations.count - 1
    }
    switch operation {
    case .write, .writeWithoutResponse:
      observeWrite(index, value)
    case .notification, .indication, .read:
      observeValue(index, value, pushed: operation != .read, time: time, frame: frame)
    }
    return meaning(of: index)
  }

  /// The oldest frame whose value waits for a guess.
  var oldestPendingFrame: Int? {
    guard pendingCount > 0 else { return nil }
    return observations.lazy.compactMap(\.pendingFrames.first).min()
  }

  /// Forgets the waiting values of frames up to `frame` (they can no longer be labelled).
  mutating func abandonPending(through frame: Int) {
    guard pendingCount > 0 else { return }
    for index in observations.indices where !observations[index].pendingFrames.isEmpty {
      let before = observations[index].pendingFrames.count
      observations[index].pendingFrames.removeAll { $0 <= frame }
      pendingCount -= before - observations[index].pendingFrames.count
    }
  }

  /// Sets the frames waiting on a handle (a run starts, grows or ends).
  mutating func setPending(_ index: Int, _ frames: [Int]) {
    pendingCount += frames.count - observations[index].pendingFrames.count
    observations[index].pendingFrames = frames
  }

  /// A guess was made: the frames that waited for it are settled.
  mutating func settle(_ index: Int) {
    for frame in observations[index].pendingFrames { settled.append((frame, observations[index].handle)) }
    setPending(index, [])
  }

  mutating func observeWrite(_ index: Int, _ value: ByteView) {
    let isConfiguration = value.count == 2 && value[value.startIndex + 1] == 0 && value[value.startIndex] <= 3
    if observations[index].guess == nil && isConfiguration {
      observations[index].guess = .clientCharacteristicConfiguration
    }
    guard observations[index].guess == .clientCharacteristicConfiguration else { return }
    observations[index].seen = observations[index].seen.saturatingAdd(1)
    if isConfiguration { observations[index].fits = observations[index].fits.saturatingAdd(1) }
  }

  mutating func observeValue(_ index: Int, _ value: ByteView, pushed: Bool, time: Int64, frame: Int) {
    var pending = observations[index].pendingFrames
    var guessed = false
    var observation = observations[index]
    defer {
      observations[index] = observation
      // Values before the guess wait for it; the guess settles them; a broken run frees them.
      if guessed { settle(index) } else if observation.guess == nil { setPending(index, pending) }
    }
    let interval = observation.lastTime.map { Timestamp.elapsed(from: $0, to: time) }
    observation.lastTime = time
    let heartRate = Self.isPlausibleHeartRate(value)
    let percent: UInt8? = value.count == 1 && value[value.startIndex] <= 100 ? value[value.startIndex] : nil
    switch observation.guess {
    case .heartRateMeasurement?:
      observation.seen = observation.seen.saturatingAdd(1)
      if heartRate { observation.fits = observation.fits.saturatingAdd(1) }
      return
    case .batteryLevel?:
      observation.seen = observation.seen.saturatingAdd(1)
      if percent != nil { observation.fits = observation.fits.saturatingAdd(1) }
      return
    case .clientCharacteristicConfiguration?:
      return
    case nil:
      break
    }
    observation.seen = observation.seen.saturatingAdd(1)
    // Heart rate: a run of plausible values at a plausible rate.
    if heartRate && pushed {
      let steady = interval.map { (200_000...5_000_000).contains($0) } ?? true
      observation.heartRateRun = steady ? observation.heartRateRun + 1 : 1
      if observation.heartRateRun >= Self.heartRateRun {
        observation.guess = .heartRateMeasurement
        observation.fits = UInt32(observation.heartRateRun)
        guessed = true
        return
      }
      // The run so far (at most two values before the guess).
      pending = steady ? Array((pending + [frame]).suffix(Self.heartRateRun - 1)) : [frame]
      return
    } else {
      observation.heartRateRun = 0
      pending = []
    }
    // Battery: one byte, never rising, seldom.
    if let percent {
      let seldom = !pushed || (interval ?? Int64.max) >= 10_000_000
      if let last = observation.lastPercent, percent <= last, seldom {
        observation.batteryFits += 1
      } else if observation.lastPercent != nil {
        observation.batteryFits = 0
      }
      observation.lastPercent = percent
      if observation.batteryFits >= 1 {
        observation.guess = .batteryLevel
        observation.fits = UInt32(observation.batteryFits + 1)
        observation.seen = max(observation.seen, observation.fits)
        guessed = true
      } else {
        // The first value of a possible run.
        pending = [frame]
      }
    }
  }

  static func isPlausibleHeartRate(_ value: ByteView) -> Bool {
    var reader = ByteReader(value, layer: .profile)
    guard let measurement = try? HeartRateMeasurement(parsing: &reader), reader.isAtEnd,
      measurement.flags & 0xE0 == 0, (25...250).contains(measurement.bpm)
    else { return false }
    return measurement.rrIntervals.allSatisfy { (205...2560).contains($0) }  // 200–2500 ms in 1/1024 s
  }

  func meaning(of index: Int) -> ResolvedHandle? {
    let observation = observations[index]
    guard let guess = observation.guess else { return nil }
    let confidence = UInt8(min(100, UInt64(observation.fits) * 100 / UInt64(max(observation.seen, 1))))
    switch guess {
    case .heartRateMeasurement:
      return Self.valueMeaning(BluetoothUUID(uuid16: 0x2A37), confidence: confidence)
    case .batteryLevel:
      return Self.valueMeaning(BluetoothUUID(uuid16: 0x2A19), confidence: confidence)
    case .clientCharacteristicConfiguration:
      // The characteristic before it, when that one is guessed too.
      let owner = observations.first { $0.handle == observation.handle &- 1 && $0.guess != nil && $0.guess != .clientCharacteristicConfiguration }
      let characteristic = owner.flatMap { owner -> BluetoothUUID? in
        owner.guess == .heartRateMeasurement ? BluetoothUUID(uuid16: 0x2A37) : BluetoothUUID(uuid16: 0x2A19)
      }
      let descriptor = BluetoothUUID(uuid16: 0x2902)
      return ResolvedHandle(
        role: .descriptor, service: nil, characteristic: characteristic, descriptor: descriptor, name: GATTDatabase.name(descriptor),
        characteristicName: characteristic.flatMap(GATTDatabase.name), source: .inferred, confidence: confidence)
    }
  }

  static func valueMeaning(_ uuid: BluetoothUUID, confidence: UInt8) -> ResolvedHandle {
    let name = GATTDatabase.name(uuid)
    return ResolvedHandle(
      role: .characteristicValue, service: nil, characteristic: uuid, descriptor: nil, name: name, characteristicName: name,
      source: .inferred, confidence: confidence)
  }
}
