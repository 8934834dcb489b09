//! The language table: which LSP language id a file has, and which
//! configured server speaks it.
//!
//! One table serves routing (a tool call on a file) and start-up detection
//! (which servers the files in the roots need), so the two cannot disagree.

use serde_json::Value;
use std::path::Path;

/// File names that decide the language by themselves.
const FILE_NAMES: &[(&str, &str)] = &[
    ("Dockerfile", "dockerfile"),
    ("Makefile", "makefile"),
    ("GNUmakefile", "makefile"),
    ("makefile", "makefile"),
    ("CMakeLists.txt", "cmake"),
];

/// Extensions (lower case, without the dot) and their LSP language ids.
const EXTENSIONS: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("py", "python"),
    ("pyi", "python"),
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("tsx", "typescriptreact"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "javascriptreact"),
    ("go", "go"),
    ("c", "c"),
    ("h", "cpp"),
    ("cpp", "cpp"),
    ("cc", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
    ("hh", "cpp"),
    ("hxx", "cpp"),
    ("sh", "shellscript"),
    ("bash", "shellscript"),
    ("java", "java"),
    ("rb", "ruby"),
    ("lua", "lua"),
    ("zig", "zig"),
    ("json", "json"),
    ("toml", "toml"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("md", "markdown"),
    ("mk", "makefile"),
    ("txt", "plaintext"),
];

/// Languages that may serve a file when its own has no server: a C header
/// is as much C as C++.
const FALLBACKS: &[(&str, &str)] = &[("cpp", "c")];

/// The LSP language id of a file, from its name or extension.
pub fn language_id(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if let Some((_, id)) = FILE_NAMES.iter().find(|(known, _)| *known == name) {
        return Some(id);
    }
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    EXTENSIONS
        .iter()
        .find(|(known, _)| *known == extension)
        .map(|(_, id)| *id)
}

/// Languages to try for a file, its own first. Only a `.h` header falls back.
pub fn candidate_languages(path: &Path) -> Vec<&'static str> {
    let Some(own) = language_id(path) else {
        return Vec::new();
    };
    let mut candidates = vec![own];
    let is_header = path.extension().and_then(|e| e.to_str()) == Some("h");
    if is_header {
        candidates.extend(
            FALLBACKS
                .iter()
                .filter(|(from, _)| *from == own)
                .map(|(_, to)| *to),
        );
    }
    candidates
}

/// How to run one language server, after every configuration layer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The configuration key, also the label in errors (`[python] …`).
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// LSP language ids this one process serves.
    pub languages: Vec<String>,
    pub initialization_options: Option<Value>,
    /// Answered to `workspace/configuration`, looked up by section.
    pub settings: Value,
    /// For a server found on PATH rather than configured: arguments with
    /// which the command must run and exit 0 before it is used.
    pub check: Option<Vec<String>>,
}

/// What makes two sessions' servers one process: the resolved command,
/// arguments, languages, initialization options and settings. The name a
/// configuration gives a server is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(String);

impl ServerSpec {
    pub fn key(&self) -> ServerKey {
        let options = self
            .initialization_options
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
        ServerKey(format!(
            "{}\u{0}{}\u{0}{}\u{0}{options}\u{0}{}",
            self.command,
            self.args.join("\u{1}"),
            self.languages.join("\u{1}"),
            self.settings
        ))
    }

    /// The command and its arguments as a shell would show them.
    pub fn command_line(&self) -> String {
        std::iter::once(&self.command)
            .chain(&self.args)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn serves(&self, language: &str) -> bool {
        self.languages.iter().any(|known| known == language)
    }

    /// The label used in errors and status: the configuration key.
    pub fn label(&self) -> String {
        self.name.clone()
    }

    /// Whether `other` runs the same process for the same languages, so
    /// that only its settings may differ.
    pub fn same_process(&self, other: &ServerSpec) -> bool {
        self.command == other.command
            && self.args == other.args
            && self.languages == other.languages
            && self.initialization_options == other.initialization_options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_files_to_language_ids() {
        let cases = [
            ("src/main.rs", Some("rust")),
            ("a/B.PY", Some("python")),
            ("x.tsx", Some("typescriptreact")),
            ("lib.h", Some("cpp")),
            ("run.sh", Some("shellscript")),
            ("docker/Dockerfile", Some("dockerfile")),
            ("Makefile", Some("makefile")),
            ("README", None),
            ("archive.xyz", None),
        ];
        for (path, expected) in cases {
            assert_eq!(language_id(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn keys_ignore_names_and_checks_but_not_settings() {
        let spec = ServerSpec {
            name: "python".into(),
            command: "pyright-langserver".into(),
            args: vec!["--stdio".into()],
            languages: vec!["python".into()],
            initialization_options: None,
            settings: serde_json::json!({}),
            check: None,
        };
        let renamed = ServerSpec {
            name: "py".into(),
            check: Some(vec!["--version".into()]),
            ..spec.clone()
        };
        assert_eq!(spec.key(), renamed.key());
        let strict = ServerSpec {
            settings: serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}}),
            ..spec.clone()
        };
        assert_ne!(spec.key(), strict.key());
    }

    #[test]
    fn headers_fall_back_to_c() {
        assert_eq!(candidate_languages(Path::new("x.h")), vec!["cpp", "c"]);
        assert_eq!(candidate_languages(Path::new("x.hpp")), vec!["cpp"]);
        assert_eq!(candidate_languages(Path::new("x.c")), vec!["c"]);
    }
}
