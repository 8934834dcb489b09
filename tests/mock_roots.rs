//! Roots that follow the agent: the MCP client's roots are asked for at
//! start and on every `list_changed`, diffed against the pinned `-r`
//! roots, validated, and applied: one `didChangeWorkspaceFolders` to a
//! server that takes folder changes, a restart with the new set for one
//! that does not, documents under a removed root closed, access outside
//! the roots refused at once, and the watcher following along.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Two project directories side by side, `a` and `b`, canonical.
fn two_projects() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = project(&[
        ("a/main.py", "def alpha():\n    pass\n\nalpha()\n"),
        ("b/lib.py", "def beta():\n    pass\n\nbeta()\n"),
    ]);
    let base = dir.path().canonicalize().unwrap();
    (dir, base.join("a"), base.join("b"))
}

/// Starts windlass in `cwd` for a client with `roots`, mockls recording
/// outside the projects.
fn start(cwd: &Path, roots: Vec<PathBuf>, flags: &str, extra: &[&str]) -> (Session, PathBuf) {
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let mut args = vec![
        "--lsp".to_owned(),
        mockls_lsp("python", &format!("{flags} --record {}", record.display())),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let client = Client {
        cwd: Some(cwd),
        roots: Some(roots),
        ..Client::default()
    };
    let session = Session::start_as(&args, &client);
    session.keep(records);
    (session, record)
}

fn received(record: &Path, method: &str) -> Vec<Value> {
    recorded(record)
        .into_iter()
        .filter(|(dir, message)| dir == "in" && message["method"] == method)
        .map(|(_, message)| message["params"].clone())
        .collect()
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn root_count(session: &Session, count: usize) -> String {
    session.wait_for_status(|status| {
        status.lines().filter(|l| l.starts_with("root ")).count() == count
    })
}

#[test]
fn client_roots_are_followed_and_servers_told_once() {
    let (_dir, a, b) = two_projects();
    let (session, record) = start(&a, vec![a.clone()], "--workspace-folders", &[]);
    assert_eq!(
        session.ok("definition", json!({"symbol": "alpha"})),
        "main.py:1:5  def alpha():"
    );

    session.set_roots(&[&a, &b]);
    let status = root_count(&session, 2);
    assert!(
        status.contains(&format!("root b {} (from client)", b.display())),
        "{status}"
    );
    assert_eq!(
        session.ok("definition", json!({"symbol": "beta"})),
        "b/lib.py:1:5  def beta():",
        "a query in the new root works, its paths relative to it"
    );
    let changes = received(&record, "workspace/didChangeWorkspaceFolders");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["event"]["added"][0]["uri"], uri(&b));
    assert_eq!(changes[0]["event"]["removed"], json!([]));

    session.set_roots(&[&b]);
    root_count(&session, 1);
    let main = a.join("main.py");
    let refused = session.err(
        "hover",
        json!({"file": main.display().to_string(), "line": 1, "column": 5}),
    );
    assert_eq!(
        refused,
        format!("{} is outside the workspace roots", main.display())
    );
    let file = main.display().to_string();
    for asked in [json!({"file": file}), json!({"files": [file]})] {
        let answer = session.call("diagnostics", asked).text;
        assert!(
            answer.contains("is outside the workspace roots"),
            "a removed root's file is not answered as checked: {answer}"
        );
    }
    // The server reads what Windlass sent in its own time.
    wait_until("the documents of the removed root are closed", || {
        received(&record, "textDocument/didClose")
            .iter()
            .any(|params| params["textDocument"]["uri"] == uri(&main))
    });
    wait_until("the server is told of the removal", || {
        received(&record, "workspace/didChangeWorkspaceFolders").len() >= 2
    });
    let changes = received(&record, "workspace/didChangeWorkspaceFolders");
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(changes[1]["event"]["removed"][0]["uri"], uri(&a));
}

#[test]
fn a_server_that_cannot_take_folder_changes_is_restarted_with_the_new_set() {
    let (_dir, a, b) = two_projects();
    let (session, record) = start(&a, vec![a.clone()], "", &[]);
    session.ok("definition", json!({"symbol": "alpha"}));
    session.set_roots(&[&a, &b]);
    root_count(&session, 2);
    assert_eq!(
        session.ok("definition", json!({"symbol": "beta"})),
        "b/lib.py:1:5  def beta():"
    );
    let starts = received(&record, "initialize");
    assert_eq!(starts.len(), 2, "restarted once");
    let folders: Vec<Value> = starts[1]["workspaceFolders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|folder| folder["uri"].clone())
        .collect();
    assert_eq!(folders, vec![json!(uri(&a)), json!(uri(&b))]);
    assert!(received(&record, "workspace/didChangeWorkspaceFolders").is_empty());
}

#[test]
fn pinned_roots_stay_and_bad_roots_are_refused() {
    let (_dir, a, b) = two_projects();
    std::fs::create_dir_all(a.join("sub")).unwrap();
    let roots = vec![
        b.clone(),
        a.join("sub"),
        PathBuf::from("/windlass-no-such-root"),
        PathBuf::from("/"),
    ];
    let pinned = ["-r".to_owned(), a.display().to_string()];
    let (session, _record) = start(&a, roots, "", &["-r", &pinned[1]]);
    let status = root_count(&session, 2);
    assert!(
        status.contains(&format!("root a {} (from -r, client)", a.display())),
        "{status}"
    );
    assert!(
        status.contains(&format!("root b {} (from client)", b.display())),
        "{status}"
    );

    session.set_roots(&[]);
    root_count(&session, 1);
    let lib = b.join("lib.py");
    let refused = session.err(
        "hover",
        json!({"file": lib.display().to_string(), "line": 1, "column": 5}),
    );
    assert!(
        refused.ends_with("is outside the workspace roots"),
        "{refused}"
    );
    assert_eq!(
        session.ok("definition", json!({"symbol": "alpha"})),
        "main.py:1:5  def alpha():",
        "the pinned root stays"
    );
}

#[cfg(unix)]
#[test]
fn a_root_that_is_a_link_is_its_target_and_removing_it_revokes_access_at_once() {
    let (dir, a, b) = two_projects();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&b, &link).unwrap();
    let (session, _record) = start(&a, vec![a.clone(), link.clone()], "", &[]);
    let status = root_count(&session, 2);
    assert!(
        status.contains(&format!("root b {} (from client)", b.display())),
        "{status}"
    );
    let lib = link.join("lib.py").display().to_string();
    session.ok("hover", json!({"file": lib, "line": 1, "column": 5}));
    session.set_roots(&[&a]);
    root_count(&session, 1);
    let refused = session.err("hover", json!({"file": lib, "line": 1, "column": 5}));
    assert!(
        refused.ends_with("is outside the workspace roots"),
        "{refused}"
    );
}

#[test]
fn the_watcher_follows_the_roots() {
    let (_dir, a, b) = two_projects();
    let (session, record) = start(&a, vec![a.clone()], "--watch-files", &[]);
    session.ok("definition", json!({"symbol": "alpha"}));
    session.set_roots(&[&a, &b]);
    root_count(&session, 2);
    // The new root restarts the server (it takes no folder changes); a
    // file created before the new process registers its watchers is found
    // by its own first look, not by a notification.
    wait_until("the restarted server registers its watchers", || {
        recorded(&record)
            .iter()
            .filter(|(direction, message)| {
                direction == "out" && message["method"] == "client/registerCapability"
            })
            .count()
            == 2
    });
    std::fs::write(b.join("new.py"), "def gamma():\n    pass\n").unwrap();
    session.ok("definition", json!({"symbol": "alpha"}));
    let told = |name: &str| {
        received(&record, "workspace/didChangeWatchedFiles")
            .iter()
            .flat_map(|params| params["changes"].as_array().cloned().unwrap_or_default())
            .any(|change| {
                change["uri"]
                    .as_str()
                    .is_some_and(|uri| uri.ends_with(name))
            })
    };
    assert!(
        told("/new.py"),
        "a file created in the new root is reported"
    );
    session.set_roots(&[&a]);
    root_count(&session, 1);
    std::fs::write(b.join("later.py"), "x = 1\n").unwrap();
    session.ok("definition", json!({"symbol": "alpha"}));
    assert!(!told("/later.py"), "a removed root is no longer watched");
}

#[test]
fn a_request_in_flight_when_new_roots_restart_its_server_is_asked_again() {
    let (_dir, a, b) = two_projects();
    // No folder-change support: new roots mean a restart.
    let (session, record) = start(&a, vec![a.clone()], "--response-delay 1500", &[]);
    session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5}));
    let in_flight = session.call_async("hover", json!({"file": "main.py", "line": 1, "column": 5}));
    wait_until("the hover reaches the server", || {
        received(&record, "textDocument/hover").len() == 2
    });
    session.set_roots(&[&a, &b]);
    let answer = outcome(wait(&in_flight));
    assert!(!answer.is_error, "{}", answer.text);
    assert!(answer.text.contains("alpha"), "{}", answer.text);
}
