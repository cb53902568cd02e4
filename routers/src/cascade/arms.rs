//! The arms a prediction paid for, in the order they ran: what `arms_played` stores for every
//! router (a probe's arms, then the one played).

use bench_core::RoutingSchema;

use crate::probe_columns::ProbeBill;

/// The paradigms paid for on one question, in the order they ran, each once: the probe's arms
/// (class order), then `played` when the probe had not run it.
pub(crate) fn arms_paid(
    schema: &RoutingSchema,
    bill: Option<&ProbeBill>,
    played: Option<usize>,
) -> Vec<String> {
    let mut ran: Vec<usize> = bill.map(|b| b.ran.clone()).unwrap_or_default();
    if let Some(p) = played.filter(|p| !ran.contains(p)) {
        ran.push(p);
    }
    ran.iter()
        .filter_map(|&c| schema.paradigm_of(c))
        .map(|p| p.as_str().to_string())
        .collect()
}
