//! The ids that name sessions and pooled servers everywhere: in messages
//! between actors, in the event store and on the control socket.

use std::fmt;

/// A session's id: random, shown as eight base-36 characters, so that it
/// is short and unique among every session the store has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// Ids below this show in eight base-36 characters.
const ID_SPACE: u64 = 36u64.pow(8);

impl SessionId {
    pub fn random() -> Self {
        use std::hash::{BuildHasher, Hasher};
        // A fresh `RandomState` is seeded from the OS's randomness.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos()),
        );
        Self(hasher.finish() % ID_SPACE)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut shown = [b'0'; 8];
        let mut rest = self.0;
        for digit in shown.iter_mut().rev() {
            *digit = DIGITS[(rest % 36) as usize];
            rest /= 36;
        }
        formatter.write_str(std::str::from_utf8(&shown).unwrap_or("????????"))
    }
}

/// One pooled server, for as long as the daemon keeps it: its processes
/// come and go (crashes, restarts, idle stops), its id stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(pub u64);
