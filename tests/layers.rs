//! The crate's modules import only downward: each top-level module of
//! `src/` sits on a layer, and may name (`crate::x`) only modules on lower
//! layers, never one beside or above it, and never the crate root's
//! re-exports (which would hide where a name comes from). Unit tests
//! (`#[cfg(test)] mod ...` at the end of a file, or a `tests.rs`) may use
//! anything.
//!
//! A new module goes on the lowest layer above everything it imports; if
//! this test fails, the message names the file, the line and the import.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may import the modules of the
/// layers before its own. (`lib.rs` is above them all.)
const LAYERS: &[&[&str]] = &[
    // Handles and ids: the ground floor.
    &["entity", "id", "type_name", "recycle"],
    &["aerc"],
    &["error", "context_kind"],
    // Archetype chunk storage, and the component records it keeps.
    &["storage"],
    &["entities", "unique", "query_param"],
    &["component"],
    &["pool", "entity_ref", "bundle"],
    &["matcher"],
    &["routes", "event"],
    &["group"],
    &["collector", "index", "query"],
    &["context"],
    &["contexts", "renamed", "diff", "snapshot", "command_buffer"],
    &["system"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The modules named as `crate::name` in `code` (one line, comments cut
/// off): not `$crate::` (a macro's path, resolved where it expands).
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c == '$' || c == '_' || c.is_alphanumeric()) {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            // `crate::{a, b::C}`: each first segment (on this line).
            let inside = group.split('}').next().unwrap_or_default();
            names.extend(
                inside
                    .split(',')
                    .map(|item| item.trim().split("::").next().unwrap_or_default().to_owned())
                    .filter(|name| !name.is_empty()),
            );
            continue;
        }
        let name: String = after.chars().take_while(|&c| c == '_' || c.is_alphanumeric()).collect();
        names.push(name);
    }
    names
}

#[test]
fn every_module_imports_only_from_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src/");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|first| first.trim_end_matches(".rs").to_owned())
            .expect("a file name");
        // The crate root, and unit-test files (`#[cfg(test)] mod tests;`).
        if module == "lib" || file.file_name().is_some_and(|name| name == "tests.rs") {
            continue;
        }
        let Some(layer) = layer_of(&module) else {
            wrong.push(format!(
                "{}: module `{module}` is on no layer: add it to LAYERS",
                relative.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("a readable source file");
        let lines: Vec<&str> = text.lines().collect();
        for (number, line) in lines.iter().enumerate() {
            let trimmed = line.trim();
            // The unit tests at the end of a file may use anything.
            let next = lines[number + 1..].iter().find(|l| !l.trim().is_empty());
            if trimmed == "#[cfg(test)]" && next.is_some_and(|l| l.trim_start().starts_with("mod ")) {
                break;
            }
            let code = line.split("//").next().unwrap_or_default();
            for name in named_modules(code) {
                if name == module {
                    continue;
                }
                let place = format!("{}:{}: `crate::{name}`", relative.display(), number + 1);
                match layer_of(&name) {
                    Some(theirs) if theirs < layer => {}
                    Some(theirs) => wrong.push(format!(
                        "{place}: module `{module}` (layer {layer}) imports `{name}` (layer {theirs}), not below it"
                    )),
                    None => wrong.push(format!(
                        "{place}: import it from the module that defines it, not the crate root"
                    )),
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not run downward:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_layer_check_reads_imports_as_written() {
    assert_eq!(named_modules("use crate::storage::{Archetype, Chunk};"), ["storage"]);
    assert_eq!(
        named_modules("use crate::{entity::Entity, id::IndexKey};"),
        ["entity", "id"]
    );
    assert_eq!(
        named_modules("let x = crate::index::fill(a) + crate::Context::new();"),
        ["index", "Context"]
    );
    assert!(named_modules("$crate::__private::PoolMaker::of::<$ty>()").is_empty());
    assert!(named_modules("my_crate::storage").is_empty());
}
