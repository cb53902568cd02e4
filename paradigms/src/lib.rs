//! Retriever primitives, the paradigms built on them, and the offline reader.
