//! The files a server's own project configuration leaves out. pyright
//! and basedpyright read only the paths their `include` names (in
//! `pyrightconfig.json`, or under `[tool.pyright]` / `[tool.basedpyright]`
//! of `pyproject.toml`) and the documents open, so their references lack
//! every other file of the root and say nothing: requests includes only
//! `src/requests`, and the uses of its functions in `tests/` were not
//! among their references.

use std::path::{Path, PathBuf};

/// The paths a root's configuration includes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Included {
    /// Absolute.
    pub paths: Vec<PathBuf>,
}

impl Included {
    /// Whether the server reads `path`.
    pub fn holds(&self, path: &Path) -> bool {
        self.paths.iter().any(|included| path.starts_with(included))
    }
}

/// What the pyright configuration at `root` includes, when it names
/// paths; `None` when it includes the whole root (no configuration, or
/// none that names `include`). `tools` are the `[tool.…]` tables the
/// server reads, in its order (basedpyright reads its own, then
/// pyright's).
pub fn pyright_included(root: &Path, tools: &[&str]) -> Option<Included> {
    let paths =
        from_json(root).or_else(|| tools.iter().find_map(|tool| from_pyproject(root, tool)))?;
    // Patterns with wildcards are not followed: the cross-check says
    // nothing it cannot back.
    let whole_root = |path: &String| path.is_empty() || path == ".";
    if paths.is_empty()
        || paths
            .iter()
            .any(|path| whole_root(path) || path.contains(['*', '?']))
    {
        return None;
    }
    Some(Included {
        paths: paths.iter().map(|path| root.join(path)).collect(),
    })
}

fn from_json(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("pyrightconfig.json")).ok()?;
    let config: serde_json::Value = serde_json::from_str(&text).ok()?;
    strings(
        config
            .get("include")?
            .as_array()?
            .iter()
            .map(|path| path.as_str()),
    )
}

fn from_pyproject(root: &Path, tool: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("pyproject.toml")).ok()?;
    let config: toml::Table = text.parse().ok()?;
    let include = config.get("tool")?.get(tool)?.get("include")?.as_array()?;
    strings(include.iter().map(|path| path.as_str()))
}

/// Every item as a path, or `None` if one is not text.
fn strings<'a>(items: impl Iterator<Item = Option<&'a str>>) -> Option<Vec<String>> {
    items
        .map(|item| item.map(|path| path.trim_start_matches("./").to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_included_paths_are_read_from_either_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(pyright_included(root, &["pyright"]), None);
        std::fs::write(
            root.join("pyproject.toml"),
            "[project]\nname = \"x\"\n\n[tool.pyright]\ninclude = [\"src/requests\"]\n",
        )
        .unwrap();
        let included = pyright_included(root, &["pyright"]).unwrap();
        assert_eq!(included.paths, vec![root.join("src/requests")]);
        assert!(included.holds(&root.join("src/requests/utils.py")));
        assert!(!included.holds(&root.join("tests/test_utils.py")));
        assert_eq!(pyright_included(root, &["basedpyright"]), None);
        assert!(pyright_included(root, &["basedpyright", "pyright"]).is_some());
        std::fs::write(root.join("pyrightconfig.json"), r#"{"include": ["./"]}"#).unwrap();
        assert_eq!(pyright_included(root, &["pyright"]), None, "the whole root");
        std::fs::write(
            root.join("pyrightconfig.json"),
            r#"{"include": ["lib", "tests"]}"#,
        )
        .unwrap();
        assert_eq!(pyright_included(root, &["pyright"]).unwrap().paths.len(), 2);
    }
}
