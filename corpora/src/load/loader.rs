//! What a built-in corpus loader is: its registry entry and the function that reads its files
//! (a leaf that every loader file and the registry name).

use bench_core::config::DataConfig;
use std::path::Path;

use super::parsed::Parsed;
use crate::error::Result;

/// A corpus the registry knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusInfo {
    /// The registry name, as commands take it.
    pub name: &'static str,
    /// One line for `ragrouter corpora`.
    pub description: &'static str,
    /// Folder under the data directory; empty for the embedded demo.
    pub folder: &'static str,
    /// Files inside `folder`: the corpus first, then the questions.
    pub files: &'static [&'static str],
}

impl CorpusInfo {
    /// Whether the corpus ships inside the binary (needs no data directory).
    pub fn is_embedded(&self) -> bool {
        self.folder.is_empty()
    }
}

/// What a loader reads from.
pub(crate) struct Source<'a> {
    /// `<data directory>/<folder>`; empty for an embedded corpus.
    pub dir: &'a Path,
    /// The configuration's `[data]` (which questions to keep).
    pub data: &'a DataConfig,
    /// What to tell a user whose files are not found.
    pub hint: &'a str,
}

/// A built-in corpus: each loader file defines one as `LOADER`, and `registry::LOADERS` lists
/// them.
pub(crate) struct Loader {
    /// Its name, description and files.
    pub info: CorpusInfo,
    /// Reads its documents and questions.
    pub load: fn(&Source<'_>) -> Result<Parsed>,
    /// What `Corpus::source` says for an embedded corpus; empty for one read from its folder
    /// (the folder is the source).
    pub embedded_source: &'static str,
}

impl Loader {
    /// A corpus whose files `load` reads from its folder under the data directory.
    pub(crate) const fn in_folder(
        info: CorpusInfo,
        load: fn(&Source<'_>) -> Result<Parsed>,
    ) -> Self {
        Loader {
            info,
            load,
            embedded_source: "",
        }
    }
}
