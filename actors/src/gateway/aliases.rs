//! Names given to a name under another: `export { _uppercase as
//! uppercase }` (TypeScript), `from .api import parse as load` (Python),
//! `pub use inner::Error as ParseError` (Rust). What an edit changes
//! reaches the alias's users too, who never write the first name: zod's
//! `_uppercase` given a new return type broke a test that calls only
//! `z.uppercase()`.

use super::words::find_word;
use std::path::Path;

/// The aliases `name` is given on the 1-based `lines` of the file at
/// `path`, each once.
pub fn given_in(path: &Path, lines: &[u64], name: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let all: Vec<&str> = text.lines().collect();
    let mut aliases: Vec<String> = lines
        .iter()
        .filter_map(|&line| all.get(usize::try_from(line).ok()?.checked_sub(1)?))
        .filter_map(|line| alias_on(line, name))
        .collect();
    aliases.sort();
    aliases.dedup();
    aliases
}

/// The alias `line` gives `name`, when the line imports or exports it
/// (`import`, `export`, `from`, `use`), or is one member of such a list
/// written a line each (`  _uppercase as uppercase,`). A cast
/// (`value as string`) is neither.
fn alias_on(line: &str, name: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let listed = [
        "import ",
        "export ",
        "from ",
        "use ",
        "pub use ",
        "pub(crate) use ",
    ]
    .iter()
    .any(|keyword| trimmed.starts_with(keyword));
    let mut from = 0;
    while let Some(column) = find_word(line, name, from) {
        from = column + 1;
        let after: String = line.chars().skip(column + name.chars().count()).collect();
        let Some(alias) = after
            .trim_start()
            .strip_prefix("as")
            .filter(|rest| rest.starts_with(char::is_whitespace))
        else {
            continue;
        };
        let alias: String = alias
            .trim_start()
            .chars()
            .take_while(|character| character.is_alphanumeric() || "_$".contains(*character))
            .collect();
        let rest = after.trim_start()[2..].trim_start()[alias.len()..].trim();
        let member = trimmed.starts_with(name) || trimmed.starts_with("type ");
        let alone = member && matches!(rest, "" | "," | "}" | "};" | ")" | "),");
        if !alias.is_empty() && alias != name && (listed || alone) {
            return Some(alias);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::alias_on;

    #[test]
    fn an_import_or_export_gives_an_alias() {
        let given = |line: &str| alias_on(line, "_uppercase");
        assert_eq!(
            given("export { _uppercase as uppercase } from \"../core/index.js\";").as_deref(),
            Some("uppercase")
        );
        assert_eq!(
            given("  _uppercase as uppercase,").as_deref(),
            Some("uppercase")
        );
        assert_eq!(
            given("from .api import _uppercase as upper, lower").as_deref(),
            Some("upper")
        );
        assert_eq!(
            given("pub use checks::{_uppercase as Upper, Lower};").as_deref(),
            Some("Upper")
        );
        assert_eq!(
            given("  type _uppercase as Upper,").as_deref(),
            Some("Upper")
        );
    }

    #[test]
    fn a_cast_or_a_word_alone_gives_none() {
        assert_eq!(alias_on("const x = value as string;", "value"), None);
        assert_eq!(
            alias_on("  return _uppercase as unknown as T;", "_uppercase"),
            None
        );
        assert_eq!(
            alias_on("import { _uppercase } from \"./api\";", "_uppercase"),
            None
        );
        assert_eq!(
            alias_on("export { _uppercase as _uppercase };", "_uppercase"),
            None
        );
    }
}
