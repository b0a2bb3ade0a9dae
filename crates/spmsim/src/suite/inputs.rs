//! The suite's inputs, made by the repo: every generator is seeded and
//! deterministic, so an input is fixed by its kind, seed and size, and its
//! SHA-256 checksum in a manifest says which bytes a trace was recorded on.
//! Nothing is downloaded.
//!
//! | kind | size means | used by |
//! |---|---|---|
//! | `text` | bytes of pseudo-English prose (Zipf-distributed vocabulary) | compressors, perl, python |
//! | `c-source` | functions in a generated C file (no #include) | gcc (cc1) |
//! | `sql` | rows of the largest table of a generated SQL script | sqlite3 |
//! | `gtp` | `genmove` commands after a generated opening (GTP) | gnugo |
//! | `xboard` | chess positions (random legal placements) to search to `depth` | hoichess |
//! | `protein-msa` | sequences in a Stockholm alignment of one protein family | hmmbuild |
//! | `protein-db` | sequences in a FASTA database, every 40th a family member | hmmsearch |
//! | `ppm` | image width in pixels (height 3/4 of it), binary PPM | image encoders |
//! | `y4m` | frames of a 352x288 4:2:0 clip with moving objects | video encoders |
//! | `wav` | seconds of 44.1 kHz 16-bit stereo music-like audio | audio encoders |
//! | `lp` | constraints of a sparse LP in CPLEX LP format | glpsol |
//! | `csv` | rows of a generated transaction log | gawk |

use crate::util::rng::SplitMix64;
use std::fmt::Write as _;

/// The generated kinds (`file` and `derived` inputs are handled by the
/// suite loader: a file is copied, a derived input is made by a command).
pub const GENERATED: [&str; 12] =
    ["text", "c-source", "sql", "gtp", "xboard", "protein-msa", "protein-db", "ppm", "y4m", "wav", "lp", "csv"];

/// The file extension an input of `kind` is written with.
pub fn extension(kind: &str) -> &'static str {
    match kind {
        "text" => "txt",
        "c-source" => "c",
        "sql" => "sql",
        "gtp" => "gtp",
        "xboard" => "xboard",
        "protein-msa" => "sto",
        "protein-db" => "fasta",
        "ppm" => "ppm",
        "y4m" => "y4m",
        "wav" => "wav",
        "lp" => "lp",
        "csv" => "csv",
        _ => "dat",
    }
}

/// The bytes of a generated input. `depth` is used by `xboard` only.
pub fn generate(kind: &str, seed: u64, size: u64, depth: u32) -> Result<Vec<u8>, String> {
    if size == 0 {
        return Err(format!("input kind `{kind}`: size must be at least 1"));
    }
    let mut r = Rng::new(kind, seed);
    Ok(match kind {
        "text" => text(&mut r, size as usize),
        "c-source" => c_source(&mut r, size as usize).into_bytes(),
        "sql" => sql(&mut r, size as usize).into_bytes(),
        "gtp" => gtp(&mut r, size as usize).into_bytes(),
        "xboard" => xboard(&mut r, size as usize, depth).into_bytes(),
        "protein-msa" => protein_msa(seed, size as usize).into_bytes(),
        "protein-db" => protein_db(seed, size as usize).into_bytes(),
        "ppm" => ppm(&mut r, size as usize),
        "y4m" => y4m(&mut r, size as usize),
        "wav" => wav(&mut r, size as usize),
        "lp" => lp(&mut r, size as usize).into_bytes(),
        "csv" => csv(&mut r, size as usize).into_bytes(),
        _ => return Err(format!("unknown input kind `{kind}`; known kinds: {}, file, derived", GENERATED.join(", "))),
    })
}

/// SHA-256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// SplitMix64 with helpers; the kind is mixed into the seed so that two
/// kinds with the same seed do not share a stream.
struct Rng(SplitMix64);

impl Rng {
    fn new(kind: &str, seed: u64) -> Self {
        let salt = kind.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        Rng(SplitMix64::new(seed ^ salt))
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.0.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------- text

const ONSETS: [&str; 24] =
    ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "pl", "gr", "ch", "sh", "th"];
const VOWELS: [&str; 9] = ["a", "e", "i", "o", "u", "ea", "ou", "ai", "io"];
const CODAS: [&str; 12] = ["", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "rk"];

/// A vocabulary of distinct made-up words, short ones first (the frequent
/// words of a language are short).
fn vocabulary(r: &mut Rng, n: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let syllables = 1 + (v.len() * 4 / n) as u64 + r.below(2);
        let mut w = String::new();
        for _ in 0..syllables {
            w.push_str(r.pick::<&str>(&ONSETS));
            w.push_str(r.pick::<&str>(&VOWELS));
            w.push_str(r.pick::<&str>(&CODAS));
        }
        if seen.insert(w.clone()) {
            v.push(w);
        }
    }
    v
}

/// Zipf sampler over `n` ranks (weight 1/(rank+1)).
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize) -> Self {
        let mut c = Vec::with_capacity(n);
        let mut s = 0.0;
        for i in 0..n {
            s += 1.0 / (i as f64 + 1.0);
            c.push(s);
        }
        for x in &mut c {
            *x /= s;
        }
        Zipf(c)
    }
    fn sample(&self, r: &mut Rng) -> usize {
        let u = r.unit();
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

fn text(r: &mut Rng, size: usize) -> Vec<u8> {
    let words = vocabulary(r, 6000);
    let zipf = Zipf::new(words.len());
    let mut out = String::with_capacity(size + 200);
    let mut line_len = 0;
    let push_word = |out: &mut String, w: &str, line_len: &mut usize| {
        if *line_len > 0 && *line_len + 1 + w.len() > 72 {
            out.push('\n');
            *line_len = 0;
        } else if *line_len > 0 {
            out.push(' ');
            *line_len += 1;
        }
        out.push_str(w);
        *line_len += w.len();
    };
    while out.len() < size {
        for _ in 0..r.range(3, 8) {
            let n = r.range(4, 22);
            for i in 0..n {
                let mut w = if r.chance(0.03) {
                    match r.below(3) {
                        0 => format!("{}", r.range(1800, 2030)),
                        1 => format!("{}.{:02}", r.range(1, 9999), r.below(100)),
                        _ => format!("{}%", r.range(1, 100)),
                    }
                } else {
                    words[zipf.sample(r)].clone()
                };
                if i == 0 || r.chance(0.02) {
                    let mut c = w.chars();
                    w = match c.next() {
                        Some(f) => f.to_uppercase().chain(c).collect(),
                        None => w,
                    };
                }
                if i + 1 == n {
                    w.push(*r.pick(&['.', '.', '.', '.', '?', '!']));
                } else if r.chance(0.08) {
                    w.push(*r.pick(&[',', ',', ',', ';', ':']));
                }
                push_word(&mut out, &w, &mut line_len);
            }
        }
        out.push_str("\n\n");
        line_len = 0;
    }
    out.truncate(size);
    out.into_bytes()
}

// ---------------------------------------------------------------- C

fn c_expr(r: &mut Rng, vars: &[String], depth: u32) -> String {
    if depth == 0 || r.chance(0.3) {
        return if r.chance(0.6) { r.pick(vars).clone() } else { format!("{}", r.range(1, 999)) };
    }
    let a = c_expr(r, vars, depth - 1);
    let b = c_expr(r, vars, depth - 1);
    match r.below(10) {
        0 => format!("({a} + {b})"),
        1 => format!("({a} - {b})"),
        2 => format!("({a} * {b})"),
        3 => format!("({a} ^ {b})"),
        4 => format!("({a} & {b})"),
        5 => format!("({a} | {b})"),
        6 => format!("({a} >> ({b} & 7))"),
        7 => format!("({a} << ({b} & 7))"),
        8 => format!("({a} < {b} ? {a} : {b})"),
        _ => format!("({a} / (({b} & 15) + 1))"),
    }
}

fn c_statement(r: &mut Rng, vars: &[String], depth: u32, funcs: usize, out: &mut String, indent: usize) {
    let pad = "    ".repeat(indent);
    let v = r.pick(vars).clone();
    match if depth == 0 { 0 } else { r.below(8) } {
        0 | 1 => {
            let e = c_expr(r, vars, 3);
            let op = r.pick(&["=", "+=", "-=", "^=", "|="]);
            let _ = writeln!(out, "{pad}{v} {op} {e};");
        }
        2 => {
            let _ = writeln!(out, "{pad}for (int i{depth} = 0; i{depth} < {}; i{depth}++) {{", r.range(4, 64));
            let _ = writeln!(out, "{pad}    buf[(i{depth} + {v}) & 63] += {};", c_expr(r, vars, 2));
            for _ in 0..r.range(1, 3) {
                c_statement(r, vars, depth - 1, funcs, out, indent + 1);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        3 => {
            let _ = writeln!(out, "{pad}if ({} > {}) {{", c_expr(r, vars, 2), c_expr(r, vars, 2));
            c_statement(r, vars, depth - 1, funcs, out, indent + 1);
            let _ = writeln!(out, "{pad}}} else {{");
            c_statement(r, vars, depth - 1, funcs, out, indent + 1);
            let _ = writeln!(out, "{pad}}}");
        }
        4 => {
            let _ = writeln!(out, "{pad}switch ({v} & 7) {{");
            for k in 0..r.range(2, 6) {
                let _ = writeln!(out, "{pad}case {k}:");
                c_statement(r, vars, depth - 1, funcs, out, indent + 1);
                let _ = writeln!(out, "{pad}    break;");
            }
            let _ = writeln!(out, "{pad}default:\n{pad}    {v}++;\n{pad}}}");
        }
        5 if funcs > 0 => {
            let f = r.below(funcs as u64);
            let _ = writeln!(out, "{pad}{v} += f{f}({}, {}, &st);", c_expr(r, vars, 2), c_expr(r, vars, 1));
        }
        6 => {
            let _ = writeln!(out, "{pad}st.a[{v} & 15] = st.a[({v} + 1) & 15] * 3 + {};", c_expr(r, vars, 2));
            let _ = writeln!(out, "{pad}st.d = st.d * 0.5 + (double){v} / 3.0;");
        }
        _ => {
            let _ = writeln!(out, "{pad}while ({v} > 1000) {{ {v} = ({v} >> 1) ^ {}; }}", r.range(1, 99));
        }
    }
}

fn c_source(r: &mut Rng, functions: usize) -> String {
    let mut out = String::from("/* Generated by spmsim suite: a fixed C file for the gcc entry. */\n\n");
    out.push_str("extern int printf(const char *, ...);\n\n");
    out.push_str("struct state { long a[16]; double d; int tag; };\n");
    out.push_str("static long table[256];\n\n");
    for f in 0..functions {
        let nlocals = r.range(2, 6) as usize;
        let mut vars: Vec<String> = vec!["x".into(), "y".into()];
        vars.extend((0..nlocals).map(|i| format!("v{i}")));
        let _ = writeln!(out, "long f{f}(long x, long y, struct state *sp)\n{{");
        let _ = writeln!(out, "    struct state st = *sp;\n    long buf[64] = {{0}};");
        for (i, v) in vars.iter().skip(2).enumerate() {
            let _ = writeln!(out, "    long {v} = x * {} + y + {i};", r.range(1, 50));
        }
        for _ in 0..r.range(3, 9) {
            c_statement(r, &vars, 3, f, &mut out, 1);
        }
        let _ = writeln!(out, "    table[{} & 255] += buf[x & 63];", r.pick(&vars));
        let _ = writeln!(out, "    sp->tag ^= (int){};", r.pick(&vars));
        let _ = writeln!(out, "    return {} + (long)st.d + st.a[3];\n}}\n", vars.join(" + "));
    }
    out.push_str("int main(void)\n{\n    struct state st = { {0}, 1.0, 0 };\n    long s = 0;\n");
    for f in (0..functions).step_by(functions.div_ceil(32).max(1)) {
        let _ = writeln!(out, "    s += f{f}({}, s, &st);", r.range(1, 100));
    }
    out.push_str("    printf(\"%ld %d\\n\", s, st.tag);\n    return 0;\n}\n");
    out
}

// ---------------------------------------------------------------- SQL

fn sql(r: &mut Rng, rows: usize) -> String {
    const CITIES: [&str; 12] =
        ["Aberton", "Brisk", "Calder", "Dunmore", "Eastwick", "Fairhaven", "Glenrock", "Harlow", "Ivybridge", "Jarrow", "Kelso", "Lowick"];
    const ITEMS: [&str; 10] = ["bolt", "nut", "gear", "valve", "pump", "belt", "chain", "spring", "bearing", "seal"];
    let customers = (rows / 10).max(10);
    let products = (rows / 50).max(10);
    let mut o = String::from("-- Generated by spmsim suite: a fixed SQL script for the sqlite3 entry.\nPRAGMA cache_size = -8000;\n");
    o.push_str("CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);\n");
    o.push_str("CREATE TABLE product(id INTEGER PRIMARY KEY, name TEXT, price REAL, weight REAL);\n");
    o.push_str("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER, qty INTEGER, day INTEGER, note TEXT);\n");
    o.push_str("BEGIN;\n");
    for i in 1..=customers {
        let _ =
            writeln!(o, "INSERT INTO customer VALUES({i}, 'cust{:05}', '{}', {});", r.below(100_000), r.pick(&CITIES), r.range(2000, 2024));
    }
    for i in 1..=products {
        let _ = writeln!(
            o,
            "INSERT INTO product VALUES({i}, '{}-{}', {}.{:02}, {}.{});",
            r.pick(&ITEMS),
            r.below(1000),
            r.range(1, 500),
            r.below(100),
            r.range(0, 40),
            r.below(10)
        );
    }
    for i in 1..=rows {
        let note = if r.chance(0.2) { format!("'rush {}'", r.below(50)) } else { "NULL".into() };
        let _ = writeln!(
            o,
            "INSERT INTO orders VALUES({i}, {}, {}, {}, {}, {note});",
            r.range(1, customers as u64),
            r.range(1, products as u64),
            r.range(1, 20),
            r.range(1, 730)
        );
    }
    o.push_str("COMMIT;\n");
    o.push_str("CREATE INDEX orders_customer ON orders(customer);\nCREATE INDEX orders_day ON orders(day, product);\nANALYZE;\n");
    o.push_str("SELECT c.city, count(*), sum(o.qty * p.price) FROM orders o JOIN customer c ON c.id = o.customer JOIN product p ON p.id = o.product GROUP BY c.city ORDER BY 3 DESC;\n");
    o.push_str("SELECT p.name, sum(o.qty) AS n FROM orders o JOIN product p ON p.id = o.product GROUP BY p.id ORDER BY n DESC LIMIT 20;\n");
    o.push_str("SELECT day / 30 AS month, count(*), avg(qty), max(qty) FROM orders GROUP BY month ORDER BY month;\n");
    o.push_str("SELECT c.name, t.total FROM (SELECT customer, sum(qty) AS total FROM orders GROUP BY customer) t JOIN customer c ON c.id = t.customer ORDER BY t.total DESC, c.name LIMIT 25;\n");
    o.push_str("SELECT customer, day, qty, sum(qty) OVER (PARTITION BY customer ORDER BY day, id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM orders WHERE customer % 7 = 3 ORDER BY customer, day, id LIMIT 200;\n");
    o.push_str("WITH RECURSIVE chain(n, v) AS (SELECT 1, 7 UNION ALL SELECT n + 1, (v * 1103515245 + 12345) % 2147483648 FROM chain WHERE n < 20000) SELECT count(*), sum(v % 1000) FROM chain;\n");
    o.push_str("UPDATE orders SET qty = qty + 1 WHERE day % 5 = 0;\nDELETE FROM orders WHERE note LIKE 'rush 1%';\n");
    o.push_str("SELECT count(*), sum(qty) FROM orders WHERE product IN (SELECT id FROM product WHERE price > 250.0);\n");
    o.push_str("SELECT c.city, p.name, count(*) FROM orders o JOIN customer c ON c.id = o.customer JOIN product p ON p.id = o.product WHERE o.day BETWEEN 100 AND 400 GROUP BY 1, 2 HAVING count(*) > 2 ORDER BY 3 DESC, 1, 2 LIMIT 30;\n");
    o.push_str("CREATE TABLE summary AS SELECT customer, product, sum(qty) AS q FROM orders GROUP BY customer, product;\nSELECT count(*), max(q) FROM summary;\n");
    o
}

// ---------------------------------------------------------------- go

/// A GTP session: a 19x19 board with a generated opening of isolated
/// stones (every one legal: no stone touches another), then `genmove`s.
fn gtp(r: &mut Rng, moves: usize) -> String {
    const COLS: &[u8] = b"ABCDEFGHJKLMNOPQRST";
    let mut o = String::from("boardsize 19\nclear_board\nkomi 6.5\n");
    let mut board = [[false; 19]; 19];
    let stones = 12 + r.below(8) as usize;
    let mut placed = 0;
    let mut tries = 0;
    while placed < stones && tries < 10_000 {
        tries += 1;
        let (x, y) = (r.range(2, 16) as usize, r.range(2, 16) as usize);
        let free = (x.saturating_sub(1)..=(x + 1).min(18)).all(|i| (y.saturating_sub(1)..=(y + 1).min(18)).all(|j| !board[i][j]));
        if free {
            board[x][y] = true;
            let _ = writeln!(o, "play {} {}{}", if placed % 2 == 0 { "black" } else { "white" }, COLS[x] as char, y + 1);
            placed += 1;
        }
    }
    for i in 0..moves {
        let _ = writeln!(o, "genmove {}", if (placed + i) % 2 == 0 { "black" } else { "white" });
    }
    o.push_str("quit\n");
    o
}

// ---------------------------------------------------------------- chess

/// Is square (f, rk) attacked by a piece of `white`'s side? Board squares
/// hold FEN letters, upper case white.
fn attacked(b: &[[u8; 8]; 8], f: i32, rk: i32, white: bool) -> bool {
    let at = |f: i32, rk: i32| if (0..8).contains(&f) && (0..8).contains(&rk) { Some(b[rk as usize][f as usize]) } else { None };
    let own = |c: u8, p: u8| c == if white { p.to_ascii_uppercase() } else { p };
    // A white pawn attacks the row above it (FEN rows count down from rank 8).
    let pawn_dir = if white { 1 } else { -1 };
    for df in [-1, 1] {
        if at(f + df, rk + pawn_dir).is_some_and(|c| own(c, b'p')) {
            return true;
        }
    }
    for (df, dr) in [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)] {
        if at(f + df, rk + dr).is_some_and(|c| own(c, b'n')) {
            return true;
        }
    }
    for df in -1..=1 {
        for dr in -1..=1 {
            if (df, dr) != (0, 0) && at(f + df, rk + dr).is_some_and(|c| own(c, b'k')) {
                return true;
            }
        }
    }
    for (df, dr, straight) in
        [(1, 0, true), (-1, 0, true), (0, 1, true), (0, -1, true), (1, 1, false), (1, -1, false), (-1, 1, false), (-1, -1, false)]
    {
        let (mut x, mut y) = (f + df, rk + dr);
        while let Some(c) = at(x, y) {
            if c != 0 {
                if own(c, b'q') || own(c, if straight { b'r' } else { b'b' }) {
                    return true;
                }
                break;
            }
            x += df;
            y += dr;
        }
    }
    false
}

/// A random legal position: kings apart, no pawn on the first or last
/// rank, neither king in check.
fn chess_position(r: &mut Rng) -> String {
    loop {
        let mut b = [[0u8; 8]; 8];
        let mut free: Vec<(usize, usize)> = (0..64).map(|i| (i / 8, i % 8)).collect();
        let mut put = |b: &mut [[u8; 8]; 8], r: &mut Rng, piece: u8, ranks: std::ops::RangeInclusive<usize>| {
            let cand: Vec<usize> = (0..free.len()).filter(|&i| ranks.contains(&free[i].0)).collect();
            if cand.is_empty() {
                return;
            }
            let (rk, f) = free.swap_remove(*r.pick(&cand));
            b[rk][f] = piece;
        };
        put(&mut b, r, b'K', 0..=7);
        put(&mut b, r, b'k', 0..=7);
        for white in [true, false] {
            let case = |p: u8| if white { p.to_ascii_uppercase() } else { p };
            // FEN rows run from rank 8 (row 0) to rank 1 (row 7).
            let pawn_rows = if white { 3..=6 } else { 1..=4 };
            for _ in 0..r.range(3, 7) {
                put(&mut b, r, case(b'p'), pawn_rows.clone());
            }
            for (p, lo, hi) in [(b'n', 0, 2), (b'b', 0, 2), (b'r', 0, 2), (b'q', 0, 1)] {
                for _ in 0..r.range(lo, hi) {
                    put(&mut b, r, case(p), 0..=7);
                }
            }
        }
        let find = |k: u8| (0..64i32).map(|i| (i % 8, i / 8)).find(|&(f, rk)| b[rk as usize][f as usize] == k).unwrap();
        let (wk, bk) = (find(b'K'), find(b'k'));
        if (wk.0 - bk.0).abs() <= 1 && (wk.1 - bk.1).abs() <= 1 {
            continue;
        }
        if attacked(&b, wk.0, wk.1, false) || attacked(&b, bk.0, bk.1, true) {
            continue;
        }
        let mut fen = String::new();
        for (i, row) in b.iter().enumerate() {
            let mut empty = 0;
            for &c in row {
                if c == 0 {
                    empty += 1;
                } else {
                    if empty > 0 {
                        fen.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    fen.push(c as char);
                }
            }
            if empty > 0 {
                fen.push((b'0' + empty) as char);
            }
            if i < 7 {
                fen.push('/');
            }
        }
        let side = if r.chance(0.5) { "w" } else { "b" };
        return format!("{fen} {side} - - 0 20");
    }
}

/// xboard commands: search each position to a fixed depth with no time
/// limit that could bind (a search ends by depth only, so it repeats).
fn xboard(r: &mut Rng, positions: usize, depth: u32) -> String {
    let depth = if depth == 0 { 6 } else { depth };
    let mut o = format!("easy\nnopost\nst 360000\nsd {depth}\n");
    for _ in 0..positions {
        let _ = writeln!(o, "force\nsetboard {}\ngo", chess_position(r));
    }
    o.push_str("force\nquit\n");
    o
}

// ---------------------------------------------------------------- proteins

const AMINO: &[u8] = b"ACDEFGHIKLMNPQRSTVWY";
/// Background frequencies of the amino acids above (Robinson & Robinson,
/// percent), rounded.
const AMINO_FREQ: [f64; 20] = [7.8, 1.9, 5.4, 6.3, 3.9, 7.4, 2.2, 5.1, 5.7, 9.0, 2.2, 4.5, 5.2, 4.3, 5.1, 7.1, 5.8, 6.4, 1.3, 3.2];

fn amino(r: &mut Rng) -> u8 {
    let total: f64 = AMINO_FREQ.iter().sum();
    let mut u = r.unit() * total;
    for (i, f) in AMINO_FREQ.iter().enumerate() {
        if u < *f {
            return AMINO[i];
        }
        u -= f;
    }
    b'L'
}

/// The family's consensus (180 residues), fixed by the seed.
fn family(seed: u64) -> Vec<u8> {
    let mut r = Rng::new("protein-family", seed);
    (0..180).map(|_| amino(&mut r)).collect()
}

/// A family member: the consensus with substitutions at rate `sub`.
fn member(r: &mut Rng, consensus: &[u8], sub: f64) -> Vec<u8> {
    consensus.iter().map(|&c| if r.chance(sub) { amino(r) } else { c }).collect()
}

fn protein_msa(seed: u64, n: usize) -> String {
    let mut r = Rng::new("protein-msa", seed);
    let cons = family(seed);
    let mut o = String::from("# STOCKHOLM 1.0\n#=GF ID spmsim-family\n");
    for i in 0..n {
        let mut s = member(&mut r, &cons, 0.25);
        // Short gaps, as an alignment of real homologs has.
        for _ in 0..r.below(3) {
            let at = r.below(s.len() as u64 - 8) as usize;
            for c in &mut s[at..at + r.range(1, 6) as usize] {
                *c = b'-';
            }
        }
        let _ = writeln!(o, "seq{i:04} {}", String::from_utf8(s).unwrap());
    }
    o.push_str("//\n");
    o
}

fn protein_db(seed: u64, n: usize) -> String {
    let mut r = Rng::new("protein-db", seed);
    let cons = family(seed);
    let mut o = String::new();
    for i in 0..n {
        let mut s: Vec<u8> = (0..r.range(60, 200)).map(|_| amino(&mut r)).collect();
        if i % 40 == 7 {
            s.extend(member(&mut r, &cons, 0.35));
            s.extend((0..r.range(10, 80)).map(|_| amino(&mut r)));
        } else {
            s.extend((0..r.range(40, 300)).map(|_| amino(&mut r)));
        }
        let _ = writeln!(o, ">db{i:06} generated sequence {i}");
        for chunk in s.chunks(60) {
            o.push_str(std::str::from_utf8(chunk).unwrap());
            o.push('\n');
        }
    }
    o
}

// ---------------------------------------------------------------- images, video, audio

/// A scene of overlapping shapes over gradients, with some noise: the
/// kind of content image and video encoders spend their time on.
struct Shape {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    dx: f64,
    dy: f64,
    color: [f64; 3],
    round: bool,
}

fn shapes(r: &mut Rng, n: usize, width: f64, height: f64) -> Vec<Shape> {
    (0..n)
        .map(|_| Shape {
            x: r.unit() * width,
            y: r.unit() * height,
            w: 8.0 + r.unit() * width / 5.0,
            h: 8.0 + r.unit() * height / 5.0,
            dx: r.unit() * 6.0 - 3.0,
            dy: r.unit() * 4.0 - 2.0,
            color: [r.unit() * 255.0, r.unit() * 255.0, r.unit() * 255.0],
            round: r.chance(0.5),
        })
        .collect()
}

fn scene_pixel(shapes: &[Shape], t: f64, x: f64, y: f64, width: f64, height: f64) -> [f64; 3] {
    let mut c = [
        60.0 + 120.0 * x / width + 20.0 * (y / 17.0 + t * 0.1).sin(),
        40.0 + 150.0 * y / height,
        90.0 + 60.0 * ((x + y) / 40.0 + t * 0.05).cos(),
    ];
    for s in shapes {
        let (cx, cy) = (s.x + s.dx * t, s.y + s.dy * t);
        let inside = if s.round {
            ((x - cx) / s.w).powi(2) + ((y - cy) / s.h).powi(2) < 0.25
        } else {
            (x - cx).abs() < s.w / 2.0 && (y - cy).abs() < s.h / 2.0
        };
        if inside {
            let stripe = if ((x + y) as i64 / 6) % 2 == 0 { 1.0 } else { 0.85 };
            c = [s.color[0] * stripe, s.color[1] * stripe, s.color[2] * stripe];
        }
    }
    c
}

fn clamp8(v: f64) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

fn ppm(r: &mut Rng, width: usize) -> Vec<u8> {
    let height = (width * 3 / 4).max(1);
    let sh = shapes(r, 40, width as f64, height as f64);
    let mut o = format!("P6\n{width} {height}\n255\n").into_bytes();
    o.reserve(width * height * 3);
    for y in 0..height {
        for x in 0..width {
            let c = scene_pixel(&sh, 0.0, x as f64, y as f64, width as f64, height as f64);
            for v in c {
                o.push(clamp8(v + r.unit() * 12.0 - 6.0));
            }
        }
    }
    o
}

fn y4m(r: &mut Rng, frames: usize) -> Vec<u8> {
    let (w, h) = (352usize, 288usize);
    let sh = shapes(r, 12, w as f64, h as f64);
    let mut o = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n").into_bytes();
    let mut rgb = vec![[0f64; 3]; w * h];
    for t in 0..frames {
        o.extend_from_slice(b"FRAME\n");
        // The camera pans slowly; the shapes move on their own.
        let pan = t as f64 * 1.5;
        for y in 0..h {
            for x in 0..w {
                rgb[y * w + x] = scene_pixel(&sh, t as f64, x as f64 + pan, y as f64, w as f64 * 1.5, h as f64);
            }
        }
        for p in &rgb {
            o.push(clamp8(0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] + r.unit() * 4.0 - 2.0));
        }
        for (off, coef) in [(128.0, [-0.1687, -0.3313, 0.5]), (128.0, [0.5, -0.4187, -0.0813])] {
            for y in (0..h).step_by(2) {
                for x in (0..w).step_by(2) {
                    let p = rgb[y * w + x];
                    o.push(clamp8(off + coef[0] * p[0] + coef[1] * p[1] + coef[2] * p[2]));
                }
            }
        }
    }
    o
}

fn wav(r: &mut Rng, seconds: usize) -> Vec<u8> {
    const RATE: usize = 44_100;
    let n = RATE * seconds;
    let data_len = (n * 4) as u32;
    let mut o = Vec::with_capacity(44 + n * 4);
    o.extend_from_slice(b"RIFF");
    o.extend_from_slice(&(36 + data_len).to_le_bytes());
    o.extend_from_slice(b"WAVEfmt ");
    o.extend_from_slice(&16u32.to_le_bytes());
    o.extend_from_slice(&1u16.to_le_bytes());
    o.extend_from_slice(&2u16.to_le_bytes());
    o.extend_from_slice(&(RATE as u32).to_le_bytes());
    o.extend_from_slice(&(RATE as u32 * 4).to_le_bytes());
    o.extend_from_slice(&4u16.to_le_bytes());
    o.extend_from_slice(&16u16.to_le_bytes());
    o.extend_from_slice(b"data");
    o.extend_from_slice(&data_len.to_le_bytes());
    // A melody of notes on a pentatonic scale, a bass line, and noise.
    let note_len = RATE / 4;
    let scale = [0, 2, 4, 7, 9, 12, 14, 16];
    let notes: Vec<f64> = (0..n / note_len + 1).map(|_| 220.0 * 2f64.powf(*r.pick(&scale) as f64 / 12.0)).collect();
    let bass: Vec<f64> = (0..n / (note_len * 4) + 1).map(|_| 55.0 * 2f64.powf(*r.pick(&scale[..4]) as f64 / 12.0)).collect();
    let (mut ph, mut phb) = (0.0f64, 0.0f64);
    let tau = std::f64::consts::TAU;
    for i in 0..n {
        let k = i / note_len;
        let env = {
            let p = (i % note_len) as f64 / note_len as f64;
            (p * 20.0).min(1.0) * (1.0 - p).powf(0.7)
        };
        ph = (ph + tau * notes[k] / RATE as f64) % tau;
        phb = (phb + tau * bass[i / (note_len * 4)] / RATE as f64) % tau;
        let melody = env * (ph.sin() + 0.4 * (2.0 * ph).sin() + 0.2 * (3.0 * ph).sin());
        let low = 0.6 * phb.sin();
        let noise = r.unit() - 0.5;
        let left = 7000.0 * melody + 6000.0 * low + 500.0 * noise;
        let right = 5000.0 * melody + 7000.0 * low + 500.0 * noise;
        for v in [left, right] {
            o.extend_from_slice(&(v.round().clamp(-32768.0, 32767.0) as i16).to_le_bytes());
        }
    }
    o
}

// ---------------------------------------------------------------- LP

/// A feasible, bounded LP: maximise a positive objective under `rows`
/// sparse `<=` constraints with positive coefficients, over 1.5x as many
/// non-negative variables, some with upper bounds.
fn lp(r: &mut Rng, rows: usize) -> String {
    let cols = rows * 3 / 2;
    let mut o = String::from("\\ Generated by spmsim suite: a fixed LP for the glpsol entry.\nMaximize\n obj:");
    for j in 0..cols {
        let _ = write!(o, " + {} x{j}", r.range(1, 60));
        if j % 10 == 9 {
            o.push_str("\n   ");
        }
    }
    o.push_str("\nSubject To\n");
    for i in 0..rows {
        let _ = write!(o, " c{i}:");
        let mut any = false;
        for j in 0..cols {
            if r.chance(0.06) || (j % rows == i) {
                let _ = write!(o, " + {} x{j}", r.range(1, 40));
                any = true;
            }
        }
        if !any {
            let _ = write!(o, " + 1 x{}", i % cols);
        }
        let _ = writeln!(o, " <= {}", r.range(500, 5000));
    }
    o.push_str("Bounds\n");
    for j in (0..cols).filter(|j| j % 7 == 3) {
        let _ = writeln!(o, " 0 <= x{j} <= {}", r.range(5, 50));
    }
    o.push_str("End\n");
    o
}

// ---------------------------------------------------------------- CSV

fn csv(r: &mut Rng, rows: usize) -> String {
    const CATS: [&str; 8] = ["food", "rent", "travel", "books", "tools", "health", "music", "games"];
    const STATUS: [&str; 4] = ["ok", "ok", "ok", "refund"];
    let mut o = String::from("date,user,category,amount,status,memo\n");
    for i in 0..rows {
        let day = 1 + i * 365 / rows.max(1);
        let _ = writeln!(
            o,
            "2023-{:02}-{:02},user{:04},{},{}.{:02},{},ref-{:x}-{}",
            (day / 31).min(11) + 1,
            day % 28 + 1,
            r.below(2000),
            r.pick(&CATS),
            r.range(1, 2000),
            r.below(100),
            r.pick(&STATUS),
            r.next_hex(),
            r.below(10)
        );
    }
    o
}

impl Rng {
    fn next_hex(&mut self) -> u32 {
        self.0.next_u64() as u32 & 0xffffff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(kind: &str) -> u64 {
        match kind {
            "text" => 20_000,
            "c-source" => 5,
            "sql" => 100,
            "gtp" => 4,
            "xboard" => 5,
            "protein-msa" => 6,
            "protein-db" => 50,
            "ppm" => 40,
            "y4m" => 1,
            "wav" => 1,
            "lp" => 20,
            _ => 50,
        }
    }

    #[test]
    fn generators_are_deterministic_and_differ_by_seed() {
        for kind in GENERATED {
            let a = generate(kind, 1, small(kind), 4).unwrap();
            let b = generate(kind, 1, small(kind), 4).unwrap();
            assert_eq!(sha256_hex(&a), sha256_hex(&b), "{kind}: same seed, same bytes");
            let c = generate(kind, 2, small(kind), 4).unwrap();
            assert_ne!(sha256_hex(&a), sha256_hex(&c), "{kind}: another seed, other bytes");
            assert!(!a.is_empty());
        }
    }

    #[test]
    fn generated_inputs_have_their_formats() {
        let t = generate("text", 3, 5000, 0).unwrap();
        assert_eq!(t.len(), 5000);
        assert!(t.iter().all(|b| b.is_ascii()));
        let p = generate("ppm", 1, 40, 0).unwrap();
        assert!(p.starts_with(b"P6\n40 30\n255\n"));
        assert_eq!(p.len(), "P6\n40 30\n255\n".len() + 40 * 30 * 3);
        let v = generate("y4m", 1, 2, 0).unwrap();
        assert_eq!(v.len(), "YUV4MPEG2 W352 H288 F25:1 Ip A1:1 C420jpeg\n".len() + 2 * (6 + 352 * 288 * 3 / 2));
        let w = generate("wav", 1, 1, 0).unwrap();
        assert_eq!(&w[..4], b"RIFF");
        assert_eq!(w.len(), 44 + 44_100 * 4);
        let m = String::from_utf8(generate("protein-msa", 1, 4, 0).unwrap()).unwrap();
        assert!(m.starts_with("# STOCKHOLM 1.0") && m.ends_with("//\n"));
        let rows: Vec<&str> = m.lines().filter(|l| l.starts_with("seq")).collect();
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|l| l.split_whitespace().nth(1).unwrap().len() == 180), "aligned rows have one length");
        assert!(generate("nonsense", 1, 1, 0).unwrap_err().contains("known kinds"));
        assert!(generate("text", 1, 0, 0).is_err());
    }

    #[test]
    fn chess_positions_are_legal() {
        let mut r = Rng::new("xboard", 9);
        for _ in 0..200 {
            let fen = chess_position(&mut r);
            let board = fen.split(' ').next().unwrap();
            let rows: Vec<&str> = board.split('/').collect();
            assert_eq!(rows.len(), 8, "{fen}");
            for row in &rows {
                let n: u32 = row.chars().map(|c| c.to_digit(10).unwrap_or(1)).sum();
                assert_eq!(n, 8, "{fen}");
            }
            assert!(!rows[0].contains(['p', 'P']) && !rows[7].contains(['p', 'P']), "{fen}");
            assert_eq!(board.matches('K').count(), 1);
            assert_eq!(board.matches('k').count(), 1);
        }
        // A rook on an open file gives check; one behind a pawn does not.
        let mut b = [[0u8; 8]; 8];
        b[0][4] = b'k';
        b[7][4] = b'R';
        assert!(attacked(&b, 4, 0, true));
        b[3][4] = b'p';
        assert!(!attacked(&b, 4, 0, true));
    }
}
