//! Prints the encoder's vectors of fixed texts as JSON: `cargo run --release -p corpora --example
//! encoder_vectors > corpora/tests/data/encoder_avx2.json` wrote the golden file that
//! `tests/encoder_kernels.rs` compares the current build's vectors with.

use bench_core::Embedder;
use corpora::MiniLm;

/// The texts of the golden file: short and long, punctuation, digits, an empty one.
pub const TEXTS: &[&str] = &[
    "A man is eating food.",
    "",
    "x",
    "How do I reset my password?",
    "Basal cell carcinoma (BCC) is the most common type of skin cancer.",
    "Ermengarde of Tours died on 20 March 851; Lothair I was her husband.",
    "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the \
     American Institute of Physics devoted to the publication of papers in mathematical physics. \
     The journal was first published bimonthly beginning in January 1960; it became a monthly \
     publication in 1963. The current editor is Jan Philip Solovej from University of Copenhagen. \
     Its 2018 Impact Factor is 1.355",
];

fn main() {
    let m = MiniLm::new().expect("encoder");
    let e = m.embed(TEXTS).expect("vectors");
    let rows: Vec<Vec<f32>> = e.rows().map(<[f32]>::to_vec).collect();
    let out = serde_json::json!({
        "model": m.name(),
        "texts": TEXTS,
        "vectors": rows,
    });
    println!("{out}");
}
