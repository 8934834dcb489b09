//! Picking up a changed project configuration (`.windlass.toml`) without
//! a restart: a server whose settings alone changed is sent
//! `workspace/didChangeConfiguration`; one whose command, arguments,
//! languages or initialization options changed is restarted with them,
//! its open documents and waiting requests carried over; new servers are
//! started on demand and removed ones stop. Timeouts and caps apply to
//! servers started from then on. The root set is not part of a reload.

use super::slot::Slot;
use super::{State, SupervisorMsg};
use crate::language::ServerSpec;
use crate::language_server::LanguageServerMsg;
use crate::router::RouterMsg;
use crate::settings::Settings;
use ractor::ActorRef;
use std::collections::HashSet;

/// Why a server is stopped for a reload, as its callers are told.
const RESTARTED: &str = "restarted after a configuration change";

impl State {
    /// Reads the configuration again, off the actor's thread.
    pub(super) fn reload(&self, myself: &ActorRef<SupervisorMsg>) {
        let Some(reloader) = self.settings.reload.clone() else {
            return;
        };
        let myself = myself.clone();
        tokio::task::spawn_blocking(move || {
            let reloaded = reloader.reload().map(Box::new);
            let _stopped = myself.send_message(SupervisorMsg::ConfigReloaded(reloaded));
        });
    }

    pub(super) fn apply_settings(&mut self, new: Settings) {
        for spec in &new.servers {
            match self.slots.get_mut(&spec.name) {
                None => {
                    self.slots
                        .insert(spec.name.clone(), Slot::new(spec.clone()));
                }
                Some(slot) => update(slot, spec),
            }
        }
        let kept: HashSet<&str> = new.servers.iter().map(|spec| spec.name.as_str()).collect();
        self.slots.retain(|name, slot| {
            let keep = kept.contains(name.as_str());
            if !keep && let Some(actor) = &slot.actor {
                let _gone = actor.send_message(LanguageServerMsg::Retire {
                    reason: "removed from the configuration".into(),
                    restart: false,
                });
            }
            keep
        });
        let _stopped = self
            .router
            .send_message(RouterMsg::Specs(new.servers.clone()));
        self.settings = Settings {
            roots: self.settings.roots.clone(),
            reload: self.settings.reload.clone(),
            ..new
        };
        tracing::info!("configuration reloaded");
    }
}

/// Brings one running or stopped server in line with its new spec.
fn update(slot: &mut Slot, spec: &ServerSpec) {
    if slot.spec.same_process(spec) {
        if slot.spec.settings != spec.settings {
            slot.spec.settings = spec.settings.clone();
            if let Some(actor) = &slot.actor {
                let _gone = actor.send_message(LanguageServerMsg::Configure(spec.settings.clone()));
            }
        }
        return;
    }
    slot.spec = spec.clone();
    if let Some(actor) = &slot.actor {
        let _gone = actor.send_message(LanguageServerMsg::Retire {
            reason: RESTARTED.into(),
            restart: true,
        });
    }
}
