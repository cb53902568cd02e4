//! The results store's schema: one migration list for both backends (`store_backend` translates
//! the types for PostgreSQL). Append only: a stored database records how many have run.

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Schema migrations, applied in order; `PRAGMA user_version` holds how many ran.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: the tuple store.
    r#"
    CREATE TABLE corpora (
        name TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        source TEXT NOT NULL,
        documents INTEGER NOT NULL,
        chunks INTEGER NOT NULL,
        chunk_tokens INTEGER NOT NULL,
        queries INTEGER NOT NULL,
        queries_with_gold_chunks INTEGER NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (name, content_hash)
    );
    CREATE TABLE queries (
        corpus TEXT NOT NULL,
        corpus_hash TEXT NOT NULL,
        query_id TEXT NOT NULL,
        text TEXT NOT NULL,
        qtype TEXT NOT NULL,
        answer TEXT NOT NULL,
        aliases_json TEXT NOT NULL,
        evidence_json TEXT NOT NULL,
        gold_chunks_json TEXT NOT NULL,
        PRIMARY KEY (corpus, corpus_hash, query_id),
        FOREIGN KEY (corpus, corpus_hash) REFERENCES corpora(name, content_hash)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_key TEXT NOT NULL,
        corpus TEXT NOT NULL,
        corpus_hash TEXT NOT NULL,
        config_json TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        seed INTEGER NOT NULL,
        crate_version TEXT NOT NULL,
        mode TEXT NOT NULL,
        reader TEXT NOT NULL,
        judge TEXT NOT NULL,
        embedder TEXT NOT NULL,
        started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        finished_at TEXT,
        FOREIGN KEY (corpus, corpus_hash) REFERENCES corpora(name, content_hash)
    );
    CREATE INDEX runs_by_key ON runs(run_key);
    CREATE TABLE results (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        query_id TEXT NOT NULL,
        paradigm TEXT NOT NULL,
        answer TEXT NOT NULL,
        context_json TEXT NOT NULL,
        context_tokens INTEGER NOT NULL,
        tokens_construction_in INTEGER NOT NULL,
        tokens_construction_out INTEGER NOT NULL,
        tokens_retrieval_in INTEGER NOT NULL,
        tokens_retrieval_out INTEGER NOT NULL,
        tokens_generation_in INTEGER NOT NULL,
        tokens_generation_out INTEGER NOT NULL,
        token_source TEXT NOT NULL,
        latency_retrieval_ms REAL NOT NULL,
        latency_generation_ms REAL NOT NULL,
        latency_judge_ms REAL NOT NULL,
        judge_label TEXT,
        em REAL NOT NULL,
        f1 REAL NOT NULL,
        answer_recall REAL NOT NULL,
        evidence_recall REAL,
        mode TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        error TEXT,
        trace_json TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (run_id, query_id, paradigm)
    );
    "#,
    // 2: per-chunk triplet extractions (the graph build's cache) and graph builds.
    r#"
    CREATE TABLE extractions (
        chunk_hash TEXT NOT NULL,
        extractor TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        triplets_json TEXT NOT NULL,
        tokens_in INTEGER NOT NULL,
        tokens_out INTEGER NOT NULL,
        error TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (chunk_hash, extractor, model, prompt_hash)
    );
    CREATE TABLE graph_builds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        corpus TEXT NOT NULL,
        corpus_hash TEXT NOT NULL,
        extractor TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        chunks INTEGER NOT NULL,
        nodes INTEGER NOT NULL,
        edges INTEGER NOT NULL,
        relation_types INTEGER NOT NULL,
        triplets INTEGER NOT NULL,
        components INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        tokens_in INTEGER NOT NULL,
        tokens_out INTEGER NOT NULL,
        built_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX graph_builds_by_corpus ON graph_builds(corpus, corpus_hash);
    "#,
    // 3: the LLM response cache (content-addressed; never holds an API key).
    r#"
    CREATE TABLE llm_cache (
        key TEXT PRIMARY KEY NOT NULL,
        identity TEXT NOT NULL,
        model TEXT NOT NULL,
        request_json TEXT NOT NULL,
        response TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        usage_reported INTEGER NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    "#,
    // 4: the graph extractor in a run's identity; corpus metrics per corpus and configuration.
    r#"
    ALTER TABLE runs ADD COLUMN extractor TEXT NOT NULL DEFAULT '';
    CREATE TABLE corpus_metrics (
        corpus TEXT NOT NULL,
        corpus_hash TEXT NOT NULL,
        -- extractor and encoder identities the metrics were computed under
        configuration TEXT NOT NULL,
        metrics_json TEXT NOT NULL,
        computed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (corpus, corpus_hash, configuration)
    );
    "#,
    // 5: semantic F1 and soft coverage per tuple; the judge's tokens.
    r#"
    ALTER TABLE results ADD COLUMN semantic_f1 REAL;
    ALTER TABLE results ADD COLUMN coverage REAL;
    ALTER TABLE results ADD COLUMN tokens_judge_in INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE results ADD COLUMN tokens_judge_out INTEGER NOT NULL DEFAULT 0;
    "#,
    // 6: faithfulness (hard and soft) per tuple.
    r#"
    ALTER TABLE results ADD COLUMN faithfulness_hard REAL;
    ALTER TABLE results ADD COLUMN faithfulness_soft REAL;
    "#,
    // 7: router evaluations: one row per invocation, one per (router, parameter, corpus, fold).
    r#"
    CREATE TABLE route_evals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        split TEXT NOT NULL,
        folds INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        features TEXT NOT NULL,
        policy TEXT NOT NULL,
        mode TEXT NOT NULL,
        runs_json TEXT NOT NULL,
        config_json TEXT NOT NULL,
        crate_version TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE TABLE route_eval_results (
        eval_id INTEGER NOT NULL REFERENCES route_evals(id),
        router TEXT NOT NULL,
        -- the router's trade-off parameter (lambda), '' when it has none: part of the key
        param TEXT NOT NULL,
        corpus TEXT NOT NULL,
        fold INTEGER NOT NULL,
        n INTEGER NOT NULL,
        accuracy REAL NOT NULL,
        macro_f1 REAL NOT NULL,
        mrr REAL NOT NULL,
        correct_rate REAL NOT NULL,
        mean_tokens REAL NOT NULL,
        regret_correct REAL NOT NULL,
        regret_tokens REAL NOT NULL,
        latency_ms REAL NOT NULL,
        fit_ms REAL NOT NULL,
        PRIMARY KEY (eval_id, router, param, corpus, fold)
    );
    "#,
    // 8: offline "reader correct": the sentence judge's verdict (0/1), kept beside the
    // answer-delivered judge label; NULL in LLM mode and in rows written before it existed.
    r#"
    ALTER TABLE results ADD COLUMN reader_correct INTEGER;
    "#,
    // 9: imported outcomes (a run's split tag and cost unit; a tuple's imported score and cost),
    // per-question router predictions and paired significance tests of an evaluation.
    r#"
    ALTER TABLE runs ADD COLUMN split TEXT;
    ALTER TABLE runs ADD COLUMN cost_unit TEXT;
    ALTER TABLE results ADD COLUMN score REAL;
    ALTER TABLE results ADD COLUMN cost REAL;
    CREATE TABLE route_predictions (
        eval_id INTEGER NOT NULL REFERENCES route_evals(id),
        router TEXT NOT NULL,
        param TEXT NOT NULL,
        fold INTEGER NOT NULL,
        corpus TEXT NOT NULL,
        query_id TEXT NOT NULL,
        -- the class the router chose and the paradigm that was played (the fallback's for
        -- cannot-answer); played is '' when no paradigm could be played
        chosen TEXT NOT NULL,
        played TEXT NOT NULL,
        correct INTEGER NOT NULL,
        cost REAL NOT NULL,
        scores_json TEXT NOT NULL,
        PRIMARY KEY (eval_id, router, param, corpus, query_id)
    );
    CREATE TABLE route_eval_tests (
        eval_id INTEGER NOT NULL REFERENCES route_evals(id),
        router TEXT NOT NULL,
        param TEXT NOT NULL,
        baseline TEXT NOT NULL,
        n INTEGER NOT NULL,
        diff REAL NOT NULL,
        ci_low REAL NOT NULL,
        ci_high REAL NOT NULL,
        -- discordant pairs: router right and baseline wrong (b), the reverse (c)
        wins INTEGER NOT NULL,
        losses INTEGER NOT NULL,
        p_mcnemar REAL NOT NULL,
        resamples INTEGER NOT NULL,
        PRIMARY KEY (eval_id, router, param, baseline)
    );
    "#,
    // 10: the graph build a tuple was answered on (NULL for paradigms without the graph and in
    // rows written before it existed), and each build's signature.
    r#"
    ALTER TABLE graph_builds ADD COLUMN signature TEXT;
    ALTER TABLE results ADD COLUMN graph_build TEXT;
    "#,
    // 11: document-level evidence recall (NULL when the evidence names no whole document).
    r#"
    ALTER TABLE results ADD COLUMN document_recall REAL;
    "#,
    // 12: work leases of workers sharing one run (`leases`).
    r#"
    CREATE TABLE claims (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        query_id TEXT NOT NULL,
        paradigm TEXT NOT NULL,
        worker TEXT NOT NULL,
        claimed_ms INTEGER NOT NULL,
        -- when another worker may take the item; never, once done
        expires_ms INTEGER NOT NULL,
        done INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, query_id, paradigm)
    );
    "#,
    // 13: per-question probe signals of a run or an import (`signals`): a value and a present
    // flag (a missing signal is an explicit row, present = 0 and value 0), what it cost and which
    // paradigms the probe ran (a router reading it pays them once); published routers'
    // per-question choices of an import, scored as routers of their own; the source's own
    // verdict beside the harness's when the harness scored an imported answer; the probe's share
    // of a router prediction's cost.
    r#"
    CREATE TABLE signals (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        query_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        present INTEGER NOT NULL,
        probe TEXT NOT NULL,
        -- comma-separated paradigms whose answers the probe used ('' when none)
        paradigms TEXT NOT NULL,
        cost REAL NOT NULL,
        cost_ms REAL NOT NULL,
        PRIMARY KEY (run_id, query_id, name)
    );
    CREATE TABLE published_choices (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        query_id TEXT NOT NULL,
        router TEXT NOT NULL,
        choice TEXT NOT NULL,
        answer TEXT,
        correct INTEGER NOT NULL,
        source_correct INTEGER,
        cost REAL NOT NULL,
        PRIMARY KEY (run_id, query_id, router)
    );
    ALTER TABLE results ADD COLUMN source_correct INTEGER;
    ALTER TABLE route_predictions ADD COLUMN probe_cost REAL;
    "#,
    // 14: evidence statements per question and where each was found (chunks, match score,
    // verbatim or by meaning); NULL when the evidence names documents or passages.
    r#"
    ALTER TABLE queries ADD COLUMN statements_json TEXT;
    "#,
    // 15: the token log-probabilities of a cached reply that asked for them (JSON list of
    // {logprob, top}); NULL for a plain request or an endpoint that returned none.
    r#"
    ALTER TABLE llm_cache ADD COLUMN logprobs_json TEXT;
    "#,
    // 16: an imported run is keyed by its content alone, its settings hold no path. No table
    // changes; the data step (`data_step`, SQL cannot hash) rewrites the imported runs.
    r#"
    SELECT 1;
    "#,
    // 17: every paradigm a router prediction paid for, in the order run (comma-separated; the
    // delivered one is `played`); NULL in predictions stored before the list was kept.
    r#"
    ALTER TABLE route_predictions ADD COLUMN arms_played TEXT;
    "#,
];

/// What a migration needs beyond its SQL, run right after it in the same transaction, on
/// either backend: `applied` is the number of migrations run so far.
pub(super) async fn data_step(
    applied: usize,
    conn: &mut sqlx::AnyConnection,
) -> Result<(), sqlx::Error> {
    match applied {
        16 => crate::imports::key::rekey_imports(conn).await.map(|_| ()),
        _ => Ok(()),
    }
}
