//! The MCP tool surface: one thin method per tool that hands its arguments
//! to the module that implements it, and what each tool needs of a
//! server ([`TOOL_NEEDS`], which `doctor` shows per server). rmcp runs
//! each call as its own task, so a slow server delays only the calls that
//! wait on it.

use super::address::Position;
use super::assist::{self, CompletionArgs};
use super::check_edit::{self, CheckEditArgs};
use super::context::Context;
use super::diagnostics::{self, DiagnosticsArgs};
use super::directory::{self, ListDirectoryArgs};
use super::goto;
use super::hierarchy::{self, CallHierarchyArgs, TypeHierarchyArgs};
use super::hover;
use super::impact::{self, ImpactArgs};
use super::map::{self, MapArgs};
use super::navigation::{self, OutlineArgs, ReferencesArgs};
use super::proposals::{self, CodeActionsArgs, RenameArgs};
use super::read_file::{self, ReadFileArgs};
use super::schema;
use super::search::{self, SearchArgs};
use super::search_hints;
use super::source::{self, SourceArgs};
use super::{render, status};
use crate::error::Error;
use crate::lsp::protocol::Feature;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ProtocolVersion, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use std::borrow::Cow;
use std::time::Instant;

/// What the MCP client is told about the server as a whole. Hosts that
/// show a model only tool names until it searches (Claude Code's
/// ToolSearch) make this and the descriptions below what leads it to the
/// right tool, so they say what each answers in the words an agent uses.
const INSTRUCTIONS: &str = "Code intelligence from the project's language servers (type checkers, \
compilers): the type of a symbol, where it is defined, who uses or calls it, a file's outline, and \
the errors in a file, in a few hundred bytes instead of reading whole files or grepping. After \
editing a file, call diagnostics on it to learn whether the edit broke anything: it waits for the \
server's fresh check. Address a position by file+line+column, file+line+symbol, or symbol alone; \
lines and columns are 1-based, columns count Unicode code points; file is absolute, relative to the \
first root, or ROOTNAME/relative. Every tool is read-only.";

/// What a tool needs of the server of a file it is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// No server: it reads the workspace, or Windlass's own state.
    NoServer,
    /// Any server, whatever it announced: diagnostics come unasked, and
    /// a tool that asks for more does without what a server lacks
    /// (`search` finds by text, `codebase_map` lists no symbols).
    AnyServer,
    /// A server that announced this capability: the request the tool
    /// depends on carries it, and a server without it refuses the tool
    /// (the file's next server is asked).
    Capability(Feature),
}

/// Every tool, in `tools/list`'s words, and what it needs of a server:
/// the one statement of it, read by `doctor` to say which tools each
/// server supports. A test holds it to the tools this handler serves.
pub const TOOL_NEEDS: &[(&str, Needs)] = &[
    ("hover", Needs::Capability(Feature::Hover)),
    ("definition", Needs::Capability(Feature::Definition)),
    ("declaration", Needs::Capability(Feature::Declaration)),
    (
        "type_definition",
        Needs::Capability(Feature::TypeDefinition),
    ),
    ("implementation", Needs::Capability(Feature::Implementation)),
    ("find_references", Needs::Capability(Feature::References)),
    (
        "document_symbols",
        Needs::Capability(Feature::DocumentSymbols),
    ),
    ("diagnostics", Needs::AnyServer),
    ("check_edit", Needs::AnyServer),
    ("list_directory", Needs::NoServer),
    // The definition's span; the declaration and outline only add to it.
    ("source", Needs::Capability(Feature::Definition)),
    // The references; the outlines that name their holders only add.
    ("impact", Needs::Capability(Feature::References)),
    ("read_file", Needs::NoServer),
    ("search", Needs::AnyServer),
    ("codebase_map", Needs::AnyServer),
    ("call_hierarchy", Needs::Capability(Feature::CallHierarchy)),
    ("type_hierarchy", Needs::Capability(Feature::TypeHierarchy)),
    ("code_actions", Needs::Capability(Feature::CodeActions)),
    ("rename", Needs::Capability(Feature::Rename)),
    ("completion", Needs::Capability(Feature::Completion)),
    ("signature_help", Needs::Capability(Feature::SignatureHelp)),
    ("status", Needs::NoServer),
];

type ToolResult = Result<String, String>;

#[derive(Clone)]
pub struct Tools {
    context: Context,
    tool_router: ToolRouter<Self>,
}

impl Tools {
    pub fn new(context: Context) -> Self {
        let mut tool_router = Self::tool_router();
        for route in tool_router.map.values_mut() {
            let compact = schema::compact(&route.attr.input_schema);
            route.attr.input_schema = std::sync::Arc::new(compact);
            route.attr.meta = search_hints::meta(&route.attr.name);
        }
        Self {
            context,
            tool_router,
        }
    }
}

impl Tools {
    /// The tool's answer, or its error as text. In a daemon, an error in a
    /// server's own words shows no path outside this session's roots: the
    /// server may be shared with sessions rooted elsewhere.
    async fn answer(&self, result: crate::error::Result<String>) -> ToolResult {
        let error = match result {
            Ok(text) => return Ok(text),
            Err(error) => error,
        };
        let text = error.to_string();
        let own_input = matches!(
            error,
            Error::OutsideRoots(_) | Error::InvalidArgument(_) | Error::NoRoots
        );
        if !self.context.shared.daemon || own_input {
            return Err(text);
        }
        match self.context.root_set().await {
            Ok(roots) => Err(render::hide_paths_outside(&text, &roots)),
            Err(_) => Err(text),
        }
    }
}

#[tool_router]
impl Tools {
    #[tool(
        description = "The type of this symbol, its signature and docs.",
        annotations(read_only_hint = true)
    )]
    async fn hover(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(hover::hover(&self.context, &args).await).await
    }

    #[tool(
        description = "Where a function, class or variable is defined.",
        annotations(read_only_hint = true)
    )]
    async fn definition(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, goto::DEFINITION).await)
            .await
    }

    #[tool(
        description = "Where it is declared, such as a C prototype.",
        annotations(read_only_hint = true)
    )]
    async fn declaration(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, goto::DECLARATION).await)
            .await
    }

    #[tool(
        description = "Where the type of a variable is defined.",
        annotations(read_only_hint = true)
    )]
    async fn type_definition(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, goto::TYPE_DEFINITION).await)
            .await
    }

    #[tool(
        description = "Implementations of an interface, trait or abstract method.",
        annotations(read_only_hint = true)
    )]
    async fn implementation(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, goto::IMPLEMENTATION).await)
            .await
    }

    #[tool(
        description = "All references: where a symbol is used or called.",
        annotations(read_only_hint = true)
    )]
    async fn find_references(&self, Parameters(args): Parameters<ReferencesArgs>) -> ToolResult {
        self.answer(navigation::references(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Outline of a file: classes, functions, line ranges.",
        annotations(read_only_hint = true)
    )]
    async fn document_symbols(&self, Parameters(args): Parameters<OutlineArgs>) -> ToolResult {
        self.answer(navigation::document_symbols(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Errors and warnings, type errors too, of files as on disk: did an edit break anything?",
        annotations(read_only_hint = true)
    )]
    async fn diagnostics(&self, Parameters(args): Parameters<DiagnosticsArgs>) -> ToolResult {
        self.answer(diagnostics::diagnostics(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "What an edit or rename would break or fix, before writing it.",
        annotations(read_only_hint = true)
    )]
    async fn check_edit(&self, Parameters(args): Parameters<CheckEditArgs>) -> ToolResult {
        self.answer(check_edit::check_edit(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "A directory's files with type and size, gitignore-aware.",
        annotations(read_only_hint = true)
    )]
    async fn list_directory(&self, Parameters(args): Parameters<ListDirectoryArgs>) -> ToolResult {
        self.answer(directory::list_directory(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Full source of a function or class with its doc comment.",
        annotations(read_only_hint = true)
    )]
    async fn source(&self, Parameters(args): Parameters<SourceArgs>) -> ToolResult {
        self.answer(source::source(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "What breaks if you change it: callers and theirs, tests marked.",
        annotations(read_only_hint = true)
    )]
    async fn impact(&self, Parameters(args): Parameters<ImpactArgs>) -> ToolResult {
        self.answer(impact::impact(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Read lines start-end (1-based, inclusive) of a text file.",
        annotations(read_only_hint = true)
    )]
    async fn read_file(&self, Parameters(args): Parameters<ReadFileArgs>) -> ToolResult {
        self.answer(read_file::read_file(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Search the workspace for symbols or text by name.",
        annotations(read_only_hint = true)
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> ToolResult {
        self.answer(search::search(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Project overview: file tree, optionally with symbols.",
        annotations(read_only_hint = true)
    )]
    async fn codebase_map(&self, Parameters(args): Parameters<MapArgs>) -> ToolResult {
        self.answer(map::codebase_map(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Who calls it, or what it calls.",
        annotations(read_only_hint = true)
    )]
    async fn call_hierarchy(&self, Parameters(args): Parameters<CallHierarchyArgs>) -> ToolResult {
        self.answer(hierarchy::call_hierarchy(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Base classes (supertypes) or derived classes (subtypes).",
        annotations(read_only_hint = true)
    )]
    async fn type_hierarchy(&self, Parameters(args): Parameters<TypeHierarchyArgs>) -> ToolResult {
        self.answer(hierarchy::type_hierarchy(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Quick fixes and refactorings for lines, as edits.",
        annotations(read_only_hint = true)
    )]
    async fn code_actions(&self, Parameters(args): Parameters<CodeActionsArgs>) -> ToolResult {
        self.answer(proposals::code_actions(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Rename everywhere: the edits as text, not written.",
        annotations(read_only_hint = true)
    )]
    async fn rename(&self, Parameters(args): Parameters<RenameArgs>) -> ToolResult {
        self.answer(proposals::rename(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Complete a name: the names available at a position.",
        annotations(read_only_hint = true)
    )]
    async fn completion(&self, Parameters(args): Parameters<CompletionArgs>) -> ToolResult {
        self.answer(assist::completion(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Parameters of the call at a position.",
        annotations(read_only_hint = true)
    )]
    async fn signature_help(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(assist::signature_help(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Language servers' state, CPU, memory, errors.",
        annotations(read_only_hint = true)
    )]
    async fn status(&self) -> ToolResult {
        self.answer(status::status(&self.context).await).await
    }
}

/// What every session tells its client of the server.
pub(super) fn server_info() -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        .with_server_info(Implementation::new("windlass", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
}

/// Up to the last revision with `initialize`: from 2026-07-28 a server
/// may no longer ask the client's `roots/list`, and Claude Code, told
/// that Windlass speaks it, never says which directories the user added.
/// Offered only these, it starts with `initialize` and sends
/// `roots/list_changed` as directories come and go.
pub(super) fn protocol_versions() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(ProtocolVersion::known_up_to(
        &ProtocolVersion::LATEST_WITH_INITIALIZE,
    ))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        server_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        protocol_versions()
    }

    /// Each call is timed and recorded around the router's dispatch.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tool = request.name.to_string();
        let _in_flight = self.context.in_flight.enter(&tool);
        let arguments = request.arguments.clone();
        let response = self
            .tool_router
            .call(ToolCallContext::new(self, request, context))
            .await;
        self.context
            .record_tool_call(tool, arguments, started.elapsed(), &response);
        response
    }

    /// Asks for the client's roots once the session is up, in a task of
    /// its own: the answer comes through the same connection.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(client) = context.peer.peer_info() {
            self.context.record_client(&client.client_info);
        }
        let tools = self.context.clone();
        tokio::spawn(async move { tools.follow_client_roots(context.peer).await });
    }

    /// rmcp runs this in a task of its own, so it may wait for the answer;
    /// the Roots actor is told first, before a call sent after the change
    /// asks it for the roots.
    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.context.client_roots_changing();
        self.context.follow_client_roots(context.peer).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_tool_says_once_what_it_needs_of_a_server() {
        let listed: BTreeSet<String> = Tools::tool_router()
            .list_all()
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect();
        let named: BTreeSet<String> = TOOL_NEEDS
            .iter()
            .map(|(name, _)| (*name).to_owned())
            .collect();
        assert_eq!(named.len(), TOOL_NEEDS.len(), "a tool is named twice");
        assert_eq!(named, listed, "the table and tools/list differ");
    }
}
