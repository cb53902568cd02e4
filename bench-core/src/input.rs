//! Reading a user's text input file: a missing file, a directory or bytes that are not UTF-8
//! become one clear message naming the file (and the line of the first bad byte).

use std::path::Path;

use crate::error::{BenchError, Result};

/// Decodes `bytes` read from `file` as UTF-8; the error names the line and byte offset of the
/// first invalid byte (lines counted from 1).
pub fn decode_utf8(bytes: Vec<u8>, file: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let column = 1 + at - bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        BenchError::Invalid(format!(
            "{file}: line {line}: byte {column} (offset {at}) is not valid UTF-8; the file must be UTF-8 text"
        ))
    })
}

/// Reads a UTF-8 text file the user named; `what` says what it is ("config", "data file").
/// A missing file and a directory are bad input ([`BenchError::Invalid`]) with one message.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(BenchError::Invalid(format!(
            "{what} {shown} is a directory, not a file"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            BenchError::Invalid(format!("{what} {shown} does not exist"))
        } else {
            BenchError::io(format!("reading {what} {shown}"), e)
        }
    })?;
    decode_utf8(bytes, &shown.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_line_and_column() {
        let err = decode_utf8(b"ok\nfine\nab\xffc\n".to_vec(), "f.jsonl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.jsonl: line 3: byte 3 (offset 10) is not valid UTF-8; the file must be UTF-8 text"
        );
        assert_eq!(decode_utf8(b"h\xc3\xa9".to_vec(), "f").unwrap(), "h\u{e9}");
    }

    #[test]
    fn missing_files_and_directories_are_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_text(&dir.path().join("nope.toml"), "config").unwrap_err();
        assert!(
            matches!(&err, BenchError::Invalid(m) if m.ends_with("nope.toml does not exist")),
            "{err}"
        );
        let err = read_text(dir.path(), "config").unwrap_err();
        assert!(
            matches!(&err, BenchError::Invalid(m) if m.contains("is a directory")),
            "{err}"
        );
    }
}
