//! mockls's command line: composable behaviours and injected faults.

/// Every behaviour mockls can be asked for. Flags compose freely.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// Advertise workspace-folder support and honour folder changes.
    pub workspace_folders: bool,
    /// Register for `workspace/didChangeWatchedFiles` and publish every
    /// open document again when told of a change, as pyright does.
    /// Without it, a change to a file another depends on is seen only when
    /// the dependent file is sent again, as with clangd.
    pub watch_files: bool,
    /// Report `$/progress` indexing for this long after `initialized`.
    pub indexing_delay_ms: u64,
    /// Answer hovers and definitions while indexing, as pyright does.
    pub answers_files_while_indexing: bool,
    /// Report indexing through `experimental/serverStatus` (not quiescent,
    /// then quiescent), as rust-analyzer does, instead of `$/progress`.
    pub server_status: bool,
    /// Wait this long before every response.
    pub response_delay_ms: u64,
    /// Log the start and end of its file discovery after `initialized`,
    /// in pyright's words, then keep a thread busy this long, as pyright
    /// checking files in the background or answering another client.
    pub busy_after_discovery_ms: u64,
    /// Wait this long before publishing diagnostics.
    pub diagnostics_delay_ms: u64,
    pub no_diagnostics: bool,
    /// Publish nothing: announce `diagnosticProvider` and answer
    /// `textDocument/diagnostic` after the diagnostics delay, as tsgo does.
    pub pull_diagnostics: bool,
    /// Announce `diagnosticProvider` but answer `textDocument/diagnostic`
    /// with MethodNotFound, as servers do that handle it only for a
    /// client that announced it can ask (the CSS, JSON and HTML servers).
    pub claim_pull_diagnostics: bool,
    /// Publish a document's diagnostics only when they differ from those
    /// last published for it, and answer `textDocument/diagnostic` too, as
    /// rust-analyzer does: a change that alters none is never published.
    pub publish_only_changes: bool,
    /// Announce no `diagnosticProvider`, as pyright does: a client that
    /// announced the capability's dynamic registration has it registered
    /// after `initialized`, is answered `textDocument/diagnostic` and
    /// gets no publications; any other client gets publications only.
    pub register_pull: bool,
    /// The `source` its diagnostics name (`mockls` by default), so that
    /// two of them serving one language can be told apart.
    pub source: Option<String>,
    /// Publish diagnostics only when a document is saved (and opened).
    pub diagnostics_on_save: bool,
    /// Check the workspace this long after `didSave`, under progress, as
    /// rust-analyzer runs `cargo check`, every file as it is on disk then:
    /// the check's findings (source `mockcheck`) are published with each
    /// document's own until the next save's check replaces them, so a
    /// change publishes the last check's findings at once, whatever the
    /// text is now.
    pub check_on_save_ms: u64,
    /// Echo the document version in `publishDiagnostics`.
    pub publish_version: bool,
    /// Wrap each diagnostics computation in `$/progress` begin/end.
    pub progress_on_change: bool,
    /// Burn this much CPU before publishing diagnostics for a change.
    pub cpu_busy_ms: u64,
    /// Burn this much CPU when told of changes on disk, before anything
    /// else, as pyright re-reading its program after a change.
    pub busy_on_watched_ms: u64,
    /// Publish an empty first round, then the real diagnostics.
    pub multi_round_diagnostics: bool,
    /// Check the open documents again this long after files change on
    /// disk, as pyright does once it has taken in a checkout: a second
    /// round for each that changed with them.
    pub recheck_delay_ms: u64,
    /// Once it has published a changed document, publish every other open
    /// document too, checked against it, as intelephense does once it has
    /// taken a change in.
    pub publish_dependents: bool,
    /// Exit after answering this many requests (initialize excluded).
    pub drop_after: Option<u64>,
    pub hang_on: Vec<String>,
    pub fail_on: Vec<String>,
    pub crash_on: Vec<String>,
    /// Answer these methods with a body that is not JSON.
    pub malformed_on: Vec<String>,
    /// Answer these methods with a Content-Length that overstates the body.
    pub wrong_length_on: Vec<String>,
    /// Send a response with an id nobody asked for before the real one.
    pub unknown_id_on: Vec<String>,
    /// Answer these methods with a result of `huge_bytes` bytes.
    pub huge_on: Vec<String>,
    pub huge_bytes: usize,
    /// Put invalid UTF-8 into these methods' string results.
    pub invalid_utf8_on: Vec<String>,
    /// Point definitions at a file outside the workspace.
    pub outside_uri: bool,
    /// Write every message one byte at a time.
    pub slow_write: bool,
    pub send_configuration_request: bool,
    /// The position encoding to advertise, by name; one mockls does not
    /// know is advertised as given and counted in UTF-16.
    pub position_encoding: Option<String>,
    /// Capabilities to leave out of the `initialize` answer.
    pub without: Vec<String>,
    /// Append every message received and sent, timestamped, as JSON lines.
    pub record: Option<String>,
    /// Keep this many MiB of memory resident for as long as it runs.
    pub hold_memory_mib: usize,
    /// Wire and protocol faults by kind, each on one method
    /// (`--fault KIND:METHOD`); see [`FAULTS`].
    pub faults: Vec<(String, String)>,
    /// Publish this many diagnostics notifications for a document when it
    /// is opened, each with another message.
    pub flood_diagnostics: u64,
    /// Nest document symbols this deep.
    pub nested_symbols: u64,
    /// Name each workspace symbol this many times at one place, as
    /// rust-analyzer names a method once for each type a macro
    /// implements it for, all at the macro's call.
    pub repeat_symbols: u64,
    /// Name in workspace symbols only a module's own definitions, as
    /// jedi-language-server does; outlines still hold every one.
    pub top_level_symbols: bool,
    /// Answer neither `shutdown` nor `exit`: only a kill ends it.
    pub ignore_shutdown: bool,
    /// Exit as soon as the client says `initialized`.
    pub crash_on_initialized: bool,
    /// Ask the client every hover as a `tsserver/request`, as Vue's
    /// server does, and wait for its `tsserver/response`.
    pub asks_tsserver: bool,
    /// Answer `typescript.tsserverRequest` commands, as
    /// typescript-language-server does: tsserver's diagnostics checks
    /// with the document's diagnostics as they are, `navtree` with the
    /// file's outline once a document has been opened ("No Project."
    /// before), any other with a body naming the command.
    pub answers_tsserver: bool,
    /// Publish a changed document's diagnostics of the text before the
    /// change, as typescript-language-server's publication after an edit
    /// can be (the new text's syntax beside the old text's type errors).
    pub stale_publications: bool,
    /// Work on one `textDocument/references` at a time, as pyright does:
    /// the next one ends the one in progress with `RequestCancelled`, and
    /// once the client has cancelled one, every later one fails.
    pub references_one_at_a_time: bool,
}

/// The kinds `--fault` takes.
pub const FAULTS: &[&str] = &[
    // A response framed without a Content-Length header.
    "missing-length",
    // A Content-Length that is not a number.
    "non-numeric-length",
    // A Content-Length far past any real message.
    "oversize-length",
    // Half the response's body, then the process exits.
    "truncated",
    // A line that is no header at all, then the real response.
    "garbage-line",
    // The response sent twice.
    "duplicate-id",
    // An error response with a null id, then the real response.
    "null-id",
    // A server-to-client request of a method no client knows, first.
    "unknown-request",
    // `ContentModified` the first time the method is asked, then answers.
    "content-modified",
    // `ServerCancelled` the first time, then answers.
    "server-cancelled",
    // `RequestCancelled` the first time though the client cancelled
    // nothing (pyrefly, after a newer change), then answers.
    "request-cancelled",
    // `ContentModified` every time.
    "content-modified-always",
    // The response held back 500 ms while later messages overtake it.
    "late",
];

impl Flags {
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut flags = Self {
            huge_bytes: 8 * 1024 * 1024,
            ..Self::default()
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--workspace-folders" => flags.workspace_folders = true,
                "--watch-files" => flags.watch_files = true,
                "--indexing-delay" => flags.indexing_delay_ms = number(&value()?)?,
                "--answers-files-while-indexing" => flags.answers_files_while_indexing = true,
                "--server-status" => flags.server_status = true,
                "--response-delay" => flags.response_delay_ms = number(&value()?)?,
                "--busy-after-discovery" => flags.busy_after_discovery_ms = number(&value()?)?,
                "--diagnostics-delay" => flags.diagnostics_delay_ms = number(&value()?)?,
                "--no-diagnostics" => flags.no_diagnostics = true,
                "--pull-diagnostics" => flags.pull_diagnostics = true,
                "--claim-pull-diagnostics" => flags.claim_pull_diagnostics = true,
                "--publish-only-changes" => flags.publish_only_changes = true,
                "--register-pull" => flags.register_pull = true,
                "--source" => flags.source = Some(value()?),
                "--diagnostics-on-save" => flags.diagnostics_on_save = true,
                "--check-on-save" => flags.check_on_save_ms = number(&value()?)?,
                "--publish-version" => flags.publish_version = true,
                "--progress-on-change" => flags.progress_on_change = true,
                "--cpu-busy" => flags.cpu_busy_ms = number(&value()?)?,
                "--busy-on-watched" => flags.busy_on_watched_ms = number(&value()?)?,
                "--multi-round-diagnostics" => flags.multi_round_diagnostics = true,
                "--recheck-delay" => flags.recheck_delay_ms = number(&value()?)?,
                "--publish-dependents" => flags.publish_dependents = true,
                "--drop-after" => flags.drop_after = Some(number(&value()?)?),
                "--hang-on" => flags.hang_on.push(value()?),
                "--fail-on" => flags.fail_on.push(value()?),
                "--crash-on" => flags.crash_on.push(value()?),
                "--malformed-on" => flags.malformed_on.push(value()?),
                "--wrong-length-on" => flags.wrong_length_on.push(value()?),
                "--unknown-id-on" => flags.unknown_id_on.push(value()?),
                "--huge-on" => flags.huge_on.push(value()?),
                "--huge-bytes" => {
                    flags.huge_bytes =
                        usize::try_from(number(&value()?)?).map_err(|e| e.to_string())?
                }
                "--invalid-utf8-on" => flags.invalid_utf8_on.push(value()?),
                "--outside-uri" => flags.outside_uri = true,
                "--slow-write" => flags.slow_write = true,
                "--send-configuration-request" => flags.send_configuration_request = true,
                "--position-encoding" => flags.position_encoding = Some(value()?),
                "--record" => flags.record = Some(value()?),
                "--hold-memory" => {
                    flags.hold_memory_mib = usize::try_from(number(&value()?)?)
                        .map_err(|_| format!("{flag}: too large"))?;
                }
                "--without" => flags.without.push(value()?),
                "--fault" => {
                    let fault = value()?;
                    let Some((kind, method)) = fault.split_once(':') else {
                        return Err(format!("--fault takes KIND:METHOD, got {fault:?}"));
                    };
                    if !FAULTS.contains(&kind) {
                        return Err(format!(
                            "unknown fault {kind:?}; known: {}",
                            FAULTS.join(", ")
                        ));
                    }
                    flags.faults.push((kind.to_owned(), method.to_owned()));
                }
                "--flood-diagnostics" => flags.flood_diagnostics = number(&value()?)?,
                "--nested-symbols" => flags.nested_symbols = number(&value()?)?,
                "--repeat-symbols" => flags.repeat_symbols = number(&value()?)?,
                "--top-level-symbols" => flags.top_level_symbols = true,
                "--ignore-shutdown" => flags.ignore_shutdown = true,
                "--crash-on-initialized" => flags.crash_on_initialized = true,
                "--asks-tsserver" => flags.asks_tsserver = true,
                "--answers-tsserver" => flags.answers_tsserver = true,
                "--stale-publications" => flags.stale_publications = true,
                "--references-one-at-a-time" => flags.references_one_at_a_time = true,
                "--stdio" => {}
                other => return Err(format!("unknown flag {other}")),
            }
        }
        Ok(flags)
    }

    pub fn hangs_on(&self, method: &str) -> bool {
        self.hang_on.iter().any(|m| m == method)
    }

    /// Whether fault `kind` was asked for on `method`.
    pub fn fault(&self, kind: &str, method: &str) -> bool {
        self.faults
            .iter()
            .any(|(fault, on)| fault == kind && on == method)
    }
}

fn number(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("expected a number, got {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, String> {
        Flags::parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn composes_flags() {
        let flags = parse(&[
            "--response-delay",
            "200",
            "--hang-on",
            "textDocument/hover",
            "--publish-version",
        ])
        .unwrap();
        assert_eq!(flags.response_delay_ms, 200);
        assert!(flags.hangs_on("textDocument/hover"));
        assert!(flags.publish_version);
        assert!(!flags.no_diagnostics);
    }

    #[test]
    fn rejects_unknown_flags_and_bad_numbers() {
        assert_eq!(parse(&["--nope"]).unwrap_err(), "unknown flag --nope");
        assert!(parse(&["--drop-after", "x"]).is_err());
        assert!(parse(&["--record"]).is_err());
    }

    #[test]
    fn reads_faults_and_refuses_unknown_kinds() {
        let flags = parse(&["--fault", "truncated:textDocument/hover"]).unwrap();
        assert!(flags.fault("truncated", "textDocument/hover"));
        assert!(!flags.fault("truncated", "textDocument/definition"));
        assert!(parse(&["--fault", "nonsense:x"]).is_err());
        assert!(parse(&["--fault", "truncated"]).is_err());
    }

    #[test]
    fn reads_position_encoding() {
        let flags = parse(&["--position-encoding", "utf-8"]).unwrap();
        assert_eq!(flags.position_encoding.as_deref(), Some("utf-8"));
    }
}
