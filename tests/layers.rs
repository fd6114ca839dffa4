//! The crate's modules import only downward: each top-level module of
//! `src/` sits on a layer, and may name (`crate::x`, or `super::x` from a
//! top-level file) only modules on lower layers, never one beside or above
//! it, and never the crate root's re-exports (which would hide where a name
//! comes from). Inside a folder, its files import each other without
//! circles (a name re-exported by the folder's `mod.rs` counts as the file
//! that defines it). Unit tests (`#[cfg(test)] mod ...`, wherever it is in
//! a file, or a `tests.rs`) may use anything.
//!
//! Paths are read as written: `crate::a::B`, `super::super::a`, groups
//! `crate::{a::B, c::{D, E}}` over any number of lines. Comments (doc
//! comments included) are not code.
//!
//! A new module goes on the lowest layer above everything it imports; if
//! this test fails, the message names the file, the line and the import.

use std::collections::{BTreeMap, BTreeSet};
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
    &["slot_table", "unique", "query_param"],
    &["component"],
    &["pool", "bundle"],
    &["entity_ref"],
    &["matcher"],
    &["routes", "event"],
    &["group"],
    &["collector", "index", "query"],
    &["context"],
    &["contexts", "diff", "snapshot", "command_buffer"],
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

/// A source file: its path under `src/` (with `/`) and its text.
struct Source {
    path: String,
    text: String,
}

impl Source {
    /// The module path the file defines: `storage/chunk.rs` is
    /// `[storage, chunk]`, `storage/mod.rs` and `storage.rs` are
    /// `[storage]`, `lib.rs` is `[]`.
    fn module(&self) -> Vec<String> {
        let mut parts: Vec<String> = self
            .path
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_owned)
            .collect();
        if parts.last().is_some_and(|last| last == "mod" || last == "lib") {
            parts.pop();
        }
        parts
    }

    /// Whether the file is a folder's root (`mod.rs`).
    fn is_folder_root(&self) -> bool {
        self.path.ends_with("/mod.rs")
    }
}

/// `text` with comments and unit-test modules blanked out (each character
/// but line breaks made a space, so offsets keep their line numbers).
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut code: Vec<u8> = bytes.to_vec();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut code[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    // Comments: `//` to the end of the line, `/* ... */`. (Strings holding
    // `//` would be cut short too; none of this crate's imports do.)
    let mut at = 0;
    while at + 1 < bytes.len() {
        if bytes[at] == b'/' && bytes[at + 1] == b'/' {
            let end = text[at..].find('\n').map_or(bytes.len(), |n| at + n);
            blank(&mut code, at, end);
            at = end;
        } else if bytes[at] == b'/' && bytes[at + 1] == b'*' {
            let end = text[at..].find("*/").map_or(bytes.len(), |n| at + n + 2);
            blank(&mut code, at, end);
            at = end;
        } else {
            at += 1;
        }
    }
    // Unit-test modules: `#[cfg(test)]` (or `#[cfg(all(test, ...))]`)
    // before `mod name { ... }` or `mod name;`, wherever they are.
    let mut search = 0;
    loop {
        let current = String::from_utf8(code.clone()).expect("ASCII edits keep UTF-8");
        let Some(found) = ["#[cfg(test)]", "#[cfg(all(test"]
            .iter()
            .filter_map(|attribute| current[search..].find(attribute).map(|n| search + n))
            .min()
        else {
            break;
        };
        let after_attribute = current[found..].find(']').map_or(current.len(), |n| found + n + 1);
        let rest = current[after_attribute..].trim_start();
        let item = current.len() - rest.len();
        search = after_attribute;
        if !rest.starts_with("mod ") {
            continue;
        }
        let end = match (rest.find('{'), rest.find(';')) {
            (Some(open), semicolon) if semicolon.is_none_or(|s| open < s) => {
                let mut depth = 0usize;
                let mut end = current.len();
                for (offset, c) in current[item + open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = item + open + offset + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semicolon)) => item + semicolon + 1,
            _ => current.len(),
        };
        blank(&mut code, found, end);
        search = end;
    }
    String::from_utf8(code).expect("ASCII edits keep UTF-8")
}

/// Every path `code` names from the crate root or a parent, as written:
/// the byte offset where it starts, and its segments from `crate` or
/// `super` on (`super` repeated as written), a group expanded into one
/// path per member: `crate::{a::B, c::{D, E}}` gives `crate a B`,
/// `crate c D`, `crate c E`. Not `$crate::` (a macro's path, resolved where
/// it expands) and not `my_crate::`.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    for start_word in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(n) = code[from..].find(start_word) {
            let at = from + n;
            from = at + start_word.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c == '$' || c == '_' || c.is_alphanumeric() || c == ':') {
                continue;
            }
            let head = start_word.trim_end_matches("::").to_owned();
            let mut out = Vec::new();
            expand(&code[from..], vec![head], &mut out);
            found.extend(out.into_iter().map(|path| (at, path)));
        }
    }
    found.sort();
    found
}

/// Reads the rest of a path after `prefix::` from `rest`, pushing each
/// full path (a group gives several) to `out`.
fn expand(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        for member in split_group(group) {
            expand(member, prefix.clone(), out);
        }
        return;
    }
    let segment: String = rest.chars().take_while(|&c| c == '_' || c.is_alphanumeric()).collect();
    if segment.is_empty() {
        if prefix.len() > 1 {
            out.push(prefix);
        }
        return;
    }
    let after = rest[segment.len()..].trim_start();
    let mut path = prefix;
    path.push(segment);
    match after.strip_prefix("::") {
        Some(more) => expand(more, path, out),
        None => out.push(path),
    }
}

/// The members of a group whose text starts after its `{`: split at the
/// commas of this level, up to the closing `}`.
fn split_group(group: &str) -> Vec<&str> {
    let mut members = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (offset, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                members.push(&group[start..offset]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&group[start..offset]);
                start = offset + 1;
            }
            _ => {}
        }
    }
    members.into_iter().filter(|member| !member.trim().is_empty()).collect()
}

/// `path` (from `paths`) as a path from the crate root, for a file of
/// module `module`; `None` if it climbs above the root.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    if path[0] == "crate" {
        return Some(path[1..].to_vec());
    }
    let mut base = module.to_vec();
    let mut rest = path;
    while rest.first().is_some_and(|segment| segment == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The names a folder's `mod.rs` re-exports from its children
/// (`pub use child::{A, B}`, `pub(crate) use child::C`): name -> child.
fn re_exports(root: &Source) -> BTreeMap<String, String> {
    let code = code_of(&root.text);
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(used) = statement
            .split_once("use ")
            .map(|(visibility, used)| (visibility.trim(), used))
        else {
            continue;
        };
        if !used.0.starts_with("pub") {
            continue;
        }
        let mut out = Vec::new();
        let Some(first) = used.1.split("::").next() else {
            continue;
        };
        let first = first.trim().to_owned();
        if first == "crate" || first == "super" || first == "std" || first == "self" {
            continue;
        }
        if let Some(rest) = used.1.trim().strip_prefix(&format!("{first}::")) {
            expand(rest, vec![first.clone()], &mut out);
        }
        for path in out {
            if let Some(name) = path.last() {
                names.insert(name.clone(), first.clone());
            }
        }
    }
    names
}

/// A folder's modules (its files and subfolders, by name) and the names
/// its `mod.rs` re-exports (name -> the module that defines it).
#[derive(Default)]
struct Folder {
    files: BTreeSet<String>,
    exported: BTreeMap<String, String>,
}

/// The line (from 1) of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// Everything wrong with `sources`' imports: imports that do not run
/// downward, imports through the crate root, and circles between the
/// files of a folder.
fn check(sources: &[Source]) -> Vec<String> {
    let mut wrong = Vec::new();
    // Each folder's files and what its `mod.rs` re-exports.
    let mut folders: BTreeMap<Vec<String>, Folder> = BTreeMap::new();
    for source in sources {
        let module = source.module();
        if let Some((name, parent)) = module.split_last() {
            folders.entry(parent.to_vec()).or_default().files.insert(name.clone());
        }
        if source.is_folder_root() {
            folders.entry(module).or_default().exported = re_exports(source);
        }
    }
    // Edges between files of one folder: (folder, from, to) -> a line.
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for source in sources {
        let module = source.module();
        let Some(top) = module.first() else {
            continue; // lib.rs
        };
        if source.path.ends_with("tests.rs") {
            continue;
        }
        let Some(layer) = layer_of(top) else {
            wrong.push(format!(
                "{}: module `{top}` is on no layer: add it to LAYERS",
                source.path
            ));
            continue;
        };
        let code = code_of(&source.text);
        for (at, path) in paths(&code) {
            let written = path.join("::");
            let place = format!("{}:{}: `{written}`", source.path, line_of(&code, at));
            let Some(target) = absolute(&module, &path) else {
                wrong.push(format!("{place}: climbs above the crate root"));
                continue;
            };
            let Some(name) = target.first() else {
                continue;
            };
            if name != top {
                match layer_of(name) {
                    Some(theirs) if theirs < layer => {}
                    Some(theirs) => wrong.push(format!(
                        "{place}: module `{top}` (layer {layer}) imports `{name}` (layer {theirs}), not below it"
                    )),
                    None => wrong.push(format!(
                        "{place}: import it from the module that defines it, not the crate root"
                    )),
                }
                continue;
            }
            // Inside its own top-level module: a sibling file of a folder
            // this file is in (not the folder's root)?
            if source.is_folder_root() {
                continue;
            }
            let Some((me, folder)) = module.split_last() else {
                continue;
            };
            let Some(named) = target.strip_prefix(folder) else {
                continue;
            };
            let Some(first) = named.first() else {
                continue;
            };
            let Some(Folder { files, exported }) = folders.get(folder) else {
                continue;
            };
            let sibling = if files.contains(first) {
                Some(first.clone())
            } else {
                exported.get(first).cloned()
            };
            if let Some(sibling) = sibling.filter(|sibling| sibling != me) {
                edges
                    .entry(folder.to_vec())
                    .or_default()
                    .entry(me.clone())
                    .or_default()
                    .entry(sibling)
                    .or_insert(place);
            }
        }
    }
    for (folder, graph) in &edges {
        if let Some(circle) = find_circle(graph) {
            let steps: Vec<String> = circle
                .windows(2)
                .map(|pair| graph[&pair[0]][&pair[1]].clone())
                .collect();
            wrong.push(format!(
                "src/{}: the files {} import each other in a circle:\n  {}",
                folder.join("/"),
                circle.join(" -> "),
                steps.join("\n  ")
            ));
        }
    }
    wrong
}

/// A circle in `graph` (file -> files it imports), as the files along it
/// with the first repeated at the end; `None` if there is none.
fn find_circle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn every_module_imports_only_from_the_layers_below_it_and_folders_have_no_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let sources: Vec<Source> = files
        .iter()
        .map(|file| Source {
            path: file
                .strip_prefix(&src)
                .expect("under src/")
                .components()
                .filter_map(|c| c.as_os_str().to_str())
                .collect::<Vec<_>>()
                .join("/"),
            text: fs::read_to_string(file).expect("a readable source file"),
        })
        .collect();
    let wrong = check(&sources);
    assert!(
        wrong.is_empty(),
        "imports that do not run downward:\n{}",
        wrong.join("\n")
    );
}

/// A tree of files for the checks below: `(path under src/, text)`.
fn tree(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|&(path, text)| Source {
            path: path.to_owned(),
            text: text.to_owned(),
        })
        .collect()
}

#[test]
fn the_layer_check_reads_paths_as_written() {
    let only = |code: &str| -> Vec<String> { paths(code).into_iter().map(|(_, path)| path.join("::")).collect() };
    assert_eq!(
        only("use crate::storage::{Archetype, Chunk};"),
        ["crate::storage::Archetype", "crate::storage::Chunk"]
    );
    assert_eq!(
        only("use crate::{entity::Entity, id::IndexKey};"),
        ["crate::entity::Entity", "crate::id::IndexKey"]
    );
    assert_eq!(
        only("use crate::{\n    a::{B,\n C},\n d,\n};"),
        ["crate::a::B", "crate::a::C", "crate::d"]
    );
    assert_eq!(
        only("let x = crate::index::fill(a) + crate::Context::new();"),
        ["crate::index::fill", "crate::Context::new"]
    );
    assert_eq!(only("use super::super::x::Y;"), ["super::super::x::Y"]);
    assert!(only("$crate::__private::PoolMaker::of::<$ty>()").is_empty());
    assert!(only("my_crate::storage").is_empty());
    // Comments are not code.
    assert!(
        paths(&code_of(
            "/// [`Context`](crate::context::Context)\n// use crate::x;\n/* crate::y */"
        ))
        .is_empty()
    );
}

// Each rule, checked by planting the fault once.

#[test]
fn an_upward_import_is_caught_on_one_line_or_many() {
    let ok = tree(&[("aerc.rs", "use crate::id::Id;"), ("id.rs", "")]);
    assert!(check(&ok).is_empty(), "{:?}", check(&ok));
    let one_line = tree(&[("aerc.rs", "use crate::context::Context;"), ("context/mod.rs", "")]);
    let wrong = check(&one_line);
    assert!(
        wrong.len() == 1 && wrong[0].contains("aerc.rs:1") && wrong[0].contains("imports `context`"),
        "{wrong:?}"
    );
    let many_lines = tree(&[
        ("aerc.rs", "use crate::{\n    id::Id,\n    context::Context,\n};"),
        ("id.rs", ""),
        ("context/mod.rs", ""),
    ]);
    let wrong = check(&many_lines);
    assert!(wrong.len() == 1 && wrong[0].contains("imports `context`"), "{wrong:?}");
}

#[test]
fn a_super_path_out_of_a_top_level_file_is_checked_as_a_crate_path() {
    let top_file = tree(&[("entity.rs", "use super::context::Context;"), ("context/mod.rs", "")]);
    let wrong = check(&top_file);
    assert!(wrong.len() == 1 && wrong[0].contains("imports `context`"), "{wrong:?}");
    let from_folder_root = tree(&[("storage/mod.rs", "use super::system::System;"), ("system/mod.rs", "")]);
    let wrong = check(&from_folder_root);
    assert!(wrong.len() == 1 && wrong[0].contains("imports `system`"), "{wrong:?}");
    // Inside a folder, `super::` is the folder: allowed.
    let inside = tree(&[("storage/chunk.rs", "use super::Archetype;"), ("storage/mod.rs", "")]);
    assert!(check(&inside).is_empty(), "{:?}", check(&inside));
    let climbing = tree(&[
        ("storage/chunk.rs", "use super::super::system::System;"),
        ("system/mod.rs", ""),
    ]);
    let wrong = check(&climbing);
    assert!(wrong.len() == 1 && wrong[0].contains("imports `system`"), "{wrong:?}");
}

#[test]
fn code_after_a_test_module_is_still_checked() {
    let file = "#[cfg(test)]\nmod tests {\n    use crate::context::Context;\n}\n\nuse crate::system::System;\n";
    let wrong = check(&tree(&[
        ("storage/mod.rs", file),
        ("context/mod.rs", ""),
        ("system/mod.rs", ""),
    ]));
    assert!(
        wrong.len() == 1 && wrong[0].contains("storage/mod.rs:6") && wrong[0].contains("imports `system`"),
        "the test module may use anything, the code after it may not: {wrong:?}"
    );
}

#[test]
fn a_circle_between_the_files_of_a_folder_is_caught_through_re_exports_too() {
    let direct = tree(&[
        ("system/mod.rs", "mod a;\nmod b;"),
        ("system/a.rs", "use super::b::B;"),
        ("system/b.rs", "use super::a::A;"),
    ]);
    let wrong = check(&direct);
    assert!(wrong.len() == 1 && wrong[0].contains("a -> b -> a"), "{wrong:?}");
    let through_root = tree(&[
        (
            "system/mod.rs",
            "mod failure;\nmod phase;\npub use failure::{SystemFailed, SystemResult};\npub use phase::Phase;",
        ),
        ("system/failure.rs", "use super::Phase;"),
        ("system/phase.rs", "use super::{System, SystemResult};"),
    ]);
    let wrong = check(&through_root);
    assert!(
        wrong.len() == 1 && wrong[0].contains("failure -> phase -> failure"),
        "{wrong:?}"
    );
    let one_way = tree(&[
        ("system/mod.rs", "mod failure;\nmod phase;\npub use phase::Phase;"),
        (
            "system/failure.rs",
            "use super::Phase;\nuse crate::system::phase::Phase as P;",
        ),
        ("system/phase.rs", "use super::System;"),
    ]);
    assert!(check(&one_way).is_empty(), "{:?}", check(&one_way));
}
