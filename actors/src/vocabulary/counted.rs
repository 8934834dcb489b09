//! How a count reads in an answer: `1 file`, `3 files`, `2 matches`.

use std::fmt::Display;

/// `count` with `noun`, plural unless the count is one.
pub fn counted<N: Display + PartialEq + From<u8>>(count: N, noun: &str) -> String {
    if count == N::from(1) {
        return format!("1 {noun}");
    }
    let ending = match ["s", "x", "ch", "sh"]
        .iter()
        .any(|sibilant| noun.ends_with(sibilant))
    {
        true => "es",
        false => "s",
    };
    format!("{count} {noun}{ending}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1usize, "file"), "1 file");
        assert_eq!(counted(0usize, "file"), "0 files");
        assert_eq!(counted(12u64, "error"), "12 errors");
        assert_eq!(counted(2u64, "match"), "2 matches");
    }
}
