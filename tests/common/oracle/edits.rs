//! The edits the oracle makes: for each definition a judge's pattern
//! finds on one line, its name renamed and its last parameter dropped.

use super::Judge;
use regex::Regex;
use std::path::{Path, PathBuf};

/// An edit of one line of a file, as `check_edit` is given it.
#[derive(Debug, Clone)]
pub struct Edit {
    /// As the roots display it.
    pub file: String,
    pub kind: &'static str,
    pub name: String,
    pub old: String,
    pub new: String,
}

impl Edit {
    pub fn describe(&self) -> String {
        format!("{} `{}` in {}", self.kind, self.name, self.file)
    }
}

/// Every edit the judge can make in the project at `root`, in path and
/// line order: for each definition, its name renamed, and its last
/// parameter dropped where the line holds the whole list.
pub fn edits(judge: &Judge, root: &Path) -> Vec<Edit> {
    let Ok(definition) = Regex::new(judge.definition) else {
        panic!("{}: the definition pattern does not compile", judge.server);
    };
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
            let Some(found) = definition.captures(line) else {
                continue;
            };
            // `check_edit` replaces a text that occurs once.
            if text.matches(line).count() != 1 {
                continue;
            }
            let name = &found["name"];
            let Some(at) = found.name("name") else {
                continue;
            };
            let renamed = format!(
                "{}{}Renamed{}",
                &line[..at.start()],
                name,
                &line[at.end()..]
            );
            edits.push(Edit {
                file: file.clone(),
                kind: "rename",
                name: name.to_owned(),
                old: line.to_owned(),
                new: renamed,
            });
            if let Some(params) = found.name("params")
                && let Some(dropped) = without_last_parameter(params.as_str(), judge.receiver)
            {
                edits.push(Edit {
                    file: file.clone(),
                    kind: "drop the last parameter of",
                    name: name.to_owned(),
                    old: line.to_owned(),
                    new: format!(
                        "{}{dropped}{}",
                        &line[..params.start()],
                        &line[params.end()..]
                    ),
                });
            }
        }
    }
    edits
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
