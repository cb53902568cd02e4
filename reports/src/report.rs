//! Writes the full report into a directory: figures (SVG + PNG), tables (Markdown + CSV), raw
//! exports (CSV + JSON lines) and `report.html`. Everything is written into a staging folder
//! first, which replaces the output folder only when all of it succeeded (`outdir`): a failed
//! report leaves the previous report as it was, and a new one never leaves an old one's files.

use std::fs;
use std::path::{Path, PathBuf};

use bench_core::{BenchError, QueryType, Result};

use crate::figures::{Drawn, FigureInput, Section, FIGURES};
use crate::html::{document, Block};
use crate::model::{ReportData, RouteEval};
use crate::tables::{self, Table};
use crate::{export, pareto};

/// What was written, for the command's summary.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Paths relative to the output directory, in writing order.
    pub files: Vec<PathBuf>,
    /// Parts that could not be drawn and why (missing router evaluations, metrics).
    pub missing: Vec<String>,
}

/// The evaluation whose routers appear in Figure 7 and Table 3: the newest with joint features
/// (`q+c`, the paper's setting), k-fold before other splits, else the newest of any kind.
pub fn main_eval(evals: &[RouteEval]) -> Option<&RouteEval> {
    evals
        .iter()
        .filter(|e| e.spec.features == "q+c")
        .max_by_key(|e| (e.spec.split == "kfold", e.id))
        .or_else(|| evals.iter().max_by_key(|e| (e.spec.split == "kfold", e.id)))
}

struct Staging {
    dir: PathBuf,
    files: Vec<PathBuf>,
}

impl Staging {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<()> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| BenchError::io(format!("creating {}", parent.display()), e))?;
        }
        fs::write(&path, bytes)
            .map_err(|e| BenchError::io(format!("writing {}", path.display()), e))?;
        self.files.push(PathBuf::from(rel));
        Ok(())
    }

    fn table(&mut self, md: &Table, csv: &Table) -> Result<()> {
        self.put(
            &format!("tables/{}.md", md.name),
            md.to_markdown().as_bytes(),
        )?;
        self.put(&format!("tables/{}.csv", csv.name), csv.to_csv().as_bytes())
    }
}

/// Writes the report of `data` into the folder `out`: everything goes into a fresh sibling
/// folder, with a manifest of what was written, which then takes the place of `out` (see
/// `outdir`). A folder holding files no earlier report wrote is refused before any work.
pub fn write_report(data: &ReportData, out: &Path) -> Result<Written> {
    crate::outdir::check_out_dir(out)?;
    let dir = crate::outdir::staging_dir(out)?;
    let mut staging = Staging {
        dir: dir.clone(),
        files: Vec::new(),
    };
    let result = build(data, &mut staging).and_then(|missing| {
        crate::outdir::swap_in(&dir, out, &staging.files)?;
        Ok(Written {
            files: staging.files.clone(),
            missing,
        })
    });
    if dir.exists() {
        let _ = fs::remove_dir_all(&dir);
    }
    result
}

/// The report's parts in page order; returns what could not be drawn.
fn build(data: &ReportData, st: &mut Staging) -> Result<Vec<String>> {
    let corpora = data.corpus_names();
    let modes = modes(data);
    let eval = main_eval(&data.evals);
    let basis = data.cost_basis();
    let router_rows = eval.map_or(&[][..], |e| &e.rows[..]);
    let panels = pareto::panels(&data.tuples, &corpora, router_rows, &basis);
    let input = FigureInput {
        data,
        corpora: &corpora,
        modes: &modes,
        eval,
        basis: &basis,
        panels: &panels,
    };
    let mut page = Page {
        st,
        blocks: Vec::new(),
        missing: Vec::new(),
    };
    page.overview(&input);
    page.cost_section(&input)?;
    page.paradigms_section(&input)?;
    page.routers_section(&input)?;
    page.corpora_section(&input)?;
    page.token_section(data)?;
    page.blocks.push(Block::Heading("Example questions".into()));
    page.blocks.push(Block::Table(examples(data, 5)));
    exports(data, page.st)?;
    provenance(data, &mut page.blocks);
    let html = document("ragrouter-bench report", &page.blocks);
    page.st.put("report.html", html.as_bytes())?;
    Ok(page.missing)
}

/// The runs' modes, sorted, without repeats, joined with `, `.
fn modes(data: &ReportData) -> String {
    let mut m: Vec<String> = data.runs.iter().map(|r| r.mode.label()).collect();
    m.sort();
    m.dedup();
    m.join(", ")
}

/// The report under construction: its staging folder, the page's blocks, what is missing.
struct Page<'s> {
    st: &'s mut Staging,
    blocks: Vec<Block>,
    missing: Vec<String>,
}

impl Page<'_> {
    /// A note on the page that is also listed as missing in the command's summary.
    fn missing(&mut self, m: String) {
        self.blocks.push(Block::Note(m.clone()));
        self.missing.push(m);
    }

    /// Draws the registry's figures of `section` here, or a note for each that is missing.
    fn figures(&mut self, section: Section, input: &FigureInput<'_>) -> Result<()> {
        for entry in FIGURES.iter().filter(|e| e.section == section) {
            let rel_png = format!("figures/{}.png", entry.stem);
            let png = self.st.dir.join(&rel_png);
            if let Some(parent) = png.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| BenchError::io(format!("creating {}", parent.display()), e))?;
            }
            match (entry.draw)(input, &png)? {
                Drawn::Figure { svg, caption } => {
                    self.st.files.push(PathBuf::from(rel_png));
                    self.st
                        .put(&format!("figures/{}.svg", entry.stem), svg.as_bytes())?;
                    self.blocks.push(Block::Figure { svg, caption });
                }
                Drawn::Missing(m) => self.missing(m),
            }
        }
        Ok(())
    }

    /// The opening paragraph (corpora, modes, runs, source) and the notes on what the whole
    /// report lacks or how its cost reads.
    fn overview(&mut self, input: &FigureInput<'_>) {
        let data = input.data;
        self.blocks.push(Block::Paragraph(format!(
            "Corpora: {}. Mode: {}. Runs: {}. Source: {}. Report by ragrouter-bench reports {}.",
            input.corpora.join(", "),
            input.modes,
            data.runs
                .iter()
                .map(|r| r.id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            data.source,
            env!("CARGO_PKG_VERSION"),
        )));
        if input.eval.is_none() {
            self.missing("No router evaluation is stored: the router parts (routers in Figure 7, Table 3, Figure 5) are missing. Run `ragrouter route eval` to add them.".to_owned());
        }
        if let Some(meaning) = input.basis.offline_correct() {
            self.blocks.push(Block::Note(meaning.to_owned()));
        }
    }

    /// Cost and accuracy: Figure 7 with the frontier and AIQ tables.
    fn cost_section(&mut self, input: &FigureInput<'_>) -> Result<()> {
        self.blocks.push(Block::Heading("Cost and accuracy".into()));
        self.figures(Section::Cost, input)?;
        let frontier = tables::frontier_table(input.panels, input.basis);
        let aiq = tables::aiq_table(input.panels);
        self.st.table(&frontier, &frontier)?;
        self.st.table(&aiq, &aiq)?;
        self.blocks.push(Block::Table(aiq));
        self.blocks.push(Block::Table(frontier));
        Ok(())
    }

    /// Paradigms by corpus and query type: Table 2 and Figure 4.
    fn paradigms_section(&mut self, input: &FigureInput<'_>) -> Result<()> {
        self.blocks
            .push(Block::Heading("Paradigms by corpus and query type".into()));
        let t2 = tables::table2(input.data);
        self.st.table(&t2, &t2)?;
        self.blocks.push(Block::Table(t2));
        self.figures(Section::Paradigms, input)
    }

    /// Routers: Table 3 of the main evaluation with its significance tests, Table 3 of every
    /// other split over the same features, and Figure 5.
    fn routers_section(&mut self, input: &FigureInput<'_>) -> Result<()> {
        self.blocks.push(Block::Heading("Routers".into()));
        if let Some(e) = input.eval {
            let (md, csv) = tables::table3(e, input.corpora);
            self.st.table(&md, &csv)?;
            self.blocks.push(Block::Paragraph(format!(
                "Evaluation {}: {} split, {} folds, seed {}, features {}, label policy {}, mode {}.",
                e.id,
                e.spec.split,
                e.spec.folds,
                e.spec.seed,
                e.spec.features,
                e.spec.policy,
                e.spec.mode
            )));
            self.blocks.push(Block::Table(md));
            if !e.tests.is_empty() {
                let sig = tables::significance(e);
                self.st.table(&sig, &sig)?;
                self.blocks.push(Block::Table(sig));
            }
        }
        self.other_splits(input)?;
        self.figures(Section::Routers, input)
    }

    /// The same features under another split (leave-one-corpus-out next to k-fold): a table of
    /// its own, so neither evaluation is dropped silently.
    fn other_splits(&mut self, input: &FigureInput<'_>) -> Result<()> {
        let eval = input.eval;
        for other in
            input.data.evals.iter().filter(|o| {
                eval.is_some_and(|e| o.id != e.id && o.spec.features == e.spec.features)
            })
        {
            let (mut md, mut csv) = tables::table3(other, input.corpora);
            for t in [&mut md, &mut csv] {
                t.name = format!("{}_{}", t.name, other.spec.split);
                t.title = format!(
                    "{} ({} split, evaluation {})",
                    t.title, other.spec.split, other.id
                );
            }
            self.st.table(&md, &csv)?;
            self.blocks.push(Block::Table(md));
        }
        Ok(())
    }

    /// Corpora: Figure 6.
    fn corpora_section(&mut self, input: &FigureInput<'_>) -> Result<()> {
        self.blocks.push(Block::Heading("Corpora".into()));
        self.figures(Section::Corpora, input)
    }

    /// Token cost by phase: Table 16.
    fn token_section(&mut self, data: &ReportData) -> Result<()> {
        self.blocks
            .push(Block::Heading("Token cost by phase".into()));
        let t16 = tables::table16(data);
        self.st.table(&t16, &t16)?;
        self.blocks.push(Block::Table(t16));
        Ok(())
    }
}

/// The raw exports: tuples always, signals and router evaluations when there are any.
fn exports(data: &ReportData, st: &mut Staging) -> Result<()> {
    st.put(
        "exports/tuples.csv",
        export::tuples_csv(&data.tuples).as_bytes(),
    )?;
    st.put(
        "exports/tuples.jsonl",
        export::tuples_jsonl(&data.tuples).as_bytes(),
    )?;
    if !data.signals.is_empty() {
        st.put(
            "exports/signals.csv",
            export::signals_csv(&data.signals).as_bytes(),
        )?;
        st.put(
            "exports/signals.jsonl",
            export::signals_jsonl(&data.signals).as_bytes(),
        )?;
    }
    if !data.evals.is_empty() {
        st.put(
            "exports/route_evals.csv",
            export::evals_csv(&data.evals).as_bytes(),
        )?;
        st.put(
            "exports/route_evals.jsonl",
            export::evals_jsonl(&data.evals).as_bytes(),
        )?;
    }
    Ok(())
}

/// The first `n` questions of each corpus with each paradigm's judge label.
fn examples(data: &ReportData, n: usize) -> Table {
    let paradigms = data.paradigms();
    let mut headers = vec!["Corpus".to_owned(), "Question".into(), "Type".into()];
    headers.extend(paradigms.iter().map(|p| p.as_str().to_owned()));
    let mut rows = Vec::new();
    for c in data.corpus_names() {
        let mut ids: Vec<(&str, &str, QueryType)> = Vec::new();
        for t in data.tuples.iter().filter(|t| t.corpus == c) {
            if !ids.iter().any(|(id, _, _)| *id == t.query_id) {
                if ids.len() == n {
                    break;
                }
                ids.push((&t.query_id, &t.question, t.qtype));
            }
        }
        for (id, q, ty) in ids {
            let mut row = vec![c.clone(), q.to_owned(), ty.as_str().to_owned()];
            for p in &paradigms {
                let l = data
                    .tuples
                    .iter()
                    .find(|t| t.corpus == c && t.query_id == id && t.paradigm == *p)
                    .map_or("–".to_owned(), |t| {
                        t.judge_label.map_or("error", |j| j.as_str()).to_owned()
                    });
                row.push(l);
            }
            rows.push(row);
        }
    }
    Table {
        name: "examples".into(),
        title: format!("The first {n} questions of each corpus and every paradigm's judge label"),
        headers,
        rows,
    }
}

/// Provenance: the runs, the corpora, every configuration and evaluation setting.
fn provenance(data: &ReportData, blocks: &mut Vec<Block>) {
    blocks.push(Block::Heading("Provenance".into()));
    blocks.push(Block::Table(runs_table(data)));
    blocks.push(Block::Table(corpora_table(data)));
    for r in &data.runs {
        let pretty = serde_json::from_str::<serde_json::Value>(&r.config_json)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| r.config_json.clone());
        blocks.push(Block::Details {
            summary: format!("Configuration of run {} ({})", r.id, r.corpus),
            body: pretty,
        });
    }
    for e in &data.evals {
        let spec = serde_json::to_string_pretty(&e.spec).unwrap_or_default();
        blocks.push(Block::Details {
            summary: format!(
                "Router evaluation {} (features {}, {} split)",
                e.id, e.spec.features, e.spec.split
            ),
            body: spec,
        });
    }
    for m in &data.metrics {
        blocks.push(Block::Paragraph(format!(
            "Corpus metrics of {} computed under: {}",
            m.corpus, m.configuration
        )));
    }
}

/// Every run's identity: corpus, mode, reader, judge, encoder, seed, hashes and times.
fn runs_table(data: &ReportData) -> Table {
    Table {
        name: "runs".into(),
        title: "Runs".into(),
        headers: [
            "Run",
            "Corpus",
            "Content hash",
            "Mode",
            "Reader",
            "Judge",
            "Encoder",
            "Extractor",
            "Seed",
            "Config hash",
            "Crate version",
            "Started",
            "Finished",
        ]
        .map(String::from)
        .to_vec(),
        rows: data
            .runs
            .iter()
            .map(|r| {
                vec![
                    r.id.to_string(),
                    r.corpus.clone(),
                    r.corpus_hash.clone(),
                    r.mode.label(),
                    r.reader.clone(),
                    r.judge.clone(),
                    r.embedder.clone(),
                    r.extractor.clone(),
                    r.seed.to_string(),
                    r.config_hash.clone(),
                    r.crate_version.clone(),
                    r.started_at.clone(),
                    r.finished_at.clone().unwrap_or_else(|| "unfinished".into()),
                ]
            })
            .collect(),
    }
}

/// Every corpus's content hash, source and sizes.
fn corpora_table(data: &ReportData) -> Table {
    Table {
        name: "corpora".into(),
        title: "Corpora".into(),
        headers: [
            "Corpus",
            "Content hash",
            "Source",
            "Documents",
            "Chunks",
            "Questions",
        ]
        .map(String::from)
        .to_vec(),
        rows: data
            .corpora
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    c.content_hash.clone(),
                    c.source.clone(),
                    c.documents.to_string(),
                    c.chunks.to_string(),
                    c.queries.to_string(),
                ]
            })
            .collect(),
    }
}
