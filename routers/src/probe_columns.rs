//! Probe signals as routing features (`--features p`, `q+p`, `c+p`, `q+c+p`) and what reading
//! them costs.
//!
//! Each signal name becomes two columns of the `probe-signals` block: `p:NAME` (the value, 0
//! when missing) and `p:NAME:present` (1 or 0), so a missing signal is explicit to every router
//! and to the external protocol, as it is in the store. A router that reads the block pays the
//! probe per question: the signals' own cost plus, once, the cost of every paradigm whose answers
//! the probe used; playing one of those paradigms afterwards costs nothing more (its answer is
//! already there).

use std::collections::{BTreeMap, BTreeSet};

use bench_core::{ParadigmId, RoutingRow, RoutingSchema, Signal};

/// The column names of the probe block for `names` (sorted signal names).
pub fn columns(names: &[String]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| [format!("p:{n}"), format!("p:{n}:present")])
        .collect()
}

/// The sorted union of signal names over every question.
pub fn names<'a>(signals: impl IntoIterator<Item = &'a Signal>) -> Vec<String> {
    let set: BTreeSet<&str> = signals.into_iter().map(|s| s.name.as_str()).collect();
    set.into_iter().map(str::to_string).collect()
}

/// One question's probe columns in `names` order: a signal without a row counts as missing.
pub fn row_features(names: &[String], signals: &[&Signal]) -> Vec<f64> {
    let by_name: BTreeMap<&str, &Signal> = signals.iter().map(|s| (s.name.as_str(), *s)).collect();
    names
        .iter()
        .flat_map(|n| match by_name.get(n.as_str()).and_then(|s| s.value) {
            Some(v) => [v, 1.0],
            None => [0.0, 0.0],
        })
        .collect()
}

/// What the probe costs on one question and which paradigm classes it already ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeBill {
    /// The signals' own cost plus the cost of each paradigm the probe ran, counted once.
    pub probe: f64,
    /// The signals' own cost alone.
    pub own: f64,
    /// Milliseconds the signals took (reported beside the cost, never added to it).
    pub ms: f64,
    /// Classes whose answers the probe already has: playing one adds nothing.
    pub ran: Vec<usize>,
}

impl ProbeBill {
    /// The bill of one question's `signals`; `paradigm_cost` gives the cost of a paradigm's
    /// tuple on the question (the probe pays it once however many signals used it).
    pub(crate) fn of(
        signals: &[&Signal],
        schema: &RoutingSchema,
        paradigm_cost: &dyn Fn(ParadigmId) -> f64,
    ) -> ProbeBill {
        let ran: BTreeSet<ParadigmId> = signals
            .iter()
            .flat_map(|s| s.paradigms.iter().copied())
            .collect();
        let own = signals.iter().map(|s| s.cost).sum::<f64>();
        ProbeBill {
            probe: own + ran.iter().map(|&p| paradigm_cost(p)).sum::<f64>(),
            own,
            ms: signals.iter().map(|s| s.cost_ms).sum(),
            ran: ran.iter().filter_map(|&p| schema.class_of(p)).collect(),
        }
    }

    /// (probe share, total cost) of playing class `played` on `row` after the probe: a class
    /// the probe ran adds nothing.
    pub(crate) fn charge(&self, row: &RoutingRow, played: Option<usize>) -> (f64, f64) {
        let play = played
            .filter(|c| !self.ran.contains(c))
            .and_then(|c| row.outcomes.get(c).copied().flatten())
            .map_or(0.0, |o| o.tokens);
        (self.probe, self.probe + play)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{ClassOutcome, QueryType};

    fn schema() -> RoutingSchema {
        RoutingSchema::new(
            &[
                ParadigmId::LlmOnly,
                ParadigmId::Naive,
                ParadigmId::Iterative,
            ],
            vec![],
        )
    }

    fn row() -> RoutingRow {
        let o = |tokens: f64| {
            Some(ClassOutcome {
                correct: true,
                semantic_f1: 1.0,
                tokens,
            })
        };
        RoutingRow {
            query_id: "q".into(),
            corpus: "c".into(),
            text: "t".into(),
            qtype: QueryType::Other,
            features: vec![],
            label: 0,
            outcomes: vec![o(0.5), o(1.0), o(4.0)],
        }
    }

    #[test]
    fn features_mark_missing_signals_explicitly() {
        let a = Signal::free("a", Some(2.5), "x", &[]);
        let b = Signal::free("b", None, "x", &[]);
        let n = names([&a, &b, &a]);
        assert_eq!(n, ["a", "b"]);
        assert_eq!(columns(&n), ["p:a", "p:a:present", "p:b", "p:b:present"]);
        assert_eq!(row_features(&n, &[&a, &b]), [2.5, 1.0, 0.0, 0.0]);
        // No row at all is missing too.
        assert_eq!(row_features(&n, &[&b]), [0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn the_probe_is_billed_once_and_never_twice_for_a_paradigm_it_ran() {
        let s = schema();
        let r = row();
        let cost = |p: ParadigmId| r.outcomes[s.class_of(p).unwrap()].unwrap().tokens;
        // Two signals over the same two arms, one with a cost of its own.
        let mut own = Signal::free(
            "agree.em",
            Some(1.0),
            "answers",
            &[ParadigmId::LlmOnly, ParadigmId::Naive],
        );
        own.cost = 0.25;
        own.cost_ms = 3.0;
        let other = Signal::free("len.naive", Some(3.0), "answers", &[ParadigmId::Naive]);
        let bill = ProbeBill::of(&[&own, &other], &s, &cost);
        // 0.25 own + 0.5 (llm-only) + 1.0 (naive), naive counted once.
        assert_eq!((bill.probe, bill.own), (1.75, 0.25));
        assert_eq!(bill.ms, 3.0);
        assert_eq!(bill.ran, [0, 1]);
        // Playing a paradigm the probe ran: no second charge.
        assert_eq!(bill.charge(&r, Some(1)), (1.75, 1.75));
        assert_eq!(bill.charge(&r, Some(0)), (1.75, 1.75));
        // Playing one it did not run: probe plus that paradigm.
        assert_eq!(bill.charge(&r, Some(2)), (1.75, 5.75));
        // Nothing played: the probe was still paid.
        assert_eq!(bill.charge(&r, None), (1.75, 1.75));
        // A zero-cost probe over no paradigm adds nothing.
        let free = ProbeBill::of(
            &[&Signal::free("dense.top1", Some(0.3), "dense", &[])],
            &s,
            &cost,
        );
        assert_eq!(free.charge(&r, Some(2)), (0.0, 4.0));
    }
}
