//! The recorded program's stack range, from valgrind's own debug output
//! (`persistent=heap` leaves the stack volatile).
//!
//! ```text
//!  valgrind -d -d ... (on stderr, before the program starts):
//!  --25216:2: aspacem   suggested_clstack_end = 0x1fff000fff (computed)
//!  --25216:2: initimg   Client info: initial_SP=0x1FFF000780 max_stack_size=8388608
//!  => stack = [0x1fff001000 - 8388608, 0x1fff001000)
//! ```
//! Valgrind places the main thread's stack itself (`initimg`): its top is
//! the end of the client stack segment and it may grow down by the
//! maximum stack size (the `ulimit -s` of the recording), so that range
//! holds every stack access of a single-threaded program. Other threads'
//! stacks are ordinary mappings and are not covered.

/// Collects the two debug lines, in any order, among other output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackScan {
    end: Option<u64>,
    max_size: Option<u64>,
}

fn hex_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = &line[line.find(key)? + key.len()..];
    let rest = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X"))?;
    Some(rest.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap_or(""))
}

impl StackScan {
    /// Look at one line of valgrind's stderr.
    pub fn feed(&mut self, line: &str) {
        if let Some(h) = hex_after(line, "suggested_clstack_end = ") {
            self.end = u64::from_str_radix(h, 16).ok();
        }
        if let Some(i) = line.find("max_stack_size=") {
            let digits = line[i + "max_stack_size=".len()..].split(|c: char| !c.is_ascii_digit()).next().unwrap_or("");
            self.max_size = digits.parse().ok();
        }
    }

    /// The stack range, inclusive-exclusive, once both lines were seen.
    pub fn range(&self) -> Option<(u64, u64)> {
        let top = self.end?.checked_add(1)?;
        Some((top.checked_sub(self.max_size?)?, top))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_comes_from_both_lines_in_any_order() {
        let mut s = StackScan::default();
        s.feed("--25216:2: initimg   Client info: initial_SP=0x1FFF000780 max_stack_size=8388608");
        assert_eq!(s.range(), None, "one line is not enough");
        s.feed("--25216:1:    main Checking current stack is plausible");
        s.feed("--25216:2: aspacem   suggested_clstack_end = 0x1fff000fff (computed)");
        assert_eq!(s.range(), Some((0x1fff001000 - 8388608, 0x1fff001000)));
        let mut bad = StackScan::default();
        bad.feed("--1:2: aspacem   suggested_clstack_end = 0xZZ");
        bad.feed("--1:2: initimg   Client info: initial_SP=0x10 max_stack_size=99999999999999");
        assert_eq!(bad.range(), None, "no number, no range");
    }
}
