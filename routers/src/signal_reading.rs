//! Reading the signals: per signal the AUROC for "this paradigm is correct", the share of the
//! best-single → Oracle gap a router closes, and CostSave@BestSingle (after LLMRouterBench: the
//! share of best-single's mean cost that a router's operating point saves while its correct rate
//! stays within a stated tolerance of best-single's; `route eval` reads the point fixed on the
//! training folds).

use std::collections::BTreeMap;

use bench_core::{FeatureKind, RoutePrediction, RoutingSet};

use crate::entry::Family;
use crate::eval::Summary;

/// The tolerance of CostSave@BestSingle: an operating point counts while its correct rate is at
/// least best-single's minus 0.5 points.
pub const COST_SAVE_TOLERANCE: f64 = 0.005;

/// Area under the ROC curve of `scores` for the positives of `labels` (the Mann-Whitney U
/// statistic over all positive-negative pairs, a tie counting one half); `None` without both a
/// positive and a negative.
pub fn auroc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut rank_sum, mut pos) = (0.0, 0usize);
    let mut i = 0;
    while i < idx.len() {
        // Ranks 1-based; a run of ties gets their mean rank.
        let mut j = i;
        while j + 1 < idx.len() && scores[idx[j + 1]] == scores[idx[i]] {
            j += 1;
        }
        let mean_rank = (i + j + 2) as f64 / 2.0;
        for &k in &idx[i..=j] {
            if labels[k] {
                rank_sum += mean_rank;
                pos += 1;
            }
        }
        i = j + 1;
    }
    let neg = scores.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    let (p, n) = (pos as f64, neg as f64);
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

/// The share of the gap from best-single to Oracle that `router` closes (negative when it
/// loses to best-single); `None` when Oracle does not beat best-single.
pub fn gap_share(router: f64, best_single: f64, oracle: f64) -> Option<f64> {
    (oracle > best_single).then(|| (router - best_single) / (oracle - best_single))
}

/// CostSave@BestSingle of a router's operating points `(correct rate, mean cost)` against
/// best-single's: the largest `1 - cost / best-single's cost` over the points whose correct
/// rate is at least best-single's minus [`COST_SAVE_TOLERANCE`]; `None` when no point
/// qualifies or best-single costs nothing. Negative when every qualifying point costs more.
pub fn cost_save(points: &[(f64, f64)], best_single: (f64, f64)) -> Option<f64> {
    let (bs_rate, bs_cost) = best_single;
    if bs_cost <= 0.0 {
        return None;
    }
    points
        .iter()
        .filter(|(rate, _)| *rate >= bs_rate - COST_SAVE_TOLERANCE - 1e-12)
        .map(|(_, cost)| 1.0 - cost / bs_cost)
        .fold(None, |best: Option<f64>, s| {
            Some(best.map_or(s, |b| b.max(s)))
        })
}

/// One signal's AUROC for each paradigm class being correct, over the rows where the signal is
/// present and the paradigm has an outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalAuroc {
    /// The signal's name.
    pub signal: String,
    /// Rows where the signal is present.
    pub present: usize,
    /// Per paradigm class (schema order, `cannot-answer` excluded).
    pub auroc: Vec<Option<f64>>,
}

/// The AUROC of every probe signal of `set` (its `probe-signals` block) for every paradigm.
pub fn signal_aurocs(set: &RoutingSet) -> Vec<SignalAuroc> {
    let Some(block) = set.schema.block(FeatureKind::ProbeSignals) else {
        return Vec::new();
    };
    let k = set.schema.n_classes() - 1;
    block
        .range()
        .step_by(2)
        .map(|col| {
            let name = set.schema.feature_names[col]
                .trim_start_matches("p:")
                .to_string();
            let rows: Vec<_> = set
                .rows
                .iter()
                .filter(|r| r.features[col + 1] > 0.5)
                .collect();
            let auroc = (0..k)
                .map(|c| {
                    let (s, y): (Vec<f64>, Vec<bool>) = rows
                        .iter()
                        .filter_map(|r| r.outcomes[c].map(|o| (r.features[col], o.correct)))
                        .unzip();
                    auroc(&s, &y)
                })
                .collect();
            SignalAuroc {
                signal: name,
                present: rows.len(),
                auroc,
            }
        })
        .collect()
}

/// Per paradigm class, the AUROC for "this paradigm is correct" of the signals read together:
/// util-lr's cross-fitted P(correct) over every row of `set` (its chosen feature blocks plus the
/// corpus one-hot; logistic regression, Platt-calibrated, each row scored by models that did not
/// see it).
pub fn combined_auroc(set: &RoutingSet, seed: u64) -> bench_core::Result<Vec<Option<f64>>> {
    let oof = crate::utility::cross_fitted_p(set, seed)?;
    Ok(oof
        .iter()
        .enumerate()
        .map(|(c, per_row)| {
            let (s, y): (Vec<f64>, Vec<bool>) = per_row
                .iter()
                .zip(&set.rows)
                .filter_map(|(p, r)| Some((((*p)?), r.outcomes[c]?.correct)))
                .unzip();
            auroc(&s, &y)
        })
        .collect())
}

/// The line `route eval` prints under the signals' AUROCs: [`combined_auroc`] per paradigm.
pub fn render_combined(set: &RoutingSet, seed: u64) -> bench_core::Result<String> {
    if set.schema.block(FeatureKind::ProbeSignals).is_none() {
        return Ok(String::new());
    }
    let k = set.schema.n_classes() - 1;
    let mut out = format!(
        "{:<28} {:>7}",
        "all features (util-lr, cross-fitted)",
        set.rows.len()
    );
    for v in combined_auroc(set, seed)?.iter().take(k) {
        out.push_str(&v.map_or(format!(" {:>10}", "-"), |v| format!(" {v:>10.3}")));
    }
    out.push('\n');
    Ok(out)
}

/// Per router, its operating points over the sweep (pooled `*` summaries): `(param, correct
/// rate, mean cost)`, in first-seen order.
pub fn operating_points(summaries: &[Summary]) -> BTreeMap<String, Vec<(Option<f64>, f64, f64)>> {
    let mut out: BTreeMap<String, Vec<(Option<f64>, f64, f64)>> = BTreeMap::new();
    for s in summaries.iter().filter(|s| s.corpus == "*") {
        out.entry(s.router.clone()).or_default().push((
            s.param,
            s.mean.correct_rate,
            s.mean.mean_tokens,
        ));
    }
    out
}

/// The text block `route eval` prints after its tables: each signal's AUROC per paradigm, then
/// per router its fixed operating point's share of the best-single → Oracle gap, the probe's
/// share of its cost and its CostSave@BestSingle.
pub fn render(
    set: &RoutingSet,
    summaries: &[Summary],
    predictions: &[RoutePrediction],
    family: &dyn Fn(&str) -> Family,
) -> String {
    let mut out = String::new();
    let k = set.schema.n_classes() - 1;
    let aurocs = signal_aurocs(set);
    if !aurocs.is_empty() {
        out.push_str("\nsignals: AUROC for \"this paradigm is correct\" (rows where the signal is present)\n");
        out.push_str(&format!("{:<28} {:>7}", "signal", "present"));
        for c in &set.schema.classes[..k] {
            out.push_str(&format!(" {c:>10}"));
        }
        out.push('\n');
        for a in &aurocs {
            out.push_str(&format!("{:<28} {:>7}", a.signal, a.present));
            for v in &a.auroc {
                out.push_str(&v.map_or(format!(" {:>10}", "-"), |v| format!(" {v:>10.3}")));
            }
            out.push('\n');
        }
    }
    let points = operating_points(summaries);
    let one = |name: &str| points.get(name).and_then(|v| v.first()).map(|p| (p.1, p.2));
    let (Some(bs), Some(oracle)) = (one("best-single"), one("oracle")) else {
        return out;
    };
    // Probe and total cost of each router's fixed-point predictions.
    let mut probe: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for p in predictions.iter().filter(|p| p.param.is_none()) {
        let e = probe.entry(p.router.as_str()).or_default();
        e.0 += p.probe_cost;
        e.1 += p.cost;
    }
    out.push_str(&format!(
        "\nrouting that pays (pooled): best-single {:.2} at cost {:.2}, Oracle {:.2}\nCostSave@BestSingle: the share of best-single's cost a router's fixed operating point saves\n  where its correct rate is >= best-single's - {:.1} points\n",
        100.0 * bs.0,
        bs.1,
        100.0 * oracle.0,
        100.0 * COST_SAVE_TOLERANCE
    ));
    out.push_str(&format!(
        "{:<34} {:>7} {:>10} {:>8} {:>11} {:>10}\n",
        "router (fixed point)", "C.R", "gap closed", "cost", "probe share", "CostSave"
    ));
    for (router, pts) in &points {
        if matches!(family(router), Family::Baseline) {
            continue;
        }
        // The router's own row: its operating point fixed on the training folds. The best of
        // its sweep on the test rows would be a selection on the rows it is graded on.
        let Some(best) = pts.iter().copied().find(|p| p.0.is_none()) else {
            continue;
        };
        let share = probe
            .get(router.as_str())
            .filter(|(_, total)| *total > 0.0)
            .map_or(0.0, |(p, total)| p / total);
        out.push_str(&format!(
            "{:<34} {:>7.2} {:>10} {:>8.2} {:>10.1}% {:>10}\n",
            router,
            100.0 * best.1,
            gap_share(best.1, bs.0, oracle.0).map_or("-".into(), |g| format!("{:.1}%", 100.0 * g)),
            best.2,
            100.0 * share,
            cost_save(&[(best.1, best.2)], bs).map_or("-".into(), |c| format!("{:.1}%", 100.0 * c)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auroc_of_hand_computed_cases() {
        // Perfect separation, its reverse, and no information.
        assert_eq!(
            auroc(&[0.1, 0.2, 0.8, 0.9], &[false, false, true, true]),
            Some(1.0)
        );
        assert_eq!(
            auroc(&[0.1, 0.2, 0.8, 0.9], &[true, true, false, false]),
            Some(0.0)
        );
        assert_eq!(
            auroc(&[0.5, 0.5, 0.5, 0.5], &[true, false, true, false]),
            Some(0.5)
        );
        // Positives {0.4, 0.8}, negatives {0.3, 0.6, 0.9}: pairs won 0.4>0.3, 0.8>0.3, 0.8>0.6
        // = 3 of 6.
        assert_eq!(
            auroc(
                &[0.3, 0.4, 0.6, 0.8, 0.9],
                &[false, true, false, true, false]
            ),
            Some(0.5)
        );
        // A tie between a positive and a negative counts one half: positives {1, 2},
        // negatives {2, 0}: 1>0, 2>0, 2=2 (0.5), 1<2 → 2.5 of 4.
        assert_eq!(
            auroc(&[1.0, 2.0, 2.0, 0.0], &[true, true, false, false]),
            Some(0.625)
        );
        assert_eq!(auroc(&[1.0, 2.0], &[true, true]), None);
    }

    #[test]
    fn gap_share_and_cost_save_of_hand_computed_cases() {
        // Best-single 33.60, Oracle 47.20, a router at 35.70: 2.1 / 13.6.
        let g = gap_share(0.357, 0.336, 0.472).unwrap();
        assert!((g - 2.1 / 13.6).abs() < 1e-12, "{g}");
        assert!(gap_share(0.30, 0.336, 0.472).unwrap() < 0.0);
        assert_eq!(gap_share(0.5, 0.4, 0.4), None);
        // Best-single 0.40 at cost 4. Points: (0.41, 3) saves 25 %; (0.396, 1) is within
        // 0.5 points and saves 75 %; (0.39, 0.5) is 1 point below and does not count.
        let s = cost_save(&[(0.41, 3.0), (0.396, 1.0), (0.39, 0.5)], (0.40, 4.0)).unwrap();
        assert!((s - 0.75).abs() < 1e-12, "{s}");
        // Exactly at the tolerance counts.
        assert_eq!(cost_save(&[(0.395, 2.0)], (0.40, 4.0)), Some(0.5));
        // Only dearer points qualify: a negative saving.
        assert_eq!(cost_save(&[(0.45, 5.0)], (0.40, 4.0)), Some(-0.25));
        assert_eq!(cost_save(&[(0.30, 1.0)], (0.40, 4.0)), None);
        assert_eq!(cost_save(&[(0.50, 1.0)], (0.40, 0.0)), None);
    }
}
