//! Several servers for one language, configured in order: the first that
//! has a capability answers a question, every server with diagnostics
//! enabled contributes to the `diagnostics` answer, each problem named by
//! its source, and each server's `min_severity`, `diagnostics = false` and
//! `file_patterns` hold.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

const MAIN_PY: &str = "def run():\n    pass\nrun()  # ERROR here\nvalue = 1  # WARN here\n";

/// A session whose user configuration names these `[server.NAME]` tables,
/// each a mockls with the given arguments and extra settings.
fn session_with(dir: &std::path::Path, servers: &[(&str, &str, &str)]) -> Session {
    let mockls = mockls_binary().display().to_string();
    let config: String = servers
        .iter()
        .map(|(name, args, extra)| python_server(name, &mockls, args, extra))
        .collect();
    Session::start_with_user_config(&config, &root_arg(dir))
}

#[test]
fn a_question_the_first_server_cannot_answer_goes_to_the_next() {
    let dir = project(&[("main.py", MAIN_PY)]);
    let session = session_with(
        dir.path(),
        &[
            (
                "checker",
                "--source checker --without definitionProvider --without referencesProvider",
                "",
            ),
            (
                "linter",
                "--source linter --without hoverProvider --without referencesProvider",
                "",
            ),
        ],
    );
    let hover = session.ok("hover", json!({"file": "main.py", "line": 3, "column": 1}));
    assert_eq!(hover, "run");
    let definition = session.ok(
        "definition",
        json!({"file": "main.py", "line": 3, "column": 1}),
    );
    assert_eq!(definition, "main.py:1:5  def run():");
    let none = session.err(
        "find_references",
        json!({"file": "main.py", "line": 1, "column": 5}),
    );
    assert!(
        none.contains("[checker]"),
        "the first server's refusal: {none}"
    );
}

#[test]
fn diagnostics_merge_every_contributing_server_with_its_filters() {
    let dir = project(&[("main.py", MAIN_PY), ("types.pyi", "x: int  # ERROR\n")]);
    let session = session_with(
        dir.path(),
        &[
            ("checker", "--source checker", ""),
            ("linter", "--source linter", "min_severity = \"error\""),
            ("quiet", "--source quiet", "diagnostics = false"),
            ("stubs", "--source stubs", "file_patterns = [\"*.pyi\"]"),
        ],
    );
    let main = session.ok("diagnostics", json!({"file": "main.py"}));
    assert_eq!(
        main,
        "main.py: 2 errors, 1 warning\n\
         \x20 3:10 error [checker E1] mockls: ERROR on line 3\n\
         \x20 3:10 error [linter E1] mockls: ERROR on line 3\n\
         \x20 4:14 warning [checker W1] mockls: WARN on line 4"
    );
    let stubs = session.ok("diagnostics", json!({"file": "types.pyi"}));
    assert_eq!(
        stubs,
        "types.pyi: 3 errors\n\
         \x20 1:11 error [checker E1] mockls: ERROR on line 1\n\
         \x20 1:11 error [linter E1] mockls: ERROR on line 1\n\
         \x20 1:11 error [stubs E1] mockls: ERROR on line 1"
    );
    let status = session.ok("status", json!({}));
    for shown in [
        "[checker] (python) ",
        " (min severity error) ",
        " (no diagnostics) ",
        " (files *.pyi) ",
    ] {
        assert!(status.contains(shown), "{shown} in {status}");
    }
}

#[test]
fn one_server_that_cannot_start_leaves_the_others_answer() {
    let dir = project(&[("main.py", MAIN_PY)]);
    let session = session_with(
        dir.path(),
        &[
            ("checker", "--source checker", ""),
            ("broken", "--crash-on initialize", ""),
        ],
    );
    let main = session.ok("diagnostics", json!({"file": "main.py"}));
    assert!(
        main.contains("3:10 error [checker E1] mockls: ERROR on line 3"),
        "{main}"
    );
    assert!(main.contains("warning: [broken]"), "{main}");
    // The verdict is the checker's alone, and says so: the one that did
    // not answer is named in it, not only in a warning above.
    assert!(
        main.contains("main.py: 1 error, 1 warning from [checker]; [broken] did not answer"),
        "{main}"
    );
}

#[test]
fn a_server_limited_to_files_the_roots_lack_is_not_started() {
    let dir = project(&[("main.py", MAIN_PY)]);
    let session = session_with(
        dir.path(),
        &[
            ("checker", "--source checker", ""),
            ("stubs", "--source stubs", "file_patterns = [\"*.pyi\"]"),
        ],
    );
    let status = session.wait_for_status(|status| {
        status
            .lines()
            .any(|line| line.starts_with("[checker]") && line.contains(" running "))
    });
    let stubs = status
        .lines()
        .find(|line| line.starts_with("[stubs]"))
        .unwrap_or_default();
    assert!(stubs.contains(" not started "), "{status}");
}

/// Two servers that both read a file name its definitions twice (the
/// Svelte server and TypeScript's both index a module's JavaScript): a
/// name defined once is found once, not listed as ambiguous between two
/// copies of one place.
#[test]
fn a_definition_two_servers_name_is_one_candidate() {
    let dir = project(&[("main.py", MAIN_PY)]);
    let session = session_with(
        dir.path(),
        &[
            ("checker", "--source checker", ""),
            ("indexer", "--source indexer", ""),
        ],
    );
    session.ok("diagnostics", json!({"file": "main.py"}));
    assert_eq!(
        session.ok("definition", json!({"symbol": "run"})),
        "main.py:1:5  def run():"
    );
}
