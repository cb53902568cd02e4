//! cl100k_base token counting and sliding-window chunking of token streams.

use tiktoken_rs::CoreBPE;

/// The cl100k_base encoder, built once per process (it ships inside the crate: no network).
fn cl100k() -> &'static CoreBPE {
    tiktoken_rs::cl100k_base_singleton()
}

/// Number of cl100k_base tokens in `text` (special-token text is counted as ordinary text).
pub fn count(text: &str) -> u64 {
    cl100k().encode_ordinary(text).len() as u64
}

/// Token ids of `text`.
pub fn encode(text: &str) -> Vec<u32> {
    cl100k().encode_ordinary(text)
}

/// Text of a token window; a window that cuts a multi-byte character keeps a replacement
/// character there instead of failing (windows start at arbitrary token boundaries).
pub fn decode_lossy(tokens: &[u32]) -> String {
    let bytes: Vec<u8> = cl100k()
        ._decode_native_and_split(tokens.to_vec())
        .flatten()
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Start offsets of sliding windows of `size` tokens with `overlap` tokens shared between
/// neighbours, over a stream of `len` tokens. The last window may be shorter; none is empty.
pub fn window_starts(len: usize, size: usize, overlap: usize) -> Vec<usize> {
    assert!(size > overlap, "window size must exceed the overlap");
    if len == 0 {
        return Vec::new();
    }
    let stride = size - overlap;
    let mut starts = vec![0];
    let mut start = 0;
    while start + size < len {
        start += stride;
        starts.push(start);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        // Values from the public cl100k_base vocabulary.
        assert_eq!(count("hello world"), 2);
        assert_eq!(count(""), 0);
        assert_eq!(encode("hello world"), vec![15339, 1917]);
    }

    #[test]
    fn decode_inverts_encode() {
        let s = "Ünïcödé text, with 数字 and emoji 🎉.";
        assert_eq!(decode_lossy(&encode(s)), s);
    }

    #[test]
    fn windows_cover_the_stream_with_the_right_overlap() {
        assert_eq!(window_starts(0, 512, 100), Vec::<usize>::new());
        assert_eq!(window_starts(10, 512, 100), vec![0]);
        assert_eq!(window_starts(512, 512, 100), vec![0]);
        assert_eq!(window_starts(513, 512, 100), vec![0, 412]);
        // The Medical corpus size: 538 windows (paper Table 9).
        assert_eq!(window_starts(221_495, 512, 100).len(), 538);
    }

    proptest::proptest! {
        #[test]
        fn windows_are_contiguous_and_end_at_the_stream_end(len in 1usize..5000, size in 2usize..600, ov in 0usize..300) {
            proptest::prop_assume!(size > ov);
            let starts = window_starts(len, size, ov);
            proptest::prop_assert_eq!(starts[0], 0);
            for w in starts.windows(2) {
                proptest::prop_assert_eq!(w[1] - w[0], size - ov);
            }
            let last = *starts.last().unwrap();
            proptest::prop_assert!(last < len);
            proptest::prop_assert!(last + size >= len);
        }
    }
}
