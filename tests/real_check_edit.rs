//! `check_edit` on requests' own sources with pyright and ruff, in a
//! daemon that two sessions share: a type error an edit would add, and
//! one it would fix, each reported by both servers; the file's bytes and
//! modification time unchanged; and the other session's diagnostics of
//! the same file, asked while the check runs, those of the file on disk.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::real_project;
use common::*;
use serde_json::json;

#[test]
fn check_edit_reports_an_edits_problems_and_no_other_session_sees_it() {
    for server in ["pyright-langserver", "ruff"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let daemon = Daemon::new();
    let args = root_arg(dir.path());
    let (editor, other) = (daemon.session(&args), daemon.session(&args));
    let api = "src/requests/api.py";
    let path = dir.path().join(api);
    let clean = "src/requests/api.py: no problems";
    assert_eq!(editor.ok("diagnostics", json!({"file": api})), clean);
    let original = std::fs::read_to_string(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();

    let breaking = json!({"file": api, "replacements": [
        {"old": "url=url, **kwargs)", "new": "url=undefined_url, **kwargs)"},
    ]});
    let check = editor.call_async("check_edit", breaking);
    let meanwhile = other.call_async("diagnostics", json!({"file": api}));
    let answer = outcome(wait(&check));
    assert_eq!(
        answer.text,
        "src/requests/api.py, if edited (nothing written): 3 new problems, 0 fixed\n\
         \x20 new 71:51 error [Pyright reportUndefinedVariable] \"undefined_url\" is not defined\n\
         \x20 new 71:51 error [Pyright reportUnknownArgumentType] Argument type is unknown Argument corresponds to parameter \"url\" in function \"request\"\n\
         \x20 new 71:51 error [Ruff F821] Undefined name `undefined_url`"
    );
    assert_eq!(outcome(wait(&meanwhile)).text, clean);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    assert_eq!(other.ok("diagnostics", json!({"file": api})), clean);

    // Broken on disk, the check of the fix says what it fixes.
    let broken = original.replacen("url=url, **kwargs)", "url=undefined_url, **kwargs)", 1);
    std::fs::write(&path, &broken).unwrap();
    let fixing = json!({"file": api, "replacements": [
        {"old": "url=undefined_url, **kwargs)", "new": "url=url, **kwargs)"},
    ]});
    assert_eq!(
        editor.ok("check_edit", fixing),
        "src/requests/api.py, if edited (nothing written): 0 new problems, 3 fixed\n\
         \x20 fixed 71:51 error [Pyright reportUndefinedVariable] \"undefined_url\" is not defined\n\
         \x20 fixed 71:51 error [Pyright reportUnknownArgumentType] Argument type is unknown Argument corresponds to parameter \"url\" in function \"request\"\n\
         \x20 fixed 71:51 error [Ruff F821] Undefined name `undefined_url`"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    let still = other.ok("diagnostics", json!({"file": api}));
    assert!(
        still.starts_with("src/requests/api.py: 3 errors"),
        "{still}"
    );
}
