//! From trace records to simulator events: virtual pages get frames of the
//! simulated memory in first-touch order, accesses are split at block
//! boundaries (stores also into 8-byte pieces), and stores whose value the
//! trace lacks get a deterministic one derived from the seed.

use super::event::{Event, Op};
use super::{AddressSpace, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use rustc_hash::FxHashMap;

const PAGE_BITS: u32 = 12;

/// Gives each virtual page a frame, in the order pages are first touched:
/// a simple OS allocator that keeps the simulated footprint as small as
/// the program's and depends on nothing but the trace.
#[derive(Default)]
pub struct PageMap {
    frames: FxHashMap<u64, u64>,
    /// The last page translated and its frame (most accesses stay on it).
    last: Option<(u64, u64)>,
}

impl PageMap {
    pub fn translate(&mut self, va: u64) -> u64 {
        let page = va >> PAGE_BITS;
        let frame = match self.last {
            Some((p, f)) if p == page => f,
            _ => {
                let next = self.frames.len() as u64;
                let f = *self.frames.entry(page).or_insert(next);
                self.last = Some((page, f));
                f
            }
        };
        frame << PAGE_BITS | (va & ((1 << PAGE_BITS) - 1))
    }
    pub fn pages(&self) -> u64 {
        self.frames.len() as u64
    }
}

/// A value for a store the trace did not record: a hash of the seed, the
/// address and the store's index, so runs repeat and values differ.
pub(crate) fn derived_value(seed: u64, addr: u64, index: u64) -> u64 {
    let mut z = seed ^ addr.rotate_left(17) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Which of a trace's memory is volatile, by the trace's own (virtual)
/// addresses. Taken per access piece, so ranges are best block-aligned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum VolatileMemory {
    /// Every access is persistent.
    #[default]
    None,
    /// Accesses inside these ranges are volatile (the stack).
    Inside(Vec<(u64, u64)>),
    /// Accesses outside these ranges are volatile (the persistent ranges).
    Outside(Vec<(u64, u64)>),
}

impl VolatileMemory {
    pub fn is_volatile(&self, addr: u64) -> bool {
        let within = |rs: &[(u64, u64)]| rs.iter().any(|&(a, b)| (a..b).contains(&addr));
        match self {
            VolatileMemory::None => false,
            VolatileMemory::Inside(rs) => within(rs),
            VolatileMemory::Outside(rs) => !within(rs),
        }
    }
}

/// One piece of an access as the simulator takes it: inside one 64 B
/// block, a store at most 8 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    /// Its address in the trace's own address space, and in the simulated
    /// memory (the page map's frame, for a virtual trace).
    pub va: u64,
    pub pa: u64,
    pub len: u64,
    /// The access's first piece (which carries the record's gap).
    pub first: bool,
}

impl Piece {
    /// The value the trace recorded for this piece of store `r`, if it did.
    pub fn recorded_value(&self, r: &TraceRecord) -> Option<u64> {
        match r.value {
            Some(v) if r.size <= 8 => Some(v >> (8 * (self.va - r.addr))),
            _ => None,
        }
    }

    /// The piece as an event of record `r`: not volatile, a store without
    /// a recorded value valued 0.
    pub fn event(&self, r: &TraceRecord) -> Event {
        let mut e = match r.op {
            Op::Store => Event::store(self.pa, self.len as u8, self.recorded_value(r).unwrap_or(0), r.log),
            _ => Event::load(self.pa, self.len as u8),
        };
        if self.first {
            e.gap = r.gap;
            e.same_instruction = r.same_instruction;
        } else {
            e.same_instruction = true;
            e.piece = true;
        }
        e
    }
}

/// Split memory record `r` into its pieces, in order, translating each
/// through `pages` (a virtual trace's), and hand each to `take`; the
/// first error (the record's, or one `take` returns) stops the split.
pub(crate) fn split_access(
    r: &TraceRecord,
    pages: &mut Option<PageMap>,
    mut take: impl FnMut(Piece) -> Result<(), String>,
) -> Result<(), String> {
    // Every reader checks this itself with the line or offset; this
    // guards a reader that does not, before the split loop runs.
    super::check_access_size(r.size as u64).map_err(|m| format!("access at {:#x}: {m}", r.addr))?;
    let end =
        r.addr.checked_add(r.size as u64).ok_or_else(|| format!("access at {:#x} of {} bytes wraps the address space", r.addr, r.size))?;
    let mut cur = r.addr;
    let mut first = true;
    while cur < end {
        // The block's end saturates: in the top block of the address
        // space `(cur | 63) + 1` would wrap to 0 and walk all memory.
        let block_end = (cur | 63).saturating_add(1);
        let mut len = end.min(block_end) - cur;
        if r.op == Op::Store {
            len = len.min(8);
        }
        let pa = match pages {
            Some(m) => m.translate(cur),
            None => cur,
        };
        take(Piece { va: cur, pa, len, first })?;
        first = false;
        cur += len;
    }
    Ok(())
}

pub struct RecordEvents {
    path: std::path::PathBuf,
    volatile: VolatileMemory,
    reader: Box<dyn RecordReader>,
    pages: Option<PageMap>,
    capacity_bytes: u64,
    seed: u64,
    stores: u64,
    /// Stores given a derived value so far.
    pub derived_values: u64,
}

impl RecordEvents {
    pub fn new(path: &std::path::Path, reader: Box<dyn RecordReader>, seed: u64, capacity_bytes: u64) -> Self {
        let pages = (reader.header().address_space == AddressSpace::Virtual).then(PageMap::default);
        RecordEvents {
            path: path.to_path_buf(),
            volatile: VolatileMemory::None,
            reader,
            pages,
            capacity_bytes,
            seed,
            stores: 0,
            derived_values: 0,
        }
    }

    /// The same events, with the accesses to `volatile` memory flagged.
    pub fn with_volatile(mut self, volatile: VolatileMemory) -> Self {
        self.volatile = volatile;
        self
    }

    pub fn header(&self) -> &TraceHeader {
        self.reader.header()
    }

    /// Push the events of the next record; `Ok(false)` at the end of the trace.
    pub fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, TraceError> {
        match self.reader.next_record()? {
            None => Ok(false),
            Some(r) => {
                self.push(&r, out)?;
                Ok(true)
            }
        }
    }

    fn push(&mut self, r: &TraceRecord, out: &mut Vec<Event>) -> Result<(), TraceError> {
        if !r.is_memory() {
            out.push(Event { same_instruction: r.same_instruction, ..Event::marker(r.op).after(r.gap) });
            return Ok(());
        }
        let (capacity, seed, volatile) = (self.capacity_bytes, self.seed, &self.volatile);
        let (stores, derived) = (&mut self.stores, &mut self.derived_values);
        let split = split_access(r, &mut self.pages, |p| {
            if p.pa + p.len > capacity {
                return Err(format!(
                    "access at {:#x} lands at {:#x}, beyond memory.capacity_bytes = {capacity} (trace footprint too large for the simulated memory)",
                    r.addr, p.pa
                ));
            }
            let mut e = p.event(r);
            if r.op == Op::Store {
                if p.recorded_value(r).is_none() {
                    *derived += 1;
                    e.value = derived_value(seed, p.pa, *stores);
                }
                *stores += 1;
            }
            e.volatile = volatile.is_volatile(p.va);
            out.push(e);
            Ok(())
        });
        split.map_err(|m| self.err(m))
    }

    fn err(&self, m: String) -> TraceError {
        TraceError::new(&self.path, Position::Unknown, m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(TraceHeader, std::vec::IntoIter<TraceRecord>);
    impl RecordReader for Fixed {
        fn header(&self) -> &TraceHeader {
            &self.0
        }
        fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
            Ok(self.1.next())
        }
    }

    fn events(space: AddressSpace, values: bool, recs: Vec<TraceRecord>) -> Vec<Event> {
        let h = TraceHeader::new("test", space, values);
        let mut re = RecordEvents::new(std::path::Path::new("test"), Box::new(Fixed(h, recs.into_iter())), 1, 1 << 30);
        let mut out = Vec::new();
        while re.next_op(&mut out).unwrap() {}
        out
    }

    #[test]
    fn wide_and_straddling_accesses_split_into_one_instruction() {
        let ev =
            events(AddressSpace::Physical, false, vec![TraceRecord::mem(Op::Store, 60, 16).after(5), TraceRecord::mem(Op::Load, 120, 16)]);
        let stores: Vec<(u64, u8)> = ev.iter().filter(|e| e.op == Op::Store).map(|e| (e.addr, e.size)).collect();
        assert_eq!(stores, vec![(60, 4), (64, 8), (72, 4)]);
        let loads: Vec<(u64, u8)> = ev.iter().filter(|e| e.op == Op::Load).map(|e| (e.addr, e.size)).collect();
        assert_eq!(loads, vec![(120, 8), (128, 8)]);
        assert_eq!(ev.iter().map(|e| e.instructions()).sum::<u64>(), 5 + 2);
        assert!(ev.iter().all(|e| e.addr % 64 + e.size as u64 <= 64));
        // Each access's first piece begins it; the rest are its pieces.
        assert_eq!(ev.iter().map(|e| e.piece).collect::<Vec<_>>(), vec![false, true, true, false, true]);
    }

    #[test]
    fn virtual_pages_get_frames_in_first_touch_order_and_values_are_derived() {
        let ev = events(
            AddressSpace::Virtual,
            false,
            vec![
                TraceRecord::mem(Op::Store, 0x7fff_1234_5008, 8),
                TraceRecord::mem(Op::Load, 0x40_0010, 4),
                TraceRecord::mem(Op::Store, 0x7fff_1234_5010, 8),
            ],
        );
        assert_eq!(ev.iter().map(|e| e.addr).collect::<Vec<_>>(), vec![0x008, 0x1010, 0x010]);
        assert_ne!(ev[0].value, ev[2].value);
        assert_eq!(
            ev,
            events(
                AddressSpace::Virtual,
                false,
                vec![
                    TraceRecord::mem(Op::Store, 0x7fff_1234_5008, 8),
                    TraceRecord::mem(Op::Load, 0x40_0010, 4),
                    TraceRecord::mem(Op::Store, 0x7fff_1234_5010, 8)
                ]
            )
        );
    }

    #[test]
    fn an_access_in_the_top_block_of_the_address_space_stays_one_access() {
        // Found by fuzzing: the block end wrapped to 0 and one load became
        // one event per block of the whole address space.
        for (addr, size) in [(u64::MAX - 8, 8), (u64::MAX - 64, 64), (u64::MAX - 4, 4)] {
            let ev = events(AddressSpace::Virtual, false, vec![TraceRecord::mem(Op::Load, addr, size)]);
            let loads: Vec<u8> = ev.iter().filter(|e| e.op == Op::Load).map(|e| e.size).collect();
            assert_eq!(loads.iter().map(|s| *s as u32).sum::<u32>(), size, "{addr:#x}");
            assert!(loads.len() <= 8, "{addr:#x}: {} events", loads.len());
        }
    }
}
