//! A name written more than once on the line a caller named
//! (`let child = node.child();`, `self.name = name`): the occurrences
//! can be different things, and taking the first would answer about the
//! wrong one without a word. Each occurrence's server is asked for its
//! definition; when all lead to one place the first stands, otherwise
//! the occurrences are listed with where each is defined, for the caller
//! to choose one by `column`.

use super::context::Context;
use super::goto;
use super::target::{Opened, Resolved};
use crate::error::Result;

/// The occurrence at one of `columns` (0-based code points, at least two)
/// of `symbol` on 0-based line `index`, or the list to choose from.
pub(super) async fn choose(
    context: &Context,
    opened: Opened,
    index: usize,
    columns: &[usize],
    symbol: &str,
) -> Result<Resolved> {
    let mut definitions = Vec::with_capacity(columns.len());
    for &column in columns {
        definitions.push(defined_at(context, &opened, index, column).await);
    }
    if definitions.windows(2).all(|pair| pair[0] == pair[1]) {
        return Ok(opened.at(index, columns[0]));
    }
    let path = opened.roots.display(&opened.document.path);
    let mut lines = vec![format!(
        "`{symbol}` occurs {} times on line {} of {path}, naming different things; \
         ask again with `column`:",
        columns.len(),
        index + 1
    )];
    for (column, places) in columns.iter().zip(definitions) {
        let defined = match places.as_slice() {
            [] => "no definition found".to_owned(),
            places => format!("defined at {}", places.join(", ")),
        };
        lines.push(format!("column {}: {defined}", column + 1));
    }
    Ok(Resolved::Ambiguous(lines.join("\n")))
}

/// The places (`path:line:column`, each with its source line) the server
/// gives as the definition of the name at `column`; none when it cannot
/// say.
async fn defined_at(
    context: &Context,
    opened: &Opened,
    index: usize,
    column: usize,
) -> Vec<String> {
    let target = opened.target(index, column);
    let mut places: Vec<String> = goto::definition_spots(context, &target)
        .await
        .into_iter()
        .map(|spot| {
            let source = spot.source.unwrap_or_default();
            format!("{}:{}:{}  {source}", spot.path, spot.line, spot.column)
        })
        .collect();
    places.sort();
    places.dedup();
    places
}
