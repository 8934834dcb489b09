//! The built-in servers this machine cannot install, each played by
//! mockls behaving as the real one is known to, started with no
//! configuration from the language table: a file of the language in the
//! roots starts the server by the command and arguments the table names
//! (after its version check), and hover, definition and diagnostics
//! (fresh after an edit and after its undo) are answered through it. An
//! alternative that starts only when configured is configured by name
//! alone. docs/languages.md marks these servers "not verified here".

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use windlass_actors::language::{LANGUAGES, Role, built_in_servers};

/// A server mockls plays, with the flags that give it the real one's
/// known behaviour, and why.
struct Played {
    name: &'static str,
    flags: &'static str,
}

const PLAYED: &[Played] = &[
    // Eclipse JDT LS imports the project before it answers, reporting
    // progress meanwhile.
    Played {
        name: "java",
        flags: "--indexing-delay 300",
    },
    // It lints after a pause in typing, so its diagnostics come late.
    Played {
        name: "kotlin",
        flags: "--diagnostics-delay 300",
    },
    Played {
        name: "csharp",
        flags: "",
    },
    // Ruby LSP answers `textDocument/diagnostic` and publishes nothing to
    // a client that can ask.
    Played {
        name: "ruby",
        flags: "--pull-diagnostics --no-diagnostics",
    },
    Played {
        name: "solargraph",
        flags: "",
    },
    // It loads the workspace with progress before its first answer.
    Played {
        name: "lua",
        flags: "--indexing-delay 300",
    },
    Played {
        name: "zig",
        flags: "",
    },
    // sourcekit-lsp offers to be asked for diagnostics.
    Played {
        name: "swift",
        flags: "--pull-diagnostics",
    },
    // ElixirLS builds, and reports what the build found, when a file is
    // saved.
    Played {
        name: "elixir",
        flags: "--diagnostics-on-save",
    },
    // It reports progress while it typechecks after every change.
    Played {
        name: "haskell",
        flags: "--progress-on-change",
    },
    Played {
        name: "ocaml",
        flags: "",
    },
    Played {
        name: "terraform",
        flags: "",
    },
    Played {
        name: "markdown",
        flags: "",
    },
];

const SOURCE: &str = "class Widget\nlet size = Widget\n";

#[test]
fn every_server_not_verified_here_is_played() {
    for (server, _) in built_in_servers() {
        if server.verified {
            continue;
        }
        assert!(
            PLAYED.iter().any(|played| played.name == server.name),
            "`{}` is neither verified nor played by mockls",
            server.name
        );
    }
}

#[test]
fn each_played_server_starts_from_the_table_and_answers() {
    for played in PLAYED {
        answers_as_the_table_says(played);
    }
}

fn answers_as_the_table_says(played: &Played) {
    let (server, languages) = built_in_servers()
        .into_iter()
        .find(|(server, _)| server.name == played.name)
        .unwrap();
    let language = LANGUAGES
        .iter()
        .find(|language| language.id == languages[0])
        .unwrap();
    let file = format!("src/widget.{}", language.extensions[0]);
    let dir = project(&[(&file, SOURCE)]);
    let bin = tempfile::tempdir().unwrap();
    let called = bin.path().join("called");
    write_wrapper(
        bin.path(),
        server.command,
        server.check,
        &called,
        played.flags,
    );
    let config = tempfile::tempdir().unwrap();
    let first = language
        .servers
        .iter()
        .find(|known| known.role == Role::Language)
        .unwrap();
    if first.name != server.name {
        write_config(config.path(), &format!("[server.{}]\n", server.name));
    }
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let client = Client {
        env: &[
            ("PATH", &path),
            ("XDG_CONFIG_HOME", config.path().to_str().unwrap()),
        ],
        ..Client::default()
    };
    let session = Session::start_as(&root_arg(dir.path()), &client);

    let hover = session.ok(
        "hover",
        json!({"file": file, "line": 2, "symbol": "Widget"}),
    );
    assert!(hover.contains("Widget"), "[{}] {hover}", played.name);
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": file, "line": 2, "symbol": "Widget"})
        ),
        format!("{file}:1:7  class Widget"),
        "[{}]",
        played.name
    );
    let clean = format!("{file}: no problems");
    let broken = format!("{file}: 1 error\n  3:10 error [mockls E1] mockls: ERROR on line 3");
    for (text, answer) in [
        (SOURCE.to_owned(), &clean),
        (format!("{SOURCE}x = 1  # ERROR\n"), &broken),
        (SOURCE.to_owned(), &clean),
    ] {
        std::fs::write(dir.path().join(&file), text).unwrap();
        assert_eq!(
            &session.ok("diagnostics", json!({"file": file})),
            answer,
            "[{}]",
            played.name
        );
    }
    let args = std::fs::read_to_string(&called).unwrap();
    assert_eq!(
        args.trim_end(),
        server.args.join(" "),
        "[{}] started with the table's arguments",
        played.name
    );
}

/// A program named as the server's command: its version check succeeds,
/// and otherwise it records its arguments and runs mockls with `flags`.
fn write_wrapper(bin: &Path, command: &str, check: Option<&[&str]>, called: &Path, flags: &str) {
    let check = check.map(|args| args.join(" ")).unwrap_or_default();
    let script = format!(
        "#!/bin/sh\n\
         if [ -n \"{check}\" ] && [ \"$*\" = \"{check}\" ]; then exit 0; fi\n\
         echo \"$*\" > '{}'\n\
         exec '{}' {flags}\n",
        called.display(),
        mockls_binary().display()
    );
    let path = bin.join(command);
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn write_config(config_home: &Path, text: &str) {
    let directory = config_home.join("windlass");
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(directory.join("config.toml"), text).unwrap();
}
