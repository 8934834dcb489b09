//! The Router actor: which server answers a session's question about a
//! file.
//!
//! Owns each session's server table (language id → the server its
//! configuration names), which pooled server each session is bound to for
//! each configuration, the running servers, and which linters'
//! configuration files each directory it has routed a file of holds. Its inbox is
//! `messages::router`: routes asked by the Gateways, the tables and
//! running servers the Supervisor tells it of, and the Watcher's changes,
//! which it hands to every running server. A route to a server that is not running is forwarded, reply port and
//! all, to the Supervisor, which answers the caller once the server is
//! started; the Router never waits.

use crate::error::{Error, Result};
use crate::language;
use crate::language::{ServerKey, ServerSpec};
use crate::messages::language_server::{LanguageServerMsg, is_alive};
use crate::messages::router::{RoutedFile, RouterMsg, ServerHandle};
use crate::messages::supervisor::SupervisorMsg;
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::ids::{ServerId, SessionId};
use globset::GlobSet;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Arguments {
    pub supervisor: ActorRef<SupervisorMsg>,
}

/// The actor type; its state lives in [`State`].
pub struct Router;

/// A server a session's configuration names, with its key and the files
/// it is limited to computed once.
struct Entry {
    spec: Arc<ServerSpec>,
    key: ServerKey,
    files: Option<GlobSet>,
}

impl Entry {
    fn new(spec: ServerSpec) -> Self {
        // The configuration refused patterns that do not compile.
        let files = spec.duties.file_matcher().ok().flatten();
        Self {
            key: spec.key(),
            spec: Arc::new(spec),
            files,
        }
    }

    fn takes(&self, path: &Path, config_files: &mut ConfigFiles) -> bool {
        let config = self.spec.duties.config_files;
        self.files.as_ref().is_none_or(|files| files.is_match(path))
            && (config.is_empty() || config_files.beside(path, config))
    }
}

/// Which linters' configuration files ([`Duties::config_files`]) each
/// directory holds, looked for once per directory and forgotten when the
/// Watcher reports one of them created or deleted there.
///
/// [`Duties::config_files`]: crate::language::Duties::config_files
#[derive(Default)]
struct ConfigFiles {
    by_directory: HashMap<PathBuf, Vec<&'static str>>,
}

impl ConfigFiles {
    /// Whether one of `names` is in the file's directory or above it.
    fn beside(&mut self, file: &Path, names: &[&str]) -> bool {
        file.ancestors().skip(1).any(|directory| {
            self.held_by(directory)
                .iter()
                .any(|held| names.contains(held))
        })
    }

    /// Looked up without allocating: every route of a linted language's
    /// file asks for each of its directories.
    fn held_by(&mut self, directory: &Path) -> &[&'static str] {
        if !self.by_directory.contains_key(directory) {
            let held = language::config_file_names()
                .filter(|name| directory.join(name).is_file())
                .collect();
            self.by_directory.insert(directory.to_path_buf(), held);
        }
        self.by_directory
            .get(directory)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn forget_changed(&mut self, changes: &[FileChange]) {
        for change in changes {
            let named = change.path.file_name().and_then(|name| name.to_str());
            if named.is_some_and(|name| language::config_file_names().any(|known| known == name))
                && let Some(directory) = change.path.parent()
            {
                self.by_directory.remove(directory);
            }
        }
    }
}

pub struct State {
    supervisor: ActorRef<SupervisorMsg>,
    tables: HashMap<SessionId, Vec<Entry>>,
    bindings: HashMap<SessionId, HashMap<ServerKey, ServerId>>,
    running: HashMap<ServerId, ActorRef<LanguageServerMsg>>,
    config_files: ConfigFiles,
}

impl Actor for Router {
    type Msg = RouterMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        Ok(State {
            supervisor: args.supervisor,
            tables: HashMap::new(),
            bindings: HashMap::new(),
            running: HashMap::new(),
            config_files: ConfigFiles::default(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RouterMsg::Route {
                file,
                session,
                rank,
                reply,
            } => state.route(&file, session, rank, reply),
            RouterMsg::Serving {
                file,
                session,
                reply,
            } => {
                let serving = serving(&state.tables, &mut state.config_files, &file, session)
                    .map(|entries| entries.iter().map(|entry| entry.spec.clone()).collect());
                let _gone = reply.send(serving);
            }
            RouterMsg::Servers { session, specs } => {
                let table = specs.into_iter().map(Entry::new).collect();
                state.tables.insert(session, table);
            }
            RouterMsg::Bound {
                session,
                key,
                server,
            } => {
                state
                    .bindings
                    .entry(session)
                    .or_default()
                    .insert(key, server);
            }
            RouterMsg::SessionEnded(session) => {
                state.tables.remove(&session);
                state.bindings.remove(&session);
            }
            RouterMsg::ServerUp(server, actor) => {
                state.running.insert(server, actor);
            }
            RouterMsg::ServerDown(server) => {
                state.running.remove(&server);
            }
            RouterMsg::FilesChanged(changes) => {
                state.config_files.forget_changed(&changes);
                for actor in state.running.values() {
                    let changed = LanguageServerMsg::FilesChanged(changes.clone());
                    if let Err(error) = actor.send_message(changed) {
                        tracing::debug!("a server was not told of changes: {error}");
                    }
                }
            }
        }
        Ok(())
    }
}

impl State {
    fn route(
        &mut self,
        file: &RoutedFile,
        session: SessionId,
        rank: usize,
        reply: RpcReplyPort<Result<ServerHandle>>,
    ) {
        let entry = match serving(&self.tables, &mut self.config_files, file, session) {
            Ok(entries) => match entries.get(rank) {
                Some(entry) => *entry,
                None => {
                    let _gone = reply.send(Err(Error::NoServer(format!(
                        "a server after the first {rank} for {}",
                        file_name(&file.path)
                    ))));
                    return;
                }
            },
            Err(error) => {
                let _gone = reply.send(Err(error));
                return;
            }
        };
        let running = self
            .bindings
            .get(&session)
            .and_then(|bound| bound.get(&entry.key))
            .and_then(|id| self.running.get(id).map(|actor| (*id, actor)))
            .filter(|(_, actor)| is_alive(actor));
        match running {
            Some((id, actor)) => {
                let handle = ServerHandle {
                    id,
                    spec: entry.spec.clone(),
                    actor: actor.clone(),
                };
                let _gone = reply.send(Ok(handle));
            }
            None => {
                let ensure = SupervisorMsg::Ensure {
                    spec: Box::new((*entry.spec).clone()),
                    session,
                    reply,
                };
                if let Err(error) = self.supervisor.send_message(ensure) {
                    tracing::error!("supervisor unreachable: {error}");
                }
            }
        }
    }
}

/// The session's servers of a file, in order: those of its own language
/// before those of a fallback (a header's C), each language's in the
/// table's order, leaving out those whose file patterns it does not match
/// and linters found without their configuration beside it.
fn serving<'a>(
    tables: &'a HashMap<SessionId, Vec<Entry>>,
    config_files: &mut ConfigFiles,
    file: &RoutedFile,
    session: SessionId,
) -> Result<Vec<&'a Entry>> {
    let specs = tables.get(&session).map(Vec::as_slice).unwrap_or_default();
    let Some(own) = file.languages.first() else {
        return Err(Error::NoServer(format!(
            "{} (unknown language)",
            file_name(&file.path)
        )));
    };
    let mut serving: Vec<&Entry> = Vec::new();
    for language in &file.languages {
        for entry in specs {
            let new = !serving
                .iter()
                .any(|known| Arc::ptr_eq(&known.spec, &entry.spec));
            if new && entry.spec.serves(language) && entry.takes(&file.path, config_files) {
                serving.push(entry);
            }
        }
    }
    if serving.is_empty() {
        return Err(Error::NoServer(format!("language `{own}`")));
    }
    Ok(serving)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::file_changes::ChangeKind;

    #[test]
    fn a_linter_configuration_counts_for_its_directory_and_below() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("app");
        std::fs::create_dir_all(app.join("src/deep")).unwrap();
        let names = &["eslint.config.mjs", ".eslintrc.json"];
        let mut config_files = ConfigFiles::default();
        let deep = app.join("src/deep/a.ts");
        assert!(!config_files.beside(&deep, names));

        let config = app.join("eslint.config.mjs");
        std::fs::write(&config, "export default [];").unwrap();
        assert!(
            !config_files.beside(&deep, names),
            "looked for once per directory"
        );
        config_files.forget_changed(&[FileChange::new(config.clone(), ChangeKind::Created)]);
        assert!(config_files.beside(&deep, names));
        assert!(config_files.beside(&app.join("b.ts"), names));
        assert!(!config_files.beside(&dir.path().join("c.ts"), names));
        assert!(!config_files.beside(&deep, &["biome.json"]));

        std::fs::remove_file(&config).unwrap();
        config_files.forget_changed(&[FileChange::new(config, ChangeKind::Deleted)]);
        assert!(!config_files.beside(&deep, names));
    }
}
