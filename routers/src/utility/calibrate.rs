//! Platt scaling of a probability estimate, and the cross-fitted calibration the utility routers
//! use: K models, each fitted on K-1 parts of the training rows and calibrated on the part it
//! did not see; a prediction is the mean of the K calibrated estimates (scikit-learn's
//! `CalibratedClassifierCV(ensemble=True)`).

/// Clip applied before the logit, so a raw 0 or 1 stays finite.
const EPS: f64 = 1e-4;

fn logit(p: f64) -> f64 {
    let p = p.clamp(EPS, 1.0 - EPS);
    (p / (1.0 - p)).ln()
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// `p' = sigmoid(a * logit(p) + b)`, fitted by Newton's method on the log loss against Platt's
/// smoothed targets `(n+ + 1) / (n+ + 2)` and `1 / (n- + 2)` (Platt 1999).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Platt {
    /// Slope on the logit of the raw estimate.
    pub a: f64,
    /// Intercept.
    pub b: f64,
}

impl Platt {
    /// The identity map (a = 1, b = 0).
    pub const IDENTITY: Platt = Platt { a: 1.0, b: 0.0 };

    /// Fits (a, b) to raw estimates `p` and outcomes `y`; the identity when there is nothing to
    /// fit (no rows).
    pub fn fit(p: &[f64], y: &[bool]) -> Platt {
        let n_pos = y.iter().filter(|&&v| v).count() as f64;
        let n_neg = y.len() as f64 - n_pos;
        if y.is_empty() {
            return Platt::IDENTITY;
        }
        let t_pos = (n_pos + 1.0) / (n_pos + 2.0);
        let t_neg = 1.0 / (n_neg + 2.0);
        let z: Vec<f64> = p.iter().map(|&v| logit(v)).collect();
        let t: Vec<f64> = y.iter().map(|&v| if v { t_pos } else { t_neg }).collect();
        let (mut a, mut b) = (1.0, 0.0);
        for _ in 0..100 {
            // Gradient and Hessian of the mean log loss in (a, b), with a tiny ridge on a
            // so a constant input (every z equal) stays solvable.
            let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (0.0, 0.0, 1e-9, 0.0, 1e-12);
            for (&zi, &ti) in z.iter().zip(&t) {
                let q = sigmoid(a * zi + b);
                let d = q - ti;
                let w = q * (1.0 - q);
                ga += d * zi;
                gb += d;
                haa += w * zi * zi;
                hab += w * zi;
                hbb += w;
            }
            let det = haa * hbb - hab * hab;
            if det.abs() < 1e-300 {
                break;
            }
            let da = (hbb * ga - hab * gb) / det;
            let db = (haa * gb - hab * ga) / det;
            a -= da;
            b -= db;
            if da.abs() < 1e-10 && db.abs() < 1e-10 {
                break;
            }
        }
        if a.is_finite() && b.is_finite() {
            Platt { a, b }
        } else {
            Platt::IDENTITY
        }
    }

    /// The calibrated probability of raw estimate `p`.
    pub fn apply(&self, p: f64) -> f64 {
        sigmoid(self.a * logit(p) + self.b)
    }
}

/// Splits `n` rows into `k` parts, each label's rows dealt in turn after a seeded shuffle, so
/// each part has every label's share to within one row.
pub fn stratified_parts(labels: &[bool], k: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut parts = vec![Vec::new(); k];
    let mut next = 0;
    for want in [true, false] {
        let mut idx: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == want).collect();
        rng.shuffle(&mut idx);
        for i in idx {
            parts[next].push(i);
            next = (next + 1) % k;
        }
    }
    parts.iter_mut().for_each(|p| p.sort_unstable());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platt_recovers_a_known_link() {
        // Outcomes drawn as sigmoid(2 * logit(p) - 0.5): the fit should find a ~ 2, b ~ -0.5.
        let mut rng = crate::rng::SplitMix64::new(3);
        let (mut p, mut y) = (Vec::new(), Vec::new());
        for _ in 0..20_000 {
            let raw = 0.02 + 0.96 * rng.next_f64();
            let truth = sigmoid(2.0 * logit(raw) - 0.5);
            p.push(raw);
            y.push(rng.next_f64() < truth);
        }
        let c = Platt::fit(&p, &y);
        assert!((c.a - 2.0).abs() < 0.1 && (c.b + 0.5).abs() < 0.1, "{c:?}");
    }

    #[test]
    fn platt_of_a_constant_input_is_the_smoothed_rate() {
        // Every raw estimate 0.5 (logit 0): only b moves, to logit((3 + 1/7 ...)) of the
        // smoothed targets' mean; 3 positives of 5 give targets 4/5 and 1/4.
        let c = Platt::fit(&[0.5; 5], &[true, true, true, false, false]);
        let want = (3.0 * 0.8 + 2.0 * 0.25) / 5.0;
        assert!((c.apply(0.5) - want).abs() < 1e-6, "{c:?} {}", c.apply(0.5));
        assert_eq!(Platt::fit(&[], &[]), Platt::IDENTITY);
    }

    #[test]
    fn parts_are_disjoint_stratified_and_cover() {
        let labels: Vec<bool> = (0..100).map(|i| i % 4 == 0).collect();
        let parts = stratified_parts(&labels, 3, 9);
        let mut all: Vec<usize> = parts.concat();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        for p in &parts {
            let pos = p.iter().filter(|&&i| labels[i]).count();
            assert!((8..=9).contains(&pos), "{pos}");
        }
        assert_eq!(parts, stratified_parts(&labels, 3, 9));
    }
}
