//! Fresh diagnostics after every edit, against every mockls publishing
//! profile: each answer must describe the file as it is on disk now.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

/// The file's text with `ERROR` on line `error_line` (1-based), if any.
fn text(error_line: Option<usize>) -> String {
    (1..=4)
        .map(|line| {
            if Some(line) == error_line {
                "x = 1  # ERROR\n".to_owned()
            } else {
                format!("v{line} = {line}\n")
            }
        })
        .collect()
}

fn expected(error_line: Option<usize>) -> String {
    match error_line {
        Some(line) => {
            format!("main.py: 1 error\n  {line}:10 error [mockls E1] mockls: ERROR on line {line}")
        }
        None => "main.py: no problems".to_owned(),
    }
}

/// Edits the file through a cycle of states and checks every answer.
fn cycle(flags: &str, extra: &[&str]) -> Session {
    cycle_after(0, flags, extra)
}

/// The same after `warm_up` unchecked calls, for servers whose timing
/// Windlass must first learn.
fn cycle_after(warm_up: usize, flags: &str, extra: &[&str]) -> Session {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let session = Session::start(&args);
    for _ in 0..warm_up {
        session.ok("diagnostics", json!({"file": "main.py"}));
    }
    for error_line in [Some(2), None, Some(3), Some(1), None, Some(4)] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(answer, expected(error_line), "profile `{flags}`");
    }
    session.keep(dir);
    session
}

fn strategy_of(session: &Session) -> String {
    let status = session.ok("status", json!({}));
    status
        .split("diagnostics by ")
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn default_profile() {
    let session = cycle("", &[]);
    assert_eq!(strategy_of(&session), "process");
}

#[test]
fn publish_version_profile_is_waited_for_by_version() {
    let session = cycle("--publish-version --diagnostics-delay 50", &[]);
    assert_eq!(strategy_of(&session), "version");
}

#[test]
fn progress_profile_is_waited_for_by_progress() {
    let session = cycle("--progress-on-change --diagnostics-delay 50", &[]);
    assert_eq!(strategy_of(&session), "progress");
}

#[test]
fn diagnostics_on_save_profile_gets_its_save() {
    cycle("--diagnostics-on-save", &[]);
}

#[test]
fn slow_publisher_is_waited_for() {
    cycle("--diagnostics-delay 500", &[]);
}

#[test]
fn cpu_busy_publisher_is_waited_for_by_its_cpu() {
    let session = cycle("--cpu-busy 2000", &[]);
    assert_eq!(strategy_of(&session), "process");
}

/// The first change teaches Windlass that this server publishes in two
/// rounds; from then on every answer is the last round's.
#[test]
fn multi_round_publisher_gives_its_last_round() {
    cycle_after(1, "--multi-round-diagnostics --publish-version", &[]);
    // Without versions, the gap between rounds is all there is to learn
    // from, and one sample of it on a loaded machine can be its shortest.
    cycle_after(3, "--multi-round-diagnostics", &[]);
}

#[test]
fn a_fixed_settle_gives_the_same_answers() {
    cycle("--publish-version", &["--diagnostics-settle-ms", "300"]);
}

/// A server that publishes nothing but answers `textDocument/diagnostic`
/// is asked once it has shown it publishes nothing, and from then on.
#[test]
fn a_server_that_only_answers_when_asked_is_asked() {
    let session = cycle("--pull-diagnostics --diagnostics-delay 300", &[]);
    assert_eq!(strategy_of(&session), "pull");
}

/// Configured to be asked, it is asked from the first call; a pushing
/// server beside it keeps its own freshness, and the answers merge.
#[test]
fn a_server_configured_to_be_asked_is_asked_from_the_start() {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mockls = mockls_binary().display().to_string();
    let config = python_server(
        "checker",
        &mockls,
        "--pull-diagnostics --source checker --diagnostics-delay 200",
        "pull_diagnostics = true",
    ) + &python_server("linter", &mockls, "--source linter --publish-version", "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    for error_line in [Some(2), None, Some(3)] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        let expected = match error_line {
            Some(line) => format!(
                "main.py: 2 errors\n\
                 \x20 {line}:10 error [checker E1] mockls: ERROR on line {line}\n\
                 \x20 {line}:10 error [linter E1] mockls: ERROR on line {line}"
            ),
            None => "main.py: no problems".to_owned(),
        };
        assert_eq!(answer, expected);
    }
    let status = session.ok("status", json!({}));
    assert!(status.contains("diagnostics by pull"), "{status}");
    session.keep(dir);
}

/// A server that checks a saved document under progress a moment after
/// the save (rust-analyzer's `cargo check`) publishes the saved version at
/// once with the last check's findings still in it: the answer waits for
/// the save's own check, so it has that check's finding of an error and
/// none left over after the fix.
#[test]
fn a_server_that_checks_on_save_is_answered_from_the_saves_check() {
    let dir = project(&[("main.py", &text(None))]);
    let mockls = mockls_binary().display().to_string();
    // Named as the built-in rust-analyzer is, it is taken for it.
    let config = python_server("rust", &mockls, "--publish-version --check-on-save 700", "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(None)
    );
    for error_line in [Some(2), None, Some(3), None] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        let expected = match error_line {
            Some(line) => format!(
                "main.py: 2 errors\n\
                 \x20 {line}:10 error [mockls E1] mockls: ERROR on line {line}\n\
                 \x20 {line}:10 error [mockcheck E1] mockls: ERROR on line {line}"
            ),
            None => expected(None),
        };
        assert_eq!(answer, expected);
    }
    session.keep(dir);
}

/// An agent that writes the edit it has just checked, and undoes it, while
/// the check is still giving the server its disk text back: the server
/// keeps each text the file had, and its check on save (which reads the
/// file as a compiler does) runs again for the undo, so nothing the
/// written edit's check found is left in the answer.
#[test]
fn an_edit_written_and_undone_as_its_check_ends_is_checked_on_disk_again() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let mockls = mockls_binary().display().to_string();
    let flags =
        "--publish-version --publish-dependents --check-on-save 300 --diagnostics-delay 400";
    let config = python_server("rust", &mockls, flags, "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    let both = json!({"files": ["lib.py", "main.py"]});
    let clean = "lib.py: no problems\nmain.py: no problems";
    assert_eq!(session.ok("diagnostics", both.clone()), clean);
    let check = session.ok(
        "check_edit",
        json!({"file": "lib.py", "replacements": [{"old": "fine", "new": "ERROR"}]}),
    );
    assert!(check.contains("main.py, not edited"), "{check}");
    // Written while the server is given the disk text back (its
    // diagnostics take 400 ms), and undone once the save's check of the
    // written text has run.
    std::fs::write(dir.path().join("lib.py"), "ERROR\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1_500));
    std::fs::write(dir.path().join("lib.py"), "fine\n").unwrap();
    assert_eq!(session.ok("diagnostics", both), clean);
    session.keep(dir);
}

/// A file no document is open for, written on disk, starts the check on
/// save too: the server's last check read it as it was, and its findings
/// about the open documents that depend on it (the compiler's, in a
/// workspace-wide check such as `cargo check`) would stay as they were.
#[test]
fn a_file_not_open_written_on_disk_starts_the_check_on_save() {
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let mockls = mockls_binary().display().to_string();
    let flags = "--publish-version --check-on-save 300";
    let config = python_server("rust", &mockls, flags, "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    let main = json!({"file": "main.py"});
    assert_eq!(
        session.ok("diagnostics", main.clone()),
        "main.py: no problems"
    );
    std::fs::write(dir.path().join("lib.py"), "ERROR\n").unwrap();
    let broken = session.ok("diagnostics", main.clone());
    assert!(
        broken.contains("error [mockcheck E2] mockls: lib.py has an ERROR"),
        "the check's finding: {broken}"
    );
    std::fs::write(dir.path().join("lib.py"), "fine\n").unwrap();
    assert_eq!(session.ok("diagnostics", main), "main.py: no problems");
    session.keep(dir);
}

/// A server that serves diagnostics on request only to a client that
/// announced it can take their registration, and then stops publishing
/// (as pyright does), is asked from its registration on: its answers are
/// fresh, and `check_edit` finds the edit's dependents by asking for every
/// open document's diagnostics, since no publication will name them.
#[test]
fn a_server_that_registers_asking_is_asked_and_so_are_an_edits_dependents() {
    let mockls = mockls_binary().display().to_string();
    let flags = "--register-pull --watch-files --diagnostics-delay 200";
    let dir = project(&[("lib.py", "fine\n"), ("main.py", "uses lib.py\n")]);
    let config = python_server("python", &mockls, flags, "pull_diagnostics = true");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    let both = json!({"files": ["main.py", "lib.py"]});
    let clean = "main.py: no problems\nlib.py: no problems";
    assert_eq!(session.ok("diagnostics", both.clone()), clean);
    assert_eq!(strategy_of(&session), "pull");
    let check = session.ok(
        "check_edit",
        json!({"file": "lib.py", "replacements": [{"old": "fine", "new": "ERROR"}]}),
    );
    assert_eq!(
        check,
        "lib.py, if edited (nothing written): 1 new problem, 0 fixed\n\
         \x20 new 1:1 error [mockls E1] mockls: ERROR on line 1\n\
         main.py, not edited, after the edit: 1 new problem, 0 fixed\n\
         \x20 new 1:1 error [mockls E2] mockls: lib.py has an ERROR"
    );
    assert_eq!(
        session.ok("diagnostics", both),
        clean,
        "the check wrote nothing"
    );
    std::fs::write(dir.path().join("lib.py"), "ERROR\n").unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: 1 error\n  1:1 error [mockls E2] mockls: lib.py has an ERROR",
        "the dependency's change on disk reached the dependent"
    );
    session.keep(dir);
}

/// A check's edited file keeps the edit's problems in the cache until the
/// server has published its disk text again: a check that starts before
/// then must not take that file as a bystander, or the server's
/// republication would show as the second check fixing the problems the
/// first one's edit added, or adding back those it took out.
#[test]
fn a_file_just_checked_is_no_dependent_of_the_next_check() {
    for (disk, edit) in [("fine", "ERROR"), ("ERROR", "fine")] {
        let dir = project(&[("lib.py", &format!("{disk}\n")), ("other.py", "x = 1\n")]);
        let mut args = root_arg(dir.path());
        let flags = "--publish-version --diagnostics-delay 400";
        args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
        let session = Session::start(&args);
        session.ok("diagnostics", json!({"files": ["lib.py", "other.py"]}));
        let first = session.ok(
            "check_edit",
            json!({"file": "lib.py", "replacements": [{"old": disk, "new": edit}]}),
        );
        assert!(
            first.contains("1 new problem") || first.contains("1 fixed"),
            "{first}"
        );
        let second = session.ok(
            "check_edit",
            json!({"file": "other.py", "replacements": [{"old": "1", "new": "2"}]}),
        );
        assert_eq!(
            second,
            "other.py, if edited (nothing written): no new problems, none fixed (0 problems as now)",
            "after an edit from {disk:?} to {edit:?}"
        );
        session.keep(dir);
    }
}

/// A server that publishes a document's diagnostics only when they
/// change, and can be asked (as rust-analyzer): an edit that changes none
/// is never published, so once the server has gone quiet without
/// publishing it is asked, and the answer comes (it once came after the
/// 30 s idle limit, as an error). It stays a server waited for.
#[test]
fn a_server_that_publishes_only_changes_is_asked_when_it_publishes_nothing() {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mockls = mockls_binary().display().to_string();
    let flags = "--publish-only-changes --publish-version";
    let config = python_server("mock", &mockls, flags, "");
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(Some(2))
    );
    let unchanged = format!("{}# a comment\n", text(Some(2)));
    std::fs::write(dir.path().join("main.py"), unchanged).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(Some(2))
    );
    let check = session.ok(
        "check_edit",
        json!({"file": "main.py", "replacements": [{"old": "v4 = 4", "new": "v4 = 4  # four"}]}),
    );
    assert_eq!(
        check,
        "main.py, if edited (nothing written): no new problems, none fixed (1 problem as now)"
    );
    for error_line in [None, Some(3)] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(answer, expected(error_line));
    }
    assert_eq!(strategy_of(&session), "version");
    session.keep(dir);
}

/// A server that announces it can be asked but refuses the question as
/// an unknown method (as the CSS, JSON and HTML servers do for a client
/// that did not announce asking) is waited for instead, even when
/// configured to be asked, and one that also never publishes says so.
#[test]
fn a_server_that_refuses_to_be_asked_is_waited_for() {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mockls = mockls_binary().display().to_string();
    let config = python_server(
        "python",
        &mockls,
        "--claim-pull-diagnostics --publish-version",
        "pull_diagnostics = true",
    );
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    for error_line in [Some(2), None, Some(3)] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(answer, expected(error_line));
    }
    assert_eq!(strategy_of(&session), "version");
    session.keep(dir);
    says_it_has_no_diagnostics("--no-diagnostics --claim-pull-diagnostics");
}

/// `check_edit` answers what an edit would add and fix, for a server
/// waited for and one asked, and writes nothing: the file's bytes and
/// modification time stay, and diagnostics asked while the check runs
/// describe the file on disk, not the edit.
#[test]
fn check_edit_reports_what_an_edit_would_change_and_writes_nothing() {
    for flags in [
        "--publish-version --diagnostics-delay 400",
        "--pull-diagnostics --diagnostics-delay 400",
    ] {
        let dir = project(&[("main.py", &text(Some(2)))]);
        let record = record_path(dir.path());
        let mut args = root_arg(dir.path());
        let recording = format!("{flags} --record {}", record.display());
        args.extend(["--lsp".into(), mockls_lsp("python", &recording)]);
        let session = Session::start(&args);
        let path = dir.path().join("main.py");
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.py"})),
            expected(Some(2))
        );

        let check = session.call_async(
            "check_edit",
            json!({"file": "main.py", "replacements": [
                {"old": "x = 1  # ERROR", "new": "x = 1"},
                {"old": "v4 = 4", "new": "v4 = 4  # ERROR"},
            ]}),
        );
        // Asked once the server holds the edit's text, so that only the
        // hold keeps this answer from being the edit's.
        wait_until("the server is given the edit's text", || {
            recorded(&record).iter().any(|(direction, message)| {
                direction == "in"
                    && message["method"] == "textDocument/didChange"
                    && message.to_string().contains("v4 = 4  # ERROR")
            })
        });
        let meanwhile = session.call_async("diagnostics", json!({"file": "main.py"}));
        let answer = outcome(wait(&check));
        assert!(!answer.is_error, "{flags}: {}", answer.text);
        assert_eq!(
            answer.text,
            "main.py, if edited (nothing written): 1 new problem, 1 fixed\n\
             \x20 new 4:11 error [mockls E1] mockls: ERROR on line 4\n\
             \x20 fixed 2:10 error [mockls E1] mockls: ERROR on line 2",
            "{flags}"
        );
        assert_eq!(outcome(wait(&meanwhile)).text, expected(Some(2)), "{flags}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text(Some(2)));
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.py"})),
            expected(Some(2))
        );

        let unchanged = session.ok(
            "check_edit",
            json!({"file": "main.py", "text": text(Some(2)).replace("v1 = 1", "v1 = 10")}),
        );
        assert_eq!(
            unchanged,
            "main.py, if edited (nothing written): no new problems, none fixed (1 problem as now)"
        );
        for (arguments, refusal) in [
            (
                json!({"file": "main.py"}),
                "give one of `replacements`, `text` or `new_name`",
            ),
            (
                json!({"file": "main.py", "text": "", "new_name": "w"}),
                "give one of `replacements`, `text` or `new_name`",
            ),
            (
                json!({"file": "main.py", "line": 1, "text": ""}),
                "give `new_name` too",
            ),
            (
                json!({"file": "main.py", "replacements": [{"old": "v", "new": "w"}]}),
                "replacement 1: `old` occurs 3 times",
            ),
        ] {
            let error = session.err("check_edit", arguments);
            assert!(error.contains(refusal), "{error}");
        }
        session.keep(dir);
    }
}

/// `check_edit` of a rename checks every file the server's rename edits,
/// together, and holds each file's other questions meanwhile.
#[test]
fn check_edit_of_a_rename_checks_every_file_it_edits() {
    let dir = project(&[
        ("main.py", "shared = 1\nv2 = 2\n"),
        ("other.py", "v1 = 1\nprint(shared)\n"),
    ]);
    let record = record_path(dir.path());
    let mut args = root_arg(dir.path());
    let flags = format!(
        "--publish-version --diagnostics-delay 400 --record {}",
        record.display()
    );
    args.extend(["--lsp".into(), mockls_lsp("python", &flags)]);
    let session = Session::start(&args);
    let clean = "other.py: no problems";
    assert_eq!(
        session.ok("diagnostics", json!({"file": "other.py"})),
        clean
    );

    let check = session.call_async(
        "check_edit",
        json!({"file": "main.py", "line": 1, "symbol": "shared", "new_name": "ERROR_shared"}),
    );
    wait_until("the server is given other.py as renamed", || {
        recorded(&record).iter().any(|(direction, message)| {
            direction == "in"
                && message["method"] == "textDocument/didChange"
                && message.to_string().contains("print(ERROR_shared)")
        })
    });
    let meanwhile = session.call_async("diagnostics", json!({"file": "other.py"}));
    let answer = outcome(wait(&check));
    assert_eq!(
        answer.text,
        "rename to `ERROR_shared`: 2 edits in 2 files (checked, nothing written)\n\
         main.py, if edited (nothing written): 1 new problem, 0 fixed\n\
         \x20 new 1:1 error [mockls E1] mockls: ERROR on line 1\n\
         other.py, if edited (nothing written): 1 new problem, 0 fixed\n\
         \x20 new 2:7 error [mockls E1] mockls: ERROR on line 2"
    );
    assert_eq!(outcome(wait(&meanwhile)).text, clean);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("other.py")).unwrap(),
        "v1 = 1\nprint(shared)\n"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        "main.py: no problems"
    );
}

/// A server that exits in the middle of a check: the next process runs
/// the check again, from the file as on disk, and its answer is right.
#[test]
fn a_check_cut_short_by_the_servers_exit_is_run_again() {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mut args = root_arg(dir.path());
    let flags = "--pull-diagnostics --drop-after 2";
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(Some(2))
    );
    let answer = session.ok(
        "check_edit",
        json!({"file": "main.py", "replacements": [{"old": "x = 1  # ERROR", "new": "x = 1"}]}),
    );
    assert_eq!(
        answer,
        "main.py, if edited (nothing written): 0 new problems, 1 fixed\n\
         \x20 fixed 2:10 error [mockls E1] mockls: ERROR on line 2"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("main.py")).unwrap(),
        text(Some(2))
    );
    let status = session.ok("status", json!({}));
    let python = status
        .lines()
        .find(|line| line.starts_with("[python]"))
        .unwrap();
    assert!(
        !python.ends_with("restarts 0"),
        "the first process exited: {status}"
    );
    // The second process exits after answering the check too; a call that
    // meets its exit fails as any call does, and the next process reopens
    // the file as it is on disk.
    let after = (0..3)
        .map(|_| session.call("diagnostics", json!({"file": "main.py"})))
        .find(|outcome| !outcome.is_error)
        .expect("a process answers");
    assert_eq!(after.text, expected(Some(2)));
}

#[test]
fn a_server_that_never_publishes_says_so() {
    says_it_has_no_diagnostics("--no-diagnostics");
}

/// Asked twice, mockls with `flags` is said to give no diagnostics.
fn says_it_has_no_diagnostics(flags: &str) {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    for _ in 0..2 {
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.py"})),
            "main.py: no diagnostics from [python]",
            "{flags}"
        );
    }
}

#[test]
fn unexplained_cpu_work_past_the_budget_is_an_attributed_error() {
    let dir = project(&[("main.py", &text(Some(2)))]);
    let mut args = root_arg(dir.path());
    // Burning for twice the budget's length: on two cores shared with the
    // other tests the burner may get little more than half of one, and
    // must still pass the budget's 10 CPU-seconds before it is done.
    args.extend(["--lsp".into(), mockls_lsp("python", "--cpu-busy 20000")]);
    let session = Session::start(&args);
    // Once the server has loaded, CPU spent on a change without a word of
    // progress is unexplained work.
    session.wait_for_status(|status| status.contains("running ready"));
    std::fs::write(dir.path().join("main.py"), text(Some(3))).unwrap();
    let error = session.err("diagnostics", json!({"file": "main.py"}));
    assert!(
        error.starts_with("[python] worked 10.")
            && error.ends_with("CPU-seconds without publishing diagnostics"),
        "{error}"
    );
}

/// mockls as a server of no built-in's name, which inherits no
/// built-in's ways (pyright answers hovers while it loads).
fn unknown_mockls(dir: &std::path::Path, flags: &str) -> Session {
    let mockls = mockls_binary().display().to_string();
    let config = python_server("mock", &mockls, flags, "");
    Session::start_with_user_config(&config, &root_arg(dir))
}

#[test]
fn queries_during_indexing_wait_and_answer_correctly() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let session = unknown_mockls(dir.path(), "--indexing-delay 2000");
    let status = session.wait_for_status(|status| status.contains("indexing"));
    assert!(status.contains("loading (indexing 0%)"), "{status}");
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "main.py", "line": 1, "symbol": "run"})
        ),
        "main.py:1:5  def run():"
    );
}

/// A server that says it is loading only through rust-analyzer's
/// `experimental/serverStatus`, quiet meanwhile, is not asked until it
/// says it is quiescent: a question sent earlier would be answered empty.
#[test]
fn a_server_that_says_it_is_loading_is_asked_once_it_says_it_is_done() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let session = unknown_mockls(dir.path(), "--indexing-delay 2000 --server-status");
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
}

/// Pyright says when it has found its workspace's files and answers
/// workspace questions in full from then on, however long its process
/// stays busy (checking open files, answering another session): a
/// `search` is sent once it has said so, and its answer carries no
/// warning that the server is still loading.
#[test]
fn a_server_busy_after_saying_it_found_its_files_is_asked_at_once() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let mockls = mockls_binary().display().to_string();
    let config = python_server("mock", &mockls, "--busy-after-discovery 30000", "");
    let mut args = root_arg(dir.path());
    args.extend(["--request-timeout".into(), "10".into()]);
    let session = Session::start_with_user_config(&config, &args);
    let answer = session.ok("search", json!({"query": "run"}));
    assert!(
        answer.starts_with("symbols (1)\n  main.py\n    function run 1:5"),
        "{answer}"
    );
    assert!(!answer.contains("still loading"), "{answer}");
}

/// mockls under pyright's name (which answers files while it loads),
/// reporting indexing for `indexing_ms` and seen doing so; its folder
/// lives as long as the second half.
fn pyright_indexing_for(dir: &std::path::Path, indexing_ms: u64) -> (Session, tempfile::TempDir) {
    let bin = tempfile::tempdir().unwrap();
    let pyright = bin.path().join("pyright-langserver");
    std::os::unix::fs::symlink(mockls_binary(), &pyright).unwrap();
    let flags = format!("--indexing-delay {indexing_ms} --answers-files-while-indexing");
    let config = python_server("python", &pyright.display().to_string(), &flags, "");
    let session = Session::start_with_user_config(&config, &root_arg(dir));
    session.wait_for_status(|status| status.contains("loading (indexing"));
    (session, bin)
}

/// Pyright answers a hover or a definition correctly while it loads (it
/// checks the file and what it imports when asked), and on a million
/// lines loading takes seconds: a server running its program is asked
/// such questions at once, with no warning, while it is still loading.
#[test]
fn a_server_that_answers_files_while_loading_is_asked_at_once() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let (session, _bin) = pyright_indexing_for(dir.path(), 60_000);
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "main.py", "line": 1, "symbol": "run"})
        ),
        "main.py:1:5  def run():"
    );
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("loading (indexing"),
        "answered before it loaded: {status}"
    );
}

/// Loading work whose end never comes (pyright was seen "loading ()" for
/// 200 s, idle, after serving roots in turn) ends once the server has
/// answered since it began and has sat idle for a while: its answers stop
/// warning that they may be incomplete.
#[test]
fn loading_work_that_never_ends_ends_once_the_server_has_answered_and_is_idle() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let (session, _bin) = pyright_indexing_for(dir.path(), 600_000);
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
    let status = session.wait_for_status(|status| !status.contains("loading"));
    assert!(status.contains("ready"), "{status}");
}

#[test]
fn several_files_are_checked_at_once_each_by_its_server() {
    let dir = project(&[
        ("a.py", "ok\nERROR\n"),
        ("b.rs", "fine\n"),
        ("c.py", "ERROR\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "--publish-version")]);
    args.extend(["--lsp".into(), mockls_lsp("rust", "")]);
    let session = Session::start(&args);
    let answer = session.ok(
        "diagnostics",
        json!({"files": ["a.py", "b.rs", "c.py", "missing.py"]}),
    );
    assert_eq!(
        answer,
        "a.py: 1 error\n  2:1 error [mockls E1] mockls: ERROR on line 2\nb.rs: no problems\nc.py: 1 error\n  1:1 error [mockls E1] mockls: ERROR on line 1\nmissing.py: missing.py: no such file or directory"
    );
}

/// A branch switch rewrites every file at once, and a server checks its
/// open documents again once it has taken the checkout in (mockls 300 ms
/// later, as pyright does): that second round belongs to the switch, not
/// to how the server checks an edit. Learned as such, it would hold every
/// later edit's answer for a round that never comes.
#[test]
fn what_a_branch_switch_publishes_teaches_nothing_about_edits() {
    let files: Vec<(String, String)> = ["main.py", "other.py", "third.py"]
        .iter()
        .map(|name| ((*name).to_owned(), text(None)))
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let dir = project(&borrowed);
    let mut args = root_arg(dir.path());
    let flags = "--publish-version --watch-files --recheck-delay 300";
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    session.ok("diagnostics", json!({"files": ["main.py", "other.py"]}));
    for error_line in [Some(2), None] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(answer, expected(error_line));
    }
    for (line, (name, _)) in files.iter().enumerate() {
        let path = dir.path().join(name);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, text(Some(line + 1))).unwrap();
    }
    // The switch's own rounds come and go.
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    for error_line in [Some(3), None, Some(4), None] {
        std::fs::write(dir.path().join("main.py"), text(error_line)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(answer, expected(error_line));
    }
    let status = session.ok("status", json!({}));
    assert!(
        !status.contains("rounds"),
        "one round per edit, whatever the switch published:\n{status}"
    );
}

/// typescript-language-server's publication after an edit can hold the
/// type errors of the text before it (mockls `--stale-publications`
/// publishes only those): its diagnostics are asked of tsserver itself
/// (`typescript.tsserverRequest`), and every answer is the text's as it
/// is. The same server without the command is waited for, and gets the
/// stale publication.
#[test]
fn typescript_diagnostics_are_asked_of_tsserver_not_read_from_publications() {
    let answers = |flags: &str| {
        let dir = project(&[("main.ts", "let v = 1\n")]);
        let mut args = root_arg(dir.path());
        args.extend(["--lsp".into(), mockls_lsp("typescript", flags)]);
        let session = Session::start(&args);
        let mut answers = Vec::new();
        for error_line in [Some(2), None, Some(1), None] {
            let text: String = (1..=3)
                .map(|line| match Some(line) == error_line {
                    true => "let x = 1 // ERROR\n".to_owned(),
                    false => format!("let v{line} = {line}\n"),
                })
                .collect();
            std::fs::write(dir.path().join("main.ts"), text).unwrap();
            let answer = session.ok("diagnostics", json!({"file": "main.ts"}));
            let right = match error_line {
                Some(line) => answer.contains(&format!("mockls: ERROR on line {line}")),
                None => answer == "main.ts: no problems",
            };
            answers.push((right, answer));
        }
        answers
    };
    for (right, answer) in answers("--answers-tsserver --stale-publications") {
        assert!(right, "{answer}");
    }
    let waited = answers("--stale-publications");
    assert!(waited.iter().any(|(right, _)| !right), "{waited:?}");
}

/// `check_edit` of a definition checks the files that use its name
/// though none is open, asked (pull) or waited for (by version) alike:
/// the first 25 by how often they name it, each breaking; the five past
/// the bound are named as not checked. Those opened for the check are
/// closed after it, so their diagnostics asked later are of the disk.
#[test]
fn check_edit_checks_the_files_that_use_what_it_changes_and_names_those_past_the_bound() {
    let mockls = mockls_binary().display().to_string();
    for (flags, extra) in [
        ("--register-pull --watch-files", "pull_diagnostics = true"),
        ("--publish-version --watch-files", ""),
    ] {
        let mut files = vec![("lib.py".to_owned(), "def helper\n".to_owned())];
        for index in 0..30 {
            // The first files name the helper twice, so they come first.
            let twice = if index < 25 { "# helper\n" } else { "" };
            files.push((
                format!("user{index:02}.py"),
                format!("uses lib.py\n# helper\n{twice}"),
            ));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        let dir = project(&files);
        let config = python_server("python", &mockls, flags, extra);
        let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
        let check = session.ok(
            "check_edit",
            json!({"file": "lib.py", "replacements": [{"old": "def helper", "new": "def helper ERROR"}]}),
        );
        let mut expected = vec![
            "lib.py, if edited (nothing written): 1 new problem, 0 fixed".to_owned(),
            "  new 1:12 error [mockls E1] mockls: ERROR on line 1".to_owned(),
        ];
        for index in 0..25 {
            expected.push(format!(
                "user{index:02}.py, not edited, after the edit: 1 new problem, 0 fixed"
            ));
            expected.push("  new 1:1 error [mockls E2] mockls: lib.py has an ERROR".to_owned());
        }
        expected.push("also checked: 25 other files that use `helper` (those not named above have no new problems)".to_owned());
        expected.push("warning: 5 other files that use `helper` not checked (at most 25 are): user25.py user26.py user27.py user28.py user29.py; write the edit and ask `diagnostics` of them".to_owned());
        // mockls puts each user's error on its first line, which does not
        // name `helper`: what the file infers from it may have changed.
        expected.push("warning: the new errors of 25 files stand where `helper` is not written (what they infer from it changed); the files that use them without naming it were not checked: user00.py user01.py user02.py user03.py user04.py user05.py user06.py user07.py user08.py user09.py and 15 more".to_owned());
        assert_eq!(check, expected.join("\n"), "{flags}");
        assert_eq!(
            session.ok("diagnostics", json!({"file": "user00.py"})),
            "user00.py: no problems",
            "{flags}"
        );
        session.keep(dir);
    }
}

/// A check gives the edited file its disk text back without telling the
/// server it was saved, since nothing was written: a server that checks
/// on save (rust-analyzer's `cargo check`) would otherwise run that check
/// after every `check_edit`, and the next answers would wait for it.
#[test]
fn a_check_tells_no_save_when_it_gives_the_disk_text_back() {
    let dir = project(&[("main.py", &text(None))]);
    let record = record_path(dir.path());
    let mut args = root_arg(dir.path());
    let flags = format!(
        "--publish-version --check-on-save 300 --record {}",
        record.display()
    );
    args.extend(["--lsp".into(), mockls_lsp("python", &flags)]);
    let session = Session::start(&args);
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(None)
    );
    let saves = || {
        recorded(&record)
            .iter()
            .filter(|(direction, message)| {
                direction == "in" && message["method"] == "textDocument/didSave"
            })
            .count()
    };
    let before = saves();
    let answer = session.ok(
        "check_edit",
        json!({"file": "main.py", "replacements": [{"old": "v4 = 4", "new": "v4 = 4  # ERROR"}]}),
    );
    assert!(answer.contains("1 new problem"), "{answer}");
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.py"})),
        expected(None)
    );
    assert_eq!(saves(), before, "a check saved nothing");
    session.keep(dir);
}
