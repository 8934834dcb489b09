//! Which Windlass tool each host's own tool search finds for what an
//! agent types (Claude Code's ToolSearch, Codex's and Qwen Code's
//! `tool_search`): the hosts that hide MCP tools until searched for.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::anthropic;
use common::host::{Host, Installed, Watchdog};
use common::model::{Model, Step};
use common::scenario::*;

/// Plain queries an agent might type, and the Windlass tool each should
/// find.
const SEARCHES: [(&str, &str); 14] = [
    ("type of symbol", "hover"),
    ("who calls this function", "call_hierarchy"),
    ("errors after edit", "diagnostics"),
    ("rename symbol", "rename"),
    ("find definition", "definition"),
    ("where is this used", "find_references"),
    ("outline of a file", "document_symbols"),
    ("type errors in file", "diagnostics"),
    ("classes implementing interface", "implementation"),
    ("project overview file tree", "codebase_map"),
    ("source code of a function", "source"),
    ("check an edit before writing", "check_edit"),
    ("blast radius of a change", "impact"),
    ("read lines of a file", "read_file"),
];

#[test]
fn claude_code_tool_search_finds_windlass_tools_by_keywords() {
    tool_search(Host::Claude, "claude tool search");
}

#[test]
fn codex_tool_search_finds_windlass_tools_by_keywords() {
    tool_search(Host::Codex, "codex tool search");
}

#[test]
fn qwen_code_tool_search_finds_windlass_tools_by_keywords() {
    tool_search(Host::Qwen, "qwen tool search");
}

/// Intents as an agent words them, short words and all.
const INTENTS: [(&str, &str); 24] = [
    ("the type of this", "hover"),
    ("who calls it", "call_hierarchy"),
    ("errors after my edit", "diagnostics"),
    ("where is this defined", "definition"),
    ("where is this declared", "declaration"),
    (
        "where is the type of this variable defined",
        "type_definition",
    ),
    ("where is this used", "find_references"),
    ("parameters of this call", "signature_help"),
    ("what does this function call", "call_hierarchy"),
    ("rename this everywhere", "rename"),
    ("quick fix for this error", "code_actions"),
    ("subclasses of this class", "type_hierarchy"),
    ("what implements this interface", "implementation"),
    ("outline of this file", "document_symbols"),
    ("show the source of this function", "source"),
    ("what breaks if I change this", "impact"),
    ("would my edit break anything", "check_edit"),
    ("find a symbol by name", "search"),
    ("overview of the project", "codebase_map"),
    ("list files in a directory", "list_directory"),
    ("read part of a file", "read_file"),
    ("complete this name", "completion"),
    ("is the language server ready", "status"),
    ("did my change introduce type errors", "diagnostics"),
];

/// Each of [`SEARCHES`] and [`INTENTS`] through the host's own tool
/// search, five results at most: the expected Windlass tool is among them
/// every time, and among the first three almost every time.
fn tool_search(host: Host, what: &'static str) {
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(host, &[&root]) else {
        return;
    };
    let searches: Vec<(&str, &str)> = SEARCHES.iter().chain(&INTENTS).copied().collect();
    let mut script: Vec<Step> = searches
        .iter()
        .map(|(query, _)| Step::tool_search(query))
        .collect();
    script.push(Step::text("Done."));
    let model = Model::start(host.api(), host.name());
    model.script(script);
    let run = installed.run(&root, &model, &[]);

    let mut checks = Checks::new(what);
    let mut table = vec![format!("{:<30} {:<16} found", "query", "expected")];
    for (turn, (query, expected)) in searches.iter().enumerate() {
        let found = result(&model, turn);
        let names: Vec<String> = found.tools.iter().map(|tool| short(tool)).collect();
        table.push(format!("{query:<30} {expected:<16} {}", names.join(", ")));
        checks.that(
            &format!("{} search {query:?} finds {expected}", host.name()),
            found
                .tools
                .iter()
                .any(|tool| windlass_tool(tool) == Some(expected)),
            &names.join(", "),
        );
    }
    let top_three = searches
        .iter()
        .enumerate()
        .filter(|(turn, (_, expected))| {
            result(&model, *turn)
                .tools
                .iter()
                .take(3)
                .any(|tool| windlass_tool(tool) == Some(*expected))
        })
        .count();
    table.push(format!(
        "{}: found in the first three for {top_three} of {} queries",
        host.name(),
        searches.len()
    ));
    eprintln!("{}", table.join("\n"));
    // Claude Code's is the search most agents meet.
    let share = match host {
        Host::Claude => 90,
        _ => 85,
    };
    checks.that(
        &format!("{share}% of the queries find their tool in the first three"),
        top_three * 100 >= searches.len() * share,
        &table.join("\n"),
    );
    checks.finish(&[(&model, &run)]);
}

/// A tool's name without its server's prefix in any host.
fn short(tool: &str) -> String {
    windlass_tool(tool).unwrap_or(tool).to_owned()
}

/// The Windlass tool `tool` names, as its host names it; `None` for the
/// host's own tools.
fn windlass_tool(tool: &str) -> Option<&str> {
    [anthropic::MCP_PREFIX, "mcp__windlass__"]
        .iter()
        .find_map(|prefix| tool.strip_prefix(prefix))
}
