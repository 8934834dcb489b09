//! The words every layer shares and no actor owns: what a tool answers
//! as data, before the gateway renders it for a model or the control
//! socket carries it to a command or a hook, and the counters two actors
//! share without messages (a session's calls in flight, a server's
//! usage). Imports nothing from the actors.

pub mod client;
pub mod counted;
pub mod diagnostics;
pub mod documents;
pub mod edit_effect;
pub mod events;
pub mod file_changes;
pub mod ids;
pub mod root_set;
pub mod running;
pub mod server_states;
pub mod status;
pub mod usage;
