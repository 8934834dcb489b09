//! Each actor's inbox: its message enum and the types that travel in it,
//! one file per actor, named after it. Every actor imports these and none
//! is imported here, so an actor can write to any other without the two
//! importing each other; only a parent imports its children, to spawn
//! them.

pub mod gateway;
pub mod language_server;
pub mod monitor;
pub mod recorder;
pub mod roots;
pub mod router;
pub mod session;
pub mod supervisor;
pub mod watcher;
