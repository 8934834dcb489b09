//! A function's body where the server answers only with its declaration.
//! clangd goes from a definition to its declaration, and from a
//! declaration to itself until its background index holds the file with
//! the body: asked for `area` by name, even with the `.c` file that
//! defines it named, `definition` and `source` gave the one-line
//! prototype in the header. An agent asking for a function wants its
//! body, so in C and C++, where every place the server gave is a
//! declaration that ends in `;`, the definitions found by text (a
//! parameter list followed by a body) are given instead, and the answer
//! says so.

use super::context::Context;
use super::definitions::{self, Counted, TextDefinition, is_declaration};
use super::target::Target;
use crate::lsp::position::line_at;
use crate::lsp::uri::{path_to_uri, uri_to_path};
use lsp_types::Location;

/// The definitions with a body of the target's name, found by text, when
/// every line the server gave (`answered`, trimmed source lines) is a
/// declaration without one; empty otherwise.
pub async fn instead_of(
    context: &Context,
    target: &Target,
    answered: &[&str],
) -> Vec<TextDefinition> {
    // Elsewhere a line ending in `;` declares what an interface or a trait
    // leaves to others (`area(): number;`), whose bodies a text search
    // cannot tell apart.
    let declarations_only = family(&target.document.language_id) == "c"
        && !answered.is_empty()
        && answered.iter().all(|line| is_declaration(line));
    let Some(word) = target.word().filter(|_| declarations_only) else {
        return Vec::new();
    };
    let language = target.document.language_id.clone();
    let (sketches, roots) = (context.shared.sketches.clone(), target.roots.clone());
    let found = tokio::task::spawn_blocking(move || {
        definitions::find(&sketches, &roots, &word, Counted::Definitions)
    });
    let Ok(found) = found.await else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter(|definition| same_family(definition.language, &language))
        .filter(|definition| !is_declaration(&definition.text))
        .collect()
}

/// The line each location starts on, as the file on disk has it.
pub fn lines_at(locations: &[Location]) -> Vec<String> {
    locations
        .iter()
        .filter_map(|location| {
            let path = uri_to_path(location.uri.as_str())?;
            let text = std::fs::read_to_string(path).ok()?;
            line_at(&text, location.range.start.line as usize).map(str::to_owned)
        })
        .collect()
}

/// Where a definition found by text starts, as a server would say it
/// (the column in code points).
pub fn location(definition: &TextDefinition) -> Option<Location> {
    let at = lsp_types::Position::new(
        u32::try_from(definition.line.checked_sub(1)?).ok()?,
        u32::try_from(definition.column.saturating_sub(1)).ok()?,
    );
    Some(Location {
        uri: path_to_uri(&definition.path).parse().ok()?,
        range: lsp_types::Range::new(at, at),
    })
}

/// The note that says where the answer came from.
pub fn note(target: &Target) -> String {
    format!(
        "note: [{}] gave only the declaration; the definition below was found by text",
        target.server.label()
    )
}

/// Whether a file in `found` can hold the body of what a file in `asked`
/// declares: a C header's function is defined in C or C++.
fn same_family(found: &str, asked: &str) -> bool {
    family(found) == family(asked)
}

fn family(language: &str) -> &str {
    match language {
        "c" | "cpp" | "objective-c" | "objective-cpp" => "c",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_and_its_sources_are_one_family() {
        assert!(same_family("c", "cpp"));
        assert!(same_family("cpp", "c"));
        assert!(!same_family("python", "c"));
        assert!(same_family("go", "go"));
    }
}
