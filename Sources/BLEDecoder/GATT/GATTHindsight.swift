import BLECore

/// A value explained in hindsight: a guess made in frame `decidedIn` from a run of values
/// explains the value of `handle` in the earlier frame `frame`, which was dissected before the
/// guess and is labelled if the stream still holds it.
public struct HindsightLabel: Sendable {
  public var frame: Int
  public var handle: UInt16
  public var decidedIn: Int
  var meaning: ResolvedHandle
  var decoder: Int?
}

/// Guesses are made after a run of values (three heart-rate values, two battery levels); the
/// values of the run came first. A stream that holds frames back (files) asks which of them
/// wait for a guess, takes the labels once a guess is made, and applies them to the frames it
/// still holds, so a capture's first values are labelled like the rest.
extension GATTState {
  /// Notes a database whose guesses wait or were just made (after an ATT PDU).
  mutating func collectHindsight(_ slot: Int, decidedIn frame: Int, registry: DecoderRegistry) {
    if table.databases[slot].guesses.pendingCount > 0 {
      undecidedSlots.insert(slot)
      updateHoldsBack()
    }
    guard !table.databases[slot].guesses.settled.isEmpty else { return }
    let settled = table.databases[slot].guesses.settled
    table.databases[slot].guesses.settled.removeAll()
    guard labelsInHindsight else { return }
    for (earlier, handle) in settled {
      guard let meaning = table.databases[slot].guesses.meaning(forHandle: handle) else { continue }
      hindsight.append(HindsightLabel(
        frame: earlier, handle: handle, decidedIn: frame, meaning: meaning, decoder: GATTDatabase.decoderIndex(for: meaning, registry: registry)))
    }
  }

  /// The oldest frame whose value waits for a guess (nil: none waits).
  package mutating func oldestUndecidedFrame() -> Int? {
    guard labelsInHindsight, !undecidedSlots.isEmpty else { return nil }
    var oldest: Int?
    for slot in undecidedSlots {
      if let frame = table.databases[slot].guesses.oldestPendingFrame {
        oldest = min(oldest ?? frame, frame)
      } else {
        undecidedSlots.remove(slot)
      }
    }
    updateHoldsBack()
    return oldest
  }

  /// Values of frames up to `frame` no longer wait: the stream let those frames go.
  package mutating func abandonUndecided(through frame: Int) {
    for slot in undecidedSlots { table.databases[slot].guesses.abandonPending(through: frame) }
  }

  /// Keeps `holdsBack` true while a value waits for a guess or labels wait to be taken.
  mutating func updateHoldsBack() {
    holdsBack = labelsInHindsight && !(undecidedSlots.isEmpty && hindsight.isEmpty)
  }

  /// The labels of guesses made since the last call, in the order they were made.
  package mutating func takeHindsight() -> [HindsightLabel] {
    guard !hindsight.isEmpty else { return [] }
    defer {
      hindsight.removeAll(keepingCapacity: true)
      updateHoldsBack()
    }
    return hindsight
  }

  /// Labels the value of `label.handle` in `frame` (frame `label.frame`, not yet handed to a
  /// consumer): its meaning, its GATT fields and its decoded value, with a note.
  package func applyHindsight(_ label: HindsightLabel, to frame: inout DissectedFrame, registry: DecoderRegistry) {
    guard frame.number == label.frame,
      let index = frame.attributes.firstIndex(where: { $0.handle == label.handle && $0.meaning == nil }),
      let raw = frame.attributes[index].rawValue
    else { return }
    frame.attributes[index].meaning = label.meaning
    frame.attributes[index].decoderIndex = label.decoder
    frame.deepestLayer = .gatt
    if var trailing = frame.trailing, trailing.index == index {
      // The value stage has not run: it decodes the value and writes the groups.
      trailing.decoder = label.decoder
      frame.trailing = trailing
    } else {
      ValueStage.complete(index, decoder: label.decoder, raw: raw, &frame, registry)
    }
    frame.diagnostics.append(Diagnostic(.gattLabelledInHindsight, "labelled in hindsight: this value and those up to frame \(label.decidedIn) made the guess"))
  }
}

extension HandleGuesses {
  /// The meaning guessed for `handle`, if any.
  func meaning(forHandle handle: UInt16) -> ResolvedHandle? {
    observations.firstIndex { $0.handle == handle }.flatMap(meaning(of:))
  }
}
