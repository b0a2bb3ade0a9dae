//! Plain-text tables for terminal output, and the number formats they use.

/// A table with every column left-aligned.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    render_aligned(header, rows, header.len())
}

/// A table whose columns from `numbers_from` on are right-aligned, so the
/// digits of numbers line up.
pub fn render_aligned(header: &[&str], rows: &[Vec<String>], numbers_from: usize) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| if i >= numbers_from { format!("{:>width$}", c, width = w[i]) } else { format!("{:<width$}", c, width = w[i]) })
            .collect();
        format!("| {} |\n", parts.join(" | "))
    };
    let mut out = line(header.to_vec());
    out.push_str(&format!("|{}|\n", w.iter().map(|n| "-".repeat(n + 2)).collect::<Vec<_>>().join("|")));
    for r in rows {
        out.push_str(&line(r.iter().map(|s| s.as_str()).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_align_right() {
        let t = render_aligned(&["what", "n"], &[vec!["a".into(), "5".into()], vec!["bb".into(), "1,000".into()]], 1);
        assert_eq!(t, "| what |     n |\n|------|-------|\n| a    |     5 |\n| bb   | 1,000 |\n");
    }
}
