//! The ids that name sessions and pooled servers everywhere: in messages
//! between actors, in the event store and on the control socket.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A session's id: random, shown as eight base-36 characters, so that it
/// is short and unique among every session the store has seen. It is
/// written as it is shown, in JSON and in the store alike, and read back
/// only from that form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// Ids below this show in eight base-36 characters.
const ID_SPACE: u64 = 36u64.pow(8);
/// The digits a session id is shown in.
const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

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
        let mut shown = [b'0'; 8];
        let mut rest = self.0;
        for digit in shown.iter_mut().rev() {
            *digit = DIGITS[(rest % 36) as usize];
            rest /= 36;
        }
        formatter.write_str(std::str::from_utf8(&shown).unwrap_or("????????"))
    }
}

/// A text that is not a session id as one is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a session id (eight characters of 0-9 and a-z)")]
pub struct NotASessionId(pub String);

impl FromStr for SessionId {
    type Err = NotASessionId;

    /// Reads only what [`SessionId`]'s `Display` writes, so that an id
    /// read and shown again is the same text.
    fn from_str(text: &str) -> Result<Self, NotASessionId> {
        if text.len() != 8 {
            return Err(NotASessionId(text.to_owned()));
        }
        text.bytes()
            .try_fold(0u64, |id, byte| {
                let digit = DIGITS.iter().position(|known| *known == byte)?;
                Some(id * 36 + digit as u64)
            })
            .map(Self)
            .ok_or_else(|| NotASessionId(text.to_owned()))
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One pooled server, for as long as the daemon keeps it: its processes
/// come and go (crashes, restarts, idle stops), its id stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(pub u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_read_back_from_the_text_it_shows() {
        for id in [
            SessionId(0),
            SessionId(35),
            SessionId::random(),
            SessionId(ID_SPACE - 1),
        ] {
            let shown = id.to_string();
            assert_eq!(shown.len(), 8);
            assert_eq!(shown.parse(), Ok(id));
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, format!("\"{shown}\""));
            assert_eq!(serde_json::from_str::<SessionId>(&json).unwrap(), id);
        }
        for not_one in ["", "s1", "0000000A", "000000000", "0000-000", "ééééé"] {
            assert_eq!(
                not_one.parse::<SessionId>(),
                Err(NotASessionId(not_one.to_owned()))
            );
        }
        assert!(serde_json::from_str::<SessionId>("\"abc\"").is_err());
        assert!(serde_json::from_str::<SessionId>("12").is_err());
    }
}
