//! A cascade's plan (its stages in run order) and the walk of one question through it under
//! "stop when an arm played is trusted enough" (τ): after each stage the per-arm estimates on
//! the signals known then; the arm delivered is the one ranked first among every arm played,
//! ties to the cheaper one.

/// A cascade's stages and what they need to walk one question.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The arms each stage adds, in run order.
    pub stages: Vec<Vec<usize>>,
    /// Per stage, every arm run up to it, sorted (the key of its estimates).
    pub ran: Vec<Vec<usize>>,
    /// Per class, its place in the cost order (the cheaper wins a tie).
    rank: Vec<usize>,
}

impl Plan {
    /// The plan of `stages` over classes whose cost order is `order` (`k` paradigm classes).
    pub fn new(stages: Vec<Vec<usize>>, order: &[usize], k: usize) -> Plan {
        let mut rank = vec![usize::MAX; k];
        for (i, &c) in order.iter().enumerate() {
            rank[c] = i;
        }
        let mut ran = Vec::with_capacity(stages.len());
        let mut acc: Vec<usize> = Vec::new();
        for s in &stages {
            acc.extend(
                s.iter()
                    .copied()
                    .filter(|c| !acc.contains(c))
                    .collect::<Vec<_>>(),
            );
            let mut key = acc.clone();
            key.sort_unstable();
            ran.push(key);
        }
        Plan { stages, ran, rank }
    }

    /// How many stages.
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// Every arm run up to stage `s`, in run order.
    pub fn arms_through(&self, s: usize) -> Vec<usize> {
        self.stages[..=s].iter().flatten().copied().collect()
    }

    /// The arm run up to stage `s` with the highest estimate `p` (a class without one ranks
    /// last), ties to the cheaper arm.
    pub fn best(&self, s: usize, p: &[Option<f64>]) -> usize {
        let score = |c: usize| p.get(c).copied().flatten().unwrap_or(-1.0);
        self.ran[s]
            .iter()
            .copied()
            .max_by(|&a, &b| {
                score(a)
                    .total_cmp(&score(b))
                    .then(self.rank[b].cmp(&self.rank[a]))
            })
            .unwrap_or(self.stages[0][0])
    }
}

/// The τ rule on one question: after each stage, stop when the best arm played has an estimate
/// of at least `tau`, or when no stage is left. `p_at(s)` is the per-class estimate after stage
/// `s`. Returns (the last stage run, the arm delivered).
pub(super) fn walk_tau<'p>(
    plan: &Plan,
    p_at: &dyn Fn(usize) -> &'p [Option<f64>],
    tau: f64,
) -> (usize, usize) {
    let mut s = 0;
    loop {
        let p = p_at(s);
        let best = plan.best(s, p);
        if s + 1 == plan.len() || p[best].unwrap_or(0.0) >= tau {
            return (s, best);
        }
        s += 1;
    }
}

/// The value-of-information rule on one question: after stage `s`, go on when the estimate
/// that the selection after the next stage is right (`q_at(s)`) beats the best arm played now
/// by more than `lambda` times the next stage's cost (`step_cost[s + 1]`, in units of the
/// costliest arm's mean). Returns (the last stage run, the arm delivered).
pub(super) fn walk_voi<'p>(
    plan: &Plan,
    p_at: &dyn Fn(usize) -> &'p [Option<f64>],
    q_at: &dyn Fn(usize) -> f64,
    step_cost: &[f64],
    lambda: f64,
) -> (usize, usize) {
    let mut s = 0;
    loop {
        let p = p_at(s);
        let best = plan.best(s, p);
        if s + 1 == plan.len() {
            return (s, best);
        }
        let now = p[best].unwrap_or(0.0);
        if q_at(s) - now > lambda * step_cost[s + 1] {
            s += 1;
        } else {
            return (s, best);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_arm_played_is_delivered_ties_to_the_cheaper() {
        // Classes 0, 1, 2 with cost order 1, 0, 2: stage one runs 0 and 1, stage two runs 2.
        let plan = Plan::new(vec![vec![1, 0], vec![2]], &[1, 0, 2], 3);
        assert_eq!(plan.ran, [vec![0, 1], vec![0, 1, 2]]);
        assert_eq!(plan.arms_through(1), [1, 0, 2]);
        // A tie between 0 and 1 goes to 1, the cheaper; 2 is not played after stage one.
        assert_eq!(plan.best(0, &[Some(0.5), Some(0.5), Some(0.9)]), 1);
        // After stage two an earlier arm can still win.
        assert_eq!(plan.best(1, &[Some(0.8), Some(0.1), Some(0.6)]), 0);
        let stage = [
            vec![Some(0.4), Some(0.3), None],
            vec![Some(0.7), Some(0.3), Some(0.6)],
        ];
        let p_at = |s: usize| stage[s].as_slice();
        // τ 0.5: stage one's best (0.4) is short, stage two delivers arm 0, not the last one.
        assert_eq!(walk_tau(&plan, &p_at, 0.5), (1, 0));
        assert_eq!(walk_tau(&plan, &p_at, 0.4), (0, 0));
        // VOI: the next stage's selection is right with 0.7, now 0.4: a gain of 0.3 against a
        // cost of 0.5 per unit of λ.
        let q_at = |_: usize| 0.7;
        let cost = [0.2, 0.5];
        assert_eq!(walk_voi(&plan, &p_at, &q_at, &cost, 0.5), (1, 0));
        assert_eq!(walk_voi(&plan, &p_at, &q_at, &cost, 0.6), (0, 0));
    }
}
