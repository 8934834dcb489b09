//! The `source` tool: the whole text of a symbol, from the servers' own
//! ranges. Where the symbol is defined (and declared, when that is
//! elsewhere) comes from the server; each place widens to the symbol that
//! encloses it in its file's document symbols, and up over the doc
//! comment, attributes and decorators right above it. `depth` shows
//! members that many levels down by their first line only.

use super::address::Position;
use super::bodies;
use super::context::Context;
use super::goto::{DECLARATION, DEFINITION};
use super::navigation::{self, target_or_candidates};
use super::render::{self, Sources};
use super::symbols::{self, Symbol};
use super::target::Target;
use crate::error::Result;
use crate::lsp::position::last_line;
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::Reply;
use crate::vocabulary::counted::counted;
use crate::vocabulary::documents::DocumentSnapshot;
use lsp_types::{Location, SymbolKind};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceArgs {
    #[serde(flatten)]
    pub position: Position,
    /// Members at this depth by signature.
    pub depth: Option<u32>,
    pub offset: Option<u32>,
}

/// The symbol of its document's outline whose name the target is.
async fn declaration_named(context: &Context, target: &Target) -> Option<Symbol> {
    let mut reply = context
        .document_symbols(&target.server, target.document.clone())
        .await
        .ok()?;
    let outline = symbols::document_symbols(&mut reply, &target.document.text).ok()?;
    let at = (target.position.line, target.position.column);
    // A flat outline's one range is the whole declaration: the word at
    // the position must be the symbol's name too.
    let word = target.word();
    symbols::flatten(&outline)
        .into_iter()
        .rev()
        .find(|symbol| {
            symbols::holds(
                &symbol.selection_range,
                &target.document.text,
                reply.encoding,
                at,
            ) && word
                .as_deref()
                .is_none_or(|word| symbols::names(&symbol.name, word))
        })
        .cloned()
}

/// The kinds of symbol whose declaration is a signature.
const SIGNED: [SymbolKind; 7] = [
    SymbolKind::FUNCTION,
    SymbolKind::METHOD,
    SymbolKind::CONSTRUCTOR,
    SymbolKind::CLASS,
    SymbolKind::INTERFACE,
    SymbolKind::STRUCT,
    SymbolKind::ENUM,
];

/// The doc comment and signature of the declaration the target names,
/// numbered, from the text: what a hover would have said, for a server
/// that gives none on a declaration's own name (bash-language-server).
/// Only for what has a signature: a key of a YAML or JSON file shown
/// from the text would be the line the agent asked about.
pub async fn declared_here(context: &Context, target: &Target) -> Option<Vec<String>> {
    let symbol = declaration_named(context, target)
        .await
        .filter(|symbol| SIGNED.contains(&symbol.kind))?;
    let text = &target.document.text;
    let start = symbol.range.start.line;
    let span = Span {
        path: target.roots.display(&target.document.path),
        lines: Lines {
            first: leading_lines(text, start),
            last: signature_end(text, start, last_line(&symbol.range)),
        },
        title: Some(format!(
            "{} {}",
            render::symbol_kind(symbol.kind),
            symbol.name
        )),
        elided: Vec::new(),
        text: text.clone(),
    };
    Some(span.lines())
}

/// The target's own position as a location, in code points.
fn own_place(target: &Target) -> Option<Location> {
    let at = lsp_types::Position::new(
        u32::try_from(target.position.line).ok()?,
        u32::try_from(target.position.column).ok()?,
    );
    Some(Location {
        uri: target.document.uri.parse().ok()?,
        range: lsp_types::Range::new(at, at),
    })
}

/// Lines of one span: 0-based, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lines {
    first: u32,
    last: u32,
}

/// One place the symbol's text is, ready to show.
struct Span {
    path: String,
    lines: Lines,
    /// `kind name` of the enclosing symbol, when one was found.
    title: Option<String>,
    /// Lines shown as `… N lines` instead of themselves.
    elided: Vec<Lines>,
    text: std::sync::Arc<str>,
}

pub async fn source(context: &Context, args: &SourceArgs) -> Result<String> {
    let target = match target_or_candidates(context, &args.position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let mut head = Vec::new();
    let mut places: Vec<(Location, PositionEncoding)> = Vec::new();
    // The definition first: it is the primary span. A declaration the
    // server cannot give adds nothing and costs nothing.
    for goto in [DEFINITION, DECLARATION] {
        let request = goto.request(&target)?;
        let mut reply = match context.request(&target.server, request).await {
            Ok(reply) => reply,
            Err(error) if goto.feature == DEFINITION.feature => return Err(error),
            Err(_) => continue,
        };
        for note in render::notes(&target.roots, &reply) {
            if !head.contains(&note) {
                head.push(note);
            }
        }
        let encoding = reply.encoding;
        let found = render::locations(&mut reply, goto.feature)?;
        places.extend(found.into_iter().map(|location| (location, encoding)));
    }
    let locations: Vec<Location> = places
        .iter()
        .map(|(location, _)| location.clone())
        .collect();
    let answered = bodies::lines_at(&locations);
    let answered: Vec<&str> = answered.iter().map(String::as_str).collect();
    let found = bodies::instead_of(context, &target, &answered).await;
    if !found.is_empty() {
        head.push(bodies::note(&target));
        places = found
            .iter()
            .filter_map(bodies::location)
            .map(|location| (location, PositionEncoding::Utf32))
            .collect();
    }
    if places.is_empty() && declaration_named(context, &target).await.is_some() {
        // Some servers answer nothing for a declaration's own name (the
        // CSS server for a class selector asked without its dot): where
        // the agent points is the declaration.
        places.extend(own_place(&target).map(|place| (place, PositionEncoding::Utf32)));
    }
    let mut sources = Sources::new(&target.roots);
    let mut spans: Vec<Span> = Vec::new();
    let depth = args.depth.map(|depth| depth.max(1));
    for (location, encoding) in places {
        let Some(path) = uri_to_path(location.uri.as_str()) else {
            continue;
        };
        if !sources.admit(&path) {
            continue;
        }
        let span = span_at(
            context,
            &target.roots.display(&path),
            &path,
            &location,
            encoding,
            depth,
        )
        .await?;
        let overlaps = spans.iter().any(|known| {
            known.path == span.path
                && known.lines.first <= span.lines.last
                && span.lines.first <= known.lines.last
        });
        if !overlaps {
            spans.push(span);
        }
    }
    if spans.is_empty() {
        let what = target
            .word()
            .map(|word| format!("`{word}` at "))
            .unwrap_or_default();
        head.push(format!("no source found for {what}{}", target.describe()));
    }
    head.extend(sources.outside_note());
    let body: Vec<String> = spans.iter().flat_map(Span::lines).collect();
    Ok(render::paged(
        &head,
        &body,
        navigation::offset(args.offset),
        context.settings.max_output_bytes,
    ))
}

/// The span of the symbol at `location`: the innermost document symbol
/// that names it there (else that contains it), widened over what is
/// written right above it; just the location's lines when the file's
/// server gives no symbols.
async fn span_at(
    context: &Context,
    display: &str,
    path: &Path,
    location: &Location,
    encoding: PositionEncoding,
    depth: Option<u32>,
) -> Result<Span> {
    let document = context.snapshot(path, display)?;
    let at = symbols::point(&document.text, location.range.start, encoding);
    let found = match context.route(path).await {
        Ok(server) => match context.document_symbols(&server, document.clone()).await {
            Ok(mut reply) => symbols::document_symbols(&mut reply, &document.text)
                .ok()
                .and_then(|symbols| enclosing(&symbols, &document, &reply, at)),
            Err(_) => None,
        },
        Err(_) => None,
    };
    let (title, lines, elided) = match found {
        Some(symbol) => {
            let lines = Lines {
                first: symbol.range.start.line,
                last: last_line(&symbol.range),
            };
            let elided = depth
                .map(|depth| elided(&symbol.children, 1, depth, &document.text))
                .unwrap_or_default();
            let title = format!("{} {}", render::symbol_kind(symbol.kind), symbol.name);
            (Some(title), lines, elided)
        }
        None => {
            let lines = Lines {
                first: location.range.start.line,
                last: last_line(&location.range),
            };
            (None, lines, Vec::new())
        }
    };
    let lines = Lines {
        first: leading_lines(&document.text, lines.first),
        last: lines.last,
    };
    Ok(Span {
        path: display.to_owned(),
        lines,
        title,
        elided,
        text: document.text.clone(),
    })
}

/// The innermost symbol whose name is at `at`, else the innermost whose
/// range holds it.
fn enclosing(
    symbols: &[Symbol],
    document: &DocumentSnapshot,
    reply: &Reply,
    at: (usize, usize),
) -> Option<Symbol> {
    let around = symbols::around(symbols, &document.text, reply.encoding, at);
    let named = around
        .iter()
        .rev()
        .find(|symbol| symbols::holds(&symbol.selection_range, &document.text, reply.encoding, at));
    named.or(around.last()).map(|symbol| (*symbol).clone())
}

/// Lines of members `level` levels down (1: the symbol's own members)
/// past `depth`, left out but for their signature.
fn elided(members: &[Symbol], level: u32, depth: u32, text: &str) -> Vec<Lines> {
    let mut out = Vec::new();
    for member in members {
        if level < depth {
            out.extend(elided(&member.children, level + 1, depth, text));
            continue;
        }
        let (start, end) = (member.range.start.line, last_line(&member.range));
        let signature_end = signature_end(text, start, end);
        if signature_end < end {
            out.push(Lines {
                first: signature_end + 1,
                last: end,
            });
        }
    }
    out.sort_by_key(|lines| lines.first);
    out
}

/// The last line of the signature of a member on lines `start`–`end`:
/// the first that opens its body (ends with `:`, `{`, `=>` or `=`), or
/// its first line when none within a few does.
fn signature_end(text: &str, start: u32, end: u32) -> u32 {
    const LONGEST_SIGNATURE: u32 = 12;
    (start..=end.min(start + LONGEST_SIGNATURE))
        .find(|number| {
            line_at(text, *number as usize).is_some_and(|line| {
                let line = line.trim_end();
                [":", "{", "=>", "="]
                    .iter()
                    .any(|opening| line.ends_with(opening))
            })
        })
        .unwrap_or(start)
}

/// The first line of what belongs above line `first`: the doc comment,
/// attributes and decorators written right above it, up to a blank line,
/// code, or the opening of the block comment right above.
fn leading_lines(text: &str, first: u32) -> u32 {
    let mut top = first;
    while top > 0 {
        let Some(line) = line_at(text, (top - 1) as usize).map(str::trim_start) else {
            break;
        };
        if !leads(line) || is_directive(line) {
            break;
        }
        top -= 1;
        if line.starts_with("/*") {
            break;
        }
    }
    top
}

/// Whether a line, trimmed, is a comment, an attribute or a decorator:
/// `//`, `/*`, `*`, `#` with a space after it or `#[` (not C's `#include`),
/// `@`, `--`, `;`.
fn leads(line: &str) -> bool {
    const OPENINGS: [&str; 8] = ["//", "/*", "*", "#[", "#![", "@", "--", ";"];
    if line.is_empty() {
        return false;
    }
    OPENINGS.iter().any(|opening| line.starts_with(opening))
        || line == "#"
        || line.starts_with("# ")
        || line.starts_with("#\t")
}

/// Whether a comment line, trimmed, is a directive to a tool rather than
/// prose: a Dockerfile's parser directives (`# syntax=…`, `# escape=…`,
/// `# check=…`) and an editor's or Python's `# -*- coding: … -*-`.
fn is_directive(line: &str) -> bool {
    let Some(comment) = line.strip_prefix('#').map(str::trim_start) else {
        return false;
    };
    let keyword = comment
        .split(|c: char| c == '=' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    let assigns = comment[keyword.len()..].trim_start().starts_with('=');
    (assigns && ["syntax", "escape", "check"].contains(&keyword.to_lowercase().as_str()))
        || comment.starts_with("-*-")
}

impl Span {
    /// Its heading, then each line numbered, elided members as one line.
    fn lines(&self) -> Vec<String> {
        let title = self
            .title
            .as_ref()
            .map(|title| format!("  {title}"))
            .unwrap_or_default();
        let mut lines = vec![format!(
            "{}:{}-{}{title}",
            self.path,
            self.lines.first + 1,
            self.lines.last + 1
        )];
        let width = (self.lines.last + 1).to_string().len();
        let mut number = self.lines.first;
        while number <= self.lines.last {
            if let Some(gap) = self.elided.iter().find(|gap| gap.first == number) {
                let indent = line_at(&self.text, number as usize)
                    .map(|line| &line[..line.len() - line.trim_start().len()])
                    .unwrap_or_default();
                let hidden = gap.last.min(self.lines.last) + 1 - gap.first;
                lines.push(format!(
                    "{:>width$}  {indent}… {}",
                    "",
                    counted(hidden, "line")
                ));
                number = gap.last + 1;
                continue;
            }
            let text = line_at(&self.text, number as usize).unwrap_or_default();
            lines.push(
                format!("{:>width$}  {text}", number + 1)
                    .trim_end()
                    .to_owned(),
            );
            number += 1;
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_comments_attributes_and_decorators_come_with_the_symbol() {
        let rust = "use x;\n\n/// Adds.\n#[inline]\npub fn add() {}\n";
        assert_eq!(leading_lines(rust, 4), 2);
        let python = "import os\n# helper\n@cache\ndef f():\n    pass\n";
        assert_eq!(leading_lines(python, 3), 1);
        let c = "#include <x.h>\nint area(int w);\n";
        assert_eq!(leading_lines(c, 1), 1, "a preprocessor line is code");
        let jsdoc = "x();\n/**\n * Parses.\n */\nfunction parse() {}\n";
        assert_eq!(leading_lines(jsdoc, 4), 1);
        let banner = "/*****\n* Section\n*****/\n/*! f() :\n * Does.\n */\nint f(void);\n";
        assert_eq!(
            leading_lines(banner, 6),
            3,
            "the comment right above, not the banner"
        );
        assert_eq!(leading_lines("a\n\nb\n", 2), 2, "a blank line ends it");
        let dockerfile = "# syntax = docker/dockerfile:1.3\n# The base.\nARG BASE=alpine\n";
        assert_eq!(
            leading_lines(dockerfile, 2),
            1,
            "a parser directive is no comment"
        );
        let coding = "# -*- coding: utf-8 -*-\ndef f():\n    pass\n";
        assert_eq!(leading_lines(coding, 1), 1);
    }

    #[test]
    fn a_signature_ends_where_its_body_opens() {
        let python = "def f(\n    a,\n    b,\n) -> int:\n    return a\n";
        assert_eq!(signature_end(python, 0, 4), 3);
        let rust = "fn g(a: u32) -> u32 {\n    a\n}\n";
        assert_eq!(signature_end(rust, 0, 2), 0);
        assert_eq!(
            signature_end("x\ny\nz\n", 0, 2),
            0,
            "no opening: the first line"
        );
    }

    #[test]
    fn members_past_the_depth_show_their_signature_only() {
        let span = Span {
            path: "a.py".into(),
            lines: Lines { first: 0, last: 5 },
            title: Some("class A".into()),
            elided: vec![Lines { first: 2, last: 3 }],
            text: "class A:\n    def f(self):\n        x = 1\n        return x\n    def g(self): pass\n\n"
                .into(),
        };
        assert_eq!(
            span.lines(),
            vec![
                "a.py:1-6  class A",
                "1  class A:",
                "2      def f(self):",
                "           … 2 lines",
                "5      def g(self): pass",
                "6",
            ]
        );
    }
}
