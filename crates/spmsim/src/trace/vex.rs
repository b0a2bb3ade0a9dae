//! What each guest instruction reads, writes and computes, from valgrind's
//! own translation of it: `--trace-flags=10000000` prints, for every
//! superblock valgrind translates, the VEX IR of its "front end" (one
//! `IMark` per x86 instruction, then its statements):
//!
//! ```text
//!  ==== SB 1979 (evchecks 9904) [tid 1] 0x109139 main /tmp/t+0x1139
//!  <TAB>0x109139:  subq $8, %rsp
//!                ------ IMark(0x109139, 4, 0) ------
//!                t2 = GET:I64(48)          a register read (guest state offset 48: %rsp)
//!                t0 = Sub64(t2,t1)         an operation (its name gives the unit)
//!                PUT(48) = t0              a register write
//!                PUT(184) = 0x10913D:I64   the next %rip (184)
//!  IRSB { ... }                            the optimised block (skipped)
//! ```
//! The core model takes from it the registers an instruction
//! reads, split into those its memory address needs and the rest, the
//! registers it writes, its functional-unit class and its branch kind.
//! Offsets are those of VEX's `VexGuestAMD64State` (`libvex_guest_amd64.h`).

use rustc_hash::FxHashMap;

/// The guest-state offset of %rip: written by every instruction, never a
/// data dependence.
const RIP: u32 = 184;

/// Functional-unit classes, after gem5's O3 `FuncUnitConfig.py` op
/// classes (the core of SecPB Table I is gem5's out-of-order x86 core).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FuClass {
    /// Integer ALU, moves, vector integer: one cycle.
    #[default]
    IntAlu = 0,
    IntMult = 1,
    IntDiv = 2,
    /// Floating-point add, compare and convert.
    FpAdd = 3,
    FpMult = 4,
    FpDiv = 5,
    FpSqrt = 6,
    /// A load whose value is used as it is (no operation on it).
    Load = 7,
    /// A store with no other operation.
    Store = 8,
}

impl FuClass {
    pub const ALL: [FuClass; 9] = [
        FuClass::IntAlu,
        FuClass::IntMult,
        FuClass::IntDiv,
        FuClass::FpAdd,
        FuClass::FpMult,
        FuClass::FpDiv,
        FuClass::FpSqrt,
        FuClass::Load,
        FuClass::Store,
    ];
    pub fn from_u8(v: u8) -> Option<FuClass> {
        FuClass::ALL.get(v as usize).copied()
    }
    /// Rank when an instruction does several things: the slowest wins.
    fn rank(self) -> u8 {
        match self {
            FuClass::Load | FuClass::Store => 0,
            FuClass::IntAlu => 1,
            FuClass::FpAdd => 2,
            FuClass::IntMult | FuClass::FpMult => 3,
            FuClass::IntDiv | FuClass::FpDiv => 4,
            FuClass::FpSqrt => 5,
        }
    }
}

/// How an instruction changes the flow of control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BranchKind {
    #[default]
    None = 0,
    Conditional = 1,
    DirectJump = 2,
    DirectCall = 3,
    IndirectJump = 4,
    IndirectCall = 5,
    Return = 6,
}

impl BranchKind {
    pub fn from_u8(v: u8) -> Option<BranchKind> {
        use BranchKind::*;
        [None, Conditional, DirectJump, DirectCall, IndirectJump, IndirectCall, Return].get(v as usize).copied()
    }
    pub fn is_call(self) -> bool {
        matches!(self, BranchKind::DirectCall | BranchKind::IndirectCall)
    }
    /// Its target is not in the instruction (a predictor must guess it).
    pub fn is_indirect(self) -> bool {
        matches!(self, BranchKind::IndirectJump | BranchKind::IndirectCall | BranchKind::Return)
    }
}

/// A set of architectural registers, one bit each (see [`reg_id`]).
pub type RegSet = u128;

/// The register a guest-state offset belongs to: the sixteen integer
/// registers, the flags thunk (one register: an instruction that sets the
/// flags writes all four words), the other control words, the sixteen
/// vector registers (32 bytes each), the x87 stack as one register, and
/// anything further folded into the remaining bits.
pub fn reg_id(off: u32) -> u32 {
    match off {
        0..=15 => 127,
        16..=143 => (off - 16) / 8,
        144..=175 => 16,
        176..=223 => 17 + (off - 176) / 8,
        224..=767 => 24 + (off - 224) / 32,
        _ => 48 + (off / 8) % 79,
    }
}

/// One static instruction, as valgrind translated it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaticInsn {
    pub len: u8,
    pub class: FuClass,
    /// Registers a load or store address is computed from.
    pub addr_regs: RegSet,
    /// Every other register read.
    pub data_regs: RegSet,
    pub writes: RegSet,
    pub branch: BranchKind,
    /// A `rep` string instruction (it jumps to itself): one instruction
    /// however many iterations it runs, not a predicted branch.
    pub rep: bool,
}

/// The instruction being read: its statements so far.
#[derive(Default)]
struct Open {
    pc: u64,
    insn: StaticInsn,
    /// The last value written to %rip: a constant target, or `None` for a
    /// computed one.
    next_rip: Option<Option<u64>>,
    /// A conditional exit back to normal flow (not a fault exit).
    conditional: bool,
    /// It stores its own fall-through address (a call pushes it).
    pushes_return: bool,
    /// The slowest operation beyond an ALU's, if any.
    op: Option<FuClass>,
    loads: bool,
    stores: bool,
}

/// Reads the front-end text of a valgrind log, line by line, into a table
/// of static instructions by address. Lines that are not front-end text
/// are the caller's to route elsewhere ([`is_front_end`]).
#[derive(Default)]
pub struct FrontEnd {
    pub table: FxHashMap<u64, StaticInsn>,
    open: Option<Open>,
    /// Registers each IR temporary was computed from (per superblock).
    temps: FxHashMap<u32, RegSet>,
    /// Inside the optimised `IRSB { ... }` dump that follows the front end.
    in_irsb: bool,
}

/// Whether a line of a valgrind log belongs to the VEX trace: the
/// superblock header, the disassembly, the IR statements, the block dump
/// and the chasing notes (`BlockEnd: ...`, `-+-+ ...`). Lackey's lines
/// (`I  ADDR,LEN`, ` L ADDR,LEN`, ...), valgrind's own messages (`==PID==`,
/// `--PID--`) and blank lines do not.
pub fn is_front_end(line: &[u8]) -> bool {
    let lackey = line.starts_with(b"I  ") || line.len() > 2 && line[0] == b' ' && matches!(line[1], b'L' | b'S' | b'M') && line[2] == b' ';
    let valgrind = line.starts_with(b"==") && !line.starts_with(b"==== SB") || line.starts_with(b"--") && !line.starts_with(b"-+-+");
    !(lackey || valgrind || line.is_empty())
}

/// The registers an expression reads: its `GET`s, `GETI`s and the
/// temporaries it uses.
fn expr_regs(e: &str, temps: &FxHashMap<u32, RegSet>) -> RegSet {
    let b = e.as_bytes();
    let mut set: RegSet = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"GETI(") {
            set |= 1 << reg_id(num_after(&e[i + 5..]).unwrap_or(0));
            i += 5;
        } else if b[i..].starts_with(b"GET:") {
            // GET:I64(48)
            if let Some(p) = e[i..].find('(') {
                if let Some(off) = num_after(&e[i + p + 1..]) {
                    if off != RIP {
                        set |= 1 << reg_id(off);
                    }
                }
                i += p + 1;
            } else {
                i += 4;
            }
        } else if b[i] == b't' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && !b.get(i + 1 + digits).is_some_and(|c| c.is_ascii_alphanumeric()) {
                if let Ok(t) = e[i + 1..i + 1 + digits].parse::<u32>() {
                    set |= temps.get(&t).copied().unwrap_or(0);
                }
            }
            i += 1 + digits;
        } else {
            i += 1;
        }
    }
    set
}

/// The decimal number at the start of `s`.
fn num_after(s: &str) -> Option<u32> {
    let n = s.bytes().take_while(|c| c.is_ascii_digit()).count();
    s[..n].parse().ok()
}

/// A hexadecimal constant `0x...:I64` at the start of `s`.
fn constant(s: &str) -> Option<u64> {
    let s = s.trim().strip_prefix("0x")?;
    let n = s.bytes().take_while(|c| c.is_ascii_hexdigit()).count();
    if !s[n..].starts_with(':') {
        return None;
    }
    u64::from_str_radix(&s[..n], 16).ok()
}

/// The argument of the first `NAME:TYPE(...)` call in `e` (a load's address).
fn call_arg<'a>(e: &'a str, name: &str) -> Option<&'a str> {
    let start = e.find(name)?;
    let open = start + e[start..].find('(')?;
    let mut depth = 0;
    for (i, c) in e[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&e[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The unit the operations in `e` need, if any needs more than an ALU:
/// VEX names an operation by what it does and its type (`Mul64`,
/// `Mul64F0x2` a scalar double multiply, `DivModU128to64`, `SqrtF64`).
fn expr_class(e: &str) -> FuClass {
    let mut best = FuClass::IntAlu;
    let b = e.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphabetic() || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        let word = &e[i..i + n];
        if b.get(i + n) == Some(&b'(') {
            let c = op_class(word);
            if c.rank() > best.rank() {
                best = c;
            }
        }
        i += n.max(1);
    }
    best
}

fn op_class(op: &str) -> FuClass {
    // Floating point: F64, F32, F0x2 (scalar in a vector), Fx4, F16.
    let float = op.as_bytes().windows(2).any(|w| w[0] == b'F' && (w[1].is_ascii_digit() || w[1] == b'x'));
    let has = |s: &str| op.contains(s);
    match (float, has("Sqrt"), has("Div"), has("Mul")) {
        (true, true, _, _) => FuClass::FpSqrt,
        (true, _, true, _) => FuClass::FpDiv,
        (true, _, _, true) => FuClass::FpMult,
        (true, _, _, _) => FuClass::FpAdd,
        (false, _, true, _) => FuClass::IntDiv,
        (false, _, _, true) if !op.starts_with("amd64g") => FuClass::IntMult,
        _ => FuClass::IntAlu,
    }
}

impl FrontEnd {
    /// Feed one line for which [`is_front_end`] held (or any line: others
    /// are ignored).
    pub fn feed(&mut self, line: &str) {
        if self.in_irsb {
            if line.starts_with('}') {
                self.in_irsb = false;
            }
            return;
        }
        if line.starts_with("IRSB {") {
            self.close(None);
            self.in_irsb = true;
            return;
        }
        if line.starts_with("==== SB") {
            self.close(None);
            self.temps.clear();
            return;
        }
        let s = line.trim();
        if let Some(rest) = s.strip_prefix("------ IMark(") {
            self.close(None);
            let mut parts = rest.split(',');
            let pc = parts.next().and_then(|p| u64::from_str_radix(p.trim().trim_start_matches("0x"), 16).ok());
            let len = parts.next().and_then(|p| p.trim().parse::<u8>().ok());
            if let (Some(pc), Some(len)) = (pc, len) {
                self.open = Some(Open { pc, insn: StaticInsn { len, ..StaticInsn::default() }, ..Open::default() });
            }
            return;
        }
        if self.open.is_none() {
            return;
        }
        self.statement(s);
    }

    fn statement(&mut self, s: &str) {
        // The block's last statement: `PUT(184) = GET:I64(184); exit-KIND`.
        if let Some((put, exit)) = s.split_once("; exit-") {
            if !s.starts_with("if (") {
                self.statement(put);
                self.close(Some(exit.trim()));
                return;
            }
        }
        let o = self.open.as_mut().expect("an open instruction");
        if let Some(rest) = s.strip_prefix("if (") {
            // `if (COND) { PUT(184) = 0x...:I64; exit-Boring }`
            let normal = s.contains("exit-Boring");
            if let Some(end) = rest.find(") {") {
                o.insn.data_regs |= expr_regs(&rest[..end], &self.temps);
                let target = rest[end..].split("PUT(184) =").nth(1).and_then(constant);
                if normal {
                    if target == Some(o.pc) {
                        o.insn.rep = true;
                    } else {
                        o.conditional = true;
                    }
                }
            }
            return;
        }
        let Some((lhs, rhs)) = s.split_once(" = ") else { return };
        let lhs = lhs.trim();
        let class = expr_class(rhs);
        if class != FuClass::IntAlu && o.op.is_none_or(|c| class.rank() > c.rank()) {
            o.op = Some(class);
        }
        if rhs.contains("LDle") {
            if let Some(a) = call_arg(rhs, "LDle") {
                o.insn.addr_regs |= expr_regs(a, &self.temps);
            }
            o.loads = true;
        }
        if let Some(t) = lhs.strip_prefix('t').and_then(|t| t.parse::<u32>().ok()) {
            let r = expr_regs(rhs, &self.temps);
            self.temps.insert(t, r);
        } else if let Some(off) = lhs.strip_prefix("PUT(").and_then(num_after) {
            if off == RIP {
                // The block's closing `PUT(184) = GET:I64(184)` keeps
                // the target already set.
                if !rhs.contains("GET:I64(184)") {
                    o.next_rip = Some(constant(rhs));
                }
            } else {
                o.insn.writes |= 1 << reg_id(off);
                o.insn.data_regs |= expr_regs(rhs, &self.temps);
            }
        } else if let Some(rest) = lhs.strip_prefix("PUTI(") {
            o.insn.writes |= 1 << reg_id(num_after(rest).unwrap_or(0));
            o.insn.data_regs |= expr_regs(rhs, &self.temps);
        } else if let Some(a) = lhs.strip_prefix("STle(") {
            let a = a.strip_suffix(')').unwrap_or(a);
            o.insn.addr_regs |= expr_regs(a, &self.temps);
            o.insn.data_regs |= expr_regs(rhs, &self.temps);
            o.stores = true;
            if constant(rhs) == Some(o.pc + o.insn.len as u64) {
                o.pushes_return = true;
            }
        }
    }

    /// The open instruction is complete; `exit` is the block's exit kind
    /// when it is the block's last.
    fn close(&mut self, exit: Option<&str>) {
        let Some(mut o) = self.open.take() else { return };
        let fall = o.pc + o.insn.len as u64;
        let target = o.next_rip.unwrap_or(Some(fall));
        o.insn.data_regs &= !o.insn.addr_regs;
        o.insn.class = match (o.op, o.stores, o.loads) {
            (Some(c), _, _) => c,
            (None, true, _) => FuClass::Store,
            (None, false, true) => FuClass::Load,
            _ => FuClass::IntAlu,
        };
        o.insn.branch = match (exit, target) {
            _ if o.insn.rep || target == Some(o.pc) && exit == Some("Boring") => {
                o.insn.rep = true;
                BranchKind::None
            }
            (Some("Return"), _) => BranchKind::Return,
            (Some("Call"), Some(_)) => BranchKind::DirectCall,
            (Some("Call"), None) => BranchKind::IndirectCall,
            (_, None) if o.pushes_return => BranchKind::IndirectCall,
            (_, None) => BranchKind::IndirectJump,
            (_, Some(t)) if t != fall && o.pushes_return => BranchKind::DirectCall,
            (_, Some(t)) if t != fall => BranchKind::DirectJump,
            _ if o.conditional => BranchKind::Conditional,
            _ => BranchKind::None,
        };
        if o.conditional && o.insn.branch == BranchKind::DirectJump {
            // A conditional branch whose taken side the block follows.
            o.insn.branch = BranchKind::Conditional;
        }
        self.table.insert(o.pc, o.insn);
    }

    /// The end of the log: the instruction still open is complete.
    pub fn finish(&mut self) {
        self.close(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> FxHashMap<u64, StaticInsn> {
        let mut f = FrontEnd::default();
        for l in text.lines() {
            assert!(is_front_end(l.as_bytes()) || l.is_empty(), "{l}");
            f.feed(l);
        }
        f.finish();
        f.table
    }

    const SB: &str = "==== SB 1979 (evchecks 9904) [tid 1] 0x109139 main /tmp/t+0x1139

\t0x109139:  subq $8, %rsp

              ------ IMark(0x109139, 4, 0) ------
              t2 = GET:I64(48)
              t1 = 0x8:I64
              t0 = Sub64(t2,t1)
              PUT(144) = 0x8:I64
              PUT(48) = t0
              PUT(184) = 0x10913D:I64
              ------ IMark(0x10913D, 4, 0) ------
              PUT(224) = Mul64F0x2(GET:V128(224),GET:V128(288))
              PUT(184) = 0x109141:I64
              ------ IMark(0x109141, 4, 0) ------
              t3 = Add64(GET:I64(64),0x8:I64)
              PUT(16) = Add64(GET:I64(32),LDle:I64(t3))
              PUT(184) = 0x109145:I64
              ------ IMark(0x109145, 3, 0) ------
              STle(GET:I64(72)) = GET:I64(16)
              PUT(184) = 0x109148:I64
              ------ IMark(0x109148, 2, 0) ------
              if (64to1(amd64g_calculate_condition[mcx=0x13]{0x58}(0x4:I64,GET:I64(144),GET:I64(152),GET:I64(160),GET:I64(168)):I64)) { PUT(184) = 0x109139:I64; exit-Boring } 
              PUT(184) = 0x10914A:I64
              ------ IMark(0x10914A, 5, 0) ------
              t0 = Sub64(GET:I64(48),0x8:I64)
              PUT(48) = t0
              STle(t0) = 0x10914F:I64
              PUT(184) = 0x401B770:I64
              PUT(184) = GET:I64(184); exit-Call

IRSB {
   t0:I64   t1:I64
   PUT(184) = 0x401B770:I64; exit-Call
}
";

    #[test]
    fn registers_units_and_branches_of_a_block() {
        let t = table(SB);
        let rsp = 1u128 << reg_id(48);
        let sub = t[&0x109139];
        assert_eq!((sub.len, sub.class, sub.branch), (4, FuClass::IntAlu, BranchKind::None));
        assert_eq!(sub.data_regs, rsp);
        assert_eq!(sub.writes, rsp | 1 << reg_id(144));
        assert_eq!(t[&0x10913D].class, FuClass::FpMult);
        assert_eq!(t[&0x10913D].data_regs, 1 << reg_id(224) | 1 << reg_id(288));
        // add 8(%rsi),%rax: the address from %rsi, the sum also from %rdx.
        let add = t[&0x109141];
        assert_eq!(add.addr_regs, 1 << reg_id(64));
        assert_eq!(add.data_regs, 1 << reg_id(32));
        assert_eq!(add.class, FuClass::Load, "a load-op instruction is timed as its load");
        let st = t[&0x109145];
        assert_eq!((st.class, st.addr_regs, st.data_regs), (FuClass::Store, 1 << reg_id(72), 1 << reg_id(16)));
        let jcc = t[&0x109148];
        assert_eq!(jcc.branch, BranchKind::Conditional);
        assert_eq!(jcc.data_regs, 1 << reg_id(144));
        let call = t[&0x10914A];
        assert_eq!(call.branch, BranchKind::DirectCall);
        assert_eq!(t.len(), 6, "the IRSB dump adds nothing");
    }

    #[test]
    fn returns_indirect_jumps_and_rep() {
        let text = "==== SB 1 (evchecks 1) [tid 1] 0x2000 f
              ------ IMark(0x2000, 1, 0) ------
              t1 = LDle:I64(GET:I64(48))
              PUT(48) = Add64(GET:I64(48),0x8:I64)
              PUT(184) = t1
              PUT(184) = GET:I64(184); exit-Return
==== SB 2 (evchecks 1) [tid 1] 0x3000 g
              ------ IMark(0x3000, 2, 0) ------
              PUT(184) = GET:I64(16)
              PUT(184) = GET:I64(184); exit-Boring
==== SB 3 (evchecks 1) [tid 1] 0x4000 h
              ------ IMark(0x4000, 2, 0) ------
              if (CmpEQ64(GET:I64(24),0x0:I64)) { PUT(184) = 0x4002:I64; exit-Boring } 
              STle(GET:I64(72)) = LDle:I8(GET:I64(64))
              PUT(184) = 0x4000:I64
              PUT(184) = GET:I64(184); exit-Boring
==== SB 4 (evchecks 1) [tid 1] 0x5000 k
              ------ IMark(0x5000, 4, 0) ------
              t1 = DivModU128to64(GET:I64(16),GET:I64(40))
              PUT(16) = t1
              PUT(184) = 0x5004:I64
              PUT(184) = GET:I64(184); exit-Boring
";
        let t = table(text);
        assert_eq!(t[&0x2000].branch, BranchKind::Return);
        assert_eq!(t[&0x3000].branch, BranchKind::IndirectJump);
        let rep = t[&0x4000];
        assert!(rep.rep);
        assert_eq!(rep.branch, BranchKind::None);
        assert_eq!(rep.class, FuClass::Store);
        let div = t[&0x5000];
        assert_eq!((div.class, div.branch), (FuClass::IntDiv, BranchKind::None), "a block split by size is no branch");
    }

    #[test]
    fn lackey_lines_are_not_front_end() {
        for l in ["I  04010173,3", " L 1ffefffd80,8", " S 1ffefffd78,8", " M 04a1c2b0,4", "==123== Lackey"] {
            assert!(!is_front_end(l.as_bytes()), "{l}");
        }
        for l in
            ["==== SB 1 (x)", "\t0x1:  nop", "              PUT(16) = t1", "IRSB {", "   t1:I64", "}", "BlockEnd: Other", "-+-+ SX -+-+"]
        {
            assert!(is_front_end(l.as_bytes()), "{l}");
        }
    }

    #[test]
    fn unit_classes_from_vex_operation_names() {
        assert_eq!(op_class("Add64"), FuClass::IntAlu);
        assert_eq!(op_class("MullS64"), FuClass::IntMult);
        assert_eq!(op_class("DivModS64to32"), FuClass::IntDiv);
        assert_eq!(op_class("AddF64"), FuClass::FpAdd);
        assert_eq!(op_class("Add32Fx4"), FuClass::FpAdd);
        assert_eq!(op_class("I32StoF64"), FuClass::FpAdd);
        assert_eq!(op_class("Div64F0x2"), FuClass::FpDiv);
        assert_eq!(op_class("Sqrt64F0x2"), FuClass::FpSqrt);
        assert_eq!(op_class("32Uto64"), FuClass::IntAlu);
    }
}
