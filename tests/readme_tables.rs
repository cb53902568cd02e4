//! The README's catalogues match the code: its routers table lists every router of
//! `routers::registry()` once, in registry order, and its paradigms table every `ParadigmId`.

use std::path::PathBuf;

fn readme() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The first-column names (`` `name` ``) of the table under the README heading `heading`.
fn table_names(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README has no heading {heading:?}"));
    let section = &readme[start + heading.len() + 2..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|l| {
            let cell = l.trim_start_matches('|').split('|').next().unwrap().trim();
            cell.trim_matches('`').to_owned()
        })
        .collect()
}

#[test]
fn readme_router_table_is_the_registry() {
    let want: Vec<String> = routers::registry()
        .iter()
        .map(|e| e.name.to_owned())
        .collect();
    assert_eq!(table_names(&readme(), "## Routers"), want);
}

#[test]
fn readme_paradigm_table_is_every_paradigm() {
    let want: Vec<String> = bench_core::ParadigmId::ALL
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect();
    assert_eq!(table_names(&readme(), "## Paradigms"), want);
}
