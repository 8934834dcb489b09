//! Answers stay true when files change on disk behind Windlass's back: a
//! change to a file that others depend on reaches the dependents'
//! diagnostics, whether the server asked to be told of changes (as pyright
//! does) or learns of them only when the dependent is sent again (as
//! clangd does); open documents follow the disk; ignored files stay quiet.
//!
//! mockls reports, on a line `uses FILE`, an error when FILE contains
//! `ERROR`. Its record file lives outside the roots, so that recording
//! does not itself change the watched tree.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Starts Windlass on `dir` with mockls for python, recording into a file
/// outside the project.
fn start(dir: &Path, flags: &str) -> (Session, PathBuf) {
    start_for(dir, "python", flags)
}

/// Starts Windlass on `dir` with mockls for `language`, recording.
fn start_for(dir: &Path, language: &str, flags: &str) -> (Session, PathBuf) {
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let mut args = root_arg(dir);
    args.extend([
        "--lsp".into(),
        mockls_lsp(language, &format!("{flags} --record {}", record.display())),
    ]);
    let session = Session::start(&args);
    session.keep(records);
    (session, record)
}

fn uses_error(file: &str) -> String {
    format!("main.py: 1 error\n  1:1 error [mockls E2] mockls: {file} has an ERROR")
}

/// Every `didChangeWatchedFiles` change mockls received, as (file name,
/// type) pairs.
fn watched_changes(record: &Path) -> Vec<(String, u64)> {
    recorded(record)
        .into_iter()
        .filter(|(dir, message)| {
            dir == "in" && message["method"] == "workspace/didChangeWatchedFiles"
        })
        .flat_map(|(_, message)| {
            message["params"]["changes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|change| {
            let uri = change["uri"].as_str().unwrap_or_default();
            let name = uri.rsplit('/').next().unwrap_or_default().to_owned();
            (name, change["type"].as_u64().unwrap_or(0))
        })
        .collect()
}

fn edit_cycle(session: &Session, dir: &Path) {
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: no problems"
    );
    std::fs::write(dir.join("lib.py"), "ERROR\n").unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        uses_error("lib.py"),
        "the dependency's change reached the dependent"
    );
    std::fs::write(dir.join("lib.py"), "fine\n").unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: no problems",
        "and so did its revert"
    );
}

#[test]
fn a_dependency_changed_on_disk_reaches_a_server_that_was_never_told() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start(dir.path(), "--publish-version");
    edit_cycle(&session, dir.path());
    assert!(
        watched_changes(&record).is_empty(),
        "mockls did not register for watched files, so it is not sent them"
    );
}

#[test]
fn a_server_that_registered_for_watched_files_is_told_of_each_change() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start(dir.path(), "--watch-files");
    edit_cycle(&session, dir.path());
    let changes = watched_changes(&record);
    assert_eq!(
        changes,
        vec![("lib.py".to_owned(), 2), ("lib.py".to_owned(), 2)],
        "one Changed per edit"
    );
}

/// A server told of every change (pyright registers `**`) has nothing to
/// take in from another language's code: its answers neither wait for it
/// to go quiet nor say they may be out of date. A change of its own
/// language, with the server as busy, still does both.
#[test]
fn another_languages_edit_does_not_hold_a_server_told_of_everything() {
    let dir = project(&[
        ("main.py", "def run():\n    pass\n"),
        ("other.py", "fine\n"),
        ("native/lib.c", "int x;\n"),
    ]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let mut args = root_arg(dir.path());
    let busy = format!(
        "--watch-files --busy-on-watched 8000 --record {}",
        record.display()
    );
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", &busy),
        "--lsp".into(),
        mockls_lsp("c", ""),
    ]);
    let session = Session::start(&args);
    let hover = json!({"file": "main.py", "line": 1, "column": 5});
    assert_eq!(session.ok("hover", hover.clone()), "run");
    let out_of_date = "is still taking in changes on disk";
    let told = |name: &str| {
        let name = name.to_owned();
        let record = record.clone();
        move || {
            watched_changes(&record)
                .iter()
                .any(|(file, _)| *file == name)
        }
    };

    std::fs::write(dir.path().join("native/lib.c"), "int y;\n").unwrap();
    wait_until("the python server is told of lib.c", told("lib.c"));
    let answer = session.ok("hover", hover.clone());
    assert_eq!(answer, "run", "not {out_of_date}");

    std::fs::write(dir.path().join("other.py"), "still fine\n").unwrap();
    wait_until("the python server is told of other.py", told("other.py"));
    let answer = session.ok("hover", hover);
    assert!(answer.contains(out_of_date), "{answer}");
    drop(records);
}

/// Pyright reads a file told changed before its next answer (it marks it
/// dirty as it reads the notification), so a change of a file's content
/// on disk holds nothing, however busy the server. A file created or
/// deleted changes pyright's list of files after a pause, which questions
/// about the whole project wait for; a question about one file, whose
/// imports pyright resolves when asked, does not.
#[test]
fn a_server_that_reads_changed_files_first_is_not_waited_on_for_them() {
    let dir = project(&[
        ("main.py", "def run():\n    pass\n"),
        ("other.py", "fine\n"),
    ]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let bin = tempfile::tempdir().unwrap();
    let pyright = bin.path().join("pyright-langserver");
    std::os::unix::fs::symlink(mockls_binary(), &pyright).unwrap();
    let flags = format!(
        "--watch-files --busy-on-watched 8000 --record {}",
        record.display()
    );
    let config = python_server("python", &pyright.display().to_string(), &flags, "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    let hover = json!({"file": "main.py", "line": 1, "column": 5});
    assert_eq!(session.ok("hover", hover.clone()), "run");
    let told = |name: &'static str| {
        let record = record.clone();
        move || {
            watched_changes(&record)
                .iter()
                .any(|(file, _)| file == name)
        }
    };

    std::fs::write(dir.path().join("other.py"), "still fine\n").unwrap();
    wait_until("the server is told of other.py", told("other.py"));
    assert_eq!(session.ok("hover", hover.clone()), "run");
    // Nor is the open document sent again: the server checks what
    // imports a changed file by itself.
    assert!(!sent_again(&record, "main.py"), "main.py was sent again");

    std::fs::write(dir.path().join("new.py"), "new\n").unwrap();
    wait_until("the server is told of new.py", told("new.py"));
    assert_eq!(session.ok("hover", hover), "run");
    drop(records);
}

/// Whether `name` was sent to the server as changed since it was opened.
fn sent_again(record: &Path, name: &str) -> bool {
    received_about(record, name)
        .iter()
        .any(|message| message["method"] == "textDocument/didChange")
}

/// A Python language server that gives no diagnostics, so that a linter
/// configured alone is not joined by a built-in one found on PATH.
fn quiet_language_server() -> String {
    python_server(
        "quiet",
        &mockls_binary().display().to_string(),
        "",
        "diagnostics = false",
    )
}

/// A linter of one file at a time (ruff) has nothing to check again in
/// an open document when another file's content changes: the document
/// is not sent again, and its diagnostics are answered as they stand. A
/// new file still sends it again (ruff sorts imports by which modules
/// are the project's own).
#[test]
fn a_linter_of_one_file_at_a_time_is_not_sent_what_did_not_change() {
    let dir = project(&[("main.py", "ERROR\n"), ("other.py", "fine\n")]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let flags = format!(
        "--publish-version --watch-files --record {}",
        record.display()
    );
    let config = python_server("ruff", &mockls_binary().display().to_string(), &flags, "")
        + &quiet_language_server();
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    let main = json!({"file": "main.py"});
    let answer = session.ok("diagnostics", main.clone());
    assert!(answer.starts_with("main.py: 1 error"), "{answer}");
    std::fs::write(dir.path().join("other.py"), "ERROR\n").unwrap();
    wait_until("the server is told of other.py", || {
        watched_changes(&record)
            .iter()
            .any(|(file, _)| file == "other.py")
    });
    assert_eq!(session.ok("diagnostics", main.clone()), answer);
    assert!(!sent_again(&record, "main.py"), "main.py was sent again");
    std::fs::write(dir.path().join("new.py"), "\n").unwrap();
    assert_eq!(session.ok("diagnostics", main), answer);
    assert!(sent_again(&record, "main.py"), "a new file sends it again");
    drop(records);
}

/// A check of an edit asks a linter of one file at a time (ruff) only
/// of the edited document: it has no dependents, so the other open
/// documents are not asked, once with the disk's texts and again with the
/// edit's, as they are of a server that may check importers again.
#[test]
fn a_check_asks_a_linter_of_one_file_at_a_time_only_of_the_edited_file() {
    let dir = project(&[("main.py", "fine\n"), ("other.py", "fine\n")]);
    let (session, record) = start_as_built_in(
        dir.path(),
        "ruff",
        "--pull-diagnostics",
        &quiet_language_server(),
    );
    let other = session.ok("diagnostics", json!({"file": "other.py"}));
    assert_eq!(other, "other.py: no problems");
    let checked = session.ok(
        "check_edit",
        json!({"file": "main.py", "replacements": [{"old": "fine", "new": "ERROR"}]}),
    );
    assert!(checked.contains("1 error"), "{checked}");
    let asked = |name: &str| {
        received_about(&record, name)
            .iter()
            .filter(|message| message["method"] == "textDocument/diagnostic")
            .count()
    };
    assert_eq!(asked("other.py"), 1, "asked only for its own question");
    assert!(asked("main.py") >= 2, "the disk's text and the edit's");
}

/// An editor that saves by renaming a new file over the old one (`sed
/// -i`, a safe write) moves the file in: the server is told it was
/// created and changed, which holds whether or not it knew the file. The
/// Svelte server takes a file said only to be created for a new one, and
/// went on checking against the old text of a module saved so. (A server
/// that searches no names, so that no index pass walks the root and
/// lists the file.)
#[test]
fn a_file_saved_by_renaming_over_it_is_told_as_created_and_changed() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start(
        dir.path(),
        "--watch-files --without workspaceSymbolProvider",
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: no problems"
    );
    save_by_renaming(dir.path(), "lib.py", "ERROR\n");
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        uses_error("lib.py")
    );
    assert_eq!(
        watched_changes(&record),
        vec![("lib.py".to_owned(), 1), ("lib.py".to_owned(), 2)]
    );
}

/// Once a walk has listed the file (a search's, or the index's pass),
/// Windlass knows it was there: a file renamed over it is the same file
/// changed, and servers that wait on new files (pyright's whole-project
/// answers) are not made to.
#[test]
fn a_listed_file_saved_by_renaming_over_it_is_told_as_changed() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start(dir.path(), "--watch-files");
    // Written until the server hears of it: a write before the Watcher's
    // watches are in place is seen by nobody.
    let probe = dir.path().join("probe.py");
    let mut writes = 0;
    wait_until("the Watcher watches the root", || {
        writes += 1;
        std::fs::write(&probe, "\n".repeat(writes)).unwrap();
        watched_changes(&record)
            .iter()
            .any(|(file, _)| file == "probe.py")
    });
    session.ok("search", json!({"query": "fine"}));
    // A file's times may lag the clock by a tick.
    std::thread::sleep(std::time::Duration::from_millis(50));
    save_by_renaming(dir.path(), "lib.py", "ERROR\n");
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        uses_error("lib.py")
    );
    let lib: Vec<_> = watched_changes(&record)
        .into_iter()
        .filter(|(file, _)| file == "lib.py")
        .collect();
    assert_eq!(lib, vec![("lib.py".to_owned(), 2)]);
}

/// Writes `text` beside the root, on its file system, as a save's
/// temporary file is, and renames it onto `name`: only the rename is seen.
fn save_by_renaming(root: &Path, name: &str, text: &str) {
    let elsewhere = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    let saved = elsewhere.path().join(name);
    std::fs::write(&saved, text).unwrap();
    std::fs::rename(&saved, root.join(name)).unwrap();
}

#[test]
fn an_open_document_changed_on_disk_is_sent_again_without_being_asked_about() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start(dir.path(), "");
    session.ok("diagnostics", json!({"file": "lib.py"}));
    std::fs::write(dir.path().join("lib.py"), "changed by an editor\n").unwrap();
    wait_until("the new text reaches the server", || {
        recorded(&record).iter().any(|(dir, message)| {
            dir == "in"
                && message["method"] == "textDocument/didChange"
                && message["params"]["contentChanges"][0]["text"] == "changed by an editor\n"
        })
    });
}

#[test]
fn ignored_files_and_git_internals_are_not_reported() {
    let dir = project(&[
        (".gitignore", "build/\n*.log\n"),
        ("build/keep", ""),
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("main.py", "x = 1\n"),
    ]);
    let (session, record) = start(dir.path(), "--watch-files");
    session.ok("diagnostics", json!({"file": "main.py"}));
    std::fs::write(dir.path().join("build/generated.py"), "x\n").unwrap();
    std::fs::write(dir.path().join("debug.log"), "x\n").unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();
    std::fs::write(dir.path().join("real.py"), "y = 2\n").unwrap();
    session.ok("diagnostics", json!({"file": "main.py"}));
    assert_eq!(watched_changes(&record), vec![("real.py".to_owned(), 1)]);
}

#[test]
fn a_file_written_at_once_into_a_new_directory_is_seen() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let (session, record) = start(dir.path(), "--watch-files");
    session.ok("diagnostics", json!({"file": "main.py"}));
    std::fs::create_dir_all(dir.path().join("pkg/sub")).unwrap();
    std::fs::write(dir.path().join("pkg/sub/new.py"), "z = 3\n").unwrap();
    wait_until("the new file is reported", || {
        session.ok("status", json!({}));
        watched_changes(&record).contains(&("new.py".to_owned(), 1))
    });
}

#[test]
fn status_says_how_many_directories_are_watched() {
    let dir = project(&[("main.py", "x = 1\n"), ("a/b/c.py", "y = 1\n")]);
    let (session, _record) = start(dir.path(), "");
    session.wait_for_status(|status| status.contains("watching 3 directories for changes"));
}

#[test]
fn a_symbol_the_server_does_not_know_is_listed_from_the_text_with_the_reason() {
    // mockls knows definitions only after a few keywords; a `module` is
    // one it misses, as a server that could not parse the file would. No
    // server is configured for `.rb`.
    let dir = project(&[
        ("main.py", "def greet():\n    pass\n"),
        ("run.rb", "module greet\nend\n"),
    ]);
    let (session, _record) = start(dir.path(), "");
    let answer = session.ok("definition", json!({"symbol": "greet"}));
    assert_eq!(
        answer,
        "`greet` is ambiguous (2 matches); ask again with file and line:\n\
         main.py:1:5  function greet\n\
         run.rb:1:8  (text) module greet\n\
         note: 1 definition was found only by text search; the servers did not report it"
    );
}

#[test]
fn long_answers_page_on_with_an_offset() {
    let mut source = String::from("def word():\n    pass\n");
    for index in 0..600 {
        source.push_str(&format!("v{index} = word\n"));
    }
    let dir = project(&[("main.py", &source)]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", ""),
        "--max-output-bytes".into(),
        "1500".into(),
    ]);
    let session = Session::start(&args);
    let first = session.ok(
        "find_references",
        json!({"file": "main.py", "line": 1, "symbol": "word"}),
    );
    assert!(first.starts_with("601 references in 1 file"), "{first}");
    let next = offset_in(&first);
    let mut seen = positions(&first);
    let mut offset = next;
    while let Some(at) = offset {
        let page = session.ok(
            "find_references",
            json!({"file": "main.py", "line": 1, "symbol": "word", "offset": at}),
        );
        assert!(page.len() <= 1500, "{} bytes", page.len());
        seen.extend(positions(&page));
        offset = offset_in(&page);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 601, "every reference is reached by paging");
}

/// The offset a capped answer says to ask with next.
fn offset_in(text: &str) -> Option<u64> {
    let marker = text.rsplit("offset=").next()?;
    let number: String = marker.chars().take_while(char::is_ascii_digit).collect();
    text.contains("call again with offset=")
        .then(|| number.parse().ok())
        .flatten()
}

/// The `line:column` positions an answer lists.
fn positions(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("  "))
        .flat_map(|line| line.split_whitespace().map(str::to_owned))
        .filter(|word| word.contains(':'))
        .collect()
}

/// The documents `codebase_map` opened to outline them are closed once
/// outlined (a server may check every open document after each change);
/// one an agent had open stays open.
#[test]
fn the_map_closes_the_documents_it_opened() {
    let dir = project(&[
        ("main.py", "def main():\n    pass\n"),
        ("shapes.py", "class Shape:\n    pass\n"),
        ("tools.py", "def tool():\n    pass\n"),
    ]);
    let (session, record) = start(dir.path(), "");
    session.ok("document_symbols", json!({"file": "main.py"}));
    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert_eq!(
        map,
        "./\n  main.py: function main\n  shapes.py: class Shape\n  tools.py: function tool"
    );
    let sent = |method: &str, file: &str| {
        recorded(&record).iter().any(|(dir, message)| {
            dir == "in"
                && message["method"] == method
                && message["params"]["textDocument"]["uri"]
                    .as_str()
                    .is_some_and(|uri| uri.ends_with(&format!("/{file}")))
        })
    };
    wait_until("the map's documents are closed", || {
        sent("textDocument/didClose", "shapes.py") && sent("textDocument/didClose", "tools.py")
    });
    assert!(!sent("textDocument/didClose", "main.py"));
}

/// Two maps of the same files at once, their outlines asked together
/// (one answer shared, or one after the other) beside the index pass's:
/// every document opened in passing is closed once all are answered.
#[test]
fn maps_at_once_close_the_documents_they_opened() {
    let dir = project(&[
        ("main.py", "def main():\n    pass\n"),
        ("lib/shapes.py", "class Shape:\n    pass\n"),
        ("lib/tools.py", "def tool():\n    pass\n"),
    ]);
    let (session, record) = start(dir.path(), "--response-delay 200");
    let args = json!({"include_symbols": true});
    let maps = [
        session.call_async("codebase_map", args.clone()),
        session.call_async("codebase_map", args),
    ];
    for map in &maps {
        let map = outcome(wait(map)).text;
        assert!(map.contains("tools.py: function tool"), "{map}");
    }
    let count = |method: &str, file: &str| {
        recorded(&record)
            .iter()
            .filter(|(dir, message)| {
                dir == "in"
                    && message["method"] == method
                    && message["params"]["textDocument"]["uri"]
                        .as_str()
                        .is_some_and(|uri| uri.ends_with(&format!("/lib/{file}")))
            })
            .count()
    };
    wait_until("the documents opened in passing are closed", || {
        ["shapes.py", "tools.py"].iter().all(|file| {
            let opened = count("textDocument/didOpen", file);
            opened > 0 && count("textDocument/didClose", file) == opened
        })
    });
}

/// A TypeScript server that runs tsserver's `navtree` outlines a map's
/// files without opening them, and a file changed on disk as it is now.
/// One that cannot run the command has them opened. (`lib/tools.ts` lies
/// deeper than the others so that it is not the file opened at the
/// server's start to have its project loaded.)
#[test]
fn tsserver_outlines_the_maps_files_unopened_as_they_are_now() {
    let files = [
        ("main.ts", "function main() {\n}\n"),
        ("shapes.ts", "class Shape {\n}\n"),
        ("lib/tools.ts", "function tool() {\n}\n"),
    ];
    let map = |session: &Session| session.ok("codebase_map", json!({"include_symbols": true}));
    let asked = |record: &Path, method: &str| {
        recorded(record)
            .iter()
            .filter(|(dir, message)| {
                let named = match method {
                    "navtree" => &message["params"]["arguments"][1]["file"],
                    _ => &message["params"]["textDocument"]["uri"],
                };
                dir == "in"
                    && (message["method"] == method || message["params"]["arguments"][0] == method)
                    && named
                        .as_str()
                        .is_some_and(|file| file.ends_with("/lib/tools.ts"))
            })
            .count()
    };
    let mapped = |tools: &str| {
        format!(
            "./\n  lib/\n    tools.ts: {tools}\n  main.ts: function main\n  shapes.ts: class Shape"
        )
    };

    let dir = project(&files);
    let (session, record) = start_for(dir.path(), "typescript", "--answers-tsserver");
    assert_eq!(map(&session), mapped("function tool"));
    std::fs::write(
        dir.path().join("lib/tools.ts"),
        "function tool() {\n}\nfunction sharpen() {\n}\n",
    )
    .unwrap();
    assert_eq!(map(&session), mapped("function tool, function sharpen"));
    assert_eq!(
        asked(&record, "textDocument/didOpen"),
        0,
        "outlined unopened"
    );
    assert!(asked(&record, "navtree") >= 2, "both texts from navtree");

    let dir = project(&files);
    let (session, record) = start_for(dir.path(), "typescript", "");
    assert_eq!(map(&session), mapped("function tool"));
    assert!(
        asked(&record, "textDocument/didOpen") >= 1,
        "without the command: opened"
    );
}

#[test]
fn links_to_files_outside_the_roots_show_nothing_of_them() {
    let outside = project(&[("secret.py", "def secret_function():\n    pass\n")]);
    let dir = project(&[("main.py", "def visible():\n    pass\n")]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret.py"), dir.path().join("leak.py"))
        .unwrap();
    let (session, record) = start(dir.path(), "");
    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert!(map.contains("main.py: function visible"), "{map}");
    assert!(!map.contains("secret_function"), "{map}");
    let search = session.ok("search", json!({"query": "secret_function"}));
    assert!(!search.contains("leak.py"), "{search}");
    assert!(search.contains("text: no matches"), "{search}");
    let opened: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|(dir, message)| dir == "in" && message["method"] == "textDocument/didOpen")
        .map(|(_, message)| message["params"]["textDocument"]["uri"].clone())
        .collect();
    assert!(
        opened
            .iter()
            .all(|uri| !uri.as_str().unwrap_or_default().contains("leak")),
        "the server was never asked about the link: {opened:?}"
    );
}

/// The `initialize` and `workspace/didChangeConfiguration` messages mockls
/// received, in order.
fn configuration_messages(record: &Path) -> Vec<Value> {
    recorded(record)
        .into_iter()
        .filter(|(dir, message)| {
            dir == "in"
                && (message["method"] == "initialize"
                    || message["method"] == "workspace/didChangeConfiguration")
        })
        .map(|(_, message)| message)
        .collect()
}

#[test]
fn a_project_configuration_edited_on_disk_is_picked_up() {
    let dir = project(&[
        ("main.py", "x = 1\n"),
        (
            ".windlass.toml",
            "[server.python]\nsettings = { mockls = { level = 1 } }\ninitialization_options = { mode = \"a\" }\n",
        ),
    ]);
    let (session, record) = start(dir.path(), "");
    session.ok("diagnostics", json!({"file": "main.py"}));

    std::fs::write(
        dir.path().join(".windlass.toml"),
        "[server.python]\nsettings = { mockls = { level = 2 } }\ninitialization_options = { mode = \"a\" }\n",
    )
    .unwrap();
    wait_until("the new settings reach the server", || {
        session.ok("status", json!({}));
        configuration_messages(&record).iter().any(|message| {
            message["method"] == "workspace/didChangeConfiguration"
                && message["params"]["settings"]["mockls"]["level"] == 2
        })
    });

    std::fs::write(
        dir.path().join(".windlass.toml"),
        "[server.python]\nsettings = { mockls = { level = 2 } }\ninitialization_options = { mode = \"b\" }\n",
    )
    .unwrap();
    wait_until("the server is restarted with its new options", || {
        session.ok("status", json!({}));
        configuration_messages(&record).iter().any(|message| {
            message["method"] == "initialize"
                && message["params"]["initializationOptions"]["mode"] == "b"
        })
    });
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: no problems",
        "the restarted server answers"
    );
}

/// The dependency is open too (an agent looked at it), and the server
/// checks only the document it is told changed (as intelephense does):
/// the dependent's answer still follows the disk, both ways.
#[test]
fn a_dependent_is_rechecked_when_an_open_dependency_changes_on_disk() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, _record) = start(dir.path(), "--publish-version");
    session.ok("diagnostics", json!({"file": "lib.py"}));
    edit_cycle(&session, dir.path());
}

/// Languages for a built-in server's stand-in: the Python files of
/// `edit_cycle`.
const PYTHON: &str = "languages = [\"python\"]";

/// How many times `file` was opened or changed at the server.
fn sent(record: &Path, file: &str) -> usize {
    received_about(record, file)
        .iter()
        .filter(|message| {
            matches!(
                message["method"].as_str(),
                Some("textDocument/didOpen" | "textDocument/didChange")
            )
        })
        .count()
}

/// Starts Windlass with mockls configured as the built-in server `name`
/// (so with that server's ways), recording into a file outside `dir`;
/// `extra` is added to its configuration.
fn start_as_built_in(dir: &Path, name: &str, flags: &str, extra: &str) -> (Session, PathBuf) {
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let mut args: Vec<String> = flags
        .split_whitespace()
        .map(|flag| format!("{flag:?}"))
        .collect();
    args.extend([
        "\"--record\"".into(),
        format!("{:?}", record.display().to_string()),
    ]);
    let config = format!(
        "[server.{name:?}]\ncommand = {:?}\nargs = [{}]\n{extra}\n",
        mockls_binary().display().to_string(),
        args.join(", ")
    );
    let session = Session::start_with_user_config(&config, &root_arg(dir));
    session.keep(records);
    (session, record)
}

/// A server that checks only the document it is told changed, then
/// checks the open documents by itself once it has published that one
/// (as intelephense does, after a pause of about a second): the dependent
/// is answered from the server's own check, both ways, and never sent
/// again, which would have it wait out the server's pause once more.
#[test]
fn a_dependent_the_server_checked_by_itself_is_not_sent_again() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start_as_built_in(
        dir.path(),
        "php",
        "--publish-dependents --diagnostics-delay 300",
        PYTHON,
    );
    session.ok("diagnostics", json!({"file": "lib.py"}));
    edit_cycle(&session, dir.path());
    assert_eq!(sent(&record, "main.py"), 1, "opened, and never sent again");
}

/// The same server told of a change to a file that is not open checks
/// the open documents by itself a moment later (intelephense, about half
/// a second after `didChangeWatchedFiles`): that check is the answer.
#[test]
fn a_dependent_of_a_file_not_open_is_answered_from_the_servers_own_check() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let (session, record) = start_as_built_in(
        dir.path(),
        "php",
        "--watch-files --recheck-delay 100 --diagnostics-delay 100",
        PYTHON,
    );
    edit_cycle(&session, dir.path());
    assert_eq!(sent(&record, "main.py"), 1, "opened, and never sent again");
}

/// The messages about `file` mockls received, by method, in order.
fn received_about(record: &Path, file: &str) -> Vec<Value> {
    recorded(record)
        .into_iter()
        .filter(|(dir, message)| {
            dir == "in"
                && message["params"]["textDocument"]["uri"]
                    .as_str()
                    .is_some_and(|uri| uri.ends_with(&format!("/{file}")))
        })
        .map(|(_, message)| message)
        .collect()
}

/// bash-language-server reads the project's files only at its start and
/// registers for no changes: a script changed on disk and not open is
/// opened with its new text and closed again, so that the server reads
/// it (its references named lines that had moved).
#[test]
fn a_file_changed_on_disk_is_shown_to_a_server_that_reads_the_disk_only_at_start() {
    let dir = project(&[("main.sh", "echo main\n"), ("lib.sh", "greet() { :; }\n")]);
    let (session, record) = start_as_built_in(dir.path(), "shell", "--publish-version", "");
    session.ok("diagnostics", json!({"file": "main.sh"}));
    std::fs::write(dir.path().join("lib.sh"), "\ngreet() { :; }\n").unwrap();
    wait_until("the changed script is opened and closed again", || {
        let methods: Vec<Value> = received_about(&record, "lib.sh")
            .iter()
            .map(|message| message["method"].clone())
            .collect();
        methods
            == [
                json!("textDocument/didOpen"),
                json!("textDocument/didClose"),
            ]
    });
    let opened = received_about(&record, "lib.sh").remove(0);
    assert_eq!(
        opened["params"]["textDocument"]["text"],
        "\ngreet() { :; }\n"
    );
}

/// clangd checks a document sent again with the same text only when a
/// header it includes changed since its last build, or when asked to
/// rebuild: a document sent again after an unrelated change on disk asks
/// (`forceRebuild`), and is answered at once rather than after 30 s.
#[test]
fn a_document_sent_again_unchanged_asks_clangd_to_rebuild() {
    let dir = project(&[
        ("main.c", "uses lib.h\n"),
        ("lib.h", "fine\n"),
        ("other.c", "int x;\n"),
    ]);
    let (session, record) = start_as_built_in(dir.path(), "c,cpp", "--publish-version", "");
    let main = json!({"file": "main.c"});
    assert_eq!(
        session.ok("diagnostics", main.clone()),
        "main.c: no problems"
    );
    std::fs::write(dir.path().join("other.c"), "int y;\n").unwrap();
    assert_eq!(session.ok("diagnostics", main), "main.c: no problems");
    let changes: Vec<Value> = received_about(&record, "main.c")
        .into_iter()
        .filter(|message| message["method"] == "textDocument/didChange")
        .collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["params"]["forceRebuild"], true);
}
