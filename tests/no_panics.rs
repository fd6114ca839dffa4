//! Library code does not panic on user input (DESIGN.md, "Decisions"): no
//! `.unwrap()`, `todo!` or `unimplemented!` anywhere in `src/` outside test
//! code, and every `.expect(`, `panic!(` and `unreachable!(` left there is a
//! reviewed entry of [`ALLOWED`], whose message says why it cannot fire (or,
//! for the few documented panics, which misuse it reports).
//!
//! Test code is skipped: an item under `#[cfg(test)]` (or `#[cfg(all(test,
//! ..))]`), with its braced body, wherever it sits in a file, and a module
//! file declared under one (`src/storage/tests.rs`). So are comments, doc
//! comments (and the doc examples in them) and string literals.
//!
//! A new `expect` needs an entry here: write its message as the invariant
//! that keeps it from firing, and check that no public call, registration or
//! panicking handler can break that invariant; if one can, return an `Error`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// `(file under src/, message)`: the reviewed `expect`s, `panic!`s and
/// `unreachable!`s. The message is the reason it cannot fire.
const ALLOWED: &[(&str, &str)] = &[
    // A keyed `Mut` looks its value up at each use: found when it was made,
    // and nothing can change the context while the `Mut` borrows it.
    (
        "context/mut_ref.rs",
        "a keyed `Mut` borrows its context whole, so its entity keeps its T",
    ),
    (
        "storage/stamps/clock.rs",
        "change ticks are rebased long before they wrap: `Context::end_change_tick` does it at 2^30",
    ),
    // Counts of things that each cost memory (or an entity slot, a u32):
    // memory runs out long before the count reaches 2^32.
    (
        "collector/data.rs",
        "fewer than 2^32 collector slots: each costs memory, which runs out first",
    ),
    (
        "command_buffer/queues.rs",
        "fewer than 2^32 - 1 value types: each queue costs memory, which runs out first",
    ),
    (
        "index/data.rs",
        "fewer than 2^32 indices: each costs memory, which runs out first",
    ),
    (
        "index/entity_index.rs",
        "fewer than 2^32 entities per key: entity slots are u32s",
    ),
    (
        "routes/membership.rs",
        "fewer than 2^32 groups: each costs memory, which runs out first",
    ),
    (
        "routes/mod.rs",
        "fewer than 2^32 routes: each costs memory, which runs out first",
    ),
    (
        "storage/archetype.rs",
        "fewer than 2^32 - 1 rows in one archetype: each row holds an entity slot, and slots are u32s",
    ),
    (
        "storage/archetypes.rs",
        "fewer than 2^32 - 2 archetypes: each costs memory, which runs out first",
    ),
    (
        "storage/archetypes.rs",
        "fewer than 2^32 transitions: each costs memory, which runs out first",
    ),
    (
        "storage/spawn.rs",
        "fewer than 2^32 bundle plans: each costs memory, which runs out first",
    ),
    ("id.rs", "an index of the registry or of a u32 id fits in u32"),
    ("slot_table.rs", "more than 2^32 - 1 entity slots"),
    // Layouts: only a component type too big for any value to be passed
    // could break them.
    (
        "storage/chunk.rs",
        "a chunk's size fits in isize: a row of declared component types whose sizes sum past it could never be built",
    ),
    (
        "storage/chunk.rs",
        "a chunk's size fits in usize: a row of declared component types whose sizes sum past it could never be built",
    ),
    (
        "storage/column_plan.rs",
        "a plan keeps fewer than 2^32 offsets: one per take (at most 10) per archetype, and 400 million archetypes do not fit in memory",
    ),
    (
        "storage/column_plan.rs",
        "a column offset fits in u32: a chunk is `CHUNK_BYTES` long unless one row is longer, and no component value of 4 GiB can be passed by value",
    ),
    (
        "storage/sparse.rs",
        "a `Vec`'s pointer is never null, even unallocated (dangling)",
    ),
    // Bookkeeping the library keeps itself: no public call, registration or
    // handler reaches it (handlers get read-only views).
    (
        "collector/data.rs",
        "routes name existing collectors: `remove_collector` detaches one from its routes",
    ),
    (
        "command_buffer/queues.rs",
        "queues are matched by value type: `slot_like` finds or makes the queue of `ty`",
    ),
    (
        "command_buffer/queues.rs",
        "a slot holds the queue of its type: `slots` maps each type to its own queue",
    ),
    // `playback` pops each command's value before anything can fail, and
    // empties the buffer (commands and values) even when it unwinds.
    (
        "command_buffer/queues.rs",
        "each recorded value is taken once, in recorded order",
    ),
    (
        "context/collector.rs",
        "the collector exists: `clear_collector` found it just above",
    ),
    ("context/index.rs", "the index exists: `find` gave its key just above"),
    ("context/index.rs", "the index exists: `index_key` found it just above"),
    (
        "context/query.rs",
        "a query that only reads never aliases: `Q` is a `ReadOnlyQueryParam`",
    ),
    (
        "group/mod.rs",
        "`live_at` gives only live entities, which have locations",
    ),
    ("group/mod.rs", "`rows` is filled only from the chunks of `current`"),
    ("index/data.rs", "rows below the archetype's length are live"),
    (
        "query/sparse.rs",
        "a sparse chunk holds only entities with the required component: the query splits chunks at the others",
    ),
    (
        "routes/route.rs",
        "the loop runs while `before` or `after` has an element left",
    ),
    (
        "storage/archetype.rs",
        "the last row was in a chunk: a row is allocated in the last chunk",
    ),
    (
        "query/plan.rs",
        "both plans were made (or brought up to date) just above",
    ),
    (
        "storage/columns.rs",
        "the row is live: a `RowAccess` is made only for a live row",
    ),
    (
        "storage/transition.rs",
        "the bigger set has every column of the smaller: the sets differ by `component` only",
    ),
    (
        "storage/transition.rs",
        "the bigger set has the component: the sets differ by it",
    ),
    (
        "storage/moves.rs",
        "an edge never leads back to its own archetype: its two sets differ",
    ),
    ("storage/moves.rs", "`loc` is live (caller: `can_transfer`)"),
    (
        "storage/sparse.rs",
        "listed ids have sets: an id is listed when its set is made, and sets are never removed",
    ),
    (
        "storage/sparse.rs",
        "each listed id has a set: `ids` was checked against `sets` above",
    ),
    (
        "storage/spawn.rs",
        "slot {slot} given twice, or not the slot written: the entity allocator gives each free slot once",
    ),
    (
        "storage/spawn_batch.rs",
        "one offset per value: `spawn_batch` makes one per type `type_ids` lists",
    ),
    (
        "context/change.rs",
        "the entity's row is live: `at` is its location, read above",
    ),
    // Ids and types correspond one to one (the registry gives each type its
    // own id; `assign_id` ignores another type's info), so a column or set
    // of a type's id holds that type.
    (
        "context/change.rs",
        "`from` is the entity's live row and the transition adds a column of `T`s (ids and types correspond one to one: `assign_id` refuses another type's info)",
    ),
    (
        "context/change.rs",
        "`from` is the entity's live row and the transition takes out a column of `T`s (ids and types correspond one to one: `assign_id` refuses another type's info)",
    ),
    ("context/lifecycle.rs", "a bundle writes every element of its plan"),
    ("snapshot/write.rs", "a column holds values of its type"),
    ("snapshot/write_typed.rs", "a set holds values of its type"),
    (
        "snapshot/write_typed.rs",
        "an archetype with the component has its column",
    ),
    // Files being reworked for issue 25 (entity handles, restore): listed
    // as they stand; their messages are for their authors to sharpen.
    ("context/lifecycle.rs", "an empty bundle has no duplicate component"),
    ("context/lifecycle.rs", "every listed entity is alive"),
    (
        "snapshot/restore.rs",
        "a ComponentSet lists each component once, so the bundle names none twice",
    ),
    (
        "snapshot/restore.rs",
        "the id was just listed from this context's own collectors",
    ),
    (
        "slot_table.rs",
        "a held slot has a nonzero tag: blocks of creation numbers skip tag 0",
    ),
    ("slot_table.rs", "block_range skips the number whose low 32 bits are 0"),
    (
        "context/entity_mut.rs",
        "changes through a view never destroy its entity, so it keeps a location",
    ),
    (
        "slot_table.rs",
        "a live entity's creation number is one of the context's",
    ),
    ("snapshot/write.rs", "a listed entity is alive"),
    (
        "snapshot/write_typed.rs",
        "the index is a position of the tuple, found in its ids just above",
    ),
    (
        "snapshot/read_typed.rs",
        "the index is a position of the tuple, found in its ids just above",
    ),
    // Documented panics: the hidden declaration path misused (a type or
    // context implemented by hand, not collected), a full command buffer,
    // and the panicking shorthand of the `try_` phases.
    (
        "component.rs",
        "component `{}` was not collected by `inventory`: implement `Component` only through `reactecs::component!`, on a platform `inventory` supports",
    ),
    (
        "contexts.rs",
        "context `{name}` was not collected by `inventory`: declare it with `reactecs::context!`",
    ),
    (
        "command_buffer/mod.rs",
        "at most 2^32 - 1 creates in one command buffer (the documented panic of `append`)",
    ),
    (
        "system/failure.rs",
        "{failure} (run the `try_` phase to get the error instead of a panic)",
    ),
];

/// What a file holds, char by char: code, or text the compiler does not
/// read as code (comments, string and char literals).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Code,
    Comment,
    Literal,
}

/// Classifies each char of `src`.
fn classify(src: &[char]) -> Vec<Kind> {
    let mut kinds = vec![Kind::Code; src.len()];
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < src.len() {
        let c = src[i];
        let next = src.get(i + 1).copied();
        let start = i;
        if c == '/' && next == Some('/') {
            while i < src.len() && src[i] != '\n' {
                i += 1;
            }
            kinds[start..i].fill(Kind::Comment);
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < src.len() {
                if src[i] == '/' && src.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if src[i] == '*' && src.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            kinds[start..i].fill(Kind::Comment);
        } else if c == 'r' && matches!(next, Some('"' | '#')) && (i == 0 || !ident(src[i - 1])) {
            // A raw string: r"..", r#".."#.
            let mut hashes = 0;
            i += 1;
            while src.get(i) == Some(&'#') {
                hashes += 1;
                i += 1;
            }
            if src.get(i) != Some(&'"') {
                continue;
            }
            i += 1;
            while i < src.len() {
                if src[i] == '"' && (0..hashes).all(|h| src.get(i + 1 + h) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            kinds[start..i].fill(Kind::Literal);
        } else if c == '"' {
            i += 1;
            while i < src.len() && src[i] != '"' {
                i += if src[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            kinds[start..i.min(src.len())].fill(Kind::Literal);
        } else if c == '\'' {
            // A char literal ('x', '\n', '\''), else a lifetime or label.
            if next == Some('\\') {
                i += 2;
                while i < src.len() && src[i] != '\'' {
                    i += 1;
                }
                i += 1;
                kinds[start..i.min(src.len())].fill(Kind::Literal);
            } else if src.get(i + 2) == Some(&'\'') {
                i += 3;
                kinds[start..i].fill(Kind::Literal);
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    kinds
}

/// Whether `src` (from `at`) starts with `pattern`, all of it code.
fn code_at(src: &[char], kinds: &[Kind], at: usize, pattern: &[char]) -> bool {
    src.get(at..at + pattern.len()) == Some(pattern) && kinds[at..at + pattern.len()].iter().all(|&k| k == Kind::Code)
}

/// Marks as skipped each item under `#[cfg(test)]` / `#[cfg(all(test, ..))]`:
/// its further attributes, then up to its `;` or the end of its braced body.
/// Gives the names of out-of-line modules declared so (`mod tests;`).
fn skip_test_items(src: &[char], kinds: &[Kind], skipped: &mut [bool]) -> Vec<String> {
    let mut modules = Vec::new();
    let test_only: [Vec<char>; 2] = ["#[cfg(test)]", "#[cfg(all(test"].map(|p| p.chars().collect());
    for at in 0..src.len() {
        if !test_only.iter().any(|p| code_at(src, kinds, at, p)) {
            continue;
        }
        let mut i = at;
        let (mut brackets, mut braces, mut opened) = (0i32, 0i32, false);
        let mut item = String::new();
        while i < src.len() {
            let c = src[i];
            if kinds[i] == Kind::Code {
                match c {
                    '[' => brackets += 1,
                    ']' => brackets -= 1,
                    '{' if brackets == 0 => {
                        braces += 1;
                        opened = true;
                    }
                    '}' if brackets == 0 => braces -= 1,
                    _ => {}
                }
                if brackets == 0 {
                    item.push(c);
                }
            }
            i += 1;
            if brackets == 0 && ((opened && braces == 0) || (!opened && c == ';' && kinds[i - 1] == Kind::Code)) {
                break;
            }
        }
        skipped[at..i].fill(true);
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if !opened
            && let Some(pos) = words.iter().position(|&w| w == "mod")
            && let Some(name) = words.get(pos + 1)
        {
            modules.push((*name).to_owned());
        }
    }
    modules
}

/// The string literal that opens the first argument at `from` (just past
/// the `(`), unescaped (`\` line continuations joined); `""` for an empty
/// argument list.
fn first_message(src: &[char], kinds: &[Kind], mut from: usize) -> String {
    while from < src.len() && (src[from].is_whitespace() || kinds[from] == Kind::Comment) {
        from += 1;
    }
    if src.get(from) != Some(&'"') {
        return String::new();
    }
    let mut message = String::new();
    let mut i = from + 1;
    while i < src.len() && src[i] != '"' {
        if src[i] == '\\' {
            match src.get(i + 1) {
                Some('\n') => {
                    i += 2;
                    while i < src.len() && src[i].is_whitespace() {
                        i += 1;
                    }
                    continue;
                }
                Some('n') => message.push('\n'),
                Some(&other) => message.push(other),
                None => {}
            }
            i += 2;
        } else {
            message.push(src[i]);
            i += 1;
        }
    }
    message
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One use of a banned or reviewed construct in library code.
#[derive(Debug, PartialEq)]
struct Found {
    line: usize,
    /// `.unwrap()`, `.expect(`, `panic!(`, ...
    what: &'static str,
    /// The message (`""` for a banned construct or none given).
    message: String,
}

/// Banned outright in library code.
const BANNED: [&str; 3] = [".unwrap()", "todo!(", "unimplemented!("];
/// Allowed with a reviewed message.
const REVIEWED: [&str; 3] = [".expect(", "panic!(", "unreachable!("];

/// The banned and reviewed constructs in the library code of `text` (test
/// items, comments and literals skipped), and the out-of-line modules it
/// declares under `#[cfg(test)]`.
fn scan(text: &str) -> (Vec<Found>, Vec<String>) {
    let src: Vec<char> = text.chars().collect();
    let kinds = classify(&src);
    let mut skipped = vec![false; src.len()];
    let test_modules = skip_test_items(&src, &kinds, &mut skipped);
    let patterns: Vec<(&'static str, Vec<char>)> = BANNED
        .iter()
        .chain(&REVIEWED)
        .map(|&p| (p, p.chars().collect()))
        .collect();
    let mut found = Vec::new();
    let mut line = 1;
    for at in 0..src.len() {
        if src[at] == '\n' {
            line += 1;
        }
        if skipped[at] {
            continue;
        }
        // A macro name must start a word (`debug_panic!(` is another macro).
        let word_start = at == 0 || !(src[at - 1].is_alphanumeric() || src[at - 1] == '_');
        for (what, pattern) in &patterns {
            if (what.starts_with('.') || word_start) && code_at(&src, &kinds, at, pattern) {
                let message = if REVIEWED.contains(what) {
                    first_message(&src, &kinds, at + pattern.len())
                } else {
                    String::new()
                };
                found.push(Found { line, what, message });
            }
        }
    }
    (found, test_modules)
}

/// The scanner itself: what it finds and what it skips.
#[test]
fn the_scanner_skips_tests_comments_and_literals() {
    let text = r##"
//! Docs: `x.unwrap()` in a doc example.
/// ```
/// let y = x.unwrap();
/// ```
#[cfg(test)]
use std::fmt;
fn f(x: Option<u8>) -> u8 {
    let s = ".unwrap() in a string";
    let r = r#"panic!("raw")"#;
    let c = '"';
    let _ = x.expect("a reason \
         on two lines");
    x.unwrap() // here: .unwrap() in a comment
}
#[cfg(test)]
#[allow(unused)]
fn helper() { if true { None::<u8>.unwrap(); } }
#[cfg(all(test, feature = "x"))]
mod tracing_tests { fn g() { todo!() } }
fn h() { unreachable!() }
fn k() { my_panic!("not ours"); panic!("{n} why"); }
#[cfg(test)]
mod tests;
"##;
    let (found, modules) = scan(text);
    let found: Vec<(usize, &str, &str)> = found.iter().map(|f| (f.line, f.what, f.message.as_str())).collect();
    assert_eq!(
        found,
        [
            (12, ".expect(", "a reason on two lines"),
            (14, ".unwrap()", ""),
            (21, "unreachable!(", ""),
            (22, "panic!(", "{n} why"),
        ]
    );
    assert_eq!(modules, ["tests"]);
}

#[test]
fn library_code_has_only_reviewed_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut test_modules: Vec<PathBuf> = Vec::new();
    let mut scanned = Vec::new();
    for path in &files {
        let (found, modules) = scan(&fs::read_to_string(path).expect("a source file is UTF-8"));
        for module in modules {
            let dir = if path.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs") {
                path.parent().expect("a file has a directory").to_path_buf()
            } else {
                path.with_extension("")
            };
            test_modules.push(dir.join(format!("{module}.rs")));
            test_modules.push(dir.join(module).join("mod.rs"));
        }
        scanned.push((path, found));
    }
    assert!(
        test_modules.iter().any(|m| m.ends_with("storage/tests.rs")),
        "src/storage/tests.rs is found as a test module"
    );
    let mut failures = String::new();
    let mut used = vec![false; ALLOWED.len()];
    for (path, found) in scanned {
        if test_modules.contains(path) {
            continue;
        }
        let file = path
            .strip_prefix(&root)
            .expect("under src/")
            .to_string_lossy()
            .replace('\\', "/");
        for Found { line, what, message } in found {
            if BANNED.contains(&what) {
                let _ = writeln!(failures, "src/{file}:{line}: `{what}` in library code");
                continue;
            }
            match ALLOWED.iter().position(|&(f, m)| f == file && m == message) {
                Some(entry) => used[entry] = true,
                None => {
                    let _ = writeln!(
                        failures,
                        "src/{file}:{line}: `{what}` with message {message:?} is not in ALLOWED: return an \
                         `Error` if user input can reach it, else make the message say why it cannot fire \
                         and list it"
                    );
                }
            }
        }
    }
    for (entry, &(file, message)) in ALLOWED.iter().enumerate() {
        if !used[entry] {
            let _ = writeln!(
                failures,
                "ALLOWED entry ({file:?}, {message:?}) matches nothing: remove it"
            );
        }
    }
    assert!(failures.is_empty(), "\n{failures}");
}
