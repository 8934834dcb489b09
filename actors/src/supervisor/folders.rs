//! Following the roots as they change: the Watcher watches the new ones
//! and forgets the old; every running server is given the new workspace
//! folders (it applies them itself, or is restarted with them); servers
//! for languages found only in the added roots are started.

use super::{State, SupervisorMsg};
use crate::language_server::{FolderChange, LanguageServerMsg};
use crate::lsp::uri::path_to_uri;
use crate::roots::{RootSet, RootsChanged, detect_servers};
use crate::watcher::WatcherMsg;
use ractor::ActorRef;

impl State {
    pub(super) fn roots_changed(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        changed: RootsChanged,
    ) {
        self.settings.roots = (*changed.roots).clone();
        let _stopped = self.watcher.send_message(WatcherMsg::Roots {
            added: changed.added.clone(),
            removed: changed.removed.clone(),
        });
        let folders = changed.roots.workspace_folders();
        let change = FolderChange {
            added: folders
                .iter()
                .filter(|folder| {
                    changed
                        .added
                        .iter()
                        .any(|path| path_to_uri(path) == folder.uri)
                })
                .cloned()
                .collect(),
            removed: changed
                .removed
                .iter()
                .map(|path| crate::language_server::protocol::WorkspaceFolder {
                    uri: path_to_uri(path),
                    name: path
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                })
                .collect(),
            folders,
            roots: changed.roots.clone(),
        };
        for slot in self.slots.values() {
            if let Some(actor) = &slot.actor {
                let _gone = actor.send_message(LanguageServerMsg::Folders(change.clone()));
            }
        }
        if changed.added.is_empty() {
            return;
        }
        let added = RootSet::from_canonical(changed.added);
        let specs = self.settings.servers.clone();
        let myself = myself.clone();
        tokio::task::spawn_blocking(move || {
            let detection = detect_servers(&added, &specs);
            let _stopped = myself.send_message(SupervisorMsg::Start(detection));
        });
    }
}
