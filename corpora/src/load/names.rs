//! The rule for a corpus's short name, wherever one is given, and how errors quote one.

use super::registry::registry;

/// The most characters a corpus name may have: cache file names add up to about 90 characters
/// to it (a hash and a suffix), and a file name may have at most 255 bytes (every character of
/// the name takes one byte there: any other than ASCII letters, digits, '-' and '_' is
/// written as '_').
pub const MAX_CORPUS_NAME_CHARS: usize = 100;

/// The rule for a corpus's short name wherever one is given (a generic corpus's `corpus.toml`,
/// `generate --name`, an imported record's corpus): letters, digits, '-', '_' or '.', not only
/// dots, at most `MAX_CORPUS_NAME_CHARS` characters, and not a built-in corpus's name. The
/// name becomes part of file names and tables, so a path or markup in it is refused. `Err`
/// says why, to follow `corpus name "x" `.
pub fn check_corpus_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.chars().count() > MAX_CORPUS_NAME_CHARS {
        return Err("is too long: a corpus name has at most 100 characters");
    }
    if name.is_empty()
        || name.chars().all(|c| c == '.')
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("must be letters, digits, '-', '_' or '.' (and not only dots)");
    }
    if registry().any(|c| c.name == name) {
        return Err("is a built-in corpus's name");
    }
    Ok(())
}

/// A corpus name as error messages quote it: one over the length limit is cut, with its
/// length, so that the reason after it stays on a readable line.
pub fn quoted_name(name: &str) -> String {
    let n = name.chars().count();
    if n <= MAX_CORPUS_NAME_CHARS {
        return format!("{name:?}");
    }
    let head: String = name.chars().take(24).collect();
    format!("{head:?}... ({n} characters)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_longer_than_the_limit_are_refused() {
        assert!(check_corpus_name(&"n".repeat(MAX_CORPUS_NAME_CHARS)).is_ok());
        assert!(check_corpus_name(&"é".repeat(MAX_CORPUS_NAME_CHARS)).is_ok());
        let why = check_corpus_name(&"n".repeat(MAX_CORPUS_NAME_CHARS + 1)).unwrap_err();
        assert!(why.contains("at most 100 characters"), "{why}");
        let long = "n".repeat(300);
        assert_eq!(
            quoted_name(&long),
            format!("{:?}... (300 characters)", &long[..24])
        );
        assert_eq!(quoted_name("nq"), "\"nq\"");
    }
}
