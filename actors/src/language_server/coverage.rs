//! What a server is known not to see, so that answers can say so: a
//! project index it cannot build (a C tree without a compilation database,
//! a TypeScript tree without a tsconfig), and files it said it could not
//! read (errors and warnings in its log that name a file, and ESLint's
//! requests to tell the user it could not lint one).

use crate::language::{ProjectFiles, project_files};
use crate::lsp::protocol::{TSSERVER_REQUEST, WorkspaceFolder};
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::Problem;
use lsp_types::MessageType;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Requests whose answer depends on the server knowing the whole project.
const INDEX_METHODS: &[&str] = &[
    "textDocument/references",
    "textDocument/rename",
    "textDocument/implementation",
    "callHierarchy/incomingCalls",
    "typeHierarchy/subtypes",
    "workspace/symbol",
];

/// Whether an answer to `method` with `params` depends on the whole
/// project: clangd's pre-standard type hierarchy asks for children
/// (subtypes) with direction 0, and tsserver's `navto` is asked through
/// a command.
pub(super) fn needs_index(method: &str, params: &Value) -> bool {
    INDEX_METHODS.contains(&method)
        || (method == "textDocument/typeHierarchy"
            && params.get("direction").and_then(Value::as_u64) == Some(0))
        || (method == "workspace/executeCommand"
            && params["command"] == TSSERVER_REQUEST
            && params["arguments"][0] == "navto")
}

/// Server messages about files kept at most.
const MAX_PROBLEMS: usize = 1_000;
/// Longest server message kept, in bytes.
const MAX_MESSAGE_BYTES: usize = 300;

#[derive(Debug, Default)]
pub struct Coverage {
    gaps: Vec<&'static ProjectFiles>,
    problems: BTreeMap<String, String>,
}

/// The project files the server's languages need that no root has.
/// Walks the roots' top levels: run it off the actor's thread.
pub fn find_gaps(languages: &[String], folders: &[WorkspaceFolder]) -> Vec<&'static ProjectFiles> {
    let roots: Vec<PathBuf> = folders
        .iter()
        .filter_map(|folder| uri_to_path(&folder.uri))
        .collect();
    let mut needed: Vec<&'static ProjectFiles> = Vec::new();
    for project in languages
        .iter()
        .filter_map(|language| project_files(language))
    {
        if !needed.contains(&project) {
            needed.push(project);
        }
    }
    needed
        .into_iter()
        .filter(|project| !roots.iter().any(|root| has_any(root, project)))
        .collect()
}

impl Coverage {
    pub fn set_gaps(&mut self, gaps: Vec<&'static ProjectFiles>) {
        self.gaps = gaps;
    }

    /// What the server misses for want of its project files.
    pub fn gaps(&self) -> Vec<String> {
        self.gaps
            .iter()
            .map(|project| project.gap.to_owned())
            .collect()
    }

    /// Keeps an error or warning from the server's log when it names a
    /// file.
    pub fn note_message(&mut self, level: MessageType, message: &str) {
        if !matches!(level, MessageType::ERROR | MessageType::WARNING) {
            return;
        }
        let Some(uri) = named_uri(message) else {
            return;
        };
        self.keep(uri, message);
    }

    /// Keeps what a request the server sent its client says about a
    /// file it could not serve; `false` when `method` is no such request.
    /// ESLint asks its editor to tell the user instead of publishing
    /// anything, so the file would look clean.
    pub fn note_request(&mut self, method: &str, params: &Value) -> bool {
        let (uri, message) = match method {
            "eslint/noLibrary" => (
                params.pointer("/source/uri"),
                "ESLint is not installed where this file's project loads it from \
                 (`npm install eslint` in the project), so the file was not linted",
            ),
            "eslint/noConfig" => (
                params.pointer("/document/uri"),
                params
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("ESLint found no configuration for this file, so it was not linted"),
            ),
            "eslint/probeFailed" => (
                params.pointer("/textDocument/uri"),
                "ESLint has no configuration or plugin for this file's language, so the file \
                 was not linted",
            ),
            _ => return false,
        };
        if let Some(uri) = uri.and_then(Value::as_str) {
            self.keep(uri.to_owned(), message);
        }
        true
    }

    fn keep(&mut self, uri: String, message: &str) {
        if self.problems.len() >= MAX_PROBLEMS && !self.problems.contains_key(&uri) {
            return;
        }
        self.problems.insert(uri, shorten(message.trim()));
    }

    /// The file changed: what the server said about the old text no
    /// longer holds.
    pub fn forget(&mut self, uri: &str) {
        self.problems.remove(uri);
    }

    /// Warnings for an answer to `method` with `params`: the gaps it
    /// depends on.
    pub fn warnings_for(&self, label: &str, method: &str, params: &Value) -> Vec<String> {
        let index = needs_index(method, params);
        self.gap_warnings(label, |project| index || project.every_answer)
    }

    /// Warnings for every answer of the server, diagnostics included: the
    /// gaps that leave it unable to check anything against the project.
    pub fn answer_warnings(&self, label: &str) -> Vec<String> {
        self.gap_warnings(label, |project| project.every_answer)
    }

    fn gap_warnings(&self, label: &str, shown: impl Fn(&ProjectFiles) -> bool) -> Vec<String> {
        self.gaps
            .iter()
            .filter(|project| shown(project))
            .map(|project| format!("warning: [{label}] {}", project.gap))
            .collect()
    }

    /// What the server said about the file `uri`, if anything.
    pub fn problem(&self, uri: &str) -> Option<Problem> {
        self.problems.get(uri).map(|message| Problem {
            uri: uri.to_owned(),
            message: message.clone(),
        })
    }

    /// Every file the server said it could not fully read.
    pub fn problems(&self) -> Vec<Problem> {
        self.problems
            .iter()
            .map(|(uri, message)| Problem {
                uri: uri.clone(),
                message: message.clone(),
            })
            .collect()
    }
}

fn has_any(root: &Path, project: &ProjectFiles) -> bool {
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .max_depth(Some(project.depth))
        .filter_entry(|entry| {
            let name = entry.file_name();
            name != "node_modules" && name != ".git"
        })
        .build()
        .filter_map(std::result::Result::ok)
        .any(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| project.names.contains(&name))
        })
}

/// The first `file://` URI in a message, without the punctuation that
/// follows it in prose (`…/a.sh: syntax error`).
fn named_uri(message: &str) -> Option<String> {
    let start = message.find("file://")?;
    let uri: String = message[start..]
        .chars()
        .take_while(|character| !character.is_whitespace())
        .collect();
    let uri = uri.trim_end_matches([':', ',', ';', '.', ')', '"', '\'']);
    Some(uri.to_owned())
}

fn shorten(message: &str) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message.to_owned();
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::uri::path_to_uri;
    use serde_json::json;

    #[test]
    fn tsservers_navto_through_its_command_needs_the_project() {
        let navto =
            json!({"command": TSSERVER_REQUEST, "arguments": ["navto", {"searchValue": "x"}]});
        assert!(needs_index("workspace/executeCommand", &navto));
        let check =
            json!({"command": TSSERVER_REQUEST, "arguments": ["semanticDiagnosticsSync", {}]});
        assert!(!needs_index("workspace/executeCommand", &check));
        assert!(needs_index("workspace/symbol", &json!({"query": "x"})));
    }

    fn folder(path: &Path) -> WorkspaceFolder {
        WorkspaceFolder {
            uri: path_to_uri(path),
            name: "w".into(),
        }
    }

    #[test]
    fn a_c_tree_without_a_compilation_database_has_a_gap() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compile_flags.txt"), "-xc\n").unwrap();
        let languages = vec!["c".to_owned(), "cpp".to_owned()];
        let mut coverage = Coverage::default();
        coverage.set_gaps(find_gaps(&languages, &[folder(dir.path())]));
        assert_eq!(coverage.gaps().len(), 1);
        let none = Value::Null;
        let warnings = coverage.warnings_for("c,cpp", "textDocument/references", &none);
        assert!(warnings[0].starts_with("warning: [c,cpp] has no compile_commands.json"));
        assert!(
            coverage
                .warnings_for("c,cpp", "textDocument/hover", &none)
                .is_empty()
        );
        let children = serde_json::json!({"direction": 0});
        let parents = serde_json::json!({"direction": 1});
        assert_eq!(
            coverage
                .warnings_for("c,cpp", "textDocument/typeHierarchy", &children)
                .len(),
            1
        );
        assert!(
            coverage
                .warnings_for("c,cpp", "textDocument/typeHierarchy", &parents)
                .is_empty()
        );
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        std::fs::write(dir.path().join("build/compile_commands.json"), "[]").unwrap();
        assert!(find_gaps(&languages, &[folder(dir.path())]).is_empty());
        assert!(find_gaps(&["python".to_owned()], &[folder(dir.path())]).is_empty());
    }

    #[test]
    fn log_messages_that_name_a_file_are_kept_for_that_file() {
        let mut coverage = Coverage::default();
        coverage.note_message(
            MessageType::WARNING,
            "08:00:14.042 WARNING ⛔️ Error while parsing file:///w/big.sh: syntax error",
        );
        coverage.note_message(MessageType::INFO, "INFO file:///w/other.sh analyzed");
        coverage.note_message(MessageType::ERROR, "no file named here");
        assert_eq!(
            coverage.problem("file:///w/big.sh"),
            Some(Problem {
                uri: "file:///w/big.sh".into(),
                message:
                    "08:00:14.042 WARNING ⛔️ Error while parsing file:///w/big.sh: syntax error"
                        .into(),
            })
        );
        assert_eq!(coverage.problems().len(), 1);
        coverage.forget("file:///w/big.sh");
        assert!(coverage.problems().is_empty());
    }

    #[test]
    fn eslint_saying_it_could_not_lint_a_file_is_kept_for_that_file() {
        let mut coverage = Coverage::default();
        let no_library = json!({"source": {"uri": "file:///w/a.ts"}});
        assert!(coverage.note_request("eslint/noLibrary", &no_library));
        let no_config = json!({"message": "No ESLint configuration found.", "document": {"uri": "file:///w/b.ts"}});
        assert!(coverage.note_request("eslint/noConfig", &no_config));
        assert!(!coverage.note_request("workspace/configuration", &json!({})));
        assert!(coverage.note_request("eslint/probeFailed", &json!({})));
        let said = |uri: &str| coverage.problem(uri).map(|problem| problem.message);
        assert!(
            said("file:///w/a.ts").is_some_and(|message| message.contains("npm install eslint"))
        );
        assert_eq!(
            said("file:///w/b.ts").as_deref(),
            Some("No ESLint configuration found.")
        );
        assert_eq!(coverage.problems().len(), 2);
    }
}
