//! The things a symbol named alone may mean, before one is chosen.
//!
//! A name the servers report more than once is not always ambiguous: a C
//! function's prototype in a header and its body in a source file, a
//! `.pyi` stub and its module, a TypeScript function's overload signatures
//! are one thing. Each candidate's server is asked for its definition;
//! candidates whose definitions lead to each other, or to the same place,
//! are merged. The declaration (in a header or a stub) stands for them:
//! asked there, a server's definition is the body, its hover the
//! documented prototype, and its references the same as from the body
//! (asked at a body, clangd's definition is the prototype).

use super::context::Context;
use super::goto;
use super::render::{Spot, symbol_kind};
use super::same_line::at_name;
use super::symbols;
use super::target::Resolved;
use lsp_types::SymbolKind;
use tokio::task::JoinSet;

/// How many candidates an ambiguous symbol lists.
const MAX_CANDIDATES: usize = 10;

/// A symbol found by name, before it is chosen among others.
pub struct Candidate {
    pub spot: Spot,
    /// Its LSP symbol kind; `None` for a definition found only by text.
    pub kind: Option<SymbolKind>,
}

/// A place in the project: a displayed path and a 1-based line.
type Place = (String, usize);

/// Merges the candidates that name one thing, each group standing as its
/// declaration. Past [`MAX_CANDIDATES`] nothing is asked: the list is
/// shown as it is.
pub async fn merge(context: &Context, symbol: &str, found: Vec<Candidate>) -> Vec<Candidate> {
    if !(2..=MAX_CANDIDATES).contains(&found.len()) {
        return found;
    }
    let mut asked = JoinSet::new();
    for (index, candidate) in found.iter().enumerate() {
        let context = context.clone();
        let symbol = symbol.to_owned();
        let place = (candidate.spot.path.clone(), candidate.spot.line);
        let column = candidate.spot.column;
        asked.spawn(async move {
            let places = definitions_of(&context, &symbol, &place, column).await;
            (index, places)
        });
    }
    let mut links = vec![Vec::new(); found.len()];
    while let Some(Ok((index, places))) = asked.join_next().await {
        links[index] = places;
    }
    let places: Vec<Place> = found
        .iter()
        .map(|found| (found.spot.path.clone(), found.spot.line))
        .collect();
    let kinds: Vec<Option<SymbolKind>> = found.iter().map(|found| found.kind).collect();
    let mut merged: Vec<Option<Candidate>> = found.into_iter().map(Some).collect();
    groups(&places, &links)
        .into_iter()
        .filter_map(|group| {
            let mut primary = merged[primary(&group, &places, &links)].take()?;
            // A body found only by text that a server's declaration leads
            // to is one the server knows.
            primary.kind = primary
                .kind
                .or_else(|| group.iter().find_map(|&member| kinds[member]));
            Some(primary)
        })
        .collect()
}

/// The text listing the candidates, for a symbol still ambiguous.
pub fn ambiguous(symbol: &str, found: Vec<Candidate>, notes: Vec<String>) -> Resolved {
    let total = found.len();
    let mut lines = vec![match total {
        1 => format!("`{symbol}` has 1 match; ask again with file and line:"),
        _ => format!("`{symbol}` is ambiguous ({total} matches); ask again with file and line:"),
    }];
    for candidate in found.into_iter().take(MAX_CANDIDATES) {
        let spot = candidate.spot;
        let kind = match candidate.kind {
            Some(kind) => format!("{} {symbol}", symbol_kind(kind)),
            None => format!("(text) {}", spot.source.unwrap_or_default()),
        };
        lines.push(format!(
            "{}:{}:{}  {kind}",
            spot.path, spot.line, spot.column
        ));
    }
    if total > MAX_CANDIDATES {
        // `search` pages on with `offset`; this list cannot.
        let query = symbols::qualifier(symbol).map_or(symbol, |(_, member)| member);
        lines.push(format!(
            "… {} more: `search` with query \"{query}\" lists every one, by file",
            total - MAX_CANDIDATES
        ));
    }
    lines.extend(notes);
    Resolved::Ambiguous(lines.join("\n"))
}

/// Classes, functions and the like come before variables that share a name.
pub fn is_definition_kind(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::MODULE
            | SymbolKind::NAMESPACE
            | SymbolKind::PACKAGE
            | SymbolKind::CLASS
            | SymbolKind::METHOD
            | SymbolKind::CONSTRUCTOR
            | SymbolKind::ENUM
            | SymbolKind::INTERFACE
            | SymbolKind::FUNCTION
            | SymbolKind::STRUCT
            | SymbolKind::TYPE_PARAMETER
    )
}

/// Where the server says the symbol at `place` and 1-based `column` is
/// defined; nothing when it cannot say.
async fn definitions_of(
    context: &Context,
    symbol: &str,
    place: &Place,
    column: usize,
) -> Vec<Place> {
    let line = u32::try_from(place.1).unwrap_or(u32::MAX);
    let Ok(Resolved::Target(target)) = at_name(context, &place.0, line, column, symbol).await
    else {
        return Vec::new();
    };
    goto::definition_spots(context, &target)
        .await
        .into_iter()
        .map(|spot| (spot.path, spot.line))
        .collect()
}

/// Candidates joined when one's definitions lead to the other or both
/// lead to one place; each group's members in their first order. A
/// candidate whose definitions include itself is a definition, and links
/// nothing: a server that answers every namesake (as one matching by
/// text does) does not make them one. Except within one file: two
/// declarations each leading to both are one thing declared twice (tsgo
/// answers an overload signature, and the body, with all of them).
fn groups(places: &[Place], links: &[Vec<Place>]) -> Vec<Vec<usize>> {
    let mut group_of: Vec<usize> = (0..places.len()).collect();
    let leads = |a: usize| -> &[Place] {
        match links[a].contains(&places[a]) {
            true => &[],
            false => &links[a],
        }
    };
    let declared_together = |a: usize, b: usize| {
        places[a].0 == places[b].0
            && [a, b]
                .iter()
                .all(|&one| links[one].contains(&places[a]) && links[one].contains(&places[b]))
    };
    let linked = |a: usize, b: usize| {
        declared_together(a, b)
            || leads(a).contains(&places[b])
            || leads(b).contains(&places[a])
            || leads(a).iter().any(|place| leads(b).contains(place))
            || declares_module(&places[a].0, &places[b].0)
            || declares_module(&places[b].0, &places[a].0)
    };
    for a in 0..places.len() {
        for b in a + 1..places.len() {
            if linked(a, b) {
                let (from, to) = (group_of[b], group_of[a]);
                for group in &mut group_of {
                    if *group == from {
                        *group = to;
                    }
                }
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (member, group) in group_of.iter().enumerate() {
        match groups.iter_mut().find(|found| group_of[found[0]] == *group) {
            Some(found) => found.push(member),
            None => groups.push(vec![member]),
        }
    }
    groups
}

/// The member that stands for a group: the first in a header or a stub,
/// where declarations without bodies live; else the first whose
/// definition leads to no other member, which is the thing the others
/// name (a re-export or an import leads to it in another file: Rust's
/// `pub use`, Python's `from … import` in a package's `__init__.py`; an
/// assignment to a property in its own file: zod's `inst.isFinite =
/// true` below the interface that declares `isFinite`); else the first.
fn primary(group: &[usize], places: &[Place], links: &[Vec<Place>]) -> usize {
    if let Some(declaration) = group
        .iter()
        .copied()
        .find(|&member| declares_only(&places[member].0))
    {
        return declaration;
    }
    let names_another = |member: usize| {
        links[member].iter().any(|place| {
            group
                .iter()
                .any(|&other| other != member && places[other] == *place)
        })
    };
    group
        .iter()
        .copied()
        .find(|&member| !names_another(member))
        .unwrap_or(group[0])
}

/// Whether `declaration` is the type declaration published beside the
/// JavaScript module `module` (`state.d.ts` of `state.js`): TypeScript
/// reads the one for the other, so a name in both is one thing, though
/// neither's definition leads to the other.
fn declares_module(declaration: &str, module: &str) -> bool {
    [(".d.ts", ".js"), (".d.mts", ".mjs"), (".d.cts", ".cjs")]
        .iter()
        .any(|(declared, compiled)| {
            declaration
                .strip_suffix(declared)
                .is_some_and(|stem| module.strip_suffix(compiled) == Some(stem))
        })
}

fn declares_only(path: &str) -> bool {
    [
        ".h", ".hh", ".hpp", ".hxx", ".pyi", ".d.ts", ".d.mts", ".d.cts",
    ]
    .iter()
    .any(|suffix| path.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(path: &str, line: usize) -> Place {
        (path.to_owned(), line)
    }

    #[test]
    fn a_declaration_and_its_definition_are_one_candidate_standing_as_the_declaration() {
        let places = [
            place("lib/lz4.h", 310),
            place("lib/lz4.c", 1530),
            place("tests/fuzz.c", 12),
        ];
        // clangd leads a prototype to its body and a body to its prototype.
        let links = [
            vec![place("lib/lz4.c", 1530)],
            vec![place("lib/lz4.h", 310)],
            vec![place("tests/fuzz.c", 12)],
        ];
        let grouped = groups(&places, &links);
        assert_eq!(grouped, vec![vec![0, 1], vec![2]]);
        assert_eq!(primary(&grouped[0], &places, &links), 0);
    }

    #[test]
    fn an_assignment_to_a_property_stands_for_nothing_beside_its_declaration() {
        let places = vec![place("schemas.ts", 1154), place("schemas.ts", 1140)];
        let links = vec![
            vec![place("schemas.ts", 1140)],
            vec![place("schemas.ts", 1140)],
        ];
        let group = groups(&places, &links).remove(0);
        assert_eq!(group, vec![0, 1]);
        assert_eq!(primary(&group, &places, &links), 1);
    }

    #[test]
    fn a_re_export_is_the_thing_it_names() {
        let places = [
            place("src/lib.rs", 182),
            place("src/parser.rs", 230),
            place("src/ast/parse.rs", 249),
        ];
        // rust-analyzer leads `pub use parser::Parser` to the struct, and
        // each struct to itself.
        let links = [
            vec![place("src/parser.rs", 230)],
            vec![place("src/parser.rs", 230)],
            vec![place("src/ast/parse.rs", 249)],
        ];
        let grouped = groups(&places, &links);
        assert_eq!(grouped, vec![vec![0, 1], vec![2]]);
        assert_eq!(primary(&grouped[0], &places, &links), 1);
    }

    #[test]
    fn a_module_and_its_published_declaration_are_one_candidate() {
        let places = [
            place("dist/state.js", 182),
            place("dist/state.d.ts", 3),
            place("dist/other.d.ts", 3),
        ];
        // Each leads only to itself: TypeScript reads the declaration.
        let links = [
            vec![place("dist/state.js", 182)],
            vec![place("dist/state.d.ts", 3)],
            vec![place("dist/other.d.ts", 3)],
        ];
        let grouped = groups(&places, &links);
        assert_eq!(grouped, vec![vec![0, 1], vec![2]]);
        assert_eq!(primary(&grouped[0], &places, &links), 1);
    }

    #[test]
    fn overloads_leading_to_one_implementation_are_one_candidate() {
        let places = [
            place("src/parse.ts", 3),
            place("src/parse.ts", 4),
            place("src/parse.ts", 5),
        ];
        let implementation = vec![place("src/parse.ts", 5)];
        let links = [
            implementation.clone(),
            implementation.clone(),
            implementation,
        ];
        assert_eq!(groups(&places, &links), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn overloads_each_leading_to_all_of_them_are_one_candidate() {
        let places = [
            place("src/common.ts", 266),
            place("src/common.ts", 267),
            place("src/other.ts", 9),
        ];
        // tsgo leads an overload signature and the body to both.
        let both = vec![place("src/common.ts", 266), place("src/common.ts", 267)];
        let links = [both.clone(), both, vec![place("src/other.ts", 9)]];
        let grouped = groups(&places, &links);
        assert_eq!(grouped, vec![vec![0, 1], vec![2]]);
        assert_eq!(primary(&grouped[0], &places, &links), 0);
    }

    #[test]
    fn unrelated_namesakes_stay_apart_and_unanswered_ones_too() {
        let places = [place("a.py", 1), place("b.py", 1), place("c.py", 1)];
        let links = [vec![place("a.py", 1)], vec![place("b.py", 1)], Vec::new()];
        assert_eq!(groups(&places, &links), vec![vec![0], vec![1], vec![2]]);
        let every = vec![place("a.py", 1), place("b.py", 1)];
        assert_eq!(
            groups(&places[..2], &[every.clone(), every]),
            vec![vec![0], vec![1]],
            "definitions that answer every namesake join none"
        );
        let stubbed = [place("x.py", 4), place("x.pyi", 1)];
        let links = [vec![place("x.pyi", 1)], vec![place("x.py", 4)]];
        assert_eq!(primary(&[0, 1], &stubbed, &links), 1);
    }
}
