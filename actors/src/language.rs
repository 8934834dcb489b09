//! The language table: one entry per language, with everything Windlass
//! knows of it: the LSP language id, the file extensions, file names and
//! `#!` interpreters that mark its files, the servers that speak it out of
//! the box in order of preference, and what a server needs to see a whole
//! project of it.
//!
//! Routing (a tool call on a file), start-up detection (which servers the
//! roots need), the built-in servers of the configuration and the index
//! gaps servers are warned of all read this one table, so they cannot
//! disagree, and a language is added with one entry.

use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// A server Windlass knows how to run without configuration.
#[derive(Debug, PartialEq, Eq)]
pub struct BuiltIn {
    /// The configuration key it goes by, also its label in errors.
    pub name: &'static str,
    pub command: &'static str,
    pub args: &'static [&'static str],
    /// Arguments with which the binary must run and exit 0 before it is
    /// used: a binary on PATH may be only a shim (a rustup proxy without
    /// its component). `None` where the server has no such option.
    pub check: Option<&'static [&'static str]>,
    /// How a user installs it, for `doctor` and docs/languages.md.
    pub install: &'static str,
}

/// Files a server needs to see a whole project; without one, what it says
/// about the project is partial.
#[derive(Debug, PartialEq, Eq)]
pub struct ProjectFiles {
    pub names: &'static [&'static str],
    /// How deep under a root to look for one.
    pub depth: usize,
    /// What is missing without one, after the server's label.
    pub gap: &'static str,
}

/// One language.
#[derive(Debug)]
pub struct Language {
    /// Its LSP language id.
    pub id: &'static str,
    /// Lower case, without the dot.
    pub extensions: &'static [&'static str],
    /// Names that decide the language by themselves.
    pub file_names: &'static [&'static str],
    /// Programs a `#!` line names (`python3` in `#!/usr/bin/env python3`).
    pub interpreters: &'static [&'static str],
    /// Built-in servers, the preferred first.
    pub servers: &'static [&'static BuiltIn],
    pub project: Option<&'static ProjectFiles>,
}

impl Language {
    const fn new(id: &'static str) -> Self {
        Self {
            id,
            extensions: &[],
            file_names: &[],
            interpreters: &[],
            servers: &[],
            project: None,
        }
    }
}

const RUST_ANALYZER: BuiltIn = BuiltIn {
    name: "rust",
    command: "rust-analyzer",
    args: &[],
    check: Some(&["--version"]),
    install: "rustup component add rust-analyzer",
};
const PYRIGHT: BuiltIn = BuiltIn {
    name: "python",
    command: "pyright-langserver",
    args: &["--stdio"],
    check: None,
    install: "npm install -g pyright",
};
const PYLSP: BuiltIn = BuiltIn {
    name: "pylsp",
    command: "pylsp",
    args: &[],
    check: Some(&["--version"]),
    install: "pip install python-lsp-server",
};
const TYPESCRIPT_LANGUAGE_SERVER: BuiltIn = BuiltIn {
    name: "typescript",
    command: "typescript-language-server",
    args: &["--stdio"],
    check: Some(&["--version"]),
    install: "npm install -g typescript typescript-language-server",
};
const GOPLS: BuiltIn = BuiltIn {
    name: "go",
    command: "gopls",
    args: &[],
    check: Some(&["version"]),
    install: "go install golang.org/x/tools/gopls@latest",
};
const CLANGD: BuiltIn = BuiltIn {
    name: "c,cpp",
    command: "clangd",
    args: &[],
    check: Some(&["--version"]),
    install: "apt install clangd",
};
const BASH_LANGUAGE_SERVER: BuiltIn = BuiltIn {
    name: "shell",
    command: "bash-language-server",
    args: &["start"],
    check: Some(&["--version"]),
    install: "npm install -g bash-language-server",
};

const COMPILATION_DATABASE: ProjectFiles = ProjectFiles {
    names: &["compile_commands.json"],
    depth: 3,
    gap: "has no compile_commands.json, so it knows only the files it has opened; \
          references, renames and callers may be incomplete",
};
const TSCONFIG: ProjectFiles = ProjectFiles {
    names: &["tsconfig.json", "jsconfig.json"],
    depth: 4,
    gap: "has no tsconfig.json or jsconfig.json, so it sees only the files that open files \
          import; references, renames and symbols may be incomplete",
};

/// Every language Windlass knows, in the order their built-in servers are
/// preferred when several could start.
pub const LANGUAGES: &[Language] = &[
    Language {
        extensions: &["rs"],
        servers: &[&RUST_ANALYZER],
        ..Language::new("rust")
    },
    Language {
        extensions: &["py", "pyi"],
        interpreters: &["python", "python3"],
        servers: &[&PYRIGHT, &PYLSP],
        ..Language::new("python")
    },
    Language {
        extensions: &["ts", "mts", "cts"],
        interpreters: &["ts-node", "tsx", "deno"],
        servers: &[&TYPESCRIPT_LANGUAGE_SERVER],
        project: Some(&TSCONFIG),
        ..Language::new("typescript")
    },
    Language {
        extensions: &["tsx"],
        servers: &[&TYPESCRIPT_LANGUAGE_SERVER],
        project: Some(&TSCONFIG),
        ..Language::new("typescriptreact")
    },
    Language {
        extensions: &["js", "mjs", "cjs"],
        interpreters: &["node"],
        servers: &[&TYPESCRIPT_LANGUAGE_SERVER],
        project: Some(&TSCONFIG),
        ..Language::new("javascript")
    },
    Language {
        extensions: &["jsx"],
        servers: &[&TYPESCRIPT_LANGUAGE_SERVER],
        project: Some(&TSCONFIG),
        ..Language::new("javascriptreact")
    },
    Language {
        extensions: &["go"],
        servers: &[&GOPLS],
        ..Language::new("go")
    },
    Language {
        extensions: &["c"],
        servers: &[&CLANGD],
        project: Some(&COMPILATION_DATABASE),
        ..Language::new("c")
    },
    Language {
        // `.h` is C++ here and falls back to C (`candidate_languages`).
        extensions: &["h", "cpp", "cc", "cxx", "hpp", "hh", "hxx"],
        servers: &[&CLANGD],
        project: Some(&COMPILATION_DATABASE),
        ..Language::new("cpp")
    },
    Language {
        extensions: &["sh", "bash"],
        interpreters: &["sh", "bash", "dash", "zsh", "ksh"],
        servers: &[&BASH_LANGUAGE_SERVER],
        ..Language::new("shellscript")
    },
    Language {
        extensions: &["java"],
        ..Language::new("java")
    },
    Language {
        extensions: &["rb"],
        interpreters: &["ruby"],
        ..Language::new("ruby")
    },
    Language {
        extensions: &["lua"],
        interpreters: &["lua"],
        ..Language::new("lua")
    },
    Language {
        extensions: &["zig"],
        ..Language::new("zig")
    },
    Language {
        extensions: &["json"],
        ..Language::new("json")
    },
    Language {
        extensions: &["toml"],
        ..Language::new("toml")
    },
    Language {
        extensions: &["yaml", "yml"],
        ..Language::new("yaml")
    },
    Language {
        extensions: &["md"],
        ..Language::new("markdown")
    },
    Language {
        file_names: &["Dockerfile"],
        ..Language::new("dockerfile")
    },
    Language {
        extensions: &["mk"],
        file_names: &["Makefile", "GNUmakefile", "makefile"],
        interpreters: &["make"],
        ..Language::new("makefile")
    },
    Language {
        file_names: &["CMakeLists.txt"],
        ..Language::new("cmake")
    },
    Language {
        extensions: &["txt"],
        ..Language::new("plaintext")
    },
];

/// A header whose own language has no server may be served by these: a C
/// header is as much C as C++.
const HEADER_FALLBACKS: &[(&str, &str, &str)] = &[("h", "cpp", "c")];

/// Longest `#!` line read to find a file's interpreter.
const MAX_SHEBANG: usize = 128;

/// The language of a file: its name, else its extension, else, for a file
/// without an extension, the program its `#!` line names.
pub fn language_of(path: &Path) -> Option<&'static Language> {
    let name = path.file_name()?.to_str()?;
    if let Some(language) = LANGUAGES.iter().find(|l| l.file_names.contains(&name)) {
        return Some(language);
    }
    match path.extension() {
        Some(extension) => {
            let extension = extension.to_str()?.to_ascii_lowercase();
            LANGUAGES
                .iter()
                .find(|language| language.extensions.contains(&extension.as_str()))
        }
        None => {
            let interpreter = interpreter(path)?;
            LANGUAGES
                .iter()
                .find(|language| language.interpreters.contains(&interpreter.as_str()))
        }
    }
}

/// The LSP language id of a file.
pub fn language_id(path: &Path) -> Option<&'static str> {
    language_of(path).map(|language| language.id)
}

/// The program a file's `#!` line runs, through `env` if it goes through
/// it, without a version suffix's dots (`python3.12` is `python3`).
fn interpreter(path: &Path) -> Option<String> {
    let mut start = [0u8; MAX_SHEBANG];
    let mut file = std::fs::File::open(path).ok()?;
    let read = file.read(&mut start).ok()?;
    let line = start[..read].strip_prefix(b"#!")?;
    let line = line.split(|byte| *byte == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|word| !word.starts_with('-'))?;
    }
    let program = program.split_once('.').map_or(program, |(name, _)| name);
    Some(program.to_owned())
}

/// Languages to try for a file, its own first. Only a header falls back.
pub fn candidate_languages(path: &Path) -> Vec<&'static str> {
    let Some(own) = language_id(path) else {
        return Vec::new();
    };
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    std::iter::once(own)
        .chain(
            HEADER_FALLBACKS
                .iter()
                .filter(|(header, from, _)| *header == extension && *from == own)
                .map(|(_, _, to)| *to),
        )
        .collect()
}

/// Each built-in server once, in the table's order, with every language
/// that lists it.
pub fn built_in_servers() -> Vec<(&'static BuiltIn, Vec<&'static str>)> {
    let mut servers: Vec<(&'static BuiltIn, Vec<&'static str>)> = Vec::new();
    for language in LANGUAGES {
        for server in language.servers {
            match servers.iter_mut().find(|(known, _)| known == server) {
                Some((_, languages)) => languages.push(language.id),
                None => servers.push((server, vec![language.id])),
            }
        }
    }
    servers
}

/// What a server of `language` needs to see a whole project, if anything.
pub fn project_files(language: &str) -> Option<&'static ProjectFiles> {
    LANGUAGES
        .iter()
        .find(|known| known.id == language)
        .and_then(|known| known.project)
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
    fn each_name_extension_and_interpreter_marks_one_language() {
        let mut ids = Vec::new();
        let mut marks = Vec::new();
        for language in LANGUAGES {
            assert!(!ids.contains(&language.id), "{} twice", language.id);
            ids.push(language.id);
            let own = language
                .extensions
                .iter()
                .map(|extension| format!(".{extension}"))
                .chain(
                    language
                        .file_names
                        .iter()
                        .map(|name| format!("name {name}")),
                )
                .chain(
                    language
                        .interpreters
                        .iter()
                        .map(|program| format!("#!{program}")),
                );
            for mark in own {
                assert!(!marks.contains(&mark), "{mark} marks two languages");
                marks.push(mark);
            }
            for extension in language.extensions {
                assert_eq!(extension.to_ascii_lowercase(), *extension);
                let path = format!("a/file.{extension}");
                assert_eq!(language_id(Path::new(&path)), Some(language.id));
            }
            for name in language.file_names {
                assert_eq!(language_id(&Path::new("a").join(name)), Some(language.id));
            }
        }
    }

    #[test]
    fn built_in_servers_gather_their_languages_in_preference_order() {
        let servers: Vec<(&str, Vec<&str>)> = built_in_servers()
            .into_iter()
            .map(|(server, languages)| (server.name, languages))
            .collect();
        let typescript = vec![
            "typescript",
            "typescriptreact",
            "javascript",
            "javascriptreact",
        ];
        assert_eq!(
            servers,
            vec![
                ("rust", vec!["rust"]),
                ("python", vec!["python"]),
                ("pylsp", vec!["python"]),
                ("typescript", typescript),
                ("go", vec!["go"]),
                ("c,cpp", vec!["c", "cpp"]),
                ("shell", vec!["shellscript"]),
            ]
        );
        let commands: Vec<&str> = built_in_servers()
            .iter()
            .map(|(server, _)| server.command)
            .collect();
        let mut unique = commands.clone();
        unique.dedup();
        assert_eq!(commands, unique, "a command is one built-in server");
        assert!(project_files("cpp").is_some() && project_files("rust").is_none());
    }

    #[test]
    fn a_file_without_an_extension_is_known_by_its_interpreter() {
        let directory = tempfile::tempdir().unwrap();
        let cases = [
            ("deploy", "#!/bin/bash\nset -e\n", Some("shellscript")),
            ("tool", "#!/usr/bin/env -S python3.12 -u\n", Some("python")),
            ("serve", "#! /usr/bin/env node\n", Some("javascript")),
            ("notes", "plain text\n", None),
            ("empty", "", None),
        ];
        for (name, text, expected) in cases {
            let path = directory.path().join(name);
            std::fs::write(&path, text).unwrap();
            assert_eq!(language_id(&path), expected, "{name}");
        }
        let script = directory.path().join("run.txt");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(language_id(&script), Some("plaintext"), "an extension wins");
    }

    #[test]
    fn headers_fall_back_to_c() {
        assert_eq!(candidate_languages(Path::new("x.h")), vec!["cpp", "c"]);
        assert_eq!(candidate_languages(Path::new("x.hpp")), vec!["cpp"]);
        assert_eq!(candidate_languages(Path::new("x.c")), vec!["c"]);
    }
}
