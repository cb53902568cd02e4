//! Loaders on the real shared data sets (counts, types, evidence mapping) and on bad inputs.

use bench_core::config::{ChunkingConfig, DataConfig};
use bench_core::{Corpus, QueryType};
use corpora::{load_corpus, sample_stratified, CorpusError, LoadOptions};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn datasets() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/datasets"
    ))
}

fn opts() -> LoadOptions {
    LoadOptions {
        data_dir: Some(datasets()),
        ..LoadOptions::default()
    }
}

/// Each real corpus is loaded once per test binary: tests share it.
fn real(name: &'static str) -> &'static Corpus {
    static MEDICAL: OnceLock<Corpus> = OnceLock::new();
    static TWOWIKI: OnceLock<Corpus> = OnceLock::new();
    static MUSIQUE: OnceLock<Corpus> = OnceLock::new();
    let cell = match name {
        "medical" => &MEDICAL,
        "2wiki" => &TWOWIKI,
        "musique-dev" => &MUSIQUE,
        other => panic!("no real corpus {other}"),
    };
    cell.get_or_init(|| {
        load_corpus(name, &opts()).unwrap_or_else(|e| panic!("loading {name}: {e}"))
    })
}

fn type_counts(c: &Corpus) -> BTreeMap<QueryType, usize> {
    let mut m = BTreeMap::new();
    for q in &c.queries {
        *m.entry(q.qtype).or_default() += 1;
    }
    m
}

/// Invariants every loaded corpus keeps.
fn check_invariants(c: &Corpus) {
    let ids: HashSet<&str> = c.chunks.iter().map(|ch| ch.id.as_str()).collect();
    assert_eq!(ids.len(), c.chunks.len(), "chunk ids are unique");
    for (i, ch) in c.chunks.iter().enumerate() {
        assert_eq!(ch.index as usize, i);
        assert!(ch.tokens > 0 && ch.tokens <= 512);
        assert!(ch.id.starts_with(&format!("{}#", ch.document)));
    }
    let qids: HashSet<&str> = c.queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(qids.len(), c.queries.len(), "query ids are unique");
    for q in &c.queries {
        assert!(!q.text.trim().is_empty() && !q.gold.answer.trim().is_empty());
        assert!(q.gold_chunks.iter().all(|g| ids.contains(g.as_str())));
    }
    assert_eq!(c.content_hash.len(), 64);
}

#[test]
fn medical_matches_the_paper() {
    let c = real("medical");
    check_invariants(c);
    assert_eq!(c.name, "medical");
    assert!(c.source.ends_with("graphrag-bench-medical"), "{}", c.source);
    assert_eq!(c.documents.len(), 1);
    // The context alone, untitled, is what gives the paper's numbers (Tables 4 and 9).
    assert_eq!(c.documents[0].title, "");
    assert_eq!(
        bench_core::tokens::count(&c.documents[0].chunk_source()),
        221_495
    );
    assert_eq!(c.chunks.len(), 538);
    assert_eq!(c.chunks[0].id, "d0#0");
    assert!(c.chunks[..537].iter().all(|ch| ch.tokens == 512));
    // 537 full windows at stride 412 plus the tail: the stream's length again.
    assert_eq!(412 * 537 + u64::from(c.chunks[537].tokens), 221_495);

    let counts = type_counts(c);
    assert_eq!(counts.get(&QueryType::Factual), Some(&1098));
    assert_eq!(counts.get(&QueryType::Reasoning), Some(&509));
    assert_eq!(counts.get(&QueryType::Summary), Some(&289));
    assert_eq!(counts.get(&QueryType::Other), None);
    assert_eq!(c.queries.len(), 1_896);

    // Evidence sentences are mostly paraphrases of the book: few appear in it verbatim.
    assert!(c.queries.iter().all(|q| !q.evidence.is_empty()));
    // Gold chunks: chunks whose normalised text holds one of the sentences verbatim.
    assert_eq!(c.queries_with_gold_chunks(), 46);
}

#[test]
fn medical_keeps_creative_questions_as_other_when_asked() {
    let c = load_corpus(
        "medical",
        &LoadOptions {
            data: DataConfig {
                include_creative: true,
                ..DataConfig::default()
            },
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(c.queries.len(), 2_062);
    assert_eq!(type_counts(&c).get(&QueryType::Other), Some(&166));
    assert_ne!(c.content_hash, real("medical").content_hash);

    // `--sample 50` on the four-type set: every type, each within one of its exact share.
    let counts = type_counts(&c);
    let sample = |seed| sample_stratified(&c.queries, 50, seed);
    let s = sample(42);
    assert_eq!(s.len(), 50);
    let got = type_counts(&Corpus {
        queries: s.clone(),
        ..c.clone()
    });
    assert_eq!(got.len(), 4, "{got:?}");
    for (t, &n) in &counts {
        let exact = 50.0 * n as f64 / 2_062.0;
        assert!(
            (got[t] as f64 - exact).abs() < 1.0,
            "{t:?}: {} for an exact share of {exact:.2}",
            got[t]
        );
    }
    // Seeded, in file order, without repeats.
    assert_eq!(sample(42), s);
    assert_ne!(sample(7), s);
    let pos = |id: &str| c.queries.iter().position(|q| q.id == id).unwrap();
    assert!(s.windows(2).all(|w| pos(&w[0].id) < pos(&w[1].id)));
}

#[test]
fn twowiki_passages_chunk_and_evidence_maps_by_title() {
    let c = real("2wiki");
    check_invariants(c);
    assert_eq!(c.documents.len(), 6_119);
    // Not quite one chunk per passage, unlike decisions.md's expectation: a few 2Wiki passages
    // are whole articles of up to ~1,400 tokens and take several windows.
    let multi: Vec<&str> = c
        .chunks
        .iter()
        .filter(|ch| ch.id.ends_with("#1"))
        .map(|ch| ch.document.as_str())
        .collect();
    assert_eq!((c.chunks.len(), multi.len()), (6_241, 115));
    assert_eq!(c.documents[0].id, "p0");
    assert_eq!(c.queries.len(), 1_000);
    assert!(c.queries.iter().all(|q| q.qtype == QueryType::Reasoning));

    let first = &c.queries[0];
    assert_eq!(first.gold.answer, "20 March 851");
    assert_eq!(
        first.evidence[0],
        r#"["Lothair II","mother","Ermengarde of Tours"]"#
    );
    let mut gold_titles: Vec<&str> = first
        .gold_chunks
        .iter()
        .map(|id| {
            let doc = id.split('#').next().unwrap();
            c.documents
                .iter()
                .find(|d| d.id == doc)
                .unwrap()
                .title
                .as_str()
        })
        .collect();
    gold_titles.dedup();
    assert_eq!(gold_titles, ["Lothair II", "Ermengarde of Tours"]);

    // Subjects match titles exactly for 761 questions (SOURCE.txt); normalisation adds more.
    assert_eq!(c.queries_with_gold_chunks(), 977);
}

#[test]
fn musique_gold_passages_map_for_every_question() {
    let c = real("musique-dev");
    check_invariants(c);
    assert_eq!(c.documents.len(), 1_890);
    assert_eq!(c.chunks.len(), 1_890, "one chunk per passage");
    assert_eq!(c.queries.len(), 100);
    assert!(c.queries.iter().all(|q| q.qtype == QueryType::Reasoning));
    assert_eq!(c.queries_with_gold_chunks(), 100);
    // Every supporting paragraph finds its passage (title AND text: titles repeat).
    let supporting: usize = c.queries.iter().map(|q| q.evidence.len()).sum();
    let gold: usize = c.queries.iter().map(|q| q.gold_chunks.len()).sum();
    assert_eq!((supporting, gold), (237, 237));
    // A question's hop count (in its id) is its number of gold passages.
    for q in &c.queries {
        let hops: usize = q.id[..1].parse().unwrap();
        assert_eq!(q.gold_chunks.len(), hops, "{}", q.id);
    }
    let with_aliases = c
        .queries
        .iter()
        .filter(|q| !q.gold.aliases.is_empty())
        .count();
    assert_eq!(with_aliases, 28);
}

#[test]
fn loading_is_deterministic_and_hash_follows_chunking() {
    let again = load_corpus("musique-dev", &opts()).unwrap();
    let first = real("musique-dev");
    assert_eq!(again.content_hash, first.content_hash);
    assert_eq!(again.chunks, first.chunks);
    let small = load_corpus(
        "musique-dev",
        &LoadOptions {
            chunking: ChunkingConfig {
                size: 64,
                overlap: 16,
            },
            ..opts()
        },
    )
    .unwrap();
    assert!(small.chunks.len() > first.chunks.len());
    assert_ne!(small.content_hash, first.content_hash);
    // Smaller windows split passages; a gold passage's chunks are all gold.
    let gold: usize = small.queries.iter().map(|q| q.gold_chunks.len()).sum();
    assert!(gold > 237);
}

#[test]
fn demo_loads_without_a_data_directory() {
    let c = load_corpus(
        "demo",
        &LoadOptions {
            data_dir: Some(PathBuf::from("/nonexistent")),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    check_invariants(&c);
    assert_eq!(c.source, "embedded:corpora/data/demo");
    assert_eq!(c.documents.len(), c.chunks.len());
    assert!((12..=20).contains(&c.documents.len()));
    assert!((15..=24).contains(&c.queries.len()));
    let counts = type_counts(&c);
    for t in [QueryType::Factual, QueryType::Reasoning, QueryType::Summary] {
        assert!(counts.get(&t).copied().unwrap_or(0) >= 3, "{t}");
    }
    for q in &c.queries {
        // Every evidence title is a document, so every question has gold chunks ...
        assert_eq!(q.gold_chunks.len(), q.evidence.len(), "{}", q.id);
        // ... and the answer is written in one of them.
        let texts: Vec<&str> = q
            .gold_chunks
            .iter()
            .map(|id| {
                c.chunks
                    .iter()
                    .find(|ch| &ch.id == id)
                    .unwrap()
                    .text
                    .as_str()
            })
            .collect();
        assert!(
            texts.iter().any(|t| t.contains(&q.gold.answer)),
            "{}: {:?}",
            q.id,
            q.gold.answer
        );
        if q.qtype == QueryType::Reasoning {
            assert!(q.gold_chunks.len() >= 2, "{} needs two documents", q.id);
        }
    }
}

// ---- the generic format and bad inputs -------------------------------------------------------

fn write_jsonl(dir: &Path, corpus: &str, queries: &str) -> String {
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    format!("jsonl:{}", dir.display())
}

const GOOD_CORPUS: &str = r#"{"id": "a", "title": "Alpha", "text": "Alpha is the first letter. It comes before beta."}
{"id": "b", "text": "Beta follows alpha in the Greek alphabet."}
"#;
const GOOD_QUERIES: &str = r#"{"id": "1", "question": "What is first?", "answers": ["Alpha", "A"], "aliases": ["α"], "type": "factual", "evidence": ["Alpha"]}

{"id": "2", "question": "What follows alpha?", "answers": ["Beta"], "type": "Reasoning", "evidence": ["beta follows  ALPHA", "Missing"]}
{"id": "3", "question": "Summarise.", "answers": ["letters"], "type": "summary"}
"#;

fn jsonl_err(corpus: &str, queries: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let name = write_jsonl(dir.path(), corpus, queries);
    let e = load_corpus(&name, &LoadOptions::default()).unwrap_err();
    (e.to_string(), dir.path().display().to_string())
}

#[test]
fn generic_format_reads_titles_sentences_answers_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let name = write_jsonl(dir.path(), GOOD_CORPUS, GOOD_QUERIES);
    // "Missing" matches nothing: an error naming the question's line, unless allowed.
    let e = load_corpus(&name, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("queries.jsonl: line 3 (id \"2\"): field \"evidence\": \"Missing\" matched no document id, title or sentence")
            && e.contains("--allow-missing-evidence"),
        "{e}"
    );
    let allow = LoadOptions {
        allow_missing_evidence: true,
        ..LoadOptions::default()
    };
    let c = load_corpus(&name, &allow).unwrap();
    check_invariants(&c);
    assert_eq!(c.source, dir.path().display().to_string());
    assert_eq!(
        c.chunks[0].text,
        "Alpha\nAlpha is the first letter. It comes before beta."
    );
    assert_eq!(
        c.chunks[1].text,
        "Beta follows alpha in the Greek alphabet."
    );
    let q = &c.queries;
    assert_eq!(q[0].gold.answer, "Alpha");
    assert_eq!(q[0].gold.aliases, ["A", "α"]);
    assert_eq!(q[0].gold_chunks, ["a#0"]);
    assert_eq!(q[1].qtype, QueryType::Reasoning);
    assert_eq!(q[1].evidence, ["beta follows  ALPHA", "Missing"]);
    assert_eq!(q[1].gold_chunks, ["b#0"]);
    assert_eq!(q[2].qtype, QueryType::Summary);
    assert!(q[2].gold_chunks.is_empty());
    assert_eq!(c.queries_with_gold_chunks(), 2);
}

/// Evidence may name documents by id: the id is tried first, then the title, then a sentence.
#[test]
fn generic_format_resolves_document_ids_before_titles_and_sentences() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = r#"{"id": "a", "title": "b", "text": "Alpha is the first letter."}
{"id": "b", "text": "Beta follows alpha."}
"#;
    let queries = r#"{"id": "1", "question": "What follows alpha?", "answers": ["Beta"], "type": "factual", "evidence": ["b"]}
{"id": "2", "question": "What is first?", "answers": ["Alpha"], "type": "factual", "evidence": ["a", "Beta follows alpha"]}
{"id": "3", "question": "What is last?", "answers": ["Omega"], "type": "factual", "evidence": ["z"]}
"#;
    let name = write_jsonl(dir.path(), corpus, queries);
    let e = load_corpus(&name, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3 (id \"3\"): field \"evidence\": \"z\" matched no"),
        "{e}"
    );
    let allow = LoadOptions {
        allow_missing_evidence: true,
        ..LoadOptions::default()
    };
    let c = load_corpus(&name, &allow).unwrap();
    // "b" is document b's id and document a's title: the id wins.
    assert_eq!(c.queries[0].gold_chunks, ["b#0"]);
    assert_eq!(c.queries[1].gold_chunks, ["a#0", "b#0"]);
    // An id that names no document and no title, and no text holds: no gold chunk.
    assert!(c.queries[2].gold_chunks.is_empty());
    assert_eq!(c.queries_with_gold_chunks(), 2);
}

/// Evidence that is all document ids: every question gets its documents' chunks, nothing fails.
#[test]
fn generic_format_with_id_evidence_gets_gold_chunks_for_every_question() {
    let dir = tempfile::tempdir().unwrap();
    let long = vec!["Word after word in a long book."; 120].join(" ");
    let corpus = format!(
        "{{\"id\": \"book\", \"text\": \"{long}\"}}\n{{\"id\": \"note\", \"text\": \"A short note.\"}}\n"
    );
    let queries = r#"{"id": "1", "question": "q1?", "answers": ["word"], "type": "factual", "evidence": ["book"]}
{"id": "2", "question": "q2?", "answers": ["note"], "type": "summary", "evidence": ["note", "book"]}
"#;
    let name = write_jsonl(dir.path(), &corpus, queries);
    let c = load_corpus(&name, &LoadOptions::default()).unwrap();
    let book: Vec<&str> = c
        .chunks
        .iter()
        .filter(|ch| ch.document == "book")
        .map(|ch| ch.id.as_str())
        .collect();
    assert!(book.len() > 1, "the book spans several chunks");
    assert_eq!(c.queries[0].gold_chunks, book);
    assert_eq!(c.queries[0].gold_documents, ["book"]);
    assert_eq!(c.queries[1].gold_documents, ["book", "note"]);
    assert_eq!(c.queries[1].gold_chunks.len(), book.len() + 1);
    assert_eq!(c.queries_with_gold_chunks(), 2);
}

/// A generic-format corpus is named by corpus.toml, else by its folder; the same folder by two
/// paths is one corpus (name and content hash); bad names say where to set another.
#[test]
fn generic_corpora_have_short_names_independent_of_the_path() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("letters");
    std::fs::create_dir(&dir).unwrap();
    let by_abs = write_jsonl(
        &dir,
        GOOD_CORPUS,
        GOOD_QUERIES.replace(", \"Missing\"", "").as_str(),
    );
    let by_dots = format!("jsonl:{}/../letters", dir.display());
    let (a, b) = (
        load_corpus(&by_abs, &LoadOptions::default()).unwrap(),
        load_corpus(&by_dots, &LoadOptions::default()).unwrap(),
    );
    assert_eq!((a.name.as_str(), b.name.as_str()), ("letters", "letters"));
    assert_eq!(a.content_hash, b.content_hash);

    std::fs::write(
        dir.join("corpus.toml"),
        "name = \"greek-letters\"\ndescription = \"test\"\n",
    )
    .unwrap();
    let c = load_corpus(&by_abs, &LoadOptions::default()).unwrap();
    assert_eq!(c.name, "greek-letters");
    for (toml, expect) in [
        ("name = \"2wiki\"", "is a built-in corpus's name"),
        ("name = \"two words\"", "must be letters, digits"),
        ("title = \"x\"", "unknown field"),
    ] {
        std::fs::write(dir.join("corpus.toml"), toml).unwrap();
        let e = load_corpus(&by_abs, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("corpus.toml") && e.contains(expect), "{e}");
    }
}

#[test]
fn malformed_json_names_file_and_line() {
    let (e, dir) = jsonl_err(GOOD_CORPUS, "{\"id\": \"1\",\n");
    assert!(
        e.contains(&format!("{dir}/queries.jsonl: line 1 column")),
        "{e}"
    );
    assert!(e.contains("invalid JSON"), "{e}");
    let (e, dir) = jsonl_err(
        "{\"id\": \"a\", \"text\": \"x\"}\n{\"id\": \"b\" \"text\": 1}\n",
        GOOD_QUERIES,
    );
    assert!(
        e.contains(&format!("{dir}/corpus.jsonl: line 2 column")),
        "{e}"
    );

    // A native JSON array file: serde_json's line and column.
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("musique-hipporag-dev");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("musique_train_corpus.json"),
        "[\n  {\"title\": \"T\", \"text\": \"x\"},\n  {\"title\": \"U\" \"text\": \"y\"}\n]",
    )
    .unwrap();
    std::fs::write(folder.join("musique_train.json"), "[]").unwrap();
    let e = load_corpus(
        "musique-dev",
        &LoadOptions {
            data_dir: Some(root.path().to_path_buf()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("musique_train_corpus.json: line 3 column"),
        "{e}"
    );
}

#[test]
fn missing_or_mistyped_fields_name_record_and_field() {
    let (e, dir) = jsonl_err(
        GOOD_CORPUS,
        "{\"id\": \"1\", \"question\": \"Q?\", \"answers\": [\"x\"], \"type\": \"factual\"}\n{\"id\": \"2\", \"answers\": [\"x\"], \"type\": \"factual\"}\n",
    );
    assert_eq!(
        e,
        format!("{dir}/queries.jsonl: line 2 (id \"2\"): field \"question\": missing (expected a non-empty string)")
    );
    let (e, _) = jsonl_err("{\"id\": \"a\", \"text\": 5}\n", GOOD_QUERIES);
    assert!(e.contains("corpus.jsonl: line 1 (id \"a\"): field \"text\": expected a non-empty string, found number 5"), "{e}");
    let (e, _) = jsonl_err(
        GOOD_CORPUS,
        "{\"id\": \"1\", \"question\": \"  \", \"answers\": [\"x\"], \"type\": \"factual\"}\n",
    );
    assert!(e.contains("line 1 (id \"1\"): field \"question\": expected a non-empty string, found an empty string"), "{e}");
    let (e, _) = jsonl_err(
        GOOD_CORPUS,
        "{\"id\": \"1\", \"question\": \"Q\", \"answers\": [], \"type\": \"factual\"}\n",
    );
    assert!(
        e.contains("field \"answers\"") && e.contains("first element is the answer"),
        "{e}"
    );
    let (e, _) = jsonl_err(
        GOOD_CORPUS,
        "{\"id\": \"1\", \"question\": \"Q\", \"answers\": [\"x\"], \"type\": \"creative\"}\n",
    );
    assert!(
        e.contains("field \"type\"") && e.contains("factual, reasoning, summary or other"),
        "{e}"
    );
    let (e, _) = jsonl_err(GOOD_CORPUS, "{\"id\": \"1\", \"question\": \"Q\", \"answers\": [\"x\"], \"type\": \"factual\", \"evidence\": \"Alpha\"}\n");
    assert!(
        e.contains("field \"evidence\": expected an array of strings, found a string"),
        "{e}"
    );

    // A native file: the record index, its id and the field.
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("2wiki-hipporag");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("2wikimultihopqa_corpus.json"),
        r#"[{"title": "A", "text": "a"}]"#,
    )
    .unwrap();
    std::fs::write(
        folder.join("2wikimultihop_questions.json"),
        r#"[{"id": "x", "question": "Q", "answer": "a", "evidence": []},
            {"id": "y", "question": "Q", "evidence": [["A", "r", "o"]]}]"#,
    )
    .unwrap();
    let e = load_corpus(
        "2wiki",
        &LoadOptions {
            data_dir: Some(root.path().to_path_buf()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with("2wikimultihop_questions.json: record [1] (id \"y\"): field \"answer\": missing (expected a non-empty string)"),
        "{e}"
    );
}

#[test]
fn duplicate_ids_are_errors() {
    let (e, dir) = jsonl_err(
        "{\"id\": \"a\", \"text\": \"x\"}\n{\"id\": \"b\", \"text\": \"y\"}\n{\"id\": \"a\", \"text\": \"z\"}\n",
        GOOD_QUERIES,
    );
    assert_eq!(
        e,
        format!("{dir}/corpus.jsonl: line 3 (id \"a\"): field \"id\": duplicate document id \"a\" (first at line 1)")
    );
    let dup = format!("{GOOD_QUERIES}{{\"id\": \"2\", \"question\": \"Again?\", \"answers\": [\"x\"], \"type\": \"other\"}}\n");
    let (e, dir) = jsonl_err(GOOD_CORPUS, &dup);
    assert_eq!(
        e,
        format!("{dir}/queries.jsonl: line 5 (id \"2\"): field \"id\": duplicate query id \"2\" (first at line 3 (id \"2\"))")
    );
}

#[test]
fn empty_corpus_and_empty_question_list_are_errors() {
    let (e, dir) = jsonl_err("\n\n", GOOD_QUERIES);
    assert!(
        e.starts_with(&format!(
            "{dir}/corpus.jsonl: whole file: the corpus is empty"
        )),
        "{e}"
    );
    let (e, dir) = jsonl_err(GOOD_CORPUS, "");
    assert!(
        e.starts_with(&format!("{dir}/queries.jsonl: whole file: no questions")),
        "{e}"
    );
}

#[test]
fn unknown_corpus_and_missing_files_say_what_to_do() {
    let e = load_corpus("hotpotqa", &opts()).unwrap_err();
    assert!(matches!(e, CorpusError::UnknownCorpus { .. }));
    let e = e.to_string();
    assert!(e.contains("\"hotpotqa\""), "{e}");
    for known in ["demo", "medical", "2wiki", "musique-dev", "jsonl:<dir>"] {
        assert!(e.contains(known), "{e}");
    }
    let empty = tempfile::tempdir().unwrap();
    let e = load_corpus(
        "medical",
        &LoadOptions {
            data_dir: Some(empty.path().to_path_buf()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(&format!(
            "{}/graphrag-bench-medical/medical.json not found",
            empty.path().display()
        )),
        "{e}"
    );
    assert!(
        e.contains("--data-dir") && e.contains("RAGROUTER_DATA_DIR"),
        "{e}"
    );
    let e = load_corpus(
        &format!("jsonl:{}", empty.path().display()),
        &LoadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("corpus.jsonl not found"), "{e}");
}

#[test]
fn registry_reports_where_real_files_are() {
    let dd = corpora::find_data_dir(Some(&datasets()));
    for c in &dd.corpora {
        assert!(c.available, "{} not found: {:?}", c.info.name, c.files);
    }
    assert_eq!(dd.location("medical").unwrap().files.len(), 2);
}
