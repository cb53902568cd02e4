//! Fixtures the store's tests share: a one-document corpus with two questions, a run spec and
//! a result record.

#![allow(dead_code)] // each test binary uses its own subset

use bench_core::{
    BenchConfig, Chunk, Corpus, Document, GoldAnswer, JudgeLabel, ParadigmId, ParadigmOutput,
    QualityMetrics, Query, QueryType, ResultRecord,
};
use store::RunSpec;

pub fn corpus() -> Corpus {
    let q = |id: &str, t: QueryType| Query {
        id: id.into(),
        text: format!("question {id}"),
        qtype: t,
        gold: GoldAnswer {
            answer: "a".into(),
            aliases: vec![],
        },
        evidence: vec![],
        gold_chunks: vec!["d#0".into()],
        gold_documents: Vec::new(),
        statements: Vec::new(),
    };
    Corpus {
        name: "t".into(),
        documents: vec![Document {
            id: "d".into(),
            title: String::new(),
            text: "text".into(),
        }],
        chunks: vec![Chunk {
            id: "d#0".into(),
            index: 0,
            document: "d".into(),
            text: "text".into(),
            tokens: 1,
        }],
        queries: vec![q("q1", QueryType::Factual), q("q2", QueryType::Reasoning)],
        content_hash: "h1".into(),
        source: "test".into(),
    }
}

pub fn spec<'a>(c: &'a Corpus, cfg: &'a BenchConfig) -> RunSpec<'a> {
    RunSpec {
        corpus: c,
        config: cfg,
        mode: bench_core::Mode::Offline,
        reader: "r".into(),
        judge: "j".into(),
        embedder: "e".into(),
        extractor: String::new(),
        crate_version: "0".into(),
        llm: None,
    }
}

pub fn record(
    q: &str,
    p: ParadigmId,
    label: Option<JudgeLabel>,
    error: Option<&str>,
) -> ResultRecord {
    ResultRecord {
        query_id: q.into(),
        paradigm: p,
        output: ParadigmOutput {
            answer: "an answer".into(),
            context_tokens: 10,
            ..Default::default()
        },
        judge: label,
        quality: QualityMetrics {
            evidence_recall: Some(1.0),
            ..Default::default()
        },
        judge_tokens_in: 0,
        judge_tokens_out: 0,
        mode: "offline".into(),
        config_hash: "c".into(),
        error: error.map(str::to_owned),
        graph_build: None,
    }
}
