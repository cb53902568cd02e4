//! JSON parsing for the user's input files that refuses a duplicate key in an object.
//!
//! `serde_json` keeps the last of two equal keys without a word, so `{"correct": true,
//! "correct": false}` would silently mean `false`. Every loader of a user's JSON or JSON-lines
//! file parses through [`from_str`]; the error carries serde_json's line and column and names the
//! key.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `text` as one JSON value; a duplicate key in any object is an error
/// (`duplicate key "k" at line L column C`, the position just after the second key's value).
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Parses `text` as one JSON object and returns its entries in file order (serde_json's map is
/// sorted by key, and some files pair their entries with another file's by position); a
/// duplicate key at any depth is an error, as in [`from_str`].
pub fn object_entries(text: &str) -> Result<Vec<(String, Value)>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let entries = (&mut de).deserialize_map(OrderedObject)?;
    de.end()?;
    Ok(entries)
}

/// A top-level object's entries in order, each value read by [`Strict`].
struct OrderedObject;

impl<'de> Visitor<'de> for OrderedObject {
    type Value = Vec<(String, Value)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(String, Value)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Strict)?;
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            out.push((key, value));
        }
        Ok(out)
    }
}

/// A `Value` seed that checks objects for repeated keys, at every depth.
#[derive(Debug, Clone, Copy)]
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Strict)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Strict)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_to_serde_json_without_duplicates_and_refuses_them() {
        for text in [
            r#"{"a": [1, 2.5, -3, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#,
            "[]",
            "\"s\"",
        ] {
            assert_eq!(
                from_str(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        let e = from_str("{\"id\": 1,\n \"x\": {\"k\": 1, \"k\": 2}}").unwrap_err();
        assert_eq!(e.line(), 2, "{e}");
        assert!(e.to_string().contains("duplicate key \"k\""), "{e}");
        let e = from_str(r#"{"id": 1, "id": 1}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key \"id\""), "{e}");
        // Trailing text is still an error.
        assert!(from_str("{} {}").is_err());
    }

    #[test]
    fn object_entries_keep_file_order_and_refuse_duplicates() {
        let e = object_entries(r#"{"b": 1, "a": {"x": [2]}, "c": "s"}"#).unwrap();
        let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(e[1].1, serde_json::json!({"x": [2]}));
        for bad in [r#"{"b": 1, "b": 2}"#, r#"{"a": {"x": 1, "x": 1}}"#] {
            let err = object_entries(bad).unwrap_err().to_string();
            assert!(err.contains("duplicate key"), "{err}");
        }
        assert!(object_entries("[1]").is_err());
        assert!(object_entries("{} x").is_err());
    }
}
