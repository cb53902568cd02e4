//! Reading JSON and JSONL data files record by record, with errors naming file, record and field.

use serde_json::{Map, Value};
use std::path::Path;

use crate::error::{CorpusError, Result};

/// A malformed-input error; `location` is a record index or a line number.
pub(crate) fn malformed(
    file: &str,
    location: impl Into<String>,
    message: impl Into<String>,
) -> CorpusError {
    CorpusError::Malformed {
        file: file.to_string(),
        location: location.into(),
        message: message.into(),
    }
}

/// Reads a whole data file; a missing file is reported with `missing_hint` (how to point at the data).
/// Anything but a regular file under the input cap is refused unread
/// (`bench_core::input::read_input`); a file that is not UTF-8 is malformed at the line of its
/// first bad byte.
pub(crate) fn read_file(path: &Path, missing_hint: &str) -> Result<String> {
    if let Err(e) = std::fs::metadata(path) {
        if e.kind() == std::io::ErrorKind::NotFound {
            return Err(CorpusError::io(
                format!("data file {} not found; {missing_hint}", path.display()),
                e,
            ));
        }
    }
    let bytes = bench_core::input::read_input(path, "data file")?;
    Ok(bench_core::input::decode_utf8(
        bytes,
        &path.display().to_string(),
    )?)
}

/// serde_json's message without its trailing " at line L column C" (the location says it); a
/// lone surrogate is named with its field. `text` is the parsed text.
fn json_message(e: &serde_json::Error, text: &str) -> String {
    let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    bench_core::input::json_error(e, line)
}

/// Parses a file that holds one JSON array of records.
pub(crate) fn parse_json_array(file: &str, text: &str) -> Result<Vec<Value>> {
    let value: Value = bench_core::strict_json::from_str(text).map_err(|e| {
        malformed(
            file,
            format!("line {} column {}", e.line(), e.column()),
            format!("invalid JSON: {}", json_message(&e, text)),
        )
    })?;
    match value {
        Value::Array(records) => Ok(records),
        other => Err(malformed(
            file,
            "top level",
            format!(
                "expected a JSON array of records, found {}",
                describe(&other)
            ),
        )),
    }
}

/// Reads `path`, one JSON array, and hands each element to `each` as a record named `record [i]`
/// (with its position); returns the file's name as errors give it, and what `each` made of the
/// records. A missing file is reported with `hint`. Every built-in loader reads its corpus and its
/// questions this way.
pub(crate) fn read_record_array<T>(
    path: &Path,
    hint: &str,
    mut each: impl FnMut(usize, Record<'_>) -> Result<T>,
) -> Result<(String, Vec<T>)> {
    let file = path.display().to_string();
    let records = parse_json_array(&file, &read_file(path, hint)?)?;
    let mut out = Vec::with_capacity(records.len());
    for (i, v) in records.iter().enumerate() {
        out.push(each(i, Record::new(&file, format!("record [{i}]"), v)?)?);
    }
    Ok((file, out))
}

/// Parses a JSONL file: one JSON object per line; blank lines are skipped.
/// Returns each record with its 1-based line number.
pub(crate) fn parse_jsonl(file: &str, text: &str) -> Result<Vec<(usize, Value)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = bench_core::strict_json::from_str(line).map_err(|e| {
            malformed(
                file,
                format!("line {line_no} column {}", e.column()),
                format!("invalid JSON: {}", json_message(&e, line)),
            )
        })?;
        out.push((line_no, value));
    }
    Ok(out)
}

/// A short description of a JSON value for "expected X, found Y" messages.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.trim().is_empty() => "an empty string".into(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// One record (a JSON object) with where it came from, for field-level errors.
#[derive(Debug)]
pub(crate) struct Record<'a> {
    file: &'a str,
    location: String,
    obj: &'a Map<String, Value>,
}

impl<'a> Record<'a> {
    /// Wraps `value`, which must be an object; `location` is e.g. "record [3]" or "line 4".
    pub(crate) fn new(file: &'a str, location: String, value: &'a Value) -> Result<Self> {
        match value {
            Value::Object(obj) => Ok(Record {
                file,
                location,
                obj,
            }),
            other => Err(malformed(
                file,
                location,
                format!("expected a JSON object, found {}", describe(other)),
            )),
        }
    }

    /// The file the record is in, as errors name it.
    pub(crate) fn file(&self) -> &'a str {
        self.file
    }

    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// Adds the record's id to its location once it is known, so later errors name both.
    pub(crate) fn with_id(mut self, id: &str) -> Self {
        self.location = format!("{} (id {id:?})", self.location);
        self
    }

    pub(crate) fn error(&self, field: &str, message: impl std::fmt::Display) -> CorpusError {
        malformed(
            self.file,
            self.location.clone(),
            format!("field {field:?}: {message}"),
        )
    }

    fn wrong(&self, field: &str, expected: &str, found: &Value) -> CorpusError {
        self.error(
            field,
            format_args!("expected {expected}, found {}", describe(found)),
        )
    }

    fn required(&self, field: &str, expected: &str) -> Result<&'a Value> {
        self.obj
            .get(field)
            .ok_or_else(|| self.error(field, format_args!("missing (expected {expected})")))
    }

    /// `s`, unless it holds a NUL (which the results database cannot store).
    fn text(&self, field: &str, s: &'a str) -> Result<&'a str> {
        match bench_core::input::nul_message(s) {
            Some(m) => Err(self.error(field, m)),
            None => Ok(s),
        }
    }

    /// A required string (may be empty).
    pub(crate) fn str(&self, field: &str) -> Result<&'a str> {
        match self.required(field, "a string")? {
            Value::String(s) => self.text(field, s),
            other => Err(self.wrong(field, "a string", other)),
        }
    }

    /// A required string with something other than whitespace in it.
    pub(crate) fn non_empty_str(&self, field: &str) -> Result<&'a str> {
        match self.required(field, "a non-empty string")? {
            Value::String(s) if !s.trim().is_empty() => self.text(field, s),
            other => Err(self.wrong(field, "a non-empty string", other)),
        }
    }

    /// An optional string: absent or null gives None.
    pub(crate) fn opt_str(&self, field: &str) -> Result<Option<&'a str>> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => self.text(field, s).map(Some),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    /// A required array (elements unchecked).
    pub(crate) fn array(&self, field: &str) -> Result<&'a [Value]> {
        match self.required(field, "an array")? {
            Value::Array(a) => Ok(a),
            other => Err(self.wrong(field, "an array", other)),
        }
    }

    /// An optional array of strings: absent or null gives an empty list.
    pub(crate) fn opt_str_list(&self, field: &str) -> Result<Vec<String>> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(v) => self.str_list_value(field, v),
        }
    }

    /// A required array of strings.
    pub(crate) fn str_list(&self, field: &str) -> Result<Vec<String>> {
        let v = self.required(field, "an array of strings")?;
        self.str_list_value(field, v)
    }

    fn str_list_value(&self, field: &str, v: &Value) -> Result<Vec<String>> {
        let Value::Array(items) = v else {
            return Err(self.wrong(field, "an array of strings", v));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => self.text(&format!("{field}[{i}]"), s).map(str::to_owned),
                other => Err(self.wrong(&format!("{field}[{i}]"), "a string", other)),
            })
            .collect()
    }

    /// An optional boolean: absent or null gives None.
    pub(crate) fn opt_bool(&self, field: &str) -> Result<Option<bool>> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(field, "a boolean", other)),
        }
    }

    /// The raw value of an optional field.
    pub(crate) fn get(&self, field: &str) -> Option<&'a Value> {
        self.obj.get(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_carry_line_and_column() {
        let e = parse_json_array("f.json", "[\n {\"a\": 1,}\n]")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.json: line 2 column"), "{e}");
        assert!(!e.contains(" at line "), "{e}");
        let e = parse_json_array("f.json", "{}").unwrap_err().to_string();
        assert!(e.contains("top level") && e.contains("array"), "{e}");
    }

    #[test]
    fn jsonl_skips_blank_lines_and_numbers_lines() {
        let recs = parse_jsonl("q.jsonl", "{\"a\":1}\n\n{\"a\":2}\n").unwrap();
        assert_eq!(recs.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![1, 3]);
        let e = parse_jsonl("q.jsonl", "{\"a\":1}\n{oops}\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("q.jsonl: line 2 column"), "{e}");
    }

    #[test]
    fn field_errors_name_record_field_and_expectation() {
        let v: Value = serde_json::json!({"id": "x", "n": 3, "list": ["a", 1], "empty": " "});
        let r = Record::new("c.jsonl", "line 7".into(), &v)
            .unwrap()
            .with_id("x");
        let e = r.str("text").unwrap_err().to_string();
        assert_eq!(
            e,
            "c.jsonl: line 7 (id \"x\"): field \"text\": missing (expected a string)"
        );
        let e = r.str("n").unwrap_err().to_string();
        assert!(
            e.ends_with("field \"n\": expected a string, found number 3"),
            "{e}"
        );
        let e = r.str_list("list").unwrap_err().to_string();
        assert!(e.contains("field \"list[1]\": expected a string"), "{e}");
        let e = r.non_empty_str("empty").unwrap_err().to_string();
        assert!(e.contains("found an empty string"), "{e}");
        assert_eq!(r.opt_str_list("absent").unwrap(), Vec::<String>::new());
        let not_obj = Value::from(1);
        let e = Record::new("c.jsonl", "line 1".into(), &not_obj)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a JSON object, found number 1"), "{e}");
    }
}
