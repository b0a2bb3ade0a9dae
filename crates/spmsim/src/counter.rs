//! Byte formats of 64 B metadata blocks: split counter blocks, BMT nodes,
//! SIT nodes (and SIT counter blocks, which share the SIT node format).

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
            let bit = 64 + i * 7;
            let word = u16::from_le_bytes([b[bit / 8], *b.get(bit / 8 + 1).unwrap_or(&0)]);
            *m = ((word >> (bit % 8)) & 0x7f) as u8;
        }
        SplitCounterBlock { major, minors }
    }

    /// The major counter and minor `i` of an encoded block, without
    /// decoding the other 63 minors.
    pub fn slot(b: &[u8; 64], i: usize) -> (u64, u8) {
        let major = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let bit = 64 + i * 7;
        let word = u16::from_le_bytes([b[bit / 8], *b.get(bit / 8 + 1).unwrap_or(&0)]);
        (major, ((word >> (bit % 8)) & 0x7f) as u8)
    }

    /// Replace minor `i` of an encoded block in place.
    pub fn set_minor(b: &mut [u8; 64], i: usize, m: u8) {
        debug_assert!(m <= MINOR_MAX);
        let bit = 64 + i * 7;
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
            let bit = 64 + i * 7;
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
