//! Tables whose cells the caller has formatted (comparisons and
//! experiments, whose numbers come from pelt-analyze), drawn as aligned
//! text, markdown or, by [`crate::html`], HTML.

use std::fmt::Write;

/// A head row and body rows of formatted cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Column titles.
    pub head: Vec<String>,
    /// Body rows, one cell per column (a short row leaves cells out).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Aligned columns, each line indented by two spaces: the first column
    /// (and, in a table wider than six columns, the last) left-aligned,
    /// the others right-aligned.
    pub fn text(&self) -> String {
        let cols = self.head.len();
        let mut widths = vec![0usize; cols];
        for row in std::iter::once(&self.head).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut o = String::new();
        for row in std::iter::once(&self.head).chain(&self.rows) {
            let line: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 || i + 1 == cols && cols > 6 {
                        format!("{c:<w$}", w = widths[i.min(cols - 1)])
                    } else {
                        format!("{c:>w$}", w = widths[i.min(cols - 1)])
                    }
                })
                .collect();
            let _ = writeln!(o, "  {}", line.join("  ").trim_end());
        }
        o
    }

    /// A GitHub-flavoured markdown table, `|` in cells escaped.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut o = format!(
            "| {} |\n|{}\n",
            self.head
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | "),
            "---|".repeat(self.head.len())
        );
        for row in &self.rows {
            let _ = writeln!(
                o,
                "| {} |",
                row.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            head: vec!["variant".into(), "runs".into()],
            rows: vec![
                vec!["a|b".into(), "10".into()],
                vec!["long name".into(), "2".into()],
            ],
        }
    }

    #[test]
    fn text_aligns_names_left_and_numbers_right() {
        assert_eq!(
            table().text(),
            "  variant    runs\n  a|b          10\n  long name     2\n"
        );
    }

    #[test]
    fn markdown_escapes_pipes() {
        assert_eq!(
            table().markdown(),
            "| variant | runs |\n|---|---|\n| a\\|b | 10 |\n| long name | 2 |\n"
        );
    }
}
