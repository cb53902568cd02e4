//! The built-in corpora: one line per loader file, read by `load_corpus`, the corpus listing and
//! the corpus-name rule.

use super::loader::{CorpusInfo, Loader};
use super::{demo, medical, musique, twowiki};

/// Every built-in corpus, in the order `ragrouter corpora` lists them. A loader file's `LOADER`
/// named here needs no other edit: loading, listing and the conformance test read this slice.
pub(crate) static LOADERS: &[&Loader] = &[
    &demo::LOADER,
    &medical::LOADER,
    &twowiki::LOADER,
    &musique::LOADER,
];

/// The named corpora (the generic `jsonl:<dir>` form is not listed: it has no fixed place).
pub fn registry() -> impl Iterator<Item = &'static CorpusInfo> + Clone {
    LOADERS.iter().map(|l| &l.info)
}

/// The loader of the built-in corpus `name`.
pub(crate) fn find(name: &str) -> Option<&'static Loader> {
    LOADERS.iter().copied().find(|l| l.info.name == name)
}

/// The known names, for error messages and help texts.
pub(crate) fn known_names() -> String {
    let mut names: Vec<&str> = registry().map(|c| c.name).collect();
    names.push("jsonl:<dir>");
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CorpusError;
    use crate::load::{load_corpus, LoadOptions};
    use std::collections::HashSet;
    use std::path::{Path, PathBuf};

    /// Loads `name` with `data_dir` as the data directory.
    fn load_from(name: &str, data_dir: &Path) -> crate::Result<bench_core::Corpus> {
        let opts = LoadOptions {
            data_dir: Some(data_dir.to_path_buf()),
            ..LoadOptions::default()
        };
        load_corpus(name, &opts)
    }

    /// The error a built-in corpus whose first file is absent gives: not found, naming that file
    /// and how to point at the data.
    fn assert_not_found(info: &CorpusInfo, dir: &Path, err: &CorpusError) {
        let first = dir.join(info.folder).join(info.files[0]);
        let text = err.to_string();
        assert!(
            matches!(err, CorpusError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound),
            "{}: {text}",
            info.name
        );
        assert!(
            text.contains(&format!("data file {} not found", first.display()))
                && text.contains("--data-dir"),
            "{}: {text}",
            info.name
        );
    }

    #[test]
    fn every_registered_loader_has_a_unique_valid_name() {
        let mut seen = HashSet::new();
        for l in LOADERS {
            let info = &l.info;
            assert!(seen.insert(info.name), "{} is listed twice", info.name);
            // The name rule refuses a built-in name only because it is one.
            assert_eq!(
                crate::load::check_corpus_name(info.name),
                Err("is a built-in corpus's name"),
                "{}",
                info.name
            );
            assert!(!info.description.is_empty(), "{}", info.name);
            assert_eq!(info.is_embedded(), info.files.is_empty(), "{}", info.name);
            assert_eq!(
                info.is_embedded(),
                !l.embedded_source.is_empty(),
                "{}",
                info.name
            );
            assert_eq!(find(info.name).map(|f| f.info), Some(*info));
            assert!(known_names().contains(info.name));
        }
    }

    #[test]
    fn every_registered_loader_loads_or_says_its_data_is_not_found() {
        let empty = tempfile::tempdir().unwrap();
        let shared = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/datasets"
        ));
        for l in LOADERS {
            let info = &l.info;
            if !info.is_embedded() {
                let e = load_from(info.name, empty.path()).unwrap_err();
                assert_not_found(info, empty.path(), &e);
            }
            let present = info
                .files
                .iter()
                .all(|f| shared.join(info.folder).join(f).is_file());
            match load_from(info.name, &shared) {
                Ok(c) => {
                    assert!(present, "{} loaded without its files", info.name);
                    assert_eq!(c.name, info.name);
                    assert!(!c.documents.is_empty() && !c.queries.is_empty());
                    let want = match info.is_embedded() {
                        true => l.embedded_source.to_string(),
                        false => shared.join(info.folder).display().to_string(),
                    };
                    assert_eq!(c.source, want);
                }
                Err(e) if !present && !info.files.is_empty() => {
                    // Only a missing first file is this error; a later one names itself.
                    if !shared.join(info.folder).join(info.files[0]).is_file() {
                        assert_not_found(info, &shared, &e);
                    } else {
                        assert!(e.to_string().contains("not found"), "{}: {e}", info.name);
                    }
                }
                Err(e) => panic!("{} failed to load: {e}", info.name),
            }
        }
    }
}
