//! Conversion between the columns agents use and the columns servers use.
//!
//! Agents count columns in Unicode code points; an LSP server counts them in
//! the code units of the position encoding it negotiated (UTF-16 unless it
//! said otherwise). Pure functions over one line of text.

/// A negotiated LSP position encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl PositionEncoding {
    /// Reads the encoding name a server announced; unknown names fall back
    /// to UTF-16, the protocol's default.
    pub fn from_lsp_name(name: &str) -> Self {
        match name.to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" => Self::Utf8,
            "utf-32" | "utf32" => Self::Utf32,
            _ => Self::Utf16,
        }
    }

    pub fn lsp_name(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf16 => "utf-16",
            Self::Utf32 => "utf-32",
        }
    }

    fn units(self, character: char) -> usize {
        match self {
            Self::Utf8 => character.len_utf8(),
            Self::Utf16 => character.len_utf16(),
            Self::Utf32 => 1,
        }
    }

    /// Code-point column (0-based) to this encoding's column on `line`.
    /// A column past the end of the line maps past the end by the same
    /// number of code points, so a server can still reject it.
    pub fn encode_column(self, line: &str, code_points: usize) -> u32 {
        let mut units = 0usize;
        let mut counted = 0usize;
        for character in line.chars().take(code_points) {
            units += self.units(character);
            counted += 1;
        }
        saturating_u32(units + (code_points - counted))
    }

    /// This encoding's column on `line` to a code-point column (0-based).
    /// A column that falls inside a character counts that character.
    pub fn decode_column(self, line: &str, column: u32) -> usize {
        let target = column as usize;
        let mut units = 0usize;
        let mut code_points = 0usize;
        for character in line.chars() {
            if units >= target {
                return code_points;
            }
            units += self.units(character);
            code_points += 1;
        }
        code_points + target.saturating_sub(units)
    }
}

fn saturating_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The last line a range covers (0-based). A range that ends at the
/// start of a line stops before it: yaml-language-server ends each block
/// at the first column of the next, and counting that line would have
/// every block hold the first line of the next.
pub fn last_line(range: &lsp_types::Range) -> u32 {
    match range.end.character == 0 && range.end.line > range.start.line {
        true => range.end.line - 1,
        false => range.end.line,
    }
}

/// Returns line `index` (0-based) of `text` without its line terminator.
pub fn line_at(text: &str, index: usize) -> Option<&str> {
    text.split('\n')
        .nth(index)
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::PositionEncoding::{Utf8, Utf16, Utf32};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_columns_per_encoding() {
        // (line, code-point column, utf-8, utf-16, utf-32)
        let cases = [
            ("abc", 2, 2, 2, 2),
            ("é = x", 4, 5, 4, 4),
            ("😀 x", 2, 5, 3, 2),
            ("日本語 name", 4, 10, 4, 4),
            ("", 0, 0, 0, 0),
            ("ab", 5, 5, 5, 5),
        ];
        for (line, column, utf8, utf16, utf32) in cases {
            assert_eq!(Utf8.encode_column(line, column), utf8, "{line:?} utf-8");
            assert_eq!(Utf16.encode_column(line, column), utf16, "{line:?} utf-16");
            assert_eq!(Utf32.encode_column(line, column), utf32, "{line:?} utf-32");
        }
    }

    #[test]
    fn decodes_inside_a_surrogate_pair_to_the_next_character() {
        assert_eq!(Utf16.decode_column("😀x", 1), 1);
        assert_eq!(Utf16.decode_column("😀x", 2), 1);
        assert_eq!(Utf8.decode_column("é", 1), 1);
    }

    #[test]
    fn reads_encoding_names() {
        assert_eq!(PositionEncoding::from_lsp_name("utf-8"), Utf8);
        assert_eq!(PositionEncoding::from_lsp_name("UTF-32"), Utf32);
        assert_eq!(PositionEncoding::from_lsp_name("utf-16"), Utf16);
        assert_eq!(PositionEncoding::from_lsp_name("latin-1"), Utf16);
    }

    #[test]
    fn finds_lines_with_crlf() {
        let text = "one\r\ntwo\nthree";
        assert_eq!(line_at(text, 0), Some("one"));
        assert_eq!(line_at(text, 1), Some("two"));
        assert_eq!(line_at(text, 2), Some("three"));
        assert_eq!(line_at(text, 3), None);
    }

    proptest! {
        #[test]
        fn names_that_are_no_known_encoding_count_in_utf16(name in "\\PC{0,12}") {
            let known = ["utf-8", "utf-32"].contains(&name.to_ascii_lowercase().as_str());
            prop_assume!(!known);
            prop_assert_eq!(PositionEncoding::from_lsp_name(&name), Utf16);
        }

        #[test]
        fn decode_inverts_encode(line in "\\PC{0,40}", column in 0usize..50) {
            for encoding in [Utf8, Utf16, Utf32] {
                let encoded = encoding.encode_column(&line, column);
                prop_assert_eq!(encoding.decode_column(&line, encoded), column);
            }
        }
    }

    #[test]
    fn a_range_ending_at_a_line_start_stops_before_it() {
        let range = |start: u32, end: u32, character: u32| lsp_types::Range {
            start: lsp_types::Position::new(start, 2),
            end: lsp_types::Position::new(end, character),
        };
        assert_eq!(last_line(&range(3, 7, 0)), 6);
        assert_eq!(last_line(&range(3, 7, 4)), 7);
        assert_eq!(last_line(&range(3, 3, 0)), 3);
    }
}
