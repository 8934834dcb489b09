//! The words every layer shares and no actor owns: what a tool answers
//! as data, before the gateway renders it for a model or the control
//! socket carries it to a command or a hook. Imports nothing from the
//! actors.

pub mod counted;
pub mod diagnostics;
pub mod documents;
pub mod events;
pub mod file_changes;
pub mod ids;
pub mod root_set;
pub mod running;
pub mod server_states;
pub mod status;
