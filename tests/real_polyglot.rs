//! One root holding several languages, as a monorepo does, with zero
//! configuration: Windlass starts the built-in servers found on PATH for
//! the languages the root holds, and one `diagnostics` call over a file
//! of each language answers each from its own servers: complete the first
//! time, fresh after every file is edited at once, and as before after the
//! edits are undone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::real_projects;
use common::*;
use serde_json::json;

/// Each file, what the edit appends to it, and the problem its servers
/// must then report (with the line the edit lands on).
const EDITS: [(&str, &str, &str); 8] = [
    (
        "service/app.py",
        "\nprint(undefined_total)\n",
        "  463:7 error [Ruff F821] Undefined name `undefined_total`",
    ),
    (
        "service/Dockerfile",
        "\nFROMM nothing\n",
        "  48:1 error [dockerfile-utils 38] Unknown instruction: FROMM",
    ),
    (
        "service/docker-compose.yml",
        "\nbroken: [\n",
        "  81:1 error [YAML 0] Flow sequence in block collection must be sufficiently indented and end with a ]",
    ),
    (
        "service/run_tests.sh",
        "\necho $undefined_total\n",
        "  37:6 warning [shellcheck SC2154] undefined_total is referenced but not assigned.",
    ),
    (
        "web/scss/_buttons.scss",
        "\n.broken { colr: red; }\n",
        "  218:11 warning [scss unknownProperties] Unknown property: 'colr'",
    ),
    (
        "web/package.json",
        "\n}\n",
        "  212:1 error [json 0] End of file expected.",
    ),
    (
        "lib/src/v4/core/parse.ts",
        "\nconst count: number = \"many\";\n",
        "  311:7 error [typescript 2322] Type 'string' is not assignable to type 'number'.",
    ),
    (
        "php/Monolog/Logger.php",
        "\nnew UnknownThing();\n",
        "  763:5 error [intelephense P1009] Undefined type 'Monolog\\UnknownThing'.",
    ),
];

/// The servers the root needs, by the command each runs.
const SERVERS: [&str; 10] = [
    "pyright-langserver",
    "ruff",
    "docker-langserver",
    "yaml-language-server",
    "bash-language-server",
    "shellcheck",
    "vscode-css-language-server",
    "vscode-json-language-server",
    "typescript-language-server",
    "intelephense",
];

#[test]
fn every_language_of_a_monorepo_is_served_without_configuration() {
    if let Some(missing) = SERVERS.iter().find(|server| !have(server)) {
        return skip(&format!("{missing} is not on PATH"));
    }
    let Some(dir) = real_projects(&[
        ("gunicorn-27.0.1/examples/celery_alternative", "service"),
        ("bootstrap-5.3.8", "web"),
        ("zod-4.6.7", "lib"),
        ("monolog-2.9.1", "php"),
    ]) else {
        return skip("a package of target/real-projects is missing (.ci/run unpacks them)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let files: Vec<&str> = EDITS.iter().map(|(file, _, _)| *file).collect();

    let first = session.ok("diagnostics", json!({"files": files}));
    let headings: Vec<&str> = first
        .lines()
        .filter(|line| !line.starts_with(' '))
        .collect();
    assert_eq!(headings.len(), files.len(), "{first}");
    for (heading, file) in headings.iter().zip(&files) {
        assert!(heading.starts_with(&format!("{file}: ")), "{first}");
    }
    assert!(
        !first.contains("warning:") && !first.contains("note:"),
        "{first}"
    );

    let originals: Vec<String> = files
        .iter()
        .map(|file| std::fs::read_to_string(dir.path().join(file)).unwrap())
        .collect();
    for ((file, added, _), original) in EDITS.iter().zip(&originals) {
        std::fs::write(dir.path().join(file), format!("{original}{added}")).unwrap();
    }
    let broken = session.ok("diagnostics", json!({"files": files}));
    for (_, _, reported) in EDITS {
        assert!(
            broken.contains(&format!("{reported}\n")) || broken.ends_with(reported),
            "{reported}\n{broken}"
        );
    }
    assert!(
        broken.contains(
            "  463:7 error [Pyright reportUndefinedVariable] \"undefined_total\" is not defined\n"
        ),
        "the type checker and the linter both: {broken}"
    );

    for (file, original) in files.iter().zip(&originals) {
        std::fs::write(dir.path().join(file), original).unwrap();
    }
    assert_eq!(session.ok("diagnostics", json!({"files": files})), first);

    let status = session.ok("status", json!({}));
    for name in [
        "python",
        "ruff",
        "dockerfile",
        "yaml",
        "shell",
        "css",
        "json",
        "typescript",
        "php",
    ] {
        let line = status
            .lines()
            .find(|line| line.starts_with(&format!("[{name}]")))
            .unwrap_or_default();
        assert!(
            line.contains(" running "),
            "[{name}] not running:\n{status}"
        );
    }
    for name in ["rust", "c,cpp", "html"] {
        assert!(
            status.contains(&format!("[{name}]")) && !status.contains(&format!("[{name}] running")),
            "[{name}] has nothing to serve here:\n{status}"
        );
    }
}
