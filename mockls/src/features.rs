//! The answers mockls gives, computed from the text of its documents and
//! written in the negotiated position encoding.

use crate::assist;
use crate::hierarchy::{self, Item};
use crate::position::{Encoding, line_at};
use crate::text::{self, Span, Symbol, Workspace};
use std::collections::HashMap;
use std::str::FromStr;
use tower_lsp_server::ls_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, CodeAction,
    CodeActionKind, CodeActionOrCommand, CodeActionParams, CompletionItem, CompletionItemKind,
    CompletionList, CompletionResponse, DocumentSymbol, DocumentSymbolResponse,
    GotoDefinitionResponse, Hover, HoverContents, Location, MarkupContent, MarkupKind,
    ParameterInformation, ParameterLabel, Position, Range, ReferenceParams, RenameParams,
    SignatureHelp, SignatureInformation, SymbolInformation, SymbolKind, TextDocumentPositionParams,
    TextEdit, TypeHierarchyItem, Uri, WorkspaceEdit, WorkspaceSymbolResponse,
};

/// Where `--outside-uri` points: a file outside every test's roots.
const OUTSIDE: &str = "file:///etc/passwd";

/// Everything an answer needs: the documents and how to write positions.
pub struct Answers<'a> {
    pub workspace: &'a Workspace,
    pub encoding: Encoding,
    /// Add a location outside the workspace to every kind of answer that
    /// has one, and point definitions there (`--outside-uri`).
    pub outside_uri: bool,
    /// Answer document symbols as one chain this deep (`--nested-symbols`).
    pub nested_symbols: u64,
    /// Name each workspace symbol this many times (`--repeat-symbols`).
    pub repeat_symbols: u64,
    /// Name only a module's own definitions, none they hold
    /// (`--top-level-symbols`), as jedi-language-server does.
    pub top_level_symbols: bool,
    /// Still indexing: position queries answer empty, as real servers do.
    pub indexing: bool,
    /// Hovers and definitions are answered while indexing, as pyright
    /// answers them (`--answers-files-while-indexing`).
    pub files_while_indexing: bool,
}

impl Answers<'_> {
    fn word(&self, at: &TextDocumentPositionParams) -> Option<String> {
        let text = self.workspace.text(at.text_document.uri.as_str())?;
        let line_text = line_at(&text, usize::try_from(at.position.line).ok()?)?;
        let column = self.encoding.column(line_text, at.position.character);
        text::word_at(line_text, column).map(|(word, _, _)| word)
    }

    pub fn hover(&self, at: &TextDocumentPositionParams) -> Option<Hover> {
        if self.indexing && !self.files_while_indexing {
            return None;
        }
        let word = self.word(at)?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: format!("```mockls\n{word}\n```"),
            }),
            range: None,
        })
    }

    /// Definitions, declarations and type definitions alike.
    pub fn definition(&self, at: &TextDocumentPositionParams) -> Option<GotoDefinitionResponse> {
        if self.indexing && !self.files_while_indexing {
            return None;
        }
        if self.outside_uri {
            return Some(GotoDefinitionResponse::Array(vec![outside_location()?]));
        }
        let word = self.word(at)?;
        let spans = self
            .workspace
            .definitions(&word, at.text_document.uri.as_str());
        Some(GotoDefinitionResponse::Array(self.locations(&spans)))
    }

    pub fn implementation(
        &self,
        at: &TextDocumentPositionParams,
    ) -> Option<GotoDefinitionResponse> {
        let spans = self
            .word(at)
            .map(|word| self.workspace.implementations(&word))
            .unwrap_or_default();
        let locations = self.with_outside_location(self.locations(&spans));
        Some(GotoDefinitionResponse::Array(locations))
    }

    pub fn references(&self, params: &ReferenceParams) -> Option<Vec<Location>> {
        if self.indexing {
            return None;
        }
        let word = self.word(&params.text_document_position)?;
        let mut spans = self.workspace.references(&word);
        if !params.context.include_declaration {
            let definitions = self.workspace.definitions(&word, "");
            spans.retain(|span| !definitions.contains(span));
        }
        Some(self.with_outside_location(self.locations(&spans)))
    }

    pub fn document_symbols(&self, uri: &Uri) -> Option<DocumentSymbolResponse> {
        if self.nested_symbols > 0 {
            return Some(DocumentSymbolResponse::Nested(nested_symbols(
                self.nested_symbols,
            )));
        }
        let text = self.workspace.text(uri.as_str()).unwrap_or_default();
        Some(DocumentSymbolResponse::Nested(
            text::document_symbols(&text)
                .iter()
                .map(|symbol| self.document_symbol(&text, symbol))
                .collect(),
        ))
    }

    #[allow(
        deprecated,
        reason = "the protocol's deprecated field must still be given"
    )]
    fn document_symbol(&self, text: &str, symbol: &Symbol) -> DocumentSymbol {
        DocumentSymbol {
            name: symbol.name.clone(),
            detail: None,
            kind: symbol_kind(symbol.kind),
            tags: None,
            deprecated: None,
            range: self.block(text, symbol),
            selection_range: self.selection(text, symbol),
            children: Some(
                symbol
                    .children
                    .iter()
                    .map(|child| self.document_symbol(text, child))
                    .collect(),
            ),
        }
    }

    /// From the start of a symbol's first line to the end of its block.
    fn block(&self, text: &str, symbol: &Symbol) -> Range {
        let end_text = line_at(text, symbol.end_line).unwrap_or("");
        let end = self.encoding.character(end_text, end_text.chars().count());
        Range::new(
            Position::new(line_number(symbol.line), 0),
            Position::new(line_number(symbol.end_line), end),
        )
    }

    fn selection(&self, text: &str, symbol: &Symbol) -> Range {
        let line = line_at(text, symbol.line).unwrap_or("");
        self.encoding
            .range(line, symbol.line, symbol.start, symbol.end)
    }

    #[allow(
        deprecated,
        reason = "the protocol's deprecated field must still be given"
    )]
    pub fn workspace_symbols(&self, query: &str) -> Option<WorkspaceSymbolResponse> {
        let symbol = |name: String, kind: u32, location: Location| SymbolInformation {
            name,
            kind: symbol_kind(kind),
            tags: None,
            deprecated: None,
            location,
            container_name: None,
        };
        let times = usize::try_from(self.repeat_symbols.max(1)).unwrap_or(1);
        let mut symbols: Vec<SymbolInformation> = self
            .workspace
            .workspace_symbols(query, self.top_level_symbols)
            .into_iter()
            .filter_map(|(name, kind, span)| Some(symbol(name, kind, self.location(&span)?)))
            .flat_map(|found| std::iter::repeat_n(found, times))
            .collect();
        if self.outside_uri {
            symbols.extend(outside_location().map(|at| symbol("Shape".into(), 5, at)));
        }
        Some(WorkspaceSymbolResponse::Flat(symbols))
    }

    fn locations(&self, spans: &[Span]) -> Vec<Location> {
        spans
            .iter()
            .filter_map(|span| self.location(span))
            .collect()
    }

    fn location(&self, span: &Span) -> Option<Location> {
        let text = self.workspace.text(&span.uri).unwrap_or_default();
        let line = line_at(&text, span.line).unwrap_or("");
        Some(Location::new(
            Uri::from_str(&span.uri).ok()?,
            self.encoding.range(line, span.line, span.start, span.end),
        ))
    }

    fn with_outside_location(&self, mut locations: Vec<Location>) -> Vec<Location> {
        if self.outside_uri {
            locations.extend(outside_location());
        }
        locations
    }

    fn call_item(&self, item: &Item) -> Option<CallHierarchyItem> {
        let text = self.workspace.text(&item.uri).unwrap_or_default();
        Some(CallHierarchyItem {
            name: item.symbol.name.clone(),
            kind: symbol_kind(item.symbol.kind),
            tags: None,
            detail: None,
            uri: Uri::from_str(&item.uri).ok()?,
            range: self.block(&text, &item.symbol),
            selection_range: self.selection(&text, &item.symbol),
            data: None,
        })
    }

    fn type_item(&self, item: &Item) -> Option<TypeHierarchyItem> {
        self.call_item(item).map(as_type_item)
    }

    fn item_at(&self, at: &TextDocumentPositionParams) -> Option<Item> {
        hierarchy::item_named(self.workspace, &self.word(at)?)
    }

    pub fn prepare_calls(&self, at: &TextDocumentPositionParams) -> Option<Vec<CallHierarchyItem>> {
        Some(vec![self.call_item(&self.item_at(at)?)?])
    }

    pub fn prepare_types(&self, at: &TextDocumentPositionParams) -> Option<Vec<TypeHierarchyItem>> {
        Some(vec![self.type_item(&self.item_at(at)?)?])
    }

    /// Each call as the item at its other end and the ranges of the calls.
    fn calls(&self, found: &[(Item, Vec<Span>)]) -> Vec<(CallHierarchyItem, Vec<Range>)> {
        let mut calls: Vec<_> = found
            .iter()
            .filter_map(|(item, spans)| {
                let ranges = self.locations(spans).into_iter().map(|l| l.range).collect();
                Some((self.call_item(item)?, ranges))
            })
            .collect();
        if self.outside_uri {
            calls.extend(outside_call_item().map(|item| (item, vec![outside_range()])));
        }
        calls
    }

    pub fn incoming(&self, name: &str) -> Option<Vec<CallHierarchyIncomingCall>> {
        let calls = self.calls(&hierarchy::incoming(self.workspace, name));
        Some(
            calls
                .into_iter()
                .map(|(from, from_ranges)| CallHierarchyIncomingCall { from, from_ranges })
                .collect(),
        )
    }

    pub fn outgoing(&self, name: &str) -> Option<Vec<CallHierarchyOutgoingCall>> {
        let calls = self.calls(&hierarchy::outgoing(self.workspace, name));
        Some(
            calls
                .into_iter()
                .map(|(to, from_ranges)| CallHierarchyOutgoingCall { to, from_ranges })
                .collect(),
        )
    }

    pub fn supertypes(&self, name: &str) -> Option<Vec<TypeHierarchyItem>> {
        self.types(&hierarchy::supertypes(self.workspace, name))
    }

    pub fn subtypes(&self, name: &str) -> Option<Vec<TypeHierarchyItem>> {
        self.types(&hierarchy::subtypes(self.workspace, name))
    }

    fn types(&self, found: &[Item]) -> Option<Vec<TypeHierarchyItem>> {
        let mut items: Vec<_> = found
            .iter()
            .filter_map(|item| self.type_item(item))
            .collect();
        if self.outside_uri {
            items.extend(outside_call_item().map(as_type_item));
        }
        Some(items)
    }

    /// One quick fix per `ERROR` in the range; the title says how many
    /// diagnostics the client sent as context, so tests can see them.
    pub fn code_actions(&self, params: &CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let uri = &params.text_document.uri;
        let text = self.workspace.text(uri.as_str()).unwrap_or_default();
        let lines = usize::try_from(params.range.start.line).ok()?
            ..=usize::try_from(params.range.end.line).ok()?;
        let context = params.context.diagnostics.len();
        let spans = assist::error_spans(uri.as_str(), &text, *lines.start(), *lines.end());
        let actions = spans
            .iter()
            .filter_map(|span| {
                let edit = TextEdit::new(self.location(span)?.range, "FIXED".into());
                let mut changes = HashMap::from([(uri.clone(), vec![edit])]);
                self.add_outside_edit(&mut changes);
                Some(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!(
                        "Replace ERROR on line {} with FIXED ({context} diagnostics in context)",
                        span.line + 1
                    ),
                    kind: Some(CodeActionKind::QUICKFIX),
                    edit: Some(WorkspaceEdit::new(changes)),
                    ..CodeAction::default()
                }))
            })
            .collect();
        Some(actions)
    }

    pub fn rename(&self, params: &RenameParams) -> Option<WorkspaceEdit> {
        let word = self.word(&params.text_document_position)?;
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for span in self.workspace.references(&word) {
            let Some(location) = self.location(&span) else {
                continue;
            };
            changes
                .entry(location.uri)
                .or_default()
                .push(TextEdit::new(location.range, params.new_name.clone()));
        }
        self.add_outside_edit(&mut changes);
        Some(WorkspaceEdit::new(changes))
    }

    fn add_outside_edit(&self, changes: &mut HashMap<Uri, Vec<TextEdit>>) {
        if let Some(outside) = outside_location().filter(|_| self.outside_uri) {
            changes.insert(
                outside.uri,
                vec![TextEdit::new(outside.range, "overwritten".into())],
            );
        }
    }

    /// The identifier text before the cursor, the line, and the cursor's
    /// column.
    fn prefix(&self, at: &TextDocumentPositionParams) -> Option<(String, String, usize)> {
        let text = self.workspace.text(at.text_document.uri.as_str())?;
        let line_text = line_at(&text, usize::try_from(at.position.line).ok()?)?.to_owned();
        let column = self.encoding.column(&line_text, at.position.character);
        let before: Vec<char> = line_text.chars().take(column).collect();
        let start = before
            .iter()
            .rposition(|c| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |i| i + 1);
        Some((before[start..].iter().collect(), line_text, column))
    }

    pub fn completion(&self, at: &TextDocumentPositionParams) -> Option<CompletionResponse> {
        let (prefix, _, _) = self.prefix(at)?;
        let items = assist::completions(self.workspace, &prefix)
            .into_iter()
            .map(|(label, function)| CompletionItem {
                kind: Some(match function {
                    true => CompletionItemKind::FUNCTION,
                    false => CompletionItemKind::VARIABLE,
                }),
                sort_text: Some(label.clone()),
                label,
                ..CompletionItem::default()
            })
            .collect();
        Some(CompletionResponse::List(CompletionList {
            is_incomplete: false,
            items,
        }))
    }

    pub fn signature_help(&self, at: &TextDocumentPositionParams) -> Option<SignatureHelp> {
        let (_, line, column) = self.prefix(at)?;
        let (name, active) = assist::call_at(&line, column)?;
        let parameters = assist::parameters(self.workspace, &name)?;
        let label = format!("{name}({})", parameters.join(", "));
        let parameters = parameters
            .into_iter()
            .map(|parameter| ParameterInformation {
                label: ParameterLabel::Simple(parameter),
                documentation: None,
            })
            .collect();
        Some(SignatureHelp {
            signatures: vec![SignatureInformation {
                label,
                documentation: None,
                parameters: Some(parameters),
                active_parameter: None,
            }],
            active_signature: Some(0),
            active_parameter: u32::try_from(active).ok(),
        })
    }
}

/// The protocol's kind for the numbers mockls's outline uses.
fn symbol_kind(kind: u32) -> SymbolKind {
    match kind {
        5 => SymbolKind::CLASS,
        6 => SymbolKind::METHOD,
        11 => SymbolKind::INTERFACE,
        13 => SymbolKind::VARIABLE,
        14 => SymbolKind::CONSTANT,
        23 => SymbolKind::STRUCT,
        _ => SymbolKind::FUNCTION,
    }
}

/// The same item, as the type hierarchy names it.
fn as_type_item(call: CallHierarchyItem) -> TypeHierarchyItem {
    TypeHierarchyItem {
        name: call.name,
        kind: call.kind,
        tags: None,
        detail: None,
        uri: call.uri,
        range: call.range,
        selection_range: call.selection_range,
        data: None,
    }
}

fn line_number(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// One symbol per level, each the only child of the one above, built from
/// the innermost out.
#[allow(
    deprecated,
    reason = "the protocol's deprecated field must still be given"
)]
fn nested_symbols(depth: u64) -> Vec<DocumentSymbol> {
    let range = Range::new(Position::new(0, 0), Position::new(0, 1));
    let mut inner: Option<DocumentSymbol> = None;
    for level in (0..depth).rev() {
        inner = Some(DocumentSymbol {
            name: format!("level{level}"),
            detail: None,
            kind: SymbolKind::CLASS,
            tags: None,
            deprecated: None,
            range,
            selection_range: range,
            children: Some(inner.into_iter().collect()),
        });
    }
    inner.into_iter().collect()
}

fn outside_range() -> Range {
    Range::new(Position::new(0, 0), Position::new(0, 4))
}

fn outside_location() -> Option<Location> {
    Some(Location::new(Uri::from_str(OUTSIDE).ok()?, outside_range()))
}

fn outside_call_item() -> Option<CallHierarchyItem> {
    Some(CallHierarchyItem {
        name: "outside".into(),
        kind: SymbolKind::CLASS,
        tags: None,
        detail: None,
        uri: Uri::from_str(OUTSIDE).ok()?,
        range: outside_range(),
        selection_range: outside_range(),
        data: None,
    })
}
