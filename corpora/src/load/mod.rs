//! Loaders for the shared data sets and the generic JSONL format, chunking, and the corpus registry.
