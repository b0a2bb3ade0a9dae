//! SplitMix64: a small, fast, seedable generator. Workloads and crash-point
//! sampling use it so that a run depends only on its seed.

#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed ^ 0x5350_4D53_494D_0001)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_seed_same_stream_and_bounded() {
        let mut a = super::SplitMix64::new(3);
        let mut b = super::SplitMix64::new(3);
        for _ in 0..100 {
            let (x, y) = (a.below(10), b.below(10));
            assert_eq!(x, y);
            assert!(x < 10);
        }
        assert_ne!(super::SplitMix64::new(3).next_u64(), super::SplitMix64::new(4).next_u64());
    }
}
