//! The named corpora and the rule for a corpus's short name (a leaf: the loaders check names
//! against it, and the loading entry point looks names up in it).

/// A corpus the registry knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusInfo {
    /// The registry name, as commands take it.
    pub name: &'static str,
    /// One line for `ragrouter corpora`.
    pub description: &'static str,
    /// Folder under the data directory; empty for the embedded demo.
    pub folder: &'static str,
    /// Files inside `folder`: the corpus first, then the questions.
    pub files: &'static [&'static str],
}

impl CorpusInfo {
    /// Whether the corpus ships inside the binary (needs no data directory).
    pub fn is_embedded(&self) -> bool {
        self.folder.is_empty()
    }
}

pub(super) static REGISTRY: [CorpusInfo; 4] = [
    CorpusInfo {
        name: "demo",
        description: "small invented corpus shipped with the binary (16 documents, 20 questions)",
        folder: "",
        files: &[],
    },
    CorpusInfo {
        name: "medical",
        description: "GraphRAG-Bench Medical: one textbook (221,495 tokens, 538 chunks), \
                      1,896 questions (factual, reasoning, summary)",
        folder: "graphrag-bench-medical",
        files: &["medical.json", "medical_questions.json"],
    },
    CorpusInfo {
        name: "2wiki",
        description: "2WikiMultihopQA, HippoRAG subset: 6,119 passages, 1,000 multi-hop questions",
        folder: "2wiki-hipporag",
        files: &[
            "2wikimultihopqa_corpus.json",
            "2wikimultihop_questions.json",
        ],
    },
    CorpusInfo {
        name: "musique-dev",
        description: "MuSiQue, HippoRAG tuning set: 1,890 passages, 100 multi-hop questions",
        folder: "musique-hipporag-dev",
        files: &["musique_train_corpus.json", "musique_train.json"],
    },
];

/// The named corpora (the generic `jsonl:<dir>` form is not listed: it has no fixed place).
pub fn registry() -> &'static [CorpusInfo] {
    &REGISTRY
}

/// The most characters a corpus name may have: cache file names add up to about 90 characters
/// to it (a hash and a suffix), and a file name may have at most 255 bytes (every character of
/// the name takes one byte there: any other than ASCII letters, digits, '-' and '_' is
/// written as '_').
pub const MAX_CORPUS_NAME_CHARS: usize = 100;

/// The rule for a corpus's short name wherever one is given (a generic corpus's `corpus.toml`,
/// `generate --name`, an imported record's corpus): letters, digits, '-', '_' or '.', not only
/// dots, at most [`MAX_CORPUS_NAME_CHARS`] characters, and not a built-in corpus's name. The
/// name becomes part of file names and tables, so a path or markup in it is refused. `Err`
/// says why, to follow `corpus name "x" `.
pub fn check_corpus_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.chars().count() > MAX_CORPUS_NAME_CHARS {
        return Err("is too long: a corpus name has at most 100 characters");
    }
    if name.is_empty()
        || name.chars().all(|c| c == '.')
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("must be letters, digits, '-', '_' or '.' (and not only dots)");
    }
    if REGISTRY.iter().any(|c| c.name == name) {
        return Err("is a built-in corpus's name");
    }
    Ok(())
}

/// A corpus name as error messages quote it: one over the length limit is cut, with its
/// length, so that the reason after it stays on a readable line.
pub fn quoted_name(name: &str) -> String {
    let n = name.chars().count();
    if n <= MAX_CORPUS_NAME_CHARS {
        return format!("{name:?}");
    }
    let head: String = name.chars().take(24).collect();
    format!("{head:?}... ({n} characters)")
}

/// The known names, for error messages and help texts.
pub(crate) fn known_names() -> String {
    let mut names: Vec<&str> = REGISTRY.iter().map(|c| c.name).collect();
    names.push("jsonl:<dir>");
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_longer_than_the_limit_are_refused() {
        assert!(check_corpus_name(&"n".repeat(MAX_CORPUS_NAME_CHARS)).is_ok());
        assert!(check_corpus_name(&"é".repeat(MAX_CORPUS_NAME_CHARS)).is_ok());
        let why = check_corpus_name(&"n".repeat(MAX_CORPUS_NAME_CHARS + 1)).unwrap_err();
        assert!(why.contains("at most 100 characters"), "{why}");
        let long = "n".repeat(300);
        assert_eq!(
            quoted_name(&long),
            format!("{:?}... (300 characters)", &long[..24])
        );
        assert_eq!(quoted_name("nq"), "\"nq\"");
    }
}
