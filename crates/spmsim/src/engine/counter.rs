//! Byte formats of 64 B metadata blocks: split counter blocks, BMT nodes,
//! SIT nodes (and SIT counter blocks, which share the SIT node format).
//!
//! [`CounterFormat`] is the counter-block codec: every rule that depends on
//! how the encryption counters are packed (read a block's counter, the next
//! counter, when an increment overflows, where a counter's bits lie) is a
//! method of it, so the controller and the attack harness never look at
//! the packing themselves.

use serde::Serialize;

/// How encryption counters are packed into 64 B counter blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterFormat {
    /// 64-bit major + 64 x 7-bit minor counters: one block per 4 KiB page
    /// (split counters, used with the BMT).
    Split,
    /// 8 x 56-bit counters + 64-bit MAC: one block per 8 data blocks (the
    /// SGX counter/version block, the leaves of the SIT; STAR II-C).
    Sit,
}

/// Encryption counter of one data block: (major, minor). A SIT counter
/// block's 56-bit counter takes the major position, with minor 0.
pub type BlockCounter = (u64, u64);

/// What incrementing one block's counter in its counter block takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Increment {
    /// The counter advanced within its field: `block` is the counter
    /// block with only that counter changed.
    InPlace { counter: BlockCounter, block: [u8; 64] },
    /// A split minor overflowed (Triad-NVM II-A; SecPB II-B): the major
    /// advances and every minor of the page resets, so each other block of
    /// the page must be re-encrypted from its counter in `old` to its
    /// counter in `block` before the new block is used.
    PageOverflow { counter: BlockCounter, old: [u8; 64], block: [u8; 64] },
    /// The counter is at its field's maximum and nothing can absorb the
    /// carry (a 56-bit SIT counter): the write cannot be encrypted afresh.
    Exhausted,
}

impl CounterFormat {
    pub fn blocks_per_counter_block(self) -> u64 {
        match self {
            CounterFormat::Split => 64,
            CounterFormat::Sit => 8,
        }
    }

    /// The counter of the data block in `slot` of an encoded counter block.
    pub fn decode(self, block: &[u8; 64], slot: usize) -> BlockCounter {
        match self {
            CounterFormat::Split => {
                let (major, minor) = SplitCounterBlock::slot(block, slot);
                (major, minor as u64)
            }
            CounterFormat::Sit => (SitNode::decode(block).counters[slot], 0),
        }
    }

    /// The counter after `c` when it advances within its own field, or
    /// None when the increment overflows it (see [`Increment`]).
    pub fn next_in_place(self, c: BlockCounter) -> Option<BlockCounter> {
        match self {
            CounterFormat::Split if c.1 < MINOR_MAX as u64 => Some((c.0, c.1 + 1)),
            CounterFormat::Sit if c.0 < SIT_COUNTER_MAX => Some((c.0 + 1, 0)),
            _ => None,
        }
    }

    /// Increment the counter in `slot` of an encoded counter block.
    pub fn increment(self, block: &[u8; 64], slot: usize) -> Increment {
        let c = self.decode(block, slot);
        if let Some(counter) = self.next_in_place(c) {
            let mut next = *block;
            match self {
                CounterFormat::Split => SplitCounterBlock::set_minor(&mut next, slot, counter.1 as u8),
                CounterFormat::Sit => {
                    let mut n = SitNode::decode(block);
                    n.counters[slot] = counter.0;
                    next = n.encode();
                }
            }
            return Increment::InPlace { counter, block: next };
        }
        match self {
            CounterFormat::Split => {
                let major = c.0 + 1;
                let next = SplitCounterBlock { major, minors: [0; 64] }.encode();
                Increment::PageOverflow { counter: (major, 0), old: *block, block: next }
            }
            CounterFormat::Sit => Increment::Exhausted,
        }
    }

    /// The bit of an encoded counter block where the counter of `slot`
    /// starts (the minor of a split block): what flipping it tampers with.
    pub fn counter_bit(self, slot: usize) -> usize {
        match self {
            CounterFormat::Split => SPLIT_MINORS_BIT + slot * 7,
            CounterFormat::Sit => slot * 56,
        }
    }
}

/// First bit of the packed minors in a split counter block (after the
/// 64-bit major).
const SPLIT_MINORS_BIT: usize = 64;

/// Split counter block (Triad-NVM II-A; SecPB II-B): 64-bit major counter
/// then 64 packed 7-bit minor counters, 512 bits in all, no spare bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitCounterBlock {
    pub major: u64,
    pub minors: [u8; 64],
}

pub const MINOR_MAX: u8 = 127;

impl SplitCounterBlock {
    pub fn decode(b: &[u8; 64]) -> Self {
        let major = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let mut minors = [0u8; 64];
        for (i, m) in minors.iter_mut().enumerate() {
            let bit = SPLIT_MINORS_BIT + i * 7;
            let word = u16::from_le_bytes([b[bit / 8], *b.get(bit / 8 + 1).unwrap_or(&0)]);
            *m = ((word >> (bit % 8)) & 0x7f) as u8;
        }
        SplitCounterBlock { major, minors }
    }

    /// The major counter and minor `i` of an encoded block, without
    /// decoding the other 63 minors.
    pub fn slot(b: &[u8; 64], i: usize) -> (u64, u8) {
        let major = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let bit = SPLIT_MINORS_BIT + i * 7;
        let word = u16::from_le_bytes([b[bit / 8], *b.get(bit / 8 + 1).unwrap_or(&0)]);
        (major, ((word >> (bit % 8)) & 0x7f) as u8)
    }

    /// Replace minor `i` of an encoded block in place.
    pub fn set_minor(b: &mut [u8; 64], i: usize, m: u8) {
        debug_assert!(m <= MINOR_MAX);
        let bit = SPLIT_MINORS_BIT + i * 7;
        let mask = 0x7fu16 << (bit % 8);
        let v = (m as u16 & 0x7f) << (bit % 8);
        b[bit / 8] = (b[bit / 8] & !(mask as u8)) | v as u8;
        if bit / 8 + 1 < 64 {
            b[bit / 8 + 1] = (b[bit / 8 + 1] & !((mask >> 8) as u8)) | (v >> 8) as u8;
        }
    }

    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0..8].copy_from_slice(&self.major.to_le_bytes());
        for (i, &m) in self.minors.iter().enumerate() {
            debug_assert!(m <= MINOR_MAX);
            let bit = SPLIT_MINORS_BIT + i * 7;
            let v = ((m & 0x7f) as u16) << (bit % 8);
            b[bit / 8] |= v as u8;
            if bit / 8 + 1 < 64 {
                b[bit / 8 + 1] |= (v >> 8) as u8;
            }
        }
        b
    }
}

/// BMT node: eight 64-bit child hashes.
pub fn bmt_slots(b: &[u8; 64]) -> [u64; 8] {
    let mut s = [0u64; 8];
    for (i, v) in s.iter_mut().enumerate() {
        *v = u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    }
    s
}

pub fn bmt_set_slot(b: &mut [u8; 64], slot: usize, hash: u64) {
    b[slot * 8..slot * 8 + 8].copy_from_slice(&hash.to_le_bytes());
}

/// SIT node (STAR II-C, Fig. 3): eight 56-bit counters and a 64-bit MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SitNode {
    pub counters: [u64; 8],
    pub mac: u64,
}

pub const SIT_COUNTER_MAX: u64 = (1 << 56) - 1;

impl SitNode {
    pub fn decode(b: &[u8; 64]) -> Self {
        let mut counters = [0u64; 8];
        for (i, c) in counters.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w[0..7].copy_from_slice(&b[i * 7..i * 7 + 7]);
            *c = u64::from_le_bytes(w);
        }
        SitNode { counters, mac: u64::from_le_bytes(b[56..64].try_into().unwrap()) }
    }
    pub fn counter_bytes(&self) -> [u8; 56] {
        let mut out = [0u8; 56];
        for (i, c) in self.counters.iter().enumerate() {
            out[i * 7..i * 7 + 7].copy_from_slice(&c.to_le_bytes()[0..7]);
        }
        out
    }
    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0..56].copy_from_slice(&self.counter_bytes());
        b[56..64].copy_from_slice(&self.mac.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn split_counter_block_round_trips(major in any::<u64>(), minors in proptest::collection::vec(0u8..=127, 64)) {
            let c = SplitCounterBlock { major, minors: minors.clone().try_into().unwrap() };
            prop_assert_eq!(SplitCounterBlock::decode(&c.encode()), c);
        }

        #[test]
        fn one_slot_reads_and_writes_as_the_whole_block_does(major in any::<u64>(), minors in proptest::collection::vec(0u8..=127, 64), i in 0usize..64, m in 0u8..=127) {
            let mut c = SplitCounterBlock { major, minors: minors.clone().try_into().unwrap() };
            let mut b = c.encode();
            prop_assert_eq!(SplitCounterBlock::slot(&b, i), (major, c.minors[i]));
            SplitCounterBlock::set_minor(&mut b, i, m);
            c.minors[i] = m;
            prop_assert_eq!(b, c.encode());
        }

        #[test]
        fn sit_node_round_trips(ctrs in proptest::collection::vec(0u64..=SIT_COUNTER_MAX, 8), mac in any::<u64>()) {
            let n = SitNode { counters: ctrs.try_into().unwrap(), mac };
            prop_assert_eq!(SitNode::decode(&n.encode()), n);
        }
    }

    #[test]
    fn the_codec_increments_in_place_until_a_field_overflows() {
        let formats = [CounterFormat::Split, CounterFormat::Sit];
        for f in formats {
            let block = match f {
                CounterFormat::Split => {
                    SplitCounterBlock { major: 9, minors: std::array::from_fn(|i| ((i * 5) % 256) as u8 % MINOR_MAX) }.encode()
                }
                CounterFormat::Sit => SitNode { counters: std::array::from_fn(|i| i as u64 * 1000), mac: 0xfeed }.encode(),
            };
            for slot in [0, 3, 7] {
                let c = f.decode(&block, slot);
                let Increment::InPlace { counter, block: next } = f.increment(&block, slot) else {
                    panic!("{f:?} slot {slot}: not in place")
                };
                assert_eq!(Some(counter), f.next_in_place(c), "{f:?}");
                assert_eq!(f.decode(&next, slot), counter, "{f:?}");
                assert!(counter > c, "{f:?}: {counter:?} after {c:?}");
                for other in (0..f.blocks_per_counter_block() as usize).filter(|&o| o != slot) {
                    assert_eq!(f.decode(&next, other), f.decode(&block, other), "{f:?}: slot {other} moved");
                }
                if f == CounterFormat::Sit {
                    assert_eq!(SitNode::decode(&next).mac, 0xfeed, "the node MAC is the tree's, not the increment's");
                }
            }
        }
    }

    #[test]
    fn a_full_minor_overflows_the_page_and_a_full_sit_counter_is_exhausted() {
        let mut minors = [4u8; 64];
        minors[5] = MINOR_MAX;
        let old = SplitCounterBlock { major: 2, minors }.encode();
        assert_eq!(CounterFormat::Split.next_in_place(CounterFormat::Split.decode(&old, 5)), None);
        let Increment::PageOverflow { counter, old: o, block } = CounterFormat::Split.increment(&old, 5) else { panic!("no overflow") };
        assert_eq!((counter, o), ((3, 0), old));
        for j in 0..64 {
            assert_eq!(CounterFormat::Split.decode(&block, j), (3, 0), "slot {j} after the major advanced");
        }
        let sit = SitNode { counters: [SIT_COUNTER_MAX, 1, 0, 0, 0, 0, 0, 0], mac: 0 }.encode();
        assert_eq!(CounterFormat::Sit.increment(&sit, 0), Increment::Exhausted);
        assert_eq!(CounterFormat::Sit.next_in_place((SIT_COUNTER_MAX, 0)), None);
        assert!(matches!(CounterFormat::Sit.increment(&sit, 1), Increment::InPlace { counter: (2, 0), .. }));
    }

    #[test]
    fn the_counter_bit_lies_in_its_own_slot() {
        for f in [CounterFormat::Split, CounterFormat::Sit] {
            let block = [0u8; 64];
            for slot in 0..f.blocks_per_counter_block() as usize {
                let mut b = block;
                let bit = f.counter_bit(slot);
                b[bit / 8] ^= 1 << (bit % 8);
                for other in 0..f.blocks_per_counter_block() as usize {
                    assert_eq!(f.decode(&b, other) != f.decode(&block, other), other == slot, "{f:?}: bit {bit}, slot {other}");
                }
            }
        }
    }

    #[test]
    fn every_bit_of_a_split_counter_block_is_used() {
        // Flipping any bit changes the decoded value: there is no slack to hide tampering in.
        let base = SplitCounterBlock { major: 3, minors: [5; 64] }.encode();
        for bit in 0..512 {
            let mut b = base;
            b[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(SplitCounterBlock::decode(&b), SplitCounterBlock::decode(&base), "bit {bit}");
        }
    }
}
