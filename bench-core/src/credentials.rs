//! Which URL query parameters carry a credential: one rule for the LLM settings, which refuse
//! them, and the store's redactor, which masks their values wherever text is shown.

/// Words that make a URL query parameter a credential when its name contains one (any case,
/// percent-decoded): `api_key`, `key`, `access_token`, `client_secret`, `x-auth`, `sig`, ...
pub const CREDENTIAL_PARAM_WORDS: [&str; 6] = ["key", "token", "secret", "pass", "auth", "sig"];

/// Whether the URL query parameter `name` carries a credential ([`CREDENTIAL_PARAM_WORDS`]).
pub fn is_credential_param(name: &str) -> bool {
    let lower = percent_decoded(name).to_ascii_lowercase();
    CREDENTIAL_PARAM_WORDS.iter().any(|w| lower.contains(w))
}

/// `s` with each `%XX` escape decoded (others kept as they are), for matching names only.
pub fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(c)) => {
                out.push(c);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_any_case_and_percent_encoded() {
        for name in [
            "api_key",
            "KEY",
            "access_token",
            "client%5Fsecret",
            "x-Auth",
            "sig",
            "a%6Bey",
        ] {
            assert!(is_credential_param(name), "{name}");
        }
        for name in ["model", "version", "q", "%zz"] {
            assert!(!is_credential_param(name), "{name}");
        }
        assert_eq!(percent_decoded("a%20b%zz%4"), "a b%zz%4");
    }
}
