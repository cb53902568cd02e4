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

/// The rule for a corpus's short name wherever one is given (a generic corpus's `corpus.toml`,
/// `generate --name`, an imported record's corpus): letters, digits, '-', '_' or '.', not only
/// dots, and not a built-in corpus's name. The name becomes part of file names and tables, so
/// a path or markup in it is refused. `Err` says why, to follow `corpus name "x" `.
pub fn check_corpus_name(name: &str) -> std::result::Result<(), &'static str> {
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

/// The known names, for error messages and help texts.
pub(crate) fn known_names() -> String {
    let mut names: Vec<&str> = REGISTRY.iter().map(|c| c.name).collect();
    names.push("jsonl:<dir>");
    names.join(", ")
}
