//! Feature configurations of the paper (Q, C, Q+C) and the names of the six corpus indicators.

use std::fmt;
use std::str::FromStr;

use bench_core::{BenchError, RoutingSet};

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

/// Which feature blocks a router sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSet {
    /// Query features only (type, embedding, syntax).
    Q,
    /// Corpus indicators only.
    C,
    /// Both.
    QC,
}

impl FeatureSet {
    pub const ALL: [FeatureSet; 3] = [FeatureSet::Q, FeatureSet::C, FeatureSet::QC];

    pub fn as_str(self) -> &'static str {
        match self {
            FeatureSet::Q => "q",
            FeatureSet::C => "c",
            FeatureSet::QC => "q+c",
        }
    }

    /// The data set restricted to this configuration's blocks.
    pub fn apply(self, set: &RoutingSet) -> RoutingSet {
        match self {
            FeatureSet::Q => set.project(|k| k.is_query()),
            FeatureSet::C => set.project(|k| !k.is_query()),
            FeatureSet::QC => set.project(|_| true),
        }
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
                    "unknown feature set {s:?}: expected q (query features), c (corpus indicators) or q+c (both)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::FeatureKind;

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
        for f in FeatureSet::ALL {
            assert_eq!(f.to_string().parse::<FeatureSet>().unwrap(), f);
        }
    }
}
