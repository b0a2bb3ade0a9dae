//! Plain-text tables for terminal output.

pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let parts: Vec<String> = cells.iter().enumerate().map(|(i, c)| format!("{:<width$}", c, width = w[i])).collect();
        format!("| {} |\n", parts.join(" | "))
    };
    let mut out = line(header.to_vec());
    out.push_str(&format!("|{}|\n", w.iter().map(|n| "-".repeat(n + 2)).collect::<Vec<_>>().join("|")));
    for r in rows {
        out.push_str(&line(r.iter().map(|s| s.as_str()).collect()));
    }
    out
}
