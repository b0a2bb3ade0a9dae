//! Where a program's memory lies in physical memory, once the machine has
//! persistent regions (Triad-NVM III-B1: the kernel's `memmap=4G!12G`
//! makes 4 GB from 12 GB a DAX file system, mapped by PMDK programs).
//!
//! ```text
//!  workload address a, persistent (heap, log)  ->  region.start + a
//!  workload address a, volatile               ->  a (outside every region)
//!  tx-begin of thread t, memory.tx_stack_bytes = S  ->  S/8 volatile 8 B
//!      stores to thread t's stack frame first (a PMDK transaction's frame)
//! ```
//! With no region declared every address stays as it is and nothing is
//! added: the machines of the other papers see the events they always did.

use super::pheap::mix;
use super::{Event, Op};
use crate::config::SimConfig;

/// Bytes of non-persistent memory set aside for the threads' stacks.
const STACK_AREA: u64 = 64 << 20;
/// Bytes between two threads' stacks.
const STACK_STRIDE: u64 = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Where the persistent memory of the program starts, and its size
    /// (the first persistent region).
    base: u64,
    size: u64,
    /// Every persistent region, in bytes: volatile addresses must miss them.
    regions: Vec<(u64, u64)>,
    stack_bytes: u64,
    stack_base: u64,
    /// Transactions begun so far, per thread (the stack values' source).
    begun: Vec<u64>,
}

impl Placement {
    /// The placement a configuration gives; None when it declares no
    /// persistent region (every address stays).
    pub fn of(cfg: &SimConfig) -> Option<Placement> {
        let m = &cfg.memory;
        let first = m.persistent_regions.first()?;
        let regions: Vec<(u64, u64)> = m.persistent_regions.iter().map(|r| (r.start_bytes, r.start_bytes + r.size_bytes)).collect();
        // The stacks go just below the first region, or after the last one
        // when there is no room below; with no non-persistent memory to
        // hold them (all of memory persistent), there is no stack.
        let after = regions.iter().map(|r| r.1).max().unwrap_or(0);
        let stack_base = if first.start_bytes >= STACK_AREA {
            Some(first.start_bytes - STACK_AREA)
        } else {
            (after + STACK_AREA <= m.capacity_bytes).then_some(after)
        };
        Some(Placement {
            base: first.start_bytes,
            size: first.size_bytes,
            regions,
            stack_bytes: if stack_base.is_some() { m.tx_stack_bytes } else { 0 },
            stack_base: stack_base.unwrap_or(0),
            begun: Vec::new(),
        })
    }

    /// The memory a program's persistent pool may span: the first
    /// persistent region, or all of memory when none is declared (a
    /// multi-programmed run splits it between its programs).
    pub fn pool_bytes(cfg: &SimConfig) -> u64 {
        cfg.memory.persistent_regions.first().map_or(cfg.memory.capacity_bytes, |r| r.size_bytes)
    }

    /// Bytes of the persistent pool.
    pub fn size(&self) -> u64 {
        self.size
    }

    fn in_region(&self, addr: u64) -> bool {
        self.regions.iter().any(|&(s, e)| addr >= s && addr < e)
    }

    /// Place one event, appending it (and, at a transaction's begin, the
    /// stores to its stack frame before it) to `out`.
    pub fn place(&mut self, ev: Event, out: &mut Vec<Event>) -> Result<(), String> {
        let mut ev = ev;
        match ev.op {
            Op::Load | Op::Store if !ev.volatile => {
                if ev.addr + ev.size as u64 > self.size {
                    return Err(format!(
                        "the workload's persistent memory reaches {:#x}, past the {} B of its persistent region (memory.persistent_regions[0])",
                        ev.addr, self.size
                    ));
                }
                ev.addr += self.base;
            }
            Op::Load | Op::Store if self.in_region(ev.addr) => {
                return Err(format!(
                    "the workload's volatile access at {:#x} falls in a persistent region (memory.persistent_regions)",
                    ev.addr
                ));
            }
            Op::TxBegin if self.stack_bytes > 0 => {
                let t = ev.thread as usize;
                if self.begun.len() <= t {
                    self.begun.resize(t + 1, 0);
                }
                self.begun[t] += 1;
                let frame = self.stack_base + t as u64 * STACK_STRIDE;
                for w in 0..self.stack_bytes / 8 {
                    let v = mix(self.begun[t], (t as u64) << 32 | w);
                    out.push(Event { volatile: true, ..Event::store(frame + 8 * w, 8, v, false).after(1) }.on_thread(t as u8));
                }
            }
            _ => {}
        }
        out.push(ev);
        Ok(())
    }

    /// [`Self::place`] over a whole event list.
    pub fn place_all(&mut self, events: Vec<Event>) -> Result<Vec<Event>, String> {
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            self.place(e, &mut out)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    fn placement(stack: u64) -> Placement {
        let toml = format!(
            "[memory]\ncapacity_bytes = 17179869184\ntx_stack_bytes = {stack}\npersistent_regions = [{{ start_bytes = 12884901888, size_bytes = 4294967296 }}]\n"
        );
        Placement::of(&load_str(&toml, "test", &[]).unwrap()).unwrap()
    }

    #[test]
    fn persistent_memory_moves_into_the_region_and_volatile_stays_out() {
        let mut p = placement(16);
        let mut out = Vec::new();
        p.place(Event::store(0x40, 8, 7, false), &mut out).unwrap();
        p.place(Event { volatile: true, ..Event::store(0x80, 8, 7, false) }, &mut out).unwrap();
        p.place(Event::marker(Op::TxBegin), &mut out).unwrap();
        assert_eq!(out[0].addr, (12 << 30) + 0x40);
        assert_eq!(out[1].addr, 0x80);
        // Two stack stores, then the transaction's begin.
        assert_eq!(out.len(), 5);
        assert!(out[2].volatile && out[3].volatile && out[2].addr == (12 << 30) - (64 << 20) && out[3].addr == out[2].addr + 8);
        assert_eq!(out[4].op, Op::TxBegin);
        let e = p.place(Event::store(4 << 30, 8, 1, false), &mut out).unwrap_err();
        assert!(e.contains("persistent_regions[0]"), "{e}");
        let e = p.place(Event { volatile: true, ..Event::store(13 << 30, 8, 1, false) }, &mut out).unwrap_err();
        assert!(e.contains("falls in a persistent region"), "{e}");
    }

    #[test]
    fn no_region_no_placement() {
        assert_eq!(Placement::of(&SimConfig::default()), None);
    }
}
