//! The certificate: one sweep evaluating the residual on the graph, bounding every score, and proving the top-k.

use super::*;

/// What [`residual_sweep`] found besides the candidates.
#[derive(Debug, Default)]
pub(super) struct Sweep {
    /// `max |r(v)| / d(v)` over every node, `|r(v)|` padded for rounding.
    pub(super) b_max: f64,
    /// Over the nodes not collected: the largest `|score|` and the largest padded `|r(v)|`.
    pub(super) rest_score: f64,
    pub(super) rest_slack: f64,
    /// Sum of every padded `|r(v)|` (not finite when some score is not: its residual is then
    /// not finite either).
    pub(super) slack_sum: f64,
    /// The largest `|y(v)|` seen (for the bound of the solved rows, [`SolvedRowBound`]).
    pub(super) y_max: f64,
    /// The sum of the solved rows' `y(v)`: not finite when one is not (their residual is
    /// bounded, not evaluated, so nothing else would notice).
    pub(super) check: f64,
}

impl Sweep {
    /// Adds another part of the sweep's findings (in a fixed order: the sum's rounding then
    /// does not depend on how the parts were scheduled).
    pub(super) fn merge(&mut self, other: &Sweep) {
        self.b_max = self.b_max.max(other.b_max);
        self.rest_score = self.rest_score.max(other.rest_score);
        self.rest_slack = self.rest_slack.max(other.rest_slack);
        self.slack_sum += other.slack_sum;
        self.y_max = self.y_max.max(other.y_max);
        self.check += other.check;
    }

    /// Takes a solved row's node (position `v`, solution `y`) into account; its residual bound
    /// comes later ([`residual_sweep`]), so a candidate's is left not a number until then.
    #[inline(always)]
    pub(super) fn solved(
        &mut self,
        v: usize,
        y: f64,
        score: f64,
        pre_cut: f64,
        candidates: &mut Vec<(u32, f64, f64)>,
    ) {
        self.check += y;
        self.y_max = self.y_max.max(y.abs());
        if score >= pre_cut {
            push(candidates, (v as u32, score, f64::NAN));
        } else {
            self.rest_score = self.rest_score.max(score.abs());
        }
    }

    /// Takes one node (position `v`, degree `d`) into account.
    #[inline(always)]
    pub(super) fn take(
        &mut self,
        v: usize,
        d: f64,
        score: f64,
        slack: f64,
        pre_cut: f64,
        candidates: &mut Vec<(u32, f64, f64)>,
    ) {
        // `max(slack / d)` without a division per node (b_max never decreases, so a skipped
        // node has `slack / d <= b_max (1 + u)`); `certify`'s factor on `b_max` covers that and
        // the division's rounding. Isolated nodes (d = 0) have no residual.
        if slack > self.b_max * d {
            self.b_max = self.b_max.max(slack / d);
        }
        self.slack_sum += slack;
        if score >= pre_cut {
            push(candidates, (v as u32, score, slack));
        } else {
            self.rest_score = self.rest_score.max(score.abs());
            self.rest_slack = self.rest_slack.max(slack);
        }
    }
}

/// Out of the sweep's loops: taken for a few nodes only.
#[inline(never)]
#[cold]
pub(super) fn push(candidates: &mut Vec<(u32, f64, f64)>, c: (u32, f64, f64)) {
    candidates.push(c);
}

/// `d y(v)` and the padded residual `|t - d y(v) + damping sum y(u)|` of a node's equation
/// (`t` its teleport mass, the sums over its neighbours).
#[inline(always)]
pub(super) fn residual(
    t: f64,
    d: f64,
    y: f64,
    pulled: f64,
    pulled_abs: f64,
    damping: f64,
) -> (f64, f64) {
    let own = d * y;
    let r = t - own + damping * pulled;
    let magnitude = t + own.abs() + damping * pulled_abs;
    (own, r.abs() + (d + 4.0) * ROUND * magnitude)
}

/// Teleport mass of position `v` from seeds sorted by position (advanced as `v` grows; seeds
/// of positions skipped over are passed).
#[inline(always)]
pub(super) fn teleport(
    next: &mut std::iter::Peekable<std::slice::Iter<'_, (u32, f64)>>,
    v: usize,
) -> f64 {
    while let Some(&&(s, t)) = next.peek() {
        if s as usize > v {
            break;
        }
        next.next();
        if s as usize == v {
            return t;
        }
    }
    0.0
}

/// One pass over the nodes: each node's score and padded residual (for the solved rows, every
/// eliminated node, their a priori bound, [`SolvedRowBound`]); nodes scoring at least `pre_cut` go to
/// `candidates` as (position, score, padded |r|). `y` has one more entry than the graph has
/// nodes, a zero (the padding of `short`, the neighbours of nodes of degree at most [`SHORT`]).
/// Pristine nodes are substituted here, from their row, which is their graph row (see
/// [`PprFactor::build`]); the core's nodes are checked against the graph's rows.
///
/// The pass goes in two phases, each over fixed pieces ([`PprFactor::pieces`]): the pristine
/// nodes (they read only positions before them), then the core's graph rows, the other solved
/// rows and the isolated nodes (they read every position). Pieces are shared between `threads`
/// threads (1 or 2) and merged in piece order, so the result does not depend on the thread
/// count.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn residual_sweep(
    factor: &PprFactor,
    y: &mut [f64],
    seeds: &[(u32, f64)],
    scale: f64,
    pre_cut: f64,
    known: [f64; 3],
    threads: usize,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let pass = SweepQuery {
        seeds,
        scale,
        pre_cut,
        known,
    };
    let (pristine, end) = (factor.pristine, factor.core + factor.eliminated);
    let (known, rest) = y.split_at_mut(pristine);
    let mut rest = &mut rest[..end - pristine];
    let mut items = Vec::with_capacity(factor.pieces.0.len());
    for w in factor.pieces.0.windows(2) {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut((w[1] - w[0]) as usize);
        items.push((w[0] as usize, piece));
        rest = tail;
    }
    let known = &*known;
    let first = share(threads, items, |(lo, out)| {
        let mut found = Vec::new();
        let sweep = sweep_pristine(factor, known, lo, out, pass, &mut found);
        (sweep, found)
    });
    let y = &*y;
    let n = y.len() - 1;
    // The isolated nodes, if any, are one more piece.
    let ranges: Vec<(usize, usize)> = factor
        .pieces
        .1
        .windows(2)
        .map(|w| (w[0] as usize, w[1] as usize))
        .chain((end < n).then_some((end, n)))
        .collect();
    let second = share(threads, ranges, |(lo, hi)| {
        let mut found = Vec::new();
        let (core, solved) = (factor.core, factor.pristine);
        let mut sweep = if lo >= end {
            sweep_isolated(lo, hi, pass, &mut found)
        } else if lo < core {
            sweep_rows(factor, y, lo, hi.min(core), pass, &mut found)
        } else {
            Sweep::default()
        };
        if hi > core && lo < solved {
            sweep.merge(&sweep_solved(factor, y, lo.max(core), hi, pass, &mut found));
        }
        (sweep, found)
    });
    candidates.clear();
    let mut out = Sweep::default();
    for (sweep, found) in first.into_iter().chain(second) {
        out.merge(&sweep);
        candidates.extend(found);
    }
    // The solved rows' bound, now that the largest |y| is known (0 x inf and 0 x NaN are NaN).
    out.slack_sum += 0.0 * out.check;
    let solved = factor.core..end;
    if !solved.is_empty() {
        let [b, z, q] = pass.known;
        let x = [b, z, q, out.y_max];
        let bounds = &factor.solved;
        let slack = SolvedRowBound::bound(bounds.max, x);
        for c in candidates.iter_mut() {
            if solved.contains(&(c.0 as usize)) {
                c.2 = slack;
            }
        }
        out.rest_slack = out.rest_slack.max(slack);
        out.b_max = out.b_max.max(SolvedRowBound::bound(bounds.per_degree, x));
        out.slack_sum += SolvedRowBound::bound(bounds.sum, x);
    }
    out
}

/// Runs `work` on every item, `threads` threads (1 or 2) taking the next item in turn, and
/// returns the results in item order.
pub(super) fn share<I: Send, T: Send>(
    threads: usize,
    items: Vec<I>,
    work: impl Fn(I) -> T + Sync,
) -> Vec<T> {
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let run = || {
        let mut done = Vec::new();
        loop {
            // A panic in `work` never happens under the lock, so it cannot be poisoned.
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, item)) = next else {
                return done;
            };
            done.push((i, work(item)));
        }
    };
    let mut done = if threads > 1 {
        std::thread::scope(|s| {
            let helper = s.spawn(run);
            let mut done = run();
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            );
            done
        })
    } else {
        run()
    };
    done.sort_unstable_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// Pristine positions `lo..lo + out.len()`: substituted into `out` from the positions before
/// `factor.pristine` (`known`), and scored. They go by runs of one row length
/// ([`PprFactor::build`] sorts them so), each run's rows back to back: no row offsets to
/// read, and a row loop of a fixed count the compiler unrolls for the common lengths.
pub(super) fn sweep_pristine(
    factor: &PprFactor,
    known: &[f64],
    lo: usize,
    mut out: &mut [f64],
    pass: SweepQuery<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    // Pristine rows name earlier positions only: none without any.
    assert!(
        !known.is_empty() || out.is_empty(),
        "pristine rows with nothing before them"
    );
    let Some(last) = known.len().checked_sub(1) else {
        return Sweep::default();
    };
    let mut run = PristineRun {
        known,
        last,
        next: seeds_from(pass.seeds, lo),
        scale: pass.scale,
        pre_cut: pass.pre_cut,
        sweep: Sweep::default(),
        candidates,
    };
    let runs = &factor.pristine_runs;
    let end = factor.core + factor.eliminated;
    let mut v = lo;
    let mut k = runs
        .partition_point(|r| r.0 as usize <= v)
        .saturating_sub(1);
    while !out.is_empty() {
        let d = runs[k].1 as usize;
        let stop = runs.get(k + 1).map_or(end, |r| r.0 as usize);
        let count = (stop - v).min(out.len());
        let (piece, rest) = std::mem::take(&mut out).split_at_mut(count);
        let a = factor.elimination.offsets[v - factor.core] as usize;
        let cols = &factor.elimination.cols[a..a + d * piece.len()];
        let weights = factor.pristine_weights[d.min(ELIMINATION_MAX_DEGREE)];
        // Literal lengths, so each inlined copy of `rows` has a fixed inner count.
        match d {
            1 => run.rows(v, piece, cols, 1, weights),
            2 => run.rows(v, piece, cols, 2, weights),
            3 => run.rows(v, piece, cols, 3, weights),
            4 => run.rows(v, piece, cols, 4, weights),
            _ => run.rows(v, piece, cols, d, weights),
        }
        v += piece.len();
        out = rest;
        k += 1;
    }
    run.sweep
}

/// [`sweep_pristine`]'s state across its runs.
pub(super) struct PristineRun<'a, 'b> {
    pub(super) known: &'a [f64],
    pub(super) last: usize,
    pub(super) next: std::iter::Peekable<std::slice::Iter<'a, (u32, f64)>>,
    pub(super) scale: f64,
    pub(super) pre_cut: f64,
    pub(super) sweep: Sweep,
    pub(super) candidates: &'b mut Vec<(u32, f64, f64)>,
}

impl PristineRun<'_, '_> {
    /// Rows of length `d` for positions `v0..v0 + out.len()`, their columns back to back;
    /// `(1 / pivot, weight)` of that length. Stretches without a seed go through
    /// [`PristineRun::quiet`]; seeds one by one.
    #[inline(always)]
    pub(super) fn rows(
        &mut self,
        v0: usize,
        out: &mut [f64],
        cols: &[u32],
        d: usize,
        (inv, w): (f64, f64),
    ) {
        let end = v0 + out.len();
        let mut v = v0;
        while v < end {
            let seed = self
                .next
                .peek()
                .map_or(end, |s| (s.0 as usize).clamp(v, end));
            if seed > v {
                let (a, z) = (v - v0, seed - v0);
                self.quiet(v, &mut out[a..z], &cols[a * d..z * d], d, inv, w);
                v = seed;
            }
            if v < end {
                let t = teleport(&mut self.next, v);
                let i = v - v0;
                let y = self.row(&cols[i * d..(i + 1) * d], t * inv, w);
                out[i] = y;
                let score = self.scale * (d as f64 * y);
                self.sweep
                    .solved(v, y, score, self.pre_cut, self.candidates);
                v += 1;
            }
        }
    }

    /// Rows without teleport mass.
    #[inline(always)]
    pub(super) fn quiet(
        &mut self,
        v0: usize,
        out: &mut [f64],
        cols: &[u32],
        d: usize,
        inv: f64,
        w: f64,
    ) {
        // `0 * inv`, as a seeded row starts from `t * inv`.
        let start = 0.0 * inv;
        for ((v, yv), row) in (v0..).zip(out.iter_mut()).zip(cols.chunks_exact(d)) {
            let y = self.row(row, start, w);
            *yv = y;
            let score = self.scale * (d as f64 * y);
            self.sweep
                .solved(v, y, score, self.pre_cut, self.candidates);
        }
    }

    /// One row's solution: `start` (its teleport mass over the pivot) minus the weighted
    /// neighbours, in the back-substitution's order.
    #[inline(always)]
    pub(super) fn row(&self, row: &[u32], start: f64, w: f64) -> f64 {
        let mut s = start;
        for &col in row {
            s -= w * self.known[clamp(col, self.last)];
        }
        s
    }
}

/// What every piece of [`residual_sweep`] needs of the query: the seeds by position with their
/// teleport mass, the scale of scores, the candidates' cut, and the forward elimination's
/// largest values.
#[derive(Debug, Clone, Copy)]
pub(super) struct SweepQuery<'a> {
    pub(super) seeds: &'a [(u32, f64)],
    pub(super) scale: f64,
    pub(super) pre_cut: f64,
    /// The largest `|b|`, `|z|` and `|q|` of the forward elimination ([`SolvedRowBound`]).
    pub(super) known: [f64; 3],
}

/// The seeds (by position) from position `lo` on, for [`teleport`].
pub(super) fn seeds_from(
    seeds: &[(u32, f64)],
    lo: usize,
) -> std::iter::Peekable<std::slice::Iter<'_, (u32, f64)>> {
    seeds[seeds.partition_point(|s| (s.0 as usize) < lo)..]
        .iter()
        .peekable()
}

/// Isolated positions `lo..hi`: exact closed form, up to the rounding of one product.
pub(super) fn sweep_isolated(
    lo: usize,
    hi: usize,
    pass: SweepQuery<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let mut sweep = Sweep::default();
    let mut next = seeds_from(pass.seeds, lo);
    for v in lo..hi {
        let t = teleport(&mut next, v);
        sweep.take(v, 0.0, pass.scale * t, 0.0, pass.pre_cut, candidates);
    }
    sweep
}

/// Core positions `lo..hi`, checked against their graph rows.
pub(super) fn sweep_rows(
    factor: &PprFactor,
    y: &[f64],
    lo: usize,
    hi: usize,
    pass: SweepQuery<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let (scale, pre_cut) = (pass.scale, pass.pre_cut);
    let (graph, short, damping) = (&factor.graph, &factor.short[..], factor.damping);
    let cols = &graph.cols[..];
    let last = y.len() - 1;
    let mut sweep = Sweep::default();
    let mut next = seeds_from(pass.seeds, lo);
    for (v, w) in (lo..).zip(graph.offsets[lo..=hi].windows(2)) {
        let t = teleport(&mut next, v);
        let (start, stop) = (w[0] as usize, w[1] as usize);
        let (pulled, pulled_abs) = if stop - start <= SHORT {
            // Fixed width, padded with the zero at `y[n]`: no loop whose length varies from
            // node to node (branch mispredictions cost more than the padding).
            let e = &short[SHORT * v..SHORT * v + SHORT];
            let (a, b, c, d) = (
                y[clamp(e[0], last)],
                y[clamp(e[1], last)],
                y[clamp(e[2], last)],
                y[clamp(e[3], last)],
            );
            ((a + b) + (c + d), (a.abs() + b.abs()) + (c.abs() + d.abs()))
        } else {
            let (mut pulled, mut pulled_abs) = (0.0, 0.0);
            for &u in &cols[start..stop] {
                let yu = y[clamp(u, last)];
                pulled += yu;
                pulled_abs += yu.abs();
            }
            (pulled, pulled_abs)
        };
        let d = (stop - start) as f64;
        let (own, slack) = residual(t, d, y[v], pulled, pulled_abs, damping);
        sweep.y_max = sweep.y_max.max(y[v].abs());
        sweep.take(v, d, scale * own, slack, pre_cut, candidates);
    }
    sweep
}

/// The solved positions `lo..hi` (before the pristine ones, see [`SolvedRowBound`]): scores only, their
/// residual bound comes from the factor once [`residual_sweep`] knows the largest `|y|`; their
/// candidates get it then.
pub(super) fn sweep_solved(
    factor: &PprFactor,
    y: &[f64],
    lo: usize,
    hi: usize,
    pass: SweepQuery<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let (scale, pre_cut) = (pass.scale, pass.pre_cut);
    let mut sweep = Sweep::default();
    for ((v, w), &yv) in (lo..)
        .zip(factor.graph.offsets[lo..=hi].windows(2))
        .zip(&y[lo..hi])
    {
        let score = scale * (f64::from(w[1] - w[0]) * yv);
        sweep.solved(v, yv, score, pre_cut, candidates);
    }
    sweep
}

/// The certified bounds, the top-k and whether the certificate holds, from `ws.y`. Unless
/// `thorough`, a check whose bounds are too loose to set the nodes below the candidates' cut
/// aside fails at once (the caller tightens and checks again). A failed check lowers `shrink`
/// to an estimate of how much narrower the bounds must get.
#[allow(clippy::too_many_arguments)]
pub(super) fn certify(
    factor: &PprFactor,
    k: usize,
    min_score: f64,
    tie: f64,
    thorough: bool,
    ws: &mut CertifiedWorkspace,
    out: &mut CertifiedPpr,
    shrink: &mut f64,
) -> bool {
    let cut = min_score - tie;
    let bounds = match bounded_sweep(factor, cut, thorough, ws) {
        Ok(bounds) => bounds,
        Err(needed) => {
            out.certified = false;
            out.top.clear();
            *shrink = shrink.min(needed);
            return false;
        }
    };
    let (near, max_error) = near_candidates(factor, ws, &bounds, cut);
    out.max_error = max_error;
    out.top = top_k(
        near.iter()
            .map(|&(v, _, _, s)| (factor.order[v as usize], s)),
        k,
        min_score,
    );
    let finite = bounds.sweep.slack_sum.is_finite();
    prove_top(
        factor,
        &ws.seeds,
        (k, min_score, tie),
        near,
        finite,
        out,
        shrink,
    )
}

/// [`bounded_sweep`]'s result: the sweep, and the error bounds it gives on the unscaled
/// solution: `b` per unit of degree, `l1` on the error's L1 norm; `rest_error` bounds the
/// (scaled) error of every node that is not a candidate.
struct SweepBounds {
    sweep: Sweep,
    b: f64,
    l1: f64,
    rest_error: f64,
}

/// The residual sweep and its error bounds. Nodes under half the floor (`cut`) are set aside
/// in bulk when their bounds allow it; when they do not, the sweep runs again with every node
/// a candidate if `thorough`, else fails with how much narrower the bounds must get.
fn bounded_sweep(
    factor: &PprFactor,
    cut: f64,
    thorough: bool,
    ws: &mut CertifiedWorkspace,
) -> Result<SweepBounds, f64> {
    let damping = factor.damping;
    let scale = ws.scale;
    let n = factor.order.len();
    let mut pre_cut = if cut > 0.0 {
        cut / 2.0
    } else {
        f64::NEG_INFINITY
    };
    let needed_rest = |room: f64, error: f64| (room / error).min(TIGHTEN);
    loop {
        let sweep = residual_sweep(
            factor,
            &mut ws.y[..=n],
            &ws.seeds,
            scale,
            pre_cut,
            ws.known,
            ws.threads,
            &mut ws.candidates,
        );
        let b = sweep.b_max * (1.0 + 2.0 * ROUND) / (1.0 - damping);
        // `||e||_1 <= ||r||_1 / (1 - damping)` (W is column-stochastic), padded for the
        // rounding of the sum.
        let l1 = sweep.slack_sum * (1.0 + n as f64 * ROUND) / (1.0 - damping);
        let rest_error = scale
            * (sweep.rest_slack + damping * (factor.max_degree as f64 * b).min(l1))
            * (1.0 + 4.0 * ROUND)
            + 4.0 * ROUND * sweep.rest_score;
        if pre_cut + rest_error < cut || pre_cut == f64::NEG_INFINITY {
            return Ok(SweepBounds {
                sweep,
                b,
                l1,
                rest_error,
            });
        }
        if !thorough {
            return Err(needed_rest(cut - pre_cut, rest_error));
        }
        pre_cut = f64::NEG_INFINITY;
    }
}

/// Each candidate's error bound, and those whose upper bound reaches the cut as
/// (position, lo, hi, score): every other node is below every threshold of the proof. Also
/// the largest bound of any node (the candidates' and `rest_error`).
fn near_candidates(
    factor: &PprFactor,
    ws: &CertifiedWorkspace,
    bounds: &SweepBounds,
    cut: f64,
) -> (Vec<Near>, f64) {
    let damping = factor.damping;
    let (g, scale) = (&factor.graph, ws.scale);
    let (b, l1) = (bounds.b, bounds.l1);
    // Components holding a seed: every other node's exact score is 0 (no teleport lands there,
    // no arc leads there, dangling mass returns to the seeds), so its error is its score's own
    // size, whatever bound the residual gives elsewhere. Without this, with a floor of 0, zeros
    // listed after the seeds' component could fail to certify against each other (two global
    // bounds of ~6e-13 against a tie of 1e-12).
    let mut lit: Vec<u32> = ws
        .seeds
        .iter()
        .map(|&(p, _)| factor.component[p as usize])
        .collect();
    lit.sort_unstable();
    lit.dedup();
    // Error bound of a node: the unscaled solution's, scaled, plus the rounding of the products.
    let bound = |v: usize, score: f64, slack: f64| {
        if lit.binary_search(&factor.component[v]).is_err() {
            return score.abs();
        }
        let d = f64::from(g.offsets[v + 1] - g.offsets[v]);
        scale * (slack + damping * (d * b).min(l1)) * (1.0 + 4.0 * ROUND)
            + 4.0 * ROUND * score.abs()
    };
    let mut near: Vec<Near> = Vec::with_capacity(ws.candidates.len());
    let mut max_error = bounds.rest_error;
    for &(v, s, slack) in &ws.candidates {
        let e = bound(v as usize, s, slack);
        max_error = max_error.max(e);
        if s + e >= cut {
            near.push((v, s - e, s + e, s));
        }
    }
    (near, max_error)
}
