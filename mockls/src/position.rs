//! Columns as mockls reads and writes them: counted in the code units of
//! the encoding it advertises. Kept apart from Windlass's own converter,
//! so that a mistake in either shows up as a disagreement in the tests.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};

/// The unit a column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    /// The encoding a name stands for; anything else is counted in UTF-16,
    /// the protocol's default.
    pub fn named(name: &str) -> Self {
        match name {
            "utf-8" => Self::Utf8,
            "utf-32" => Self::Utf32,
            _ => Self::Utf16,
        }
    }

    fn units(self, character: char) -> usize {
        match self {
            Self::Utf8 => character.len_utf8(),
            Self::Utf16 => character.len_utf16(),
            Self::Utf32 => 1,
        }
    }

    /// The units before code point `column` of `line`.
    pub fn character(self, line: &str, column: usize) -> u32 {
        let units: usize = line.chars().take(column).map(|c| self.units(c)).sum();
        u32::try_from(units).unwrap_or(u32::MAX)
    }

    /// The code point `character` units into `line`: the one a unit falls
    /// inside, or the end of the line past it.
    pub fn column(self, line: &str, character: u32) -> usize {
        let wanted = usize::try_from(character).unwrap_or(usize::MAX);
        let mut units = 0;
        for (column, c) in line.chars().enumerate() {
            units += self.units(c);
            if units > wanted {
                return column;
            }
        }
        line.chars().count()
    }

    /// A range on one line, from code-point columns.
    pub fn range(self, line_text: &str, line: usize, start: usize, end: usize) -> Range {
        let line = u32::try_from(line).unwrap_or(u32::MAX);
        Range::new(
            Position::new(line, self.character(line_text, start)),
            Position::new(line, self.character(line_text, end)),
        )
    }

    /// The byte offset in `text` of a position.
    pub fn offset(self, text: &str, position: Position) -> usize {
        let wanted = usize::try_from(position.line).unwrap_or(usize::MAX);
        let mut offset = 0;
        for (index, line) in text.split('\n').enumerate() {
            if index == wanted {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let column = self.column(line, position.character);
                return offset + line.chars().take(column).map(char::len_utf8).sum::<usize>();
            }
            offset += line.len() + 1;
        }
        text.len()
    }
}

/// The name a server advertises for an encoding, unknown ones included.
pub fn kind(name: &str) -> PositionEncodingKind {
    PositionEncodingKind::from(name.to_owned())
}

/// Line `index` of `text`, without its line ending.
pub fn line_at(text: &str, index: usize) -> Option<&str> {
    let line = text.split('\n').nth(index)?;
    Some(line.strip_suffix('\r').unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::Encoding::{Utf8, Utf16, Utf32};
    use super::*;

    #[test]
    fn counts_columns_in_each_encoding() {
        let line = "a😀é";
        assert_eq!(
            [Utf8, Utf16, Utf32].map(|e| e.character(line, 3)),
            [7, 4, 3]
        );
        assert_eq!([Utf8, Utf16, Utf32].map(|e| e.column(line, 5)), [2, 3, 3]);
    }

    #[test]
    fn a_unit_inside_a_character_is_that_character() {
        assert_eq!(Utf16.column("😀x", 1), 0);
        assert_eq!(Utf8.column("é", 1), 0);
        assert_eq!(Utf16.column("ab", 9), 2);
    }

    #[test]
    fn unknown_names_count_in_utf16() {
        assert_eq!(Encoding::named("utf-7"), Utf16);
        assert_eq!(Encoding::named("utf-8"), Utf8);
    }

    #[test]
    fn finds_byte_offsets_of_positions() {
        let text = "ab\r\n😀x\n";
        assert_eq!(Utf16.offset(text, Position::new(0, 1)), 1);
        assert_eq!(Utf16.offset(text, Position::new(1, 2)), 8);
        assert_eq!(Utf8.offset(text, Position::new(1, 4)), 8);
        assert_eq!(Utf16.offset(text, Position::new(9, 0)), text.len());
    }
}
