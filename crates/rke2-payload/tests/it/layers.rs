//! The library's layer table of `docs/architecture.md` holds: every module of `src/` is in it,
//! and no file names a module of its own layer or of one above it (`crate::…` paths in `use`
//! lines, in code and in doc links alike). Only the crate root (`lib.rs`) reaches every layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The section of `docs/architecture.md` that holds this crate's layer table (the preview
/// crate's table is in a section of its own).
const SECTION: &str = "## The layers of the library";

/// `module → rank` from the rows `| rank | `module`, `module` | … |` of the layer table.
fn layer_table() -> BTreeMap<String, u32> {
    let doc = std::fs::read_to_string(root().join("../../docs/architecture.md"))
        .expect("docs/architecture.md");
    let start = doc
        .find(SECTION)
        .expect("the section of the library's layers");
    let section = &doc[start + SECTION.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut ranks = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(rank), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(rank) = rank.parse::<u32>() else {
            continue;
        };
        for module in modules.split(',') {
            let module = module.trim().trim_matches('`');
            assert!(!module.is_empty(), "an empty module in: {line}");
            assert!(
                ranks.insert(module.to_owned(), rank).is_none(),
                "{module} is in the layer table twice"
            );
        }
    }
    assert!(
        ranks.len() >= 10,
        "the layer table has {} modules",
        ranks.len()
    );
    ranks
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("in src");
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    match first.strip_suffix(".rs") {
        Some("lib") => None,
        Some(stem) => Some(stem.to_owned()),
        None => Some(first),
    }
}

/// Every module named by a `crate::` path in `text`, with its line: `crate::a::b`,
/// `crate::{a, b::c}` (and nested groups), `crate::Name`.
fn named_modules(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // The first path segment of each item of the group (a nested group's items
                // belong to its first segment).
                let mut depth = 0;
                let mut item_start = true;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            rest = &group[j..];
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && (c.is_alphanumeric() || c == '_') => {
                            let name: String = group[j..]
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            out.push((n + 1, name));
                            item_start = false;
                        }
                        _ => {}
                    }
                    rest = &group[j..];
                }
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, name));
            rest = after;
        }
    }
    out
}

#[test]
fn no_module_imports_its_own_layer_or_one_above() {
    let ranks = layer_table();
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut modules_seen = std::collections::BTreeSet::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let rank = *ranks
            .get(&module)
            .unwrap_or_else(|| panic!("{module} ({}) is not in the layer table", file.display()));
        modules_seen.insert(module.clone());
        let text = std::fs::read_to_string(file).expect("read");
        for (line, target) in named_modules(&text) {
            if target == module {
                continue;
            }
            match ranks.get(&target) {
                Some(&other) if other < rank => {}
                Some(&other) => violations.push(format!(
                    "{}:{line}: {module} (layer {rank}) names {target} (layer {other})",
                    file.display()
                )),
                None => violations.push(format!(
                    "{}:{line}: {module} names crate::{target}, which is the crate root or not a module of the table",
                    file.display()
                )),
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports that point up:\n{}",
        violations.join("\n")
    );
    let unused: Vec<&String> = ranks
        .keys()
        .filter(|m| !modules_seen.contains(*m))
        .collect();
    assert!(
        unused.is_empty(),
        "the layer table names modules src/ lacks: {unused:?}"
    );
}

#[test]
fn the_checker_reads_every_form_of_crate_path() {
    let found: Vec<String> = named_modules(
        "use crate::codec::{b64, gzip};\nuse crate::{envelope, payload::{Format, Payload}};\nx = crate::facts::Facts::read(); // [`crate::Envelope`]",
    )
    .into_iter()
    .map(|(_, m)| m)
    .collect();
    assert_eq!(found, ["codec", "envelope", "payload", "facts", "Envelope"]);
}
