//! A Session's inbox, and the questions of the daemon's socket that
//! reach it. The daemon-level actors every session talks to (`Shared`)
//! are the Supervisor's, in `supervisor.rs`.
use crate::messages::roots::{Change, ChangeAnswer, RootsChanged};
use crate::settings::Settings;
use crate::vocabulary::diagnostics::FileDiagnostics;
use crate::vocabulary::edit_effect::EditEffect;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::status::SessionStatus;
use ractor::RpcReplyPort;
use std::path::PathBuf;

pub enum SessionMsg {
    /// The session's roots changed (from its Roots actor).
    RootsChanged(RootsChanged),
    /// A `.windlass.toml` of this session's configuration changed.
    ConfigChanged,
    ConfigReloaded(Result<Box<Settings>, String>),
    Warnings(RpcReplyPort<Vec<String>>),
    /// A question from outside its connection (the daemon's socket).
    Ask(SessionQuestion),
}

/// What the daemon's socket asks one session, each with where its answer
/// goes. The Supervisor finds the session and hands the question over
/// unread; the session answers roots changes itself and passes the rest
/// to its Gateway. A new question is a variant here and its answer there.
pub enum SessionQuestion {
    /// The session's `status`.
    Status(RpcReplyPort<Result<SessionStatus, String>>),
    /// Fresh diagnostics of a file.
    Diagnostics {
        file: PathBuf,
        reply: RpcReplyPort<Result<FileDiagnostics, String>>,
    },
    /// A file a host's tool is about to edit (the `acquire` hook), kept
    /// as it is for the edit's effect.
    PrepareEdit {
        file: PathBuf,
        reply: RpcReplyPort<Result<(), String>>,
    },
    /// What the edit of a prepared file did to the files that use the
    /// names it changed (the `release` hook).
    EditEffect {
        file: PathBuf,
        reply: RpcReplyPort<Result<EditEffect, String>>,
    },
    /// Roots added, removed or set (a host's hook); answered with the
    /// roots in effect and those refused.
    ChangeRoots {
        change: Change,
        reply: RpcReplyPort<Result<ChangeAnswer, String>>,
    },
}

/// Which session a question is for.
#[derive(Debug, Clone)]
pub enum Addressee {
    /// The session of this id.
    Named(SessionId),
    /// The most recently attached session whose roots hold this file.
    Holding(PathBuf),
}

impl SessionQuestion {
    /// Answers that no session is `to`, in the question's own terms.
    pub fn unanswered(self, to: &Addressee) {
        let why = match (&self, to) {
            (
                Self::Diagnostics { file, .. }
                | Self::PrepareEdit { file, .. }
                | Self::EditEffect { file, .. },
                _,
            )
            | (_, Addressee::Holding(file)) => format!(
                "no session attached to this daemon has {} in its roots",
                file.display()
            ),
            (_, Addressee::Named(session)) => {
                format!("session {session} is not attached to this daemon")
            }
        };
        match self {
            Self::Status(reply) => drop(reply.send(Err(why))),
            Self::Diagnostics { reply, .. } => drop(reply.send(Err(why))),
            Self::ChangeRoots { reply, .. } => drop(reply.send(Err(why))),
            Self::PrepareEdit { reply, .. } => drop(reply.send(Err(why))),
            Self::EditEffect { reply, .. } => drop(reply.send(Err(why))),
        }
    }
}
