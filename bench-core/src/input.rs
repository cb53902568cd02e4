//! Reading a user's text input file: a missing file, a directory, a device or FIFO, a file over
//! the size cap or bytes that are not UTF-8 become one clear message naming the file (and the
//! line of the first bad byte).

use std::io::Read;
use std::path::Path;

use crate::error::{BenchError, Result};

/// Decodes `bytes` read from `file` as UTF-8; the error names the line and byte offset of the
/// first invalid byte (lines counted from 1).
/// A UTF-8 byte order mark at the start (some editors write one) is dropped.
pub fn decode_utf8(bytes: Vec<u8>, file: &str) -> Result<String> {
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let column = 1 + at
            - bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
        BenchError::Malformed {
            file: file.to_owned(),
            location: format!("line {line}"),
            message: format!(
                "byte {column} (offset {at}) is not valid UTF-8; the file must be UTF-8 text"
            ),
        }
    })
}

/// What is wrong with a JSON text that serde_json refused, without its " at line L column C"
/// (the caller names the place). `line` is the line the error is on: a lone surrogate escape
/// (`"\ud800"`, which serde_json reports as a bad hex escape) is named as such, with the field
/// it is in.
pub fn json_error(e: &serde_json::Error, line: &str) -> String {
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    let col = e.column().min(line.len());
    if msg.contains("hex escape") || msg.contains("surrogate") {
        if let Some(esc) = lone_surrogate(&line.as_bytes()[..col]) {
            let field = field_at(&line.as_bytes()[..col])
                .map(|f| format!("field {f:?}: "))
                .unwrap_or_default();
            return format!(
                "{field}a lone surrogate escape {esc}: \\uD800-\\uDFFF encode a character only as a \
                 pair (high then low), so this string is not valid Unicode"
            );
        }
    }
    msg
}

/// The last `\uD800`-`\uDFFF` escape in `head`, as written.
fn lone_surrogate(head: &[u8]) -> Option<String> {
    (0..head.len().saturating_sub(1)).rev().find_map(|i| {
        let esc = head.get(i..i + 6)?;
        let hex = std::str::from_utf8(&esc[2..]).ok()?;
        let v = u16::from_str_radix(hex, 16).ok()?;
        (esc[0] == b'\\' && esc[1] == b'u' && (0xD800..=0xDFFF).contains(&v))
            .then(|| String::from_utf8_lossy(esc).into_owned())
    })
}

/// The key whose value `head` (a JSON text cut inside a value) ends in: the last string read
/// outside a string before the last `:`.
fn field_at(head: &[u8]) -> Option<String> {
    let (mut in_str, mut escaped, mut start) = (false, false, 0);
    let (mut last, mut key) = (None, None);
    for (i, &b) in head.iter().enumerate() {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_str = false;
                    last = Some((start, i));
                }
                _ => {}
            }
        } else if b == b'"' {
            in_str = true;
            start = i + 1;
        } else if b == b':' {
            key = last;
        }
    }
    key.map(|(a, b)| String::from_utf8_lossy(&head[a..b]).into_owned())
}

/// A message when `s` holds a NUL character: PostgreSQL cannot store one in text, so a question
/// that holds one would run on SQLite and fail on PostgreSQL; it is refused at load on both.
pub fn nul_message(s: &str) -> Option<String> {
    s.contains('\0').then(|| {
        "contains a NUL character (\\u0000), which the results database cannot store \
         (PostgreSQL refuses it in text)"
            .to_string()
    })
}

/// The most bytes an input file read whole into memory may hold (a configuration, a corpus, a
/// question set, an outcome matrix): 1 GiB, hundreds of times the largest shared data set's
/// file, and far below the memory a read would otherwise take without end (`/dev/zero`).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// How [`MAX_INPUT_BYTES`] is written in messages.
const MAX_INPUT_SHOWN: &str = "1 GiB (1073741824 bytes)";

/// Checks, from its metadata and before it is opened, that `path` names a regular file (a
/// symlink to one is fine); returns its size. A FIFO would block the open until some writer
/// came, and a device (`/dev/zero`) never ends, so either is bad input, as are a missing file
/// and a directory. `what` says what the file is ("config", "data file"). Every input file
/// the user names is checked here, also those read in a stream.
pub fn check_input_file(path: &Path, what: &str) -> Result<u64> {
    use std::io::ErrorKind as K;
    let shown = path.display();
    // ELOOP (40 on Linux): its symbolic links form a loop (no stable ErrorKind names it).
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        K::NotFound => BenchError::Invalid(format!("{what} {shown} does not exist")),
        K::NotADirectory => BenchError::Invalid(format!(
            "{what} {shown}: a folder on its path is a file, so it does not exist"
        )),
        _ if e.raw_os_error() == Some(40) => {
            BenchError::Invalid(format!("{what} {shown}: its symbolic links form a loop"))
        }
        _ => BenchError::io(format!("reading {what} {shown}"), e),
    })?;
    if meta.is_dir() {
        return Err(BenchError::Invalid(format!(
            "{what} {shown} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(BenchError::Invalid(format!(
            "{what} {shown}: not a regular file ({}); give a file",
            kind_of(&meta.file_type())
        )));
    }
    Ok(meta.len())
}

/// What a file that is neither a regular file nor a directory is, for messages.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    let _ = t;
    "a special file"
}

/// Reads a whole input file the user named, checked by [`check_input_file`] and at most
/// [`MAX_INPUT_BYTES`] long (also when it grows while being read).
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    let shown = path.display();
    let too_big = |n: u64| {
        BenchError::Invalid(format!(
            "{what} {shown}: {n} bytes, more than the {MAX_INPUT_SHOWN} an input file may hold"
        ))
    };
    let len = check_input_file(path, what)?;
    if len > MAX_INPUT_BYTES {
        return Err(too_big(len));
    }
    let io = |e| BenchError::io(format!("reading {what} {shown}"), e);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads a UTF-8 text file the user named; `what` says what it is ("config", "data file").
/// A missing file, a directory, a device or FIFO and a file over [`MAX_INPUT_BYTES`] are bad
/// input ([`BenchError::Invalid`]) with one message.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let bytes = read_input(path, what)?;
    decode_utf8(bytes, &path.display().to_string())
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
        // Typed: a caller reads the file and the line without parsing the message.
        assert!(
            matches!(&err, BenchError::Malformed { file, location, .. } if file == "f.jsonl" && location == "line 3")
                && err.is_bad_input()
        );
        assert_eq!(decode_utf8(b"h\xc3\xa9".to_vec(), "f").unwrap(), "h\u{e9}");
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        assert_eq!(decode_utf8(b"\xEF\xBB\xBF{}".to_vec(), "f").unwrap(), "{}");
    }

    #[test]
    fn lone_surrogates_are_named_with_their_field() {
        let line = r#"{"id": "q1", "question": "bad \ud800 here"}"#;
        let e = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
        let m = json_error(&e, line);
        assert!(
            m.starts_with(r#"field "question": a lone surrogate escape \ud800"#),
            "{m}"
        );
        let line = r#"{"a": {"b": "\uDC00"}}"#;
        let e = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
        assert!(json_error(&e, line).contains(r#"field "b": a lone surrogate escape \uDC00"#));
        // A pair is a character; other errors keep serde's words.
        assert!(serde_json::from_str::<serde_json::Value>(r#""\ud83d\ude00""#).is_ok());
        let e = serde_json::from_str::<serde_json::Value>("{oops}").unwrap_err();
        assert_eq!(json_error(&e, "{oops}"), "key must be a string");
        assert!(nul_message("a\0b").is_some() && nul_message("ab").is_none());
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

    #[test]
    fn devices_fifos_and_oversized_files_are_bad_input_unread() {
        let err = read_text(Path::new("/dev/zero"), "config").unwrap_err();
        assert!(
            matches!(&err, BenchError::Invalid(m) if m.contains("not a regular file (a character device)")),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.jsonl");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let err = read_input(&big, "data file").unwrap_err().to_string();
        assert!(
            err.contains("1073741825 bytes, more than the 1 GiB"),
            "{err}"
        );
        f.set_len(3).unwrap();
        assert_eq!(read_input(&big, "data file").unwrap(), [0, 0, 0]);
    }
}
