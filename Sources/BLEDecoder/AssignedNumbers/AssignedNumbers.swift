/// Bluetooth assigned numbers: names for HCI, L2CAP, ATT and GAP codes, company
/// identifiers, appearance values and GATT UUIDs.
///
/// A namespace only. The lookup functions live in the `Generated+*.swift` extensions,
/// produced by `Scripts/generate-tables.py` from `shared/reference/assigned-numbers/`
/// (re-run the script after changing the data; do not edit the generated files).
/// Every lookup is a `switch` returning a `Name?`: no allocation, no Foundation,
/// and `nil` for a code that is not in the table, which callers print numerically.
public enum AssignedNumbers {}
