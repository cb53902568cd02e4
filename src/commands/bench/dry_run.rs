//! `--dry-run`: the expected LLM calls and a token-bill bound, computed without calling anything.

use anyhow::Result;
use bench_core::{BenchConfig, ParadigmId, Query};

/// Prompt tokens beyond the question and context (system prompt, instructions, numbering).
pub(crate) const PROMPT_OVERHEAD: u64 = 120;
/// Bound on the output of an entity-list or self-evaluation call.
pub(crate) const SHORT_REPLY: u64 = 128;

/// `--dry-run`: LLM calls and an upper-bound token bill from corpus and question sizes, without
/// calling anything (cached responses and extractions are not subtracted).
pub(crate) fn dry_run_estimate(
    corpus: &bench_core::Corpus,
    queries: &[Query],
    paradigms: &[ParadigmId],
    config: &BenchConfig,
    llm: bool,
) -> Result<String> {
    let n = queries.len() as u64;
    let ctx = config.retrieval.context_budget.min(corpus.chunk_tokens());
    let max_out = u64::from(config.generation.max_tokens);
    let mut out = format!(
        "dry run: {} on {} questions ({} mode); bounds assume full {}-token contexts and {}-token answers\n",
        corpus.name,
        n,
        if llm { "LLM" } else { "offline" },
        ctx,
        max_out
    );
    out.push_str(&format!(
        "{:<16} {:>12} {:>16} {:>16}\n",
        "paradigm", "calls", "input tokens", "output tokens"
    ));
    let (sizes, judge_in) = prompt_sizes(queries, config, ctx, max_out);
    let mut bill = Bill::default();
    for &p in paradigms {
        out.push_str(&paradigm_row(p, &sizes, judge_in, n, &mut bill)?);
    }
    if paradigms.iter().any(|p| p.uses_graph()) {
        out.push_str(&graph_build_row(corpus, &mut bill));
    }
    out.push_str(&format!(
        "total: at most {} calls, {} input and {} output tokens{}\n",
        bill.calls_max,
        bill.tin,
        bill.tout,
        if llm {
            ""
        } else {
            " (offline: no call is made; these are what an LLM run would cost)"
        }
    ));
    Ok(out)
}

/// The bill's totals so far: calls at most, input and output token bounds.
#[derive(Default)]
struct Bill {
    calls_max: u64,
    tin: u64,
    tout: u64,
}

/// The prompt and reply sizes of one question (mean question and gold answer tokens rounded
/// up, a full `ctx`-token context, `max_out`-token answers), and a judge call's input bound.
fn prompt_sizes(
    queries: &[Query],
    config: &BenchConfig,
    ctx: u64,
    max_out: u64,
) -> (paradigms::registry::PromptSizes, u64) {
    let n = queries.len() as u64;
    let q_tokens: u64 = queries
        .iter()
        .map(|q| bench_core::tokens::count(&q.text))
        .sum();
    let gold_tokens: u64 = queries
        .iter()
        .map(|q| bench_core::tokens::count(&q.gold.answer))
        .sum();
    let rounds = config.iterative.max_rounds as u64;
    let q = q_tokens.div_ceil(n.max(1));
    let g = gold_tokens.div_ceil(n.max(1));
    let (p_, c, m, sh, r) = (PROMPT_OVERHEAD, ctx, max_out, SHORT_REPLY, rounds);
    let sizes = paradigms::registry::PromptSizes {
        direct: p_ + q,
        with_context: p_ + q + c,
        answer: m,
        short_reply: sh,
        rounds: r,
    };
    (sizes, p_ + q + g + m)
}

/// Paradigm `p`'s line over `n` questions, judge included (calls as min-max where they
/// vary), added to `bill`.
fn paradigm_row(
    p: ParadigmId,
    sizes: &paradigms::registry::PromptSizes,
    judge_in: u64,
    n: u64,
    bill: &mut Bill,
) -> Result<String> {
    let b = (paradigms::registry::entry(p)?.cost)(sizes);
    let (cmin, cmax, i, o) = (b.min_calls, b.max_calls, b.input, b.output);
    let (cmin, cmax, i, o) = (
        (cmin + 1) * n,
        (cmax + 1) * n,
        (i + judge_in) * n,
        (o + 8) * n,
    );
    bill.calls_max += cmax;
    bill.tin += i;
    bill.tout += o;
    let calls = if cmin == cmax {
        cmax.to_string()
    } else {
        format!("{cmin}-{cmax}")
    };
    Ok(format!("{:<16} {calls:>12} {i:>16} {o:>16}\n", p.as_str()))
}

/// The graph build's line (one extraction call per chunk), added to `bill`.
fn graph_build_row(corpus: &bench_core::Corpus, bill: &mut Bill) -> String {
    let chunks = corpus.chunks.len() as u64;
    let i = chunks * PROMPT_OVERHEAD + corpus.chunk_tokens();
    let o = chunks * 512;
    bill.calls_max += chunks;
    bill.tin += i;
    bill.tout += o;
    format!("{:<16} {:>12} {:>16} {:>16}\n", "graph build", chunks, i, o)
}
