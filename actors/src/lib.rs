//! Windlass's actors and the LSP wire code they share.
//!
//! The supervision tree: [`supervisor::Supervisor`] at the root, with the
//! daemon-wide [`monitor::Monitor`], [`router::Router`] and
//! [`watcher::Watcher`], one [`session::Session`] per MCP connection (with
//! its own [`roots::Roots`] and [`gateway::Gateway`]), and one
//! [`language_server::LanguageServer`] per pooled server that is running.
//!
//! Imports run one way, bottom first: `error`, the wire (`lsp`) and the
//! system's readings of processes (`process`), the shared words
//! (`vocabulary`), the language table (`language`), `settings`, the
//! `store`, the text searches' file sketches (`sketches`), start-up
//! detection (`detect`) and the files of `tsconfig.json` projects
//! (`tsconfig`), each actor's inbox
//! (`messages`), then the actors. An actor imports another only to spawn
//! it, as its parent, and then only its actor type and `Arguments`; no
//! chain of imports between files comes back to where it began.
//! `tests/layers.rs` checks both; `docs/architecture.md` draws the
//! layers and the tree, and lists the messages between the actors.

pub mod detect;
pub mod error;
pub mod gateway;
pub mod language;
pub mod language_server;
pub mod listings;
pub mod lsp;
pub mod messages;
pub mod monitor;
pub mod process;
pub mod recorder;
pub mod roots;
pub mod router;
pub mod session;
pub mod settings;
pub mod sketches;
pub mod store;
pub mod supervisor;
pub mod symbol_index;
pub mod tsconfig;
pub mod vocabulary;
pub mod watcher;

pub use error::{Error, Result};
