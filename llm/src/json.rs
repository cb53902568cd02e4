//! Finding the JSON in a model's reply: bare, inside a code fence, or after leading prose.

/// The JSON object or array in `text`, as the slice that parses, or `None`.
///
/// Tried in order: the trimmed text; the body of the first ``` fence; the span from the first
/// `{`/`[` to the last matching closer. Models asked for JSON often wrap it in one of these.
pub fn extract_json(text: &str) -> Option<&str> {
    let parses = |s: &str| serde_json::from_str::<serde_json::Value>(s).is_ok();
    let t = text.trim();
    if (t.starts_with('{') || t.starts_with('[')) && parses(t) {
        return Some(t);
    }
    if let Some(start) = t.find("```") {
        let after = &t[start + 3..];
        // Skip the info string (`json`) up to the end of the fence line.
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        if let Some(end) = body.find("```") {
            let inner = body[..end].trim();
            if parses(inner) {
                return Some(inner);
            }
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (t.find(open), t.rfind(close)) {
            if a < b && parses(&t[a..=b]) {
                return Some(&t[a..=b]);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::extract_json;

    #[test]
    fn finds_json_bare_fenced_and_after_prose() {
        assert_eq!(extract_json(" {\"a\": 1} "), Some("{\"a\": 1}"));
        assert_eq!(
            extract_json("Sure:\n```json\n{\"a\": [1, 2]}\n```\nDone."),
            Some("{\"a\": [1, 2]}")
        );
        assert_eq!(
            extract_json("Here it is: {\"ok\": true}. Anything else?"),
            Some("{\"ok\": true}")
        );
        assert_eq!(extract_json("[1, 2]"), Some("[1, 2]"));
        assert_eq!(extract_json("not json at all"), None);
        assert_eq!(extract_json("{\"a\": "), None);
        assert_eq!(extract_json("42"), None);
    }
}
