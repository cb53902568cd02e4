//! Feature configurations of the paper (Q, C, Q+C), with the probe signals (P) added to any of
//! them, and the names of the six corpus indicators.

use std::fmt;
use std::str::FromStr;

use bench_core::{BenchError, FeatureKind, RoutingSet};

/// The six corpus indicators of Appendix D.2, in column order (`bench_core::CORPUS_INDICATORS`).
pub const INDICATOR_NAMES: [&str; 6] = {
    let mut names = [""; 6];
    let mut i = 0;
    while i < 6 {
        names[i] = bench_core::routing::CORPUS_INDICATORS[i].name;
        i += 1;
    }
    names
};

/// Which feature blocks a router sees: any non-empty combination of the query's own features
/// (Q), the corpus indicators (C) and the per-question probe signals (P).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSet {
    /// Query features only (type, embedding, syntax).
    Q,
    /// Corpus indicators only.
    C,
    /// Both.
    QC,
    /// Probe signals only.
    P,
    /// Query features and probe signals.
    QP,
    /// Corpus indicators and probe signals.
    CP,
    /// All three.
    QCP,
}

impl FeatureSet {
    /// Every configuration, in `--features` help order.
    pub const ALL: [FeatureSet; 7] = [
        FeatureSet::Q,
        FeatureSet::C,
        FeatureSet::QC,
        FeatureSet::P,
        FeatureSet::QP,
        FeatureSet::CP,
        FeatureSet::QCP,
    ];

    /// The command-line spelling (`q`, `q+c`, `q+c+p`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FeatureSet::Q => "q",
            FeatureSet::C => "c",
            FeatureSet::QC => "q+c",
            FeatureSet::P => "p",
            FeatureSet::QP => "q+p",
            FeatureSet::CP => "c+p",
            FeatureSet::QCP => "q+c+p",
        }
    }

    /// Whether the query's own blocks are in.
    pub fn has_query(self) -> bool {
        matches!(
            self,
            FeatureSet::Q | FeatureSet::QC | FeatureSet::QP | FeatureSet::QCP
        )
    }

    /// Whether the corpus indicators are in (every corpus then needs stored metrics).
    pub fn has_corpus(self) -> bool {
        matches!(
            self,
            FeatureSet::C | FeatureSet::QC | FeatureSet::CP | FeatureSet::QCP
        )
    }

    /// Whether the probe signals are in (a router reading them pays the probe).
    pub fn has_probe(self) -> bool {
        matches!(
            self,
            FeatureSet::P | FeatureSet::QP | FeatureSet::CP | FeatureSet::QCP
        )
    }

    /// Whether a block of this kind is in.
    pub fn keeps(self, k: FeatureKind) -> bool {
        match k {
            FeatureKind::CorpusIndicators | FeatureKind::CorpusId => self.has_corpus(),
            FeatureKind::ProbeSignals => self.has_probe(),
            _ => self.has_query(),
        }
    }

    /// The data set restricted to this configuration's blocks.
    pub fn apply(self, set: &RoutingSet) -> RoutingSet {
        set.project(|k| self.keeps(k))
    }
}

impl fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FeatureSet {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        FeatureSet::ALL
            .into_iter()
            .find(|f| f.as_str() == t || (t == "qc" && *f == FeatureSet::QC))
            .ok_or_else(|| {
                BenchError::Invalid(format!(
                    "unknown feature set {s:?}: expected q (query features), c (corpus indicators), p (probe signals) or a combination: q+c, q+p, c+p, q+c+p"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_projects() {
        assert_eq!("q+c".parse::<FeatureSet>().unwrap(), FeatureSet::QC);
        assert_eq!(" C ".parse::<FeatureSet>().unwrap(), FeatureSet::C);
        let err = "qq".parse::<FeatureSet>().unwrap_err().to_string();
        assert!(err.contains("q+c"), "{err}");
        let set = crate::synthetic::synthetic_set(10, 1);
        let c = FeatureSet::C.apply(&set);
        assert_eq!(c.schema.feature_names, INDICATOR_NAMES.to_vec());
        let q = FeatureSet::Q.apply(&set);
        assert_eq!(q.schema.n_features(), set.schema.n_features() - 6);
        assert!(q.schema.block(FeatureKind::CorpusIndicators).is_none());
        assert_eq!(FeatureSet::QC.apply(&set), set);
        assert_eq!(FeatureSet::QCP.apply(&set), set);
        assert_eq!(FeatureSet::P.apply(&set).schema.n_features(), 0);
        assert!(FeatureSet::QP.has_probe() && !FeatureSet::QP.has_corpus());
        for f in FeatureSet::ALL {
            assert_eq!(f.to_string().parse::<FeatureSet>().unwrap(), f);
        }
    }
}
