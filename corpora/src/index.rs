//! Dense exact inner-product top-K search (gemm), with faiss IndexFlatIP behind a feature.
