//! Corpus metrics: graph structure and embedding-space semantics, as metric-fixtures/README.md defines them.
