//! A minimal column-aligned text table (left-aligned first column, right-aligned numbers).

#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    left: Vec<bool>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let mut left = vec![false; header.len()];
        left[0] = true;
        Table {
            header,
            rows: Vec::new(),
            left,
        }
    }

    /// Aligns column `i` to the left (text), instead of the right (numbers).
    pub fn left(mut self, i: usize) -> Table {
        self.left[i] = true;
        self
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table, each line prefixed by `indent`.
    pub fn render(&self, indent: &str) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::from(indent);
            for (i, cell) in cells.iter().enumerate().take(columns) {
                let pad = widths[i] - cell.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                if self.left[i] {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(["name", "MiB/s", "note"]).left(2);
        t.row(["write", "1003.23", "a"]);
        t.row(["random read", "9.10", "bb"]);
        assert_eq!(
            t.render("  "),
            "  name           MiB/s  note\n  write        1003.23  a\n  random read     9.10  bb\n"
        );
    }
}
