//! The MCP tool surface: one thin method per tool that hands its arguments
//! to the module that implements it. rmcp runs each call as its own task,
//! so a slow server delays only the calls that wait on it.

use super::address::Position;
use super::assist::{self, CompletionArgs};
use super::context::Context;
use super::diagnostics::{self, DiagnosticsArgs};
use super::directory::{self, ListDirectoryArgs};
use super::editing::{self, CodeActionsArgs, RenameArgs};
use super::hierarchy::{self, CallHierarchyArgs, TypeHierarchyArgs};
use super::map::{self, MapArgs};
use super::navigation::{self, OutlineArgs, ReferencesArgs};
use super::schema;
use super::search::{self, SearchArgs};
use super::{render, status};
use crate::error::Error;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
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
        let own_input = matches!(error, Error::OutsideRoots(_) | Error::InvalidArgument(_));
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
        description = "Type of a symbol, with its signature and documentation (hover): what is this, what type does it have. Cheaper than reading the file that defines it.",
        annotations(read_only_hint = true)
    )]
    async fn hover(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::hover(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Go to definition: where a function, class, method or variable is defined, with its source line.",
        annotations(read_only_hint = true)
    )]
    async fn definition(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, navigation::DEFINITION).await)
            .await
    }

    #[tool(
        description = "Go to declaration: where a symbol is declared, such as a C or C++ prototype in a header.",
        annotations(read_only_hint = true)
    )]
    async fn declaration(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, navigation::DECLARATION).await)
            .await
    }

    #[tool(
        description = "Go to type definition: where the type (class, struct, interface) of a variable or expression is defined.",
        annotations(read_only_hint = true)
    )]
    async fn type_definition(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, navigation::TYPE_DEFINITION).await)
            .await
    }

    #[tool(
        description = "Find implementations of an interface, trait, abstract class or method: which classes implement or override it.",
        annotations(read_only_hint = true)
    )]
    async fn implementation(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(navigation::goto(&self.context, &args, navigation::IMPLEMENTATION).await)
            .await
    }

    #[tool(
        description = "Find all references: every use of a symbol across the workspace (where it is used, read or called), grouped by file with counts.",
        annotations(read_only_hint = true)
    )]
    async fn find_references(&self, Parameters(args): Parameters<ReferencesArgs>) -> ToolResult {
        self.answer(navigation::references(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Outline of a file: its classes, functions, methods and variables with their line ranges, without reading the file.",
        annotations(read_only_hint = true)
    )]
    async fn document_symbols(&self, Parameters(args): Parameters<OutlineArgs>) -> ToolResult {
        self.answer(navigation::document_symbols(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Errors and warnings in files as they are on disk now (type errors, undefined names, lint): check after an edit whether it broke anything. Waits for the language server's fresh check of the latest change.",
        annotations(read_only_hint = true)
    )]
    async fn diagnostics(&self, Parameters(args): Parameters<DiagnosticsArgs>) -> ToolResult {
        self.answer(diagnostics::diagnostics(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "List a directory: its files and subdirectories with type and size, gitignore-aware.",
        annotations(read_only_hint = true)
    )]
    async fn list_directory(&self, Parameters(args): Parameters<ListDirectoryArgs>) -> ToolResult {
        self.answer(directory::list_directory(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Search the workspace by name or text: matching symbol definitions from every language server, plus the files that contain the text with match counts.",
        annotations(read_only_hint = true)
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> ToolResult {
        self.answer(search::search(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Map of the codebase: the file tree of a directory, optionally with each file's classes and functions; an overview of an unfamiliar project.",
        annotations(read_only_hint = true)
    )]
    async fn codebase_map(&self, Parameters(args): Parameters<MapArgs>) -> ToolResult {
        self.answer(map::codebase_map(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Call hierarchy: who calls this function (incoming callers) or which functions it calls (outgoing callees), with locations.",
        annotations(read_only_hint = true)
    )]
    async fn call_hierarchy(&self, Parameters(args): Parameters<CallHierarchyArgs>) -> ToolResult {
        self.answer(hierarchy::call_hierarchy(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Type hierarchy: the base classes and interfaces of a type (supertypes) or the classes derived from it (subtypes).",
        annotations(read_only_hint = true)
    )]
    async fn type_hierarchy(&self, Parameters(args): Parameters<TypeHierarchyArgs>) -> ToolResult {
        self.answer(hierarchy::type_hierarchy(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Quick fixes and refactorings the language server offers for a line range (add an import, fix an error), as proposed edits; nothing is written.",
        annotations(read_only_hint = true)
    )]
    async fn code_actions(&self, Parameters(args): Parameters<CodeActionsArgs>) -> ToolResult {
        self.answer(editing::code_actions(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Rename a symbol everywhere: the edits a rename refactoring would make in every file, as text; nothing is written.",
        annotations(read_only_hint = true)
    )]
    async fn rename(&self, Parameters(args): Parameters<RenameArgs>) -> ToolResult {
        self.answer(editing::rename(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Code completion at a position: the members, methods and names available there, most relevant first (at most 50).",
        annotations(read_only_hint = true)
    )]
    async fn completion(&self, Parameters(args): Parameters<CompletionArgs>) -> ToolResult {
        self.answer(assist::completion(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Signature help: the parameters of the function being called at a position, the active one marked «».",
        annotations(read_only_hint = true)
    )]
    async fn signature_help(&self, Parameters(args): Parameters<Position>) -> ToolResult {
        self.answer(assist::signature_help(&self.context, &args).await)
            .await
    }

    #[tool(
        description = "Status of the language servers: which are running, loading or failed, their CPU, memory and last error, and the roots served; why an answer may be missing.",
        annotations(read_only_hint = true)
    )]
    async fn status(&self) -> ToolResult {
        self.answer(status::status(&self.context).await).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("windlass", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// Each call is timed and recorded around the router's dispatch.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tool = request.name.to_string();
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

    /// rmcp runs this in a task of its own, so it may wait for the answer.
    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.context.follow_client_roots(context.peer).await;
    }
}
