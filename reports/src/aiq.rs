//! AIQ (RouterBench's average improvement in quality) over any number of arms.
//!
//! Given cost–quality points, the non-decreasing convex hull is the best quality reachable at
//! each cost by mixing strategies at random (any point on a segment between two points is a
//! mixture) and by spending more than needed (quality never drops as the budget grows). AIQ is
//! the area under that hull with cost normalised to the plotted range [lo, hi], i.e. its mean
//! height over the range. Conventions where RouterBench leaves them open:
//! - below the cheapest point no strategy exists, so the hull is 0 there (a set that starts to
//!   the right of `lo` is penalised, which is what comparing sets on one range needs);
//! - past the best point the hull stays at the best quality up to `hi`;
//! - a zero-width range (all points at one cost) gives the best quality.

/// The non-decreasing upper convex hull of `points` (cost, quality): vertices from the cheapest
/// point (the best one among equally cheap ones) to the cheapest point of the highest quality,
/// in increasing cost. Non-finite points are ignored; empty input gives an empty hull.
pub fn nondecreasing_hull(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    if pts.is_empty() {
        return pts;
    }
    // By cost, then best quality first: the first point of each cost is the only one that can
    // be a vertex.
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    pts.dedup_by(|b, a| a.0 == b.0);
    // Past the first point of the highest quality nothing can be on a non-decreasing hull.
    let top = pts
        .iter()
        .enumerate()
        .fold(0, |best, (i, p)| if p.1 > pts[best].1 { i } else { best });
    pts.truncate(top + 1);
    // Upper hull by the monotone chain: drop the middle of every non-right turn.
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
    for p in pts {
        while hull.len() >= 2 {
            let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            let cross = (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0);
            if cross >= 0.0 {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
    hull
}

/// The hull's quality at cost `c` (0 left of the hull, its best quality right of it).
pub fn hull_at(hull: &[(f64, f64)], c: f64) -> f64 {
    let Some(first) = hull.first() else {
        return 0.0;
    };
    if c < first.0 {
        return 0.0;
    }
    for w in hull.windows(2) {
        let (a, b) = (w[0], w[1]);
        if c <= b.0 {
            return a.1 + (b.1 - a.1) * (c - a.0) / (b.0 - a.0);
        }
    }
    hull[hull.len() - 1].1
}

/// AIQ of `points` over the cost range `range` = (lo, hi): the mean of the non-decreasing
/// hull over [lo, hi] (equivalently the area under it with cost rescaled to [0, 1]).
/// `None` without a finite point or for an invalid range.
pub fn aiq(points: &[(f64, f64)], range: (f64, f64)) -> Option<f64> {
    let hull = nondecreasing_hull(points);
    let (lo, hi) = range;
    if hull.is_empty() || !lo.is_finite() || !hi.is_finite() || hi < lo {
        return None;
    }
    if hi == lo {
        return Some(hull_at(&hull, lo));
    }
    // Integrate the piecewise-linear hull exactly: breakpoints are the range ends and the
    // vertices inside it, so the hull is linear on every piece.
    let mut xs: Vec<f64> = vec![lo];
    xs.extend(hull.iter().map(|p| p.0).filter(|&x| x > lo && x < hi));
    xs.push(hi);
    let mut area = 0.0;
    for w in xs.windows(2) {
        let (a, b) = (w[0], w[1]);
        // Left of the first vertex the hull is 0 (no strategy that cheap).
        if a >= hull[0].0 {
            area += (b - a) * (hull_at(&hull, a) + hull_at(&hull, b)) / 2.0;
        }
    }
    Some(area / (hi - lo))
}

/// The range a set of points is plotted over: the smallest and largest finite cost.
pub fn cost_range(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let costs = points.iter().map(|p| p.0).filter(|c| c.is_finite());
    let lo = costs.clone().fold(f64::INFINITY, f64::min);
    let hi = costs.fold(f64::NEG_INFINITY, f64::max);
    (lo <= hi).then_some((lo, hi))
}
