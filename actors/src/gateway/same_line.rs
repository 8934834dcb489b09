//! A symbol named on a line (`file`, `line`, `symbol`), and the name a
//! server placed at a line and column. A name written more than once on
//! the line (`let child = node.child();`, `self.name = name`) can be
//! different things, and taking the first would answer about the wrong
//! one without a word: each occurrence's server is asked for its
//! definition; when all lead to one place the first stands, otherwise
//! the occurrences are listed with where each is defined, for the caller
//! to choose one by `column`.

use super::context::Context;
use super::goto;
use super::target::{Opened, Resolved};
use super::words::{find_word, own_name};
use crate::error::{Error, Result};

/// The position of `symbol` on 1-based `line` of `file`; where the name
/// is written more than once there, the occurrence chosen.
pub(super) async fn on_line(
    context: &Context,
    file: &str,
    line: u32,
    symbol: &str,
) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let (index, text) = opened.line(line)?;
    // The name a server or `search` qualifies (`withStack.Cause`) is
    // written bare on its line.
    let mut columns = words_on(text, symbol);
    if columns.is_empty() {
        columns = words_on(text, own_name(symbol));
    }
    match columns.as_slice() {
        [] => Err(Error::InvalidArgument(format!(
            "`{symbol}` does not occur on line {line} of {file}"
        ))),
        [column] => Ok(opened.at(index, *column)),
        _ => choose(context, opened, index, &columns, symbol).await,
    }
}

/// The position of `symbol` at 1-based `line` and `column` of `file`,
/// where a server placed it; on the line as [`on_line`] finds it when the
/// column is not on the name (a range that starts at a declaration's
/// keyword).
pub(super) async fn at_name(
    context: &Context,
    file: &str,
    line: u32,
    column: usize,
    symbol: &str,
) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let (index, text) = opened.line(line)?;
    let column = column.saturating_sub(1);
    let named = [symbol, own_name(symbol)]
        .iter()
        .any(|name| find_word(text, name, column) == Some(column));
    if named {
        return Ok(opened.at(index, column));
    }
    on_line(context, file, line, symbol).await
}

/// The code-point columns of every whole-word occurrence of `word` in
/// `text`.
fn words_on(text: &str, word: &str) -> Vec<usize> {
    let mut columns = Vec::new();
    while let Some(column) = find_word(text, word, columns.last().map_or(0, |last| last + 1)) {
        columns.push(column);
    }
    columns
}

/// The occurrence at one of `columns` (0-based code points, at least two)
/// of `symbol` on 0-based line `index`, or the list to choose from.
async fn choose(
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
