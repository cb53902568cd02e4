//! The proof of the top-k from the certificate's bounds: candidate intervals narrowed to their symmetry class's, and the comparisons that order the list against every other node.

use super::*;

/// A candidate whose upper bound reaches the cut: (position, lo, hi, score).
pub(super) type Near = (u32, f64, f64, f64);

/// Class of each interval: key -> (lo, hi, has a listed member).
type Intervals = HashMap<u64, (f64, f64, bool)>;

/// Checks `out.top`, already chosen from `near` (every node whose upper bound reaches the
/// cut), against the exact top-k: (i) each listed node's interval is above every later node's
/// of another class, (ii) above the floor, and (iii) every unlisted node near the list is
/// below the floor or the list's end. Sets `out.top_error` and `out.certified`; a failed
/// comparison lowers `shrink` to how much narrower the intervals must get. `sweep_finite`:
/// whether the sweep's residual sum was finite (a NaN would pass every comparison).
pub(super) fn prove_top(
    factor: &PprFactor,
    seeds: &[(u32, f64)],
    (k, min_score, tie): (usize, f64, f64),
    mut near: Vec<Near>,
    sweep_finite: bool,
    out: &mut CertifiedPpr,
    shrink: &mut f64,
) -> bool {
    let classes = Classes::new(factor, seeds);
    // Only the listed nodes and the unlisted ones that (iii) does not pass on their own
    // intervals need their class's: narrowing only raises a listed `lo` and lowers an
    // unlisted `hi` (an intersection over fewer members is still a valid interval).
    near.sort_unstable_by_key(|e| e.0);
    // Every listed node is near, unless its bound is not a number: then an interval that
    // fails every test.
    let own = |v: u32| match near.binary_search_by_key(&v, |e| e.0) {
        Ok(i) => (near[i].1, near[i].2),
        Err(_) => (f64::NEG_INFINITY, f64::INFINITY),
    };
    let listed: Vec<u32> = out
        .top
        .iter()
        .map(|&(v, _)| factor.position[v as usize])
        .collect();
    let full = out.top.len() == k;
    let own_min_lo = listed
        .iter()
        .map(|&v| own(v).0)
        .fold(f64::INFINITY, f64::min);
    let doubtful = doubtful_nodes(&near, &listed, full, own_min_lo, min_score, tie);
    let intervals = class_intervals(&classes, &listed, &doubtful, own);
    // A NaN would pass every comparison below; an empty intersection would mean a wrong bound.
    let valid = sweep_finite && intervals.values().all(|i| i.0 <= i.1);
    let (list_ok, floor) = check_list(&classes, &intervals, &listed, out, (min_score, tie), shrink);
    let rest_ok = check_doubtful(
        &classes,
        &intervals,
        &doubtful,
        floor,
        (full, min_score, tie),
        shrink,
    );
    let ok = valid && list_ok && rest_ok;
    out.certified = ok;
    ok
}

/// The unlisted near nodes that (iii) does not pass on their own intervals: above the floor
/// and, when the list is full, above its smallest own `lo` (all within `tie`).
fn doubtful_nodes(
    near: &[Near],
    listed: &[u32],
    full: bool,
    own_min_lo: f64,
    min_score: f64,
    tie: f64,
) -> Vec<u32> {
    let mut sorted = listed.to_vec();
    sorted.sort_unstable();
    near.iter()
        .filter(|e| {
            let hi = e.2;
            sorted.binary_search(&e.0).is_err()
                && !(hi < min_score + tie || (full && hi <= own_min_lo + tie))
        })
        .map(|e| e.0)
        .collect()
}

/// Each class's interval: the intersection of its listed and doubtful members' own
/// intervals (`own`), and whether one of them is listed.
fn class_intervals(
    classes: &Classes<'_>,
    listed: &[u32],
    doubtful: &[u32],
    own: impl Fn(u32) -> (f64, f64),
) -> Intervals {
    let mut intervals: Intervals = HashMap::new();
    for (&v, is_listed) in listed
        .iter()
        .map(|v| (v, true))
        .chain(doubtful.iter().map(|v| (v, false)))
    {
        let (lo, hi) = own(v);
        let i = intervals.entry(classes.of(v)).or_insert((lo, hi, false));
        i.0 = i.0.max(lo);
        i.1 = i.1.min(hi);
        i.2 |= is_listed;
    }
    intervals
}

/// The smallest `lo` on the list, its class, and the smallest `lo` of another class.
#[derive(Debug, Clone, Copy)]
struct ListFloor {
    min_lo: f64,
    min_class: u64,
    min_lo_2: f64,
}

/// (i) and (ii), from the end of the list: tracks the largest `hi` of a later node, and the
/// largest of a later node of another class than that one's ((hi, lo) of those two);
/// likewise the smallest `lo` on the list ([`ListFloor`], for (iii)). Sets `out.top_error`.
fn check_list(
    classes: &Classes<'_>,
    intervals: &Intervals,
    listed: &[u32],
    out: &mut CertifiedPpr,
    (min_score, tie): (f64, f64),
    shrink: &mut f64,
) -> (bool, ListFloor) {
    let mut ok = true;
    let none = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let (mut best, mut best_class, mut second) = (none, u64::MAX, none);
    let (mut min_lo, mut min_class, mut min_lo_2) = (f64::INFINITY, u64::MAX, f64::INFINITY);
    out.top_error = 0.0;
    // How much narrower the intervals must get for a failed comparison to pass (as the
    // intervals shrink about their midpoints).
    let needed = |gap: f64, width: f64| if gap > 0.0 { gap / width } else { TIGHTEN };
    for (&v, &(_, s)) in listed.iter().zip(&out.top).rev() {
        let c = classes.of(v);
        let (lo, hi, _) = intervals[&c];
        out.top_error = out.top_error.max((s - lo).max(hi - s));
        let (later_hi, later_lo) = if c == best_class { second } else { best };
        if lo < later_hi - tie {
            ok = false;
            let gap = (lo + hi) / 2.0 - (later_lo + later_hi) / 2.0 + tie;
            *shrink = shrink.min(needed(gap, (hi - lo + later_hi - later_lo) / 2.0));
        }
        if lo < min_score - tie {
            ok = false;
            *shrink = shrink.min(needed((lo + hi) / 2.0 - min_score + tie, (hi - lo) / 2.0));
        }
        if c == best_class {
            if hi > best.0 {
                best = (hi, lo);
            }
        } else if hi > best.0 {
            (second, best, best_class) = (best, (hi, lo), c);
        } else if hi > second.0 {
            second = (hi, lo);
        }
        if c == min_class {
            min_lo = min_lo.min(lo);
        } else if lo < min_lo {
            (min_lo_2, min_lo, min_class) = (min_lo, lo, c);
        } else {
            min_lo_2 = min_lo_2.min(lo);
        }
    }
    let floor = ListFloor {
        min_lo,
        min_class,
        min_lo_2,
    };
    (ok, floor)
}

/// (iii): every doubtful node is below the floor, or (a full list) below the list's smallest
/// `lo`, or below the smallest `lo` of another class than its own when its class is listed.
fn check_doubtful(
    classes: &Classes<'_>,
    intervals: &Intervals,
    doubtful: &[u32],
    floor: ListFloor,
    (full, min_score, tie): (bool, f64, f64),
    shrink: &mut f64,
) -> bool {
    let mut ok = true;
    for &v in doubtful {
        let c = classes.of(v);
        let (_, hi, twin_listed) = intervals[&c];
        let other = if c == floor.min_class {
            floor.min_lo_2
        } else {
            floor.min_lo
        };
        let fine = hi < min_score + tie
            || (full && hi <= floor.min_lo + tie)
            || (full && twin_listed && hi <= other + tie);
        if !fine {
            ok = false;
            *shrink = shrink.min(TIGHTEN);
        }
    }
    ok
}

/// Nodes of a class have equal exact scores unless seeds split it (see `Symmetry`), so each
/// interval narrows to its class's intersection; this keys each position by the class the
/// seeds leave it in.
struct Classes<'a> {
    factor: &'a PprFactor,
    /// The seeds by position.
    seeds: &'a [(u32, f64)],
    /// Pendant nodes whose subtree holds a seed (the seeds' ancestors-or-self up to their
    /// branch's top), sorted.
    seeded: Vec<u32>,
}

impl<'a> Classes<'a> {
    /// The seeded pendant nodes of `seeds` (sorted by position).
    fn new(factor: &'a PprFactor, seeds: &'a [(u32, f64)]) -> Self {
        let mut seeded: Vec<u32> = Vec::new();
        for &(s, _) in seeds.iter() {
            let mut x = s;
            if factor.branch[x as usize] == NO_CLASS {
                continue;
            }
            while x != NO_CLASS {
                seeded.push(x);
                x = factor.up[x as usize];
            }
        }
        seeded.sort_unstable();
        seeded.dedup();
        Classes {
            factor,
            seeds,
            seeded,
        }
    }

    /// Position `v`'s class key: its own (high bit set) when it has no class, is a seed, or its
    /// subtree holds one; else its class, split by its lowest ancestor whose subtree holds a
    /// seed when its branch holds one.
    fn of(&self, v: u32) -> u64 {
        let (factor, seeded) = (self.factor, &self.seeded);
        let own = (1 << 63) | u64::from(v);
        let (c, b) = (factor.class[v as usize], factor.branch[v as usize]);
        if c == NO_CLASS || self.seeds.binary_search_by_key(&v, |s| s.0).is_ok() {
            return own;
        }
        if b == NO_CLASS || seeded.binary_search(&b).is_err() {
            return u64::from(c) << 32 | u64::from(NO_CLASS);
        }
        // The lowest ancestor-or-self whose subtree holds a seed (the branch's top at most).
        let mut z = v;
        while seeded.binary_search(&z).is_err() {
            z = factor.up[z as usize];
        }
        if z == v {
            own
        } else {
            u64::from(c) << 32 | u64::from(z)
        }
    }
}
