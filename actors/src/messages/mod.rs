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
pub mod symbol_index;
pub mod watcher;

use crate::error::{Error, Result};
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use std::time::Duration;

/// Asks an actor, waiting at most `limit`; an actor that is gone or does
/// not answer in time is the tree shutting down.
pub async fn ask<M, T>(
    actor: &ActorRef<M>,
    message: impl FnOnce(RpcReplyPort<T>) -> M,
    limit: Duration,
) -> Result<T>
where
    M: ractor::Message,
    T: Send + 'static,
{
    match actor.call(message, Some(limit)).await {
        Ok(CallResult::Success(value)) => Ok(value),
        _ => Err(Error::ShuttingDown),
    }
}
