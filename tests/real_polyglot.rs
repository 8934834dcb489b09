//! One root holding several languages, as a monorepo does, with zero
//! configuration: Windlass starts the built-in servers found on PATH for
//! the languages the root holds (ESLint for the project that has its
//! configuration), each answers hover in its files, and one `diagnostics`
//! call over a file of each language answers each from its own servers:
//! complete the first time, fresh after every file is edited at once, and
//! as before after the edits are undone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{MONOREPO_EDITS, MONOREPO_SERVERS, monorepo};
use common::*;
use serde_json::json;

#[test]
fn every_language_of_a_monorepo_is_served_without_configuration() {
    if let Some(missing) = MONOREPO_SERVERS.iter().find(|server| !have(server)) {
        return skip(&format!("{missing} is not on PATH"));
    }
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is only rustup's proxy");
    }
    let Some(dir) = monorepo() else {
        return skip("a package of target/real-projects is missing (.ci/run unpacks them)");
    };
    let session = Session::start(&root_arg(dir.path()));
    for (file, line, symbol, begins) in HOVERS {
        let hover = session.ok(
            "hover",
            json!({"file": file, "line": line, "symbol": symbol}),
        );
        // Twelve servers starting at once on two cores: a server may
        // still be loading, and the answer then says so.
        let answer = past_loading_warning(&hover);
        assert!(answer.starts_with(begins), "{file}: {hover}");
    }
    let files: Vec<&str> = MONOREPO_EDITS.iter().map(|(file, _, _)| *file).collect();

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
    for ((file, added, _), original) in MONOREPO_EDITS.iter().zip(&originals) {
        std::fs::write(dir.path().join(file), format!("{original}{added}")).unwrap();
    }
    let broken = session.ok("diagnostics", json!({"files": files}));
    for (_, _, reported) in MONOREPO_EDITS {
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
    assert!(
        broken.contains(
            "  311:7 error [eslint @typescript-eslint/no-unused-vars] 'count' is assigned a value but never used.\n"
        ),
        "the project's ESLint beside the language server: {broken}"
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
        "eslint",
        "php",
        "rust",
        "toml",
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
    assert!(
        !status.contains("last error"),
        "rust-analyzer's failure to load the broken manifest is over: {status}"
    );
    for name in ["c,cpp", "html", "biome"] {
        assert!(
            status.contains(&format!("[{name}]")) && !status.contains(&format!("[{name}] running")),
            "[{name}] has nothing to serve here:\n{status}"
        );
    }
}

/// A hover in a file of each language, and how its answer begins. The
/// servers of YAML, JSON and TOML know nothing of a key without the
/// file's schema, which only the network has.
const HOVERS: [(&str, u32, &str, &str); 10] = [
    (
        "service/app.py",
        55,
        "EmailRequest",
        "class EmailRequest(\n",
    ),
    (
        "service/Dockerfile",
        13,
        "WORKDIR",
        "Set the working directory for any subsequent",
    ),
    (
        "service/docker-compose.yml",
        12,
        "services",
        "no hover information at service/docker-compose.yml:12:1",
    ),
    (
        "service/run_tests.sh",
        7,
        "SCRIPT_DIR",
        "Variable: **SCRIPT_DIR** - *defined on line 6*",
    ),
    (
        "web/scss/_buttons.scss",
        24,
        "display",
        "In combination with 'float' and 'position', determines the type of box",
    ),
    (
        "web/package.json",
        2,
        "name",
        "no hover information at web/package.json:2:4",
    ),
    (
        "lib/src/v4/core/parse.ts",
        10,
        "finalizeParams",
        "function finalizeParams(callee: util.AnyFunc",
    ),
    (
        "php/Monolog/Logger.php",
        34,
        "Logger",
        "__Monolog\\Logger__",
    ),
    (
        "crate/src/parser.rs",
        230,
        "Parser",
        "regex_syntax::parser\n\npub struct Parser {",
    ),
    (
        "crate/Cargo.toml",
        15,
        "name",
        "no hover information at crate/Cargo.toml:15:1",
    ),
];
