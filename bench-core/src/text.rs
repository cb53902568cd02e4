//! Word lists more than one crate's text rules need (one copy, so the rules cannot drift apart).

/// English month names, lower case: a capitalised month is a date part, not an entity, and a
/// question naming one asks for a time.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
