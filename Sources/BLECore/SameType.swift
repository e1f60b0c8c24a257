/// `value` as a `Target` when `Source` and `Target` are one type; nil otherwise. For values
/// opened from an existential (`AttributeFact.value(as:)`): comparing the types costs a
/// comparison, where a dynamic cast (`as?`) cost 2% of the instructions of `bledissect hr`.
@inlinable @inline(__always) public func sameType<Source, Target>(_ value: Source, as target: Target.Type) -> Target? {
  guard Source.self == Target.self else { return nil }
  // Safety: the two types were just found to be one, so the value's bits are a Target's.
  return unsafeBitCast(value, to: Target.self)
}
