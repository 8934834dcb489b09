//! Configuration layers, later wins: built-in defaults, the user's
//! `config.toml`, the project's `.windlass.toml`, `--config`, then
//! `WINDLASS_*` variables and flags (both through clap).
//!
//! Server tables merge field by field, so `[server.python] settings = …`
//! keeps the built-in command. A project file's server commands run only
//! once the user has trusted that file (see `trust`).

use crate::{trust, tsserver_plugins};
use anyhow::{Context as _, Result, bail};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use windlass_actors::language::{
    self, BuiltIn, Duties, ReferencesFrom, Role, ServerSpec, WhileLoading,
};
use windlass_actors::vocabulary::diagnostics::Severity;

/// A Windlass configuration file (`config.toml`, `.windlass.toml`); every
/// field is optional and later layers win.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Seconds before an idle document is closed; 0 keeps documents open.
    pub idle_timeout: Option<u64>,
    /// Seconds a server gets to answer one request.
    pub request_timeout: Option<u64>,
    /// Cap on one tool result, in bytes.
    pub max_output_bytes: Option<usize>,
    /// A fixed diagnostics settle window in milliseconds instead of the
    /// learned one; for baseline measurements only.
    pub diagnostics_settle_ms: Option<u64>,
    /// Daemon (user configuration only): seconds it stays up after its
    /// last session.
    pub linger: Option<u64>,
    /// Daemon (user configuration only): seconds without a request before
    /// a server stops; 0 = never.
    pub server_idle: Option<u64>,
    /// Daemon (user configuration only): the servers' total RSS above
    /// which idle ones stop, least recently used first ("4GiB", "512MiB",
    /// a number of bytes; "0" = no budget).
    pub memory_budget: Option<String>,
    /// User configuration only: the size of the event store past which
    /// every process that records forgets the oldest events ("1GiB" by
    /// default, "0" = no limit).
    pub store_limit: Option<String>,
    /// Daemon (user configuration only): also serve MCP streamable HTTP
    /// on this loopback address, as "127.0.0.1:7345".
    pub http: Option<String>,
    /// Daemon (user configuration only): "token" (the default) asks every
    /// HTTP request for the bearer token `windlass token` prints; "none"
    /// does not.
    pub http_auth: Option<HttpAuth>,
    /// Daemon (user configuration only): the roots of an HTTP session
    /// whose client lists none, until it does.
    pub http_roots: Option<Vec<PathBuf>>,
    /// Daemon (user configuration only): serve HTTPS with this PEM
    /// certificate chain (with `http_tls_key`).
    pub http_tls_cert: Option<PathBuf>,
    /// Daemon (user configuration only): the PEM private key of
    /// `http_tls_cert`.
    pub http_tls_key: Option<PathBuf>,
    /// Daemon (user configuration only): allow an `http` address other
    /// machines can reach; it needs TLS and the token.
    pub http_remote: Option<bool>,
    /// Language servers by name; the name labels their errors.
    #[serde(default)]
    pub server: BTreeMap<String, ServerEntry>,
}

/// One `[server.NAME]` table.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// The executable, found on PATH unless it contains a slash.
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// LSP language ids this server answers for (default: the table name).
    pub languages: Option<Vec<String>>,
    /// Sent as `initializationOptions` in `initialize`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub initialization_options: Option<toml::Value>,
    /// Answered to `workspace/configuration`, looked up by section.
    #[schemars(with = "Option<serde_json::Value>")]
    pub settings: Option<toml::Value>,
    /// `false` leaves its diagnostics out of the `diagnostics` answer.
    pub diagnostics: Option<bool>,
    /// Its diagnostics less severe than this are left out: `error`,
    /// `warning`, `info` or `hint`.
    pub min_severity: Option<Severity>,
    /// Globs the end of a file's path must match for this server to serve
    /// it (`*.pyi`, `src/**`); by default every file of its languages.
    pub file_patterns: Option<Vec<String>>,
    /// `true` asks the server for each file's diagnostics
    /// (`textDocument/diagnostic`) instead of waiting for it to publish
    /// them; the default for servers known to publish none.
    pub pull_diagnostics: Option<bool>,
}

impl ServerEntry {
    pub fn merge(&mut self, later: ServerEntry) {
        self.command = later.command.or(self.command.take());
        self.args = later.args.or(self.args.take());
        self.languages = later.languages.or(self.languages.take());
        self.initialization_options = later
            .initialization_options
            .or(self.initialization_options.take());
        self.settings = later.settings.or(self.settings.take());
        self.diagnostics = later.diagnostics.or(self.diagnostics.take());
        self.min_severity = later.min_severity.or(self.min_severity.take());
        self.file_patterns = later.file_patterns.or(self.file_patterns.take());
        self.pull_diagnostics = later.pull_diagnostics.or(self.pull_diagnostics.take());
    }
}

/// The merged result of every file layer.
#[derive(Debug, Default)]
pub struct Layers {
    pub idle_timeout: u64,
    pub request_timeout: u64,
    pub max_output_bytes: usize,
    pub diagnostics_settle_ms: Option<u64>,
    pub servers: BTreeMap<String, ServerEntry>,
    pub warnings: Vec<String>,
}

impl Layers {
    fn new() -> Self {
        Self {
            idle_timeout: 300,
            request_timeout: 30,
            max_output_bytes: 32 * 1024,
            ..Self::default()
        }
    }

    fn apply(&mut self, file: ConfigFile) {
        self.idle_timeout = file.idle_timeout.unwrap_or(self.idle_timeout);
        self.request_timeout = file.request_timeout.unwrap_or(self.request_timeout);
        self.max_output_bytes = file.max_output_bytes.unwrap_or(self.max_output_bytes);
        self.diagnostics_settle_ms = file.diagnostics_settle_ms.or(self.diagnostics_settle_ms);
        for (name, entry) in file.server {
            self.servers.entry(name).or_default().merge(entry);
        }
    }
}

/// The daemon's own settings. They apply to every session at once, so
/// they come from the user's configuration file (and the environment),
/// never from a project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonConfig {
    pub linger: u64,
    pub server_idle: u64,
    /// Bytes; `None` for no budget.
    pub memory_budget: Option<u64>,
    /// The HTTP endpoint, if the daemon serves one.
    pub http: Option<HttpConfig>,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            linger: 300,
            server_idle: 1800,
            memory_budget: Some(4 << 30),
            http: None,
        }
    }
}

/// The daemon's MCP streamable HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub address: std::net::SocketAddr,
    pub auth: HttpAuth,
    /// An HTTP session's roots while its client lists none.
    pub roots: Vec<PathBuf>,
    /// A session without a request for this long ends: its client has
    /// most likely gone without saying so.
    pub session_idle: std::time::Duration,
    /// The PEM certificate chain and key to serve HTTPS with.
    pub tls: Option<TlsFiles>,
    /// Whether an address other machines can reach was asked for.
    pub remote: bool,
}

/// A certificate chain and its private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// Both files, or neither; one without the other is a mistake.
    pub fn pair(cert: Option<PathBuf>, key: Option<PathBuf>) -> Result<Option<Self>> {
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(Self { cert, key })),
            (None, None) => Ok(None),
            _ => anyhow::bail!(
                "TLS needs both a certificate (http_tls_cert) and its key (http_tls_key)"
            ),
        }
    }
}

/// Whether HTTP requests need the bearer token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum HttpAuth {
    #[default]
    Token,
    None,
}

impl HttpConfig {
    /// The endpoint at `address` ("127.0.0.1:7345", "localhost:7345").
    pub fn at(address: &str, auth: HttpAuth, roots: Vec<PathBuf>) -> Result<Self> {
        use std::net::ToSocketAddrs as _;
        let address = address
            .to_socket_addrs()
            .with_context(|| format!("{address:?} is not an address like \"127.0.0.1:7345\""))?
            .next()
            .with_context(|| format!("{address:?} names no address"))?;
        Ok(Self {
            address,
            auth,
            roots,
            session_idle: std::time::Duration::from_secs(30 * 60),
            tls: None,
            remote: false,
        })
    }
}

/// The daemon settings of the user's configuration file, over the defaults.
pub fn daemon_config() -> Result<DaemonConfig> {
    let mut config = DaemonConfig::default();
    let Some(user) = user_config_path().filter(|path| path.is_file()) else {
        return Ok(config);
    };
    let file = read(&user)?;
    config.linger = file.linger.unwrap_or(config.linger);
    config.server_idle = file.server_idle.unwrap_or(config.server_idle);
    if let Some(budget) = &file.memory_budget {
        config.memory_budget =
            parse_bytes(budget).with_context(|| format!("{}: memory_budget", user.display()))?;
    }
    if let Some(address) = &file.http {
        let roots = file.http_roots.clone().unwrap_or_default();
        if let Some(relative) = roots.iter().find(|root| root.is_relative()) {
            anyhow::bail!(
                "{}: http_roots: {} is not an absolute path",
                user.display(),
                relative.display()
            );
        }
        let auth = file.http_auth.unwrap_or_default();
        let mut http = HttpConfig::at(address, auth, roots)
            .with_context(|| format!("{}: http", user.display()))?;
        http.tls = TlsFiles::pair(file.http_tls_cert.clone(), file.http_tls_key.clone())
            .with_context(|| format!("{}", user.display()))?;
        http.remote = file.http_remote.unwrap_or(false);
        config.http = Some(http);
    }
    Ok(config)
}

/// The event store's limit: `WINDLASS_STORE_LIMIT`, else the user
/// configuration's `store_limit`, else 1 GiB. Every process that records
/// keeps to it, a standalone session as much as the daemon; only that
/// key is read, so that no other daemon setting can fail a standalone
/// session.
pub fn store_limit() -> Result<Option<u64>> {
    if let Ok(limit) = std::env::var("WINDLASS_STORE_LIMIT") {
        return parse_bytes(&limit).context("WINDLASS_STORE_LIMIT");
    }
    let Some(user) = user_config_path().filter(|path| path.is_file()) else {
        return Ok(Some(DEFAULT_STORE_LIMIT));
    };
    match read(&user)?.store_limit {
        Some(limit) => {
            parse_bytes(&limit).with_context(|| format!("{}: store_limit", user.display()))
        }
        None => Ok(Some(DEFAULT_STORE_LIMIT)),
    }
}

/// The event store's limit when nothing sets one.
const DEFAULT_STORE_LIMIT: u64 = 1 << 30;

/// `"4GiB"`, `"512MiB"`, `"300MB"`, `"1048576"`; `"0"` is no budget.
pub fn parse_bytes(text: &str) -> Result<Option<u64>> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .with_context(|| format!("{text:?} is not a size like \"4GiB\""))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        other => bail!("unknown size unit {other:?} in {text:?}"),
    };
    let bytes = number
        .checked_mul(scale)
        .with_context(|| format!("{text:?} is too large"))?;
    Ok((bytes > 0).then_some(bytes))
}

/// Reads every file layer that exists, in order.
pub fn load(first_root: &Path, explicit: Option<&Path>) -> Result<Layers> {
    let mut layers = Layers::new();
    if let Some(user) = user_config_path().filter(|path| path.is_file()) {
        layers.apply(read(&user)?);
    }
    if let Some(project) = project_config_path(first_root) {
        let mut file = read(&project)?;
        if !trust::is_trusted(&project)?
            && file
                .server
                .values()
                .any(|entry| entry.command.is_some() || entry.args.is_some())
        {
            let warning = format!(
                "{} names server commands but is not trusted; they are ignored (run `windlass trust {}`)",
                project.display(),
                project.display()
            );
            tracing::warn!("{warning}");
            layers.warnings.push(warning);
            for entry in file.server.values_mut() {
                entry.command = None;
                entry.args = None;
            }
        }
        layers.apply(file);
    }
    if let Some(explicit) = explicit {
        layers.apply(read(explicit)?);
    }
    Ok(layers)
}

fn read(path: &Path) -> Result<ConfigFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// `$XDG_CONFIG_HOME/windlass/config.toml`, else `~/.config/windlass/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("windlass/config.toml"))
}

/// `.windlass.toml` in the first root or its nearest parent.
pub fn project_config_path(first_root: &Path) -> Option<PathBuf> {
    first_root
        .ancestors()
        .map(|dir| dir.join(".windlass.toml"))
        .find(|path| path.is_file())
}

/// Parses `--lsp "LANG[,LANG]:COMMAND ARGS"`.
pub fn parse_lsp_flag(flag: &str) -> Result<(String, ServerEntry)> {
    let (languages, command_line) = flag
        .split_once(':')
        .with_context(|| format!("--lsp {flag:?}: expected LANG:COMMAND"))?;
    let languages: Vec<String> = languages
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let mut words = command_line.split_whitespace().map(str::to_owned);
    let command = words
        .next()
        .with_context(|| format!("--lsp {flag:?}: missing command"))?;
    anyhow::ensure!(!languages.is_empty(), "--lsp {flag:?}: missing language");
    let entry = ServerEntry {
        command: Some(command),
        args: Some(words.collect()),
        languages: Some(languages.clone()),
        ..ServerEntry::default()
    };
    Ok((languages.join(","), entry))
}

/// Turns the merged entries into server specs: configured servers first,
/// then, for each language no configured server serves, the built-ins
/// whose binary is on PATH: its first language server and every linter
/// (one with configuration files only for the files beside them); for a
/// language only configured linters serve, its first language server.
/// A configured server that runs a built-in's command also takes that
/// built-in's other languages, so one command never runs as two
/// processes. Language servers come before linters, which answer only
/// what the language servers cannot.
pub fn resolve_servers(entries: &BTreeMap<String, ServerEntry>) -> Result<Vec<ServerSpec>> {
    let mut specs = Vec::new();
    for (name, entry) in entries {
        if let Some(spec) = configured_spec(name, entry)? {
            specs.push(spec);
        }
    }
    let configured = specs.clone();
    for (built_in, languages) in language::built_in_servers() {
        if entries.contains_key(built_in.name) {
            continue;
        }
        // A language someone configured a language server for has the
        // servers configured for it; built-ins fill only the languages
        // nobody did. A linter configured alone (`[server.biome]` to lint
        // without a `biome.json`) displaces the built-in linters, not the
        // language server whose hover and references it cannot give.
        let wanted: Vec<String> = languages
            .iter()
            .filter(|language| {
                !configured.iter().any(|spec| {
                    spec.serves(language)
                        && (spec.duties.role == Role::Language || built_in.role == Role::Linter)
                })
            })
            .filter(|language| {
                built_in.role == Role::Linter
                    || !specs
                        .iter()
                        .any(|spec| spec.duties.role == Role::Language && spec.serves(language))
            })
            .map(|language| (*language).to_owned())
            .collect();
        if wanted.is_empty() {
            continue;
        }
        if let Some(same) = specs
            .iter_mut()
            .find(|spec| runs_same_program(&spec.command, built_in.command))
        {
            for language in wanted {
                if !same.serves(&language) {
                    same.languages.push(language);
                }
            }
            continue;
        }
        if !on_path(built_in.command) {
            continue;
        }
        specs.push(ServerSpec {
            name: built_in.name.to_owned(),
            command: built_in.command.to_owned(),
            args: strings(built_in.args),
            languages: wanted,
            initialization_options: built_in.default_initialization_options(),
            settings: built_in.default_settings(),
            check: built_in.check.map(strings),
            pull_diagnostics: built_in.pulls_diagnostics,
            references_from: built_in.references_from,
            checks_only_what_changed: built_in.checks_only_what_changed,
            rests_after_input: built_in.rests_after_input,
            lints_each_file_alone: built_in.lints_each_file_alone,
            misses_added_folders: built_in.misses_added_folders,
            forgets_early_documents: built_in.forgets_early_documents,
            rebuilds_only_when_forced: built_in.rebuilds_only_when_forced,
            reads_includes_from_disk: built_in.reads_includes_from_disk,
            reads_disk_only_at_start: built_in.reads_disk_only_at_start,
            references_one_at_a_time: built_in.references_one_at_a_time,
            while_loading: built_in.while_loading,
            save_check_sources: strings(built_in.save_check_sources),
            projects_from_tsconfig: built_in.projects_from_tsconfig,
            tsserver_commands: built_in.tsserver_commands,
            duties: Duties {
                config_files: built_in.config_files,
                ..Duties::of(built_in.role)
            },
        });
    }
    specs.sort_by_key(|spec| spec.duties.role == Role::Linter);
    Ok(tsserver_plugins::load_plugins(specs))
}

/// A built-in server that would serve languages nobody serves now, had
/// it been on PATH: the languages, and the other built-ins that would do
/// as well.
pub struct Missing {
    pub built_in: &'static BuiltIn,
    pub languages: Vec<String>,
    pub alternatives: Vec<&'static BuiltIn>,
}

/// For the languages no server in `specs` serves, the preferred built-in
/// of each, once, for `doctor` to show as missing with how to install it.
pub fn missing_built_ins(specs: &[ServerSpec]) -> Vec<Missing> {
    let mut missing: Vec<Missing> = Vec::new();
    let unserved = language::LANGUAGES
        .iter()
        .filter(|known| !specs.iter().any(|spec| spec.serves(known.id)));
    for known in unserved {
        let mut servers = known
            .servers
            .iter()
            .copied()
            .filter(|server| server.role == Role::Language);
        let Some(preferred) = servers.next() else {
            continue;
        };
        match missing.iter_mut().find(|entry| entry.built_in == preferred) {
            Some(entry) => entry.languages.push(known.id.to_owned()),
            None => missing.push(Missing {
                built_in: preferred,
                languages: vec![known.id.to_owned()],
                alternatives: servers.collect(),
            }),
        }
    }
    missing
}

/// The spec of one configured `[server.NAME]`, completed from the built-in
/// of the same name; `None` when it names no command at all.
fn configured_spec(name: &str, entry: &ServerEntry) -> Result<Option<ServerSpec>> {
    let built_in = language::built_in_servers()
        .into_iter()
        .find(|(known, _)| known.name == name);
    let command = entry
        .command
        .clone()
        .or_else(|| built_in.as_ref().map(|(known, _)| known.command.to_owned()));
    let Some(command) = command else {
        tracing::warn!(server = %name, "server has no command; ignored");
        return Ok(None);
    };
    let known: Vec<&BuiltIn> = known_as(name, &command).collect();
    let duties = Duties {
        role: match known.iter().any(|known| known.role == Role::Linter) {
            true => Role::Linter,
            false => Role::Language,
        },
        diagnostics: entry.diagnostics.unwrap_or(true),
        min_severity: entry.min_severity,
        file_patterns: entry.file_patterns.clone().unwrap_or_default(),
        config_files: &[],
    };
    if let Err(error) = duties.file_matcher() {
        bail!("[server.{name}] file_patterns: {error}");
    }
    let initialization_options = entry
        .initialization_options
        .clone()
        .map(to_json)
        .transpose()?
        .or_else(|| {
            built_in
                .as_ref()
                .and_then(|(known, _)| known.default_initialization_options())
        });
    Ok(Some(ServerSpec {
        name: name.to_owned(),
        args: entry
            .args
            .clone()
            .or_else(|| built_in.as_ref().map(|(known, _)| strings(known.args)))
            .unwrap_or_default(),
        languages: entry
            .languages
            .clone()
            .or_else(|| built_in.as_ref().map(|(_, languages)| strings(languages)))
            .unwrap_or_else(|| vec![name.to_owned()]),
        settings: entry
            .settings
            .clone()
            .map(to_json)
            .transpose()?
            .unwrap_or_else(|| {
                built_in.as_ref().map_or_else(
                    || Value::Object(Default::default()),
                    |(known, _)| known.default_settings(),
                )
            }),
        pull_diagnostics: entry
            .pull_diagnostics
            .unwrap_or_else(|| known.iter().any(|known| known.pulls_diagnostics)),
        references_from: known
            .iter()
            .map(|known| known.references_from)
            .find(|from| *from != ReferencesFrom::Project)
            .unwrap_or_default(),
        checks_only_what_changed: known.iter().any(|known| known.checks_only_what_changed),
        // How a program paces its own work: another program configured
        // for the language does not rest as pyright does.
        rests_after_input: known
            .iter()
            .filter(|known| runs_same_program(&command, known.command))
            .filter_map(|known| known.rests_after_input)
            .max(),
        lints_each_file_alone: !known.is_empty()
            && known.iter().all(|known| known.lints_each_file_alone),
        misses_added_folders: known.iter().any(|known| known.misses_added_folders),
        forgets_early_documents: known.iter().any(|known| known.forgets_early_documents),
        rebuilds_only_when_forced: known.iter().any(|known| known.rebuilds_only_when_forced),
        reads_includes_from_disk: known.iter().any(|known| known.reads_includes_from_disk),
        reads_disk_only_at_start: known.iter().any(|known| known.reads_disk_only_at_start),
        references_one_at_a_time: known.iter().any(|known| known.references_one_at_a_time),
        projects_from_tsconfig: known.iter().any(|known| known.projects_from_tsconfig),
        // Asked so only if it announces tsserver's command.
        tsserver_commands: known.iter().any(|known| known.tsserver_commands),
        // By the program alone: taken on by a server that is not pyright
        // but shares its name, it would be asked before it can answer,
        // where every other way of pyright's costs only time. Nor by one
        // whose options leave out what makes it answer so
        // (typescript-language-server's single tsserver).
        while_loading: known
            .iter()
            .find(|known| {
                runs_same_program(&command, known.command)
                    && known.default_initialization_options().is_none_or(|needed| {
                        initialization_options
                            .as_ref()
                            .is_some_and(|given| includes(given, &needed))
                    })
            })
            .map_or(WhileLoading::Waits, |known| known.while_loading),
        initialization_options,
        save_check_sources: known
            .iter()
            .find_map(|known| {
                (!known.save_check_sources.is_empty()).then(|| strings(known.save_check_sources))
            })
            .unwrap_or_default(),
        duties,
        command,
        check: None,
    }))
}

/// The built-ins a configured server is, by its name or by the program
/// it runs: it takes on their role and the way their diagnostics come.
pub(crate) fn known_as<'a>(
    name: &'a str,
    command: &'a str,
) -> impl Iterator<Item = &'static BuiltIn> + 'a {
    language::built_in_servers()
        .into_iter()
        .map(|(known, _)| known)
        .filter(move |known| known.name == name || runs_same_program(command, known.command))
}

/// Whether a configured command runs a known server's program: the same
/// name, directly or as the last component of a path.
pub(crate) fn runs_same_program(command: &str, known: &str) -> bool {
    Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
        == Some(known)
}

/// Whether `given` says all that `needed` says: every key of an object,
/// at every depth, with the same value.
fn includes(given: &Value, needed: &Value) -> bool {
    match (given, needed) {
        (Value::Object(given), Value::Object(needed)) => needed.iter().all(|(key, value)| {
            given
                .get(key)
                .is_some_and(|present| includes(present, value))
        }),
        _ => given == needed,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn to_json(value: toml::Value) -> Result<Value> {
    serde_json::to_value(value).context("converting configuration to JSON")
}

/// Whether `command` names an executable, directly or on PATH.
pub fn on_path(command: &str) -> bool {
    find_on_path(command).is_some()
}

/// The executable `command` names, directly or as the first on PATH.
pub fn find_on_path(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return is_executable(&path).then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(command))
        .find(|path| is_executable(path))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_without_a_server_names_its_preferred_one_once() {
        let missing = missing_built_ins(&[]);
        let python = missing
            .iter()
            .find(|entry| entry.languages.contains(&"python".to_owned()))
            .unwrap();
        assert_eq!(python.built_in.command, "pyright-langserver");
        let alternatives: Vec<&str> = python.alternatives.iter().map(|b| b.command).collect();
        assert!(alternatives.contains(&"pylsp"), "{alternatives:?}");
        assert!(
            !alternatives.contains(&"ruff"),
            "a linter is no alternative"
        );
        let typescript: Vec<&Missing> = missing
            .iter()
            .filter(|entry| entry.built_in.command == "typescript-language-server")
            .collect();
        assert_eq!(typescript.len(), 1);
        assert_eq!(typescript[0].languages.len(), 4);
        assert!(
            missing
                .iter()
                .all(|entry| entry.built_in.role == Role::Language)
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_bytes("4GiB").unwrap(), Some(4 << 30));
        assert_eq!(parse_bytes("512 MiB").unwrap(), Some(512 << 20));
        assert_eq!(parse_bytes("300MB").unwrap(), Some(300_000_000));
        assert_eq!(parse_bytes("1048576").unwrap(), Some(1 << 20));
        assert_eq!(parse_bytes("0").unwrap(), None);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("4 parsecs").is_err());
    }

    #[test]
    fn parses_lsp_flags() {
        let (name, entry) = parse_lsp_flag("c,cpp:clangd --log=error").unwrap();
        assert_eq!(name, "c,cpp");
        assert_eq!(entry.command.as_deref(), Some("clangd"));
        assert_eq!(entry.args, Some(vec!["--log=error".to_owned()]));
        assert!(parse_lsp_flag("clangd").is_err());
        assert!(parse_lsp_flag(":clangd").is_err());
        assert!(parse_lsp_flag("c:").is_err());
    }

    #[test]
    fn later_layers_win_field_by_field() {
        let mut layers = Layers::new();
        layers.apply(
            toml::from_str("request_timeout = 5\n[server.python]\ncommand = \"pylsp\"\n").unwrap(),
        );
        layers.apply(toml::from_str("[server.python]\nsettings = { a = 1 }\n").unwrap());
        assert_eq!(layers.request_timeout, 5);
        assert_eq!(layers.idle_timeout, 300);
        let python = &layers.servers["python"];
        assert_eq!(python.command.as_deref(), Some("pylsp"));
        assert!(python.settings.is_some());
    }

    #[test]
    fn configured_servers_keep_built_in_defaults() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "python".to_owned(),
            ServerEntry {
                settings: Some(toml::from_str("x = 1").unwrap()),
                ..Default::default()
            },
        );
        entries.insert(
            "mock".to_owned(),
            ServerEntry {
                command: Some("/bin/true".into()),
                languages: Some(vec!["rust".into()]),
                ..Default::default()
            },
        );
        let specs = resolve_servers(&entries).unwrap();
        let python = specs.iter().find(|s| s.name == "python").unwrap();
        assert_eq!(python.command, "pyright-langserver");
        assert_eq!(python.args, vec!["--stdio"]);
        assert_eq!(python.settings, serde_json::json!({"x": 1}));
        assert!(
            specs.iter().all(|s| s.name != "rust"),
            "rust is covered by mock"
        );
    }

    #[test]
    fn a_configured_server_takes_over_the_built_in_running_the_same_program() {
        let mut entries = BTreeMap::new();
        let (name, entry) = parse_lsp_flag("c:/usr/bin/clangd --log=error").unwrap();
        entries.insert(name, entry);
        let specs = resolve_servers(&entries).unwrap();
        let clangds: Vec<&ServerSpec> = specs
            .iter()
            .filter(|spec| spec.command.ends_with("clangd"))
            .collect();
        assert_eq!(clangds.len(), 1, "{specs:?}");
        assert_eq!(clangds[0].name, "c");
        assert_eq!(clangds[0].languages, vec!["c", "cpp"]);
    }

    #[test]
    fn a_typescript_server_whose_options_keep_two_tsservers_waits_while_loading() {
        let typescript = |options: Option<&str>| {
            let mut entries = BTreeMap::new();
            entries.insert(
                "typescript".to_owned(),
                ServerEntry {
                    initialization_options: options.map(|text| toml::from_str(text).unwrap()),
                    ..Default::default()
                },
            );
            let specs = resolve_servers(&entries).unwrap();
            specs
                .into_iter()
                .find(|spec| spec.name == "typescript")
                .unwrap()
        };
        let asked = WhileLoading::TakesAllInFirst;
        assert_eq!(typescript(None).while_loading, asked);
        let kept = typescript(Some(
            "preferences = { quotePreference = \"single\" }\n\
             tsserver = { useSyntaxServer = \"never\", useClientFileWatcher = true }",
        ));
        assert_eq!(kept.while_loading, asked);
        let watching = typescript(Some("tsserver = { useSyntaxServer = \"never\" }"));
        assert_eq!(
            watching.while_loading,
            WhileLoading::Waits,
            "a tsserver watching the disk itself takes changes in when it sees them"
        );
        let replaced = typescript(Some("preferences = { quotePreference = \"single\" }"));
        assert_eq!(replaced.while_loading, WhileLoading::Waits);
    }

    #[test]
    fn a_linter_configured_alone_keeps_the_language_server() {
        if !on_path("typescript-language-server") {
            eprintln!("skipped: typescript-language-server is not on PATH");
            return;
        }
        let mut entries = BTreeMap::new();
        entries.insert("biome".to_owned(), ServerEntry::default());
        let specs = resolve_servers(&entries).unwrap();
        let serving: Vec<&str> = specs
            .iter()
            .filter(|spec| spec.serves("typescript"))
            .map(|spec| spec.command.as_str())
            .collect();
        assert_eq!(
            serving,
            ["typescript-language-server", "biome"],
            "{specs:?}"
        );
    }

    #[test]
    fn languages_configured_separately_stay_with_their_own_server() {
        let mut entries = BTreeMap::new();
        for flag in ["c:clangd", "cpp:/opt/other/cpp-server"] {
            let (name, entry) = parse_lsp_flag(flag).unwrap();
            entries.insert(name, entry);
        }
        let specs = resolve_servers(&entries).unwrap();
        let c = specs.iter().find(|spec| spec.name == "c").unwrap();
        assert_eq!(c.languages, vec!["c"]);
        assert!(specs.iter().any(|spec| spec.name == "cpp"));
    }

    /// The schema in the repository is generated from `ConfigFile`; set
    /// `WINDLASS_WRITE_SCHEMA=1` to rewrite it after changing the struct.
    #[test]
    fn the_shipped_json_schema_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.schema.json");
        let generated =
            serde_json::to_string_pretty(&schemars::schema_for!(ConfigFile)).unwrap() + "\n";
        if std::env::var_os("WINDLASS_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let shipped = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            shipped, generated,
            "docs/config.schema.json is stale: rerun with WINDLASS_WRITE_SCHEMA=1"
        );
    }

    #[test]
    fn rejects_unknown_keys() {
        assert!(toml::from_str::<ConfigFile>("idle_timout = 3").is_err());
    }
}
