//! Identifiers in a line of text: where a name occurs as a whole word,
//! and which word covers a column. Columns count code points, as agents
//! give them.

/// Characters a server writes before a name that an agent leaves out:
/// CSS's `.class` and `#id`, SCSS's `$variable` and `@mixin`.
pub const SIGILS: &[char] = &['.', '#', '$', '@'];

/// A symbol's own name, as written at its declaration: without the sigil
/// or the type a server puts before it (`.fadeOut`, `FlagSet.GetString`,
/// `Router::addGroup`).
pub fn own_name(name: &str) -> &str {
    let member = name.rsplit(['.', ':', '#']).next().unwrap_or(name);
    match member.is_empty() {
        true => name,
        false => member.trim_start_matches(SIGILS),
    }
}

fn is_identifier_char(character: char) -> bool {
    character.is_alphanumeric() || character == '_' || character == '$'
}

/// The code-point column of `word` as a whole identifier on `line`, at or
/// after column `from`; failing that, of `word` after a `$` sigil, as a
/// shell, PHP or SCSS variable is written where it is used (`$SCRIPT_DIR`
/// for `SCRIPT_DIR`). In JavaScript `$` is part of a name, so a whole
/// identifier comes first.
pub fn find_word(line: &str, word: &str, from: usize) -> Option<usize> {
    let characters: Vec<char> = line.chars().collect();
    let wanted: Vec<char> = word.chars().collect();
    if wanted.is_empty() {
        return None;
    }
    let last = characters.len().checked_sub(wanted.len())?;
    let found = |after_sigil: bool| {
        (from..=last).find(|&start| {
            let end = start + wanted.len();
            let before = start.checked_sub(1).map(|index| characters[index]);
            characters[start..end] == wanted[..]
                && (before.is_none_or(|before| !is_identifier_char(before))
                    || !is_identifier_char(wanted[0])
                    || (after_sigil && before == Some('$')))
                && characters
                    .get(end)
                    .is_none_or(|next| !is_identifier_char(*next))
        })
    };
    found(false).or_else(|| found(true))
}

/// Languages whose names hold a `-`: CSS's `--main-color` and
/// `.btn-lg`, SCSS's `$radius-base`, YAML's keys (a workflow's
/// `runs-on`, its job `publish-docker`).
const HYPHENATED: &[&str] = &["css", "scss", "less", "yaml"];

/// Whether names in `language` may hold a `-`.
pub fn hyphenated(language: &str) -> bool {
    HYPHENATED.contains(&language)
}

/// The identifier of a file in `language` that covers code-point column
/// `column`.
pub fn word_at(line: &str, column: usize, language: &str) -> Option<String> {
    let hyphenated = hyphenated(language);
    let part = |character: char| is_identifier_char(character) || (hyphenated && character == '-');
    let characters: Vec<char> = line.chars().collect();
    if !characters.get(column).copied().is_some_and(part) {
        return None;
    }
    let start = (0..column)
        .rev()
        .take_while(|&i| part(characters[i]))
        .last()
        .unwrap_or(column);
    let end = (column..characters.len())
        .take_while(|&i| part(characters[i]))
        .last()
        .unwrap_or(column);
    Some(characters[start..=end].iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_words_only() {
        assert_eq!(find_word("let foobar = foo(1);", "foo", 0), Some(13));
        assert_eq!(find_word("é = café + café2", "café", 0), Some(4));
        assert_eq!(find_word("x.café", "café", 0), Some(2));
        assert_eq!(find_word("afoo", "foo", 0), None);
        assert_eq!(find_word("foo foo", "foo", 1), Some(4));
        assert_eq!(find_word("", "foo", 0), None);
        assert_eq!(find_word("cd \"$SCRIPT_DIR/..\"", "SCRIPT_DIR", 0), Some(5));
        assert_eq!(find_word("const $foo = foo;", "foo", 0), Some(13));
    }

    #[test]
    fn a_names_own_part_is_without_its_type_and_sigil() {
        assert_eq!(own_name(".fadeOut"), "fadeOut");
        assert_eq!(own_name("FlagSet.GetString"), "GetString");
        assert_eq!(own_name("Router::addGroup"), "addGroup");
        assert_eq!(own_name("$radius"), "radius");
        assert_eq!(own_name("a."), "a.");
    }

    #[test]
    fn finds_the_word_under_a_column() {
        assert_eq!(
            word_at("    return café_x + 1", 12, "python"),
            Some("café_x".into())
        );
        assert_eq!(word_at("a + b", 1, "python"), None);
        assert_eq!(word_at("ab", 5, "python"), None);
        let scss = "  border-radius: $radius-base;";
        assert_eq!(word_at(scss, 20, "scss"), Some("$radius-base".into()));
        assert_eq!(word_at(scss, 20, "javascript"), Some("$radius".into()));
        let job = "  publish-docker:";
        assert_eq!(word_at(job, 3, "yaml"), Some("publish-docker".into()));
    }
}
