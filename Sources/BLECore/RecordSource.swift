/// Where a frame stream's records come from: a capture reader (BLECapture) or any other source
/// of normalized records (a link-layer sniffer, say). The engine reads through this protocol
/// only, so neither it nor its consumers depend on capture formats.
public protocol RecordSource: AnyObject {
  /// Reads the next record into `record`, reusing its byte buffer; false at the clean end.
  /// Called once per record: implementations neither allocate nor box beyond the record.
  /// - Throws: `SourceFailure` when the rest of the source cannot be read.
  func nextRecord(into record: inout CaptureRecord) throws(SourceFailure) -> Bool
  /// Places where damage was skipped so far; 0 for sources that stop at damage. A record
  /// read after a skip says so (`CaptureRecord.followsDamage`); `damage` has the details.
  var damagePlaces: Int { get }
  /// The damage skipped so far.
  var damage: DamageTally { get }
  /// Whether reading may wait for a writer (a pipe, standard input), not for a regular file.
  var mayWaitForInput: Bool { get }
  /// Whether `nextRecord` can return (a record, the end or a failure) without waiting for a
  /// writer; never waits. Callers use it to show what they have before a read that would wait.
  func nextIsReady() -> Bool
}

extension RecordSource {
  public var damagePlaces: Int { 0 }
  public var damage: DamageTally { DamageTally() }
  public var mayWaitForInput: Bool { false }
  public func nextIsReady() -> Bool { true }
}

/// Why a record source stopped before its clean end, whatever the source: what a frame stream
/// tells its caller and consumers. The records before it were handed over.
public struct SourceFailure: Error, Sendable {
  /// One line for the user.
  public var message: String
  /// The exit status it means: 1 when the source was readable up to the failure (damage
  /// part-way), 2 when it could not be read.
  public var exitStatus: Int32
  /// The source's own error (a `CaptureError` from a capture reader), for callers that know
  /// the source and want more than the message.
  public var cause: any Error & Sendable

  public init(message: String, exitStatus: Int32, cause: any Error & Sendable) {
    self.message = message
    self.exitStatus = exitStatus
    self.cause = cause
  }
}

/// Damaged bytes a resynchronizing source skipped: where they start, how many, and why.
public struct SkippedDamage: Sendable, Equatable {
  /// The number the record after the damage gets (the damaged bytes are no frame).
  public var frame: Int
  /// File offset of the first damaged byte (the header that could not be right).
  public var offset: Int64
  public var byteCount: Int
  public var reason: String

  public init(frame: Int, offset: Int64, byteCount: Int, reason: String) {
    self.frame = frame
    self.offset = offset
    self.byteCount = byteCount
    self.reason = reason
  }

  /// One line for the user, in the words of a capture reader's damage error.
  public var message: String {
    "damaged capture at frame \(frame) (byte offset \(offset)): \(reason); skipped \(byteCount) byte\(byteCount == 1 ? "" : "s"), reading on at byte offset \(offset &+ Int64(byteCount))"
  }
}

/// What a resynchronizing source has skipped so far.
public struct DamageTally: Sendable, Equatable {
  /// Places where bytes were skipped.
  public package(set) var places = 0
  public package(set) var bytes: Int64 = 0
  public package(set) var last: SkippedDamage?

  public init() {}

  package mutating func add(_ skip: SkippedDamage) {
    places &+= 1
    bytes &+= Int64(skip.byteCount)
    last = skip
  }
}
