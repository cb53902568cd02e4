//! Checks the invariants ARCHITECTURE.md writes down about the crate graph.

use std::collections::BTreeMap;
use std::path::Path;

/// Layer of each workspace crate: a crate may depend only on crates of lower layers.
const LAYERS: &[(&str, u8)] = &[
    ("bench-core", 0),
    ("metrics", 1),
    ("corpora", 1),
    ("llm", 1),
    ("paradigms", 2),
    ("routers", 3),
    ("reports", 3),
    ("ragrouter", 4),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(dir: &Path) -> toml::Value {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    text.parse().unwrap()
}

/// Workspace crates (by package name) → (normal deps, dev deps) that are workspace crates.
fn graph() -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let ws = manifest(root());
    let members: Vec<String> = ws["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    let mut names: Vec<(String, toml::Value)> = members
        .iter()
        .map(|m| {
            let man = manifest(&root().join(m));
            (man["package"]["name"].as_str().unwrap().to_owned(), man)
        })
        .collect();
    names.push(("ragrouter".into(), ws));
    let internal: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let deps_of = |man: &toml::Value, table: &str| -> Vec<String> {
        man.get(table)
            .and_then(|t| t.as_table())
            .map(|t| t.keys().filter(|k| internal.contains(k)).cloned().collect())
            .unwrap_or_default()
    };
    names
        .iter()
        .map(|(n, man)| {
            (
                n.clone(),
                (
                    deps_of(man, "dependencies"),
                    deps_of(man, "dev-dependencies"),
                ),
            )
        })
        .collect()
}

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| {
            panic!("crate {name} has no layer: add it to ARCHITECTURE.md and LAYERS")
        })
        .1
}

#[test]
fn dependencies_flow_toward_bench_core() {
    for (krate, (deps, _)) in graph() {
        if krate == "fixtures" {
            assert_eq!(
                deps,
                ["bench-core"],
                "fixtures may depend on bench-core only"
            );
            continue;
        }
        for d in deps {
            assert_ne!(d, "fixtures", "{krate}: fixtures is a dev-dependency only");
            assert!(
                layer(&d) < layer(&krate),
                "{krate} (layer {}) must not depend on {d} (layer {})",
                layer(&krate),
                layer(&d)
            );
        }
    }
}

#[test]
fn routers_never_depend_on_paradigms() {
    if let Some((deps, dev)) = graph().get("routers") {
        assert!(!deps.contains(&"paradigms".to_owned()) && !dev.contains(&"paradigms".to_owned()));
    }
}

#[test]
fn architecture_md_names_every_crate() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    for krate in graph().keys() {
        assert!(
            arch.contains(&format!("`{krate}`")),
            "ARCHITECTURE.md does not mention `{krate}`"
        );
    }
}

#[test]
fn every_module_starts_with_a_doc_line() {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("target")
                    && !p.file_name().unwrap().to_str().unwrap().starts_with('.')
                {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in [
        "src",
        "bench-core",
        "corpora",
        "paradigms",
        "metrics",
        "fixtures",
        "llm",
        "tests",
    ] {
        let p = root().join(d);
        if p.exists() {
            walk(&p, &mut files);
        }
    }
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a leading //! line: {missing:?}"
    );
}
