//! The edits the oracle makes: for each definition a judge's pattern
//! finds on one line, its name renamed, its last parameter dropped, its
//! return type changed and (for a linter) a statement it flags put in its
//! body; and each file deleted.

use super::Judge;
use regex::Regex;
use std::path::{Path, PathBuf};

/// What an edit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Rename,
    DropParameter,
    ChangeReturnType,
    /// A statement a linter flags, put first in a body (or above the
    /// definition where the body's brace is on its own line).
    InsertLint,
    /// The whole file, which `check_edit` cannot be asked about: only
    /// the diagnostics as on disk are.
    Delete,
}

/// An edit of one line of a file, as `check_edit` is given it, or a
/// file's deletion (`old` and `new` empty, `name` the file's stem).
#[derive(Debug, Clone)]
pub struct Edit {
    /// As the roots display it.
    pub file: String,
    pub kind: Kind,
    pub name: String,
    pub old: String,
    pub new: String,
}

impl Edit {
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Rename => format!("rename `{}` in {}", self.name, self.file),
            Kind::DropParameter => {
                format!(
                    "drop the last parameter of `{}` in {}",
                    self.name, self.file
                )
            }
            Kind::ChangeReturnType => {
                format!("change the return type of `{}` in {}", self.name, self.file)
            }
            Kind::InsertLint => {
                format!(
                    "put a flagged statement at `{}` in {}",
                    self.name, self.file
                )
            }
            Kind::Delete => format!("delete {}", self.file),
        }
    }
}

/// Every edit the judge can make in the project at `root`, in path and
/// line order: for each function, its name renamed, its last parameter
/// dropped where the line holds the whole list, and its return type
/// changed where the line writes it; for each type or constant, its name
/// renamed; after a file's definitions, its deletion.
pub fn edits(judge: &Judge, root: &Path) -> Vec<Edit> {
    let Ok(definition) = Regex::new(judge.definition) else {
        panic!("{}: the definition pattern does not compile", judge.server);
    };
    let names: Vec<Regex> = judge
        .names
        .iter()
        .map(|pattern| match Regex::new(pattern) {
            Ok(names) => names,
            Err(error) => panic!(
                "{}: a names pattern does not compile: {error}",
                judge.server
            ),
        })
        .collect();
    let returns = judge.returns.map(|returns| {
        let Ok(pattern) = Regex::new(returns.pattern) else {
            panic!("{}: the return type pattern does not compile", judge.server);
        };
        (pattern, returns.instead)
    });
    let mut edits = Vec::new();
    for path in files(root, judge.extensions) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let file = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for line in text.lines() {
            // `check_edit` replaces a text that occurs once.
            let once = || text.matches(line).count() == 1;
            let Some(found) = definition.captures(line) else {
                let named = names.iter().find_map(|names| names.captures(line));
                if let Some(at) = named.and_then(|named| named.name("name"))
                    && once()
                {
                    edits.push(renamed(&file, line, at));
                }
                continue;
            };
            let Some(at) = found.name("name") else {
                continue;
            };
            if !once() {
                continue;
            }
            let name = at.as_str();
            edits.push(renamed(&file, line, at));
            if let Some(params) = found.name("params")
                && let Some(dropped) = without_last_parameter(params.as_str(), judge.receiver)
            {
                edits.push(Edit {
                    file: file.clone(),
                    kind: Kind::DropParameter,
                    name: name.to_owned(),
                    old: line.to_owned(),
                    new: format!(
                        "{}{dropped}{}",
                        &line[..params.start()],
                        &line[params.end()..]
                    ),
                });
            }
            if let Some(statement) = judge.lint {
                // First in the body where the line opens it; above the
                // definition where its brace is on the next line (PHP's).
                let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
                let new = match line.trim_end().ends_with('{') {
                    true => format!("{line}\n{indent}  {statement}"),
                    false => format!("{indent}{statement}\n{line}"),
                };
                edits.push(Edit {
                    file: file.clone(),
                    kind: Kind::InsertLint,
                    name: name.to_owned(),
                    old: line.to_owned(),
                    new,
                });
            }
            let after = found.get(0).map_or(line.len(), |whole| whole.end());
            if let Some((pattern, instead)) = &returns
                && let Some(written) = pattern.captures(&line[after..])
                && let Some(written) = written.name("type")
            {
                let other = match written.as_str() == instead[0] {
                    true => instead[1],
                    false => instead[0],
                };
                let (start, end) = (after + written.start(), after + written.end());
                edits.push(Edit {
                    file: file.clone(),
                    kind: Kind::ChangeReturnType,
                    name: name.to_owned(),
                    old: line.to_owned(),
                    new: format!("{}{other}{}", &line[..start], &line[end..]),
                });
            }
        }
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        edits.push(Edit {
            file: file.clone(),
            kind: Kind::Delete,
            name: stem.into_owned(),
            old: String::new(),
            new: String::new(),
        });
    }
    edits
}

/// The name `at` on `line` renamed.
fn renamed(file: &str, line: &str, at: regex::Match) -> Edit {
    Edit {
        file: file.to_owned(),
        kind: Kind::Rename,
        name: at.as_str().to_owned(),
        old: line.to_owned(),
        new: format!(
            "{}{}Renamed{}",
            &line[..at.start()],
            at.as_str(),
            &line[at.end()..]
        ),
    }
}

/// The parameter list without its last parameter, if it has one callers
/// give (not the receiver alone, nor a variadic or keyword-only marker).
pub fn without_last_parameter(params: &str, receiver: Option<&str>) -> Option<String> {
    let parts: Vec<&str> = params.split(',').map(str::trim).collect();
    let given: Vec<&&str> = parts
        .iter()
        .filter(|part| !part.is_empty() && Some(**part) != receiver)
        .collect();
    let last = given.last()?;
    if last.starts_with('*') || last.starts_with("...") || last.contains('=') || *last == &"/" {
        return None;
    }
    let kept: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|part| !part.is_empty() && part != *last)
        .collect();
    Some(kept.join(", "))
}

/// The files under `root` with one of `extensions`, in path order, out of
/// tests and build output.
pub fn files(root: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(directory) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !["node_modules", "dist", "build"].contains(&&*name) {
                    stack.push(path);
                }
            } else if extensions
                .iter()
                .any(|extension| name.ends_with(&format!(".{extension}")))
                && !name.ends_with(".d.ts")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The edits whose name another file of the judge's languages names as a
/// whole word.
pub fn used_elsewhere(judge: &Judge, root: &Path, all: &[Edit]) -> Vec<usize> {
    let texts: Vec<(String, String)> = files(root, judge.extensions)
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let file = path.strip_prefix(root).ok()?.to_string_lossy().into_owned();
            Some((file, text))
        })
        .collect();
    all.iter()
        .enumerate()
        .filter(|(_, edit)| {
            let Ok(word) = Regex::new(&format!(r"\b{}\b", regex::escape(&edit.name))) else {
                return false;
            };
            texts
                .iter()
                .any(|(file, text)| *file != edit.file && word.is_match(text))
        })
        .map(|(index, _)| index)
        .collect()
}
