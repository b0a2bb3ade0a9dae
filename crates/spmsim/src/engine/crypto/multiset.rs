//! MSet-Add-Hash (Clarke, Devadas, van Dijk, Gassend, Suh: "Incremental
//! multiset hash functions and their application to memory integrity
//! checking", ASIACRYPT 2003), the primitive of the multiset-hash scheme's
//! Read Hash and Write Hash registers (Kubo et al. 4.2).
//!
//! ```text
//!  element (address, 64 B value) --HMAC-SHA256(mset key; 1, address, value)--> 128 bits
//!  hash of a multiset = sum of its elements' values mod 2^128
//! ```
//! The sum makes the hash incremental (adding an element is one keyed
//! hash and one addition, whatever the multiset's size) and independent
//! of the order elements were added in; a multiset that holds an element
//! twice hashes differently from one that holds it once. The paper computes
//! each element with one MD5 (its ref. 28); spmsim uses HMAC-SHA256, the
//! keyed hash of its other MACs. Clarke et al.'s nonce term H_K(0, r)
//! is left out: the scheme only ever compares two sums kept under the
//! same key on chip, where the nonce cancels.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// A multiset hash: the sum, mod 2^128, of its elements' keyed hashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MultisetHash(pub u128);

impl MultisetHash {
    /// The hash of the empty multiset.
    pub const EMPTY: MultisetHash = MultisetHash(0);

    /// The hash of the union of the two multisets.
    #[must_use]
    pub fn union(self, other: MultisetHash) -> MultisetHash {
        MultisetHash(self.0.wrapping_add(other.0))
    }
}

/// The keyed element hash of MSet-Add-Hash.
#[derive(Clone)]
pub struct MultisetHasher {
    key: Hmac<Sha256>,
}

impl std::fmt::Debug for MultisetHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MultisetHasher { key: <secret> }")
    }
}

impl MultisetHasher {
    /// The hasher under the chip's multiset key for `seed` (derived as
    /// the chip's other keys are: [`super::KeySet`]).
    pub fn derive(seed: u64) -> Self {
        // The derivation's label predates the module's name; changing it
        // would change every key, so it stays.
        Self::with_key(&super::keys::kdf(seed, "mset"))
    }

    pub fn with_key(key: &[u8; 32]) -> Self {
        MultisetHasher { key: <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key length") }
    }

    /// The hash of the one-element multiset {(address, value)}.
    pub fn element(&self, address: u64, value: &[u8; 64]) -> MultisetHash {
        let mut m = self.key.clone();
        // Clarke et al.'s domain separator: 1 for elements (0 is the nonce's).
        m.update(&[1]);
        m.update(&address.to_le_bytes());
        m.update(value);
        let out = m.finalize().into_bytes();
        let mut low = [0u8; 16];
        low.copy_from_slice(&out[..16]);
        MultisetHash(u128::from_le_bytes(low))
    }

    /// Add one element to `hash` (the registers' increment).
    pub fn add(&self, hash: &mut MultisetHash, address: u64, value: &[u8; 64]) {
        *hash = hash.union(self.element(address, value));
    }

    /// The hash of a whole multiset.
    pub fn of<'a>(&self, elements: impl IntoIterator<Item = (u64, &'a [u8; 64])>) -> MultisetHash {
        elements.into_iter().fold(MultisetHash::EMPTY, |h, (a, v)| h.union(self.element(a, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value(x: u8) -> [u8; 64] {
        let mut v = [0u8; 64];
        v[0] = x;
        v[63] = x.wrapping_mul(7);
        v
    }

    fn elements() -> impl Strategy<Value = Vec<(u64, u8)>> {
        proptest::collection::vec((0u64..64, any::<u8>()), 0..24)
    }

    proptest! {
        #[test]
        fn the_order_elements_are_added_in_does_not_matter(es in elements(), rot in 0usize..24) {
            let h = MultisetHasher::derive(1);
            let vals: Vec<(u64, [u8; 64])> = es.iter().map(|&(a, x)| (a, value(x))).collect();
            let forward = h.of(vals.iter().map(|(a, v)| (*a, v)));
            let mut turned = vals.clone();
            if !turned.is_empty() {
                let k = rot % turned.len();
                turned.rotate_left(k);
            }
            turned.reverse();
            prop_assert_eq!(forward, h.of(turned.iter().map(|(a, v)| (*a, v))));
        }

        #[test]
        fn adding_one_by_one_equals_hashing_the_union(a in elements(), b in elements()) {
            let h = MultisetHasher::derive(2);
            let va: Vec<(u64, [u8; 64])> = a.iter().map(|&(x, y)| (x, value(y))).collect();
            let vb: Vec<(u64, [u8; 64])> = b.iter().map(|&(x, y)| (x, value(y))).collect();
            let mut inc = h.of(va.iter().map(|(x, v)| (*x, v)));
            for (x, v) in &vb {
                h.add(&mut inc, *x, v);
            }
            let whole = h.of(va.iter().chain(&vb).map(|(x, v)| (*x, v)));
            prop_assert_eq!(inc, whole);
            prop_assert_eq!(whole, h.of(va.iter().map(|(x, v)| (*x, v))).union(h.of(vb.iter().map(|(x, v)| (*x, v)))));
        }

        #[test]
        fn adding_or_removing_one_element_changes_the_hash(es in elements(), addr in 0u64..64, x in any::<u8>()) {
            let h = MultisetHasher::derive(3);
            let vals: Vec<(u64, [u8; 64])> = es.iter().map(|&(a, y)| (a, value(y))).collect();
            let base = h.of(vals.iter().map(|(a, v)| (*a, v)));
            let mut more = base;
            h.add(&mut more, addr, &value(x));
            prop_assert_ne!(base, more, "one more element");
            if !vals.is_empty() {
                let fewer = h.of(vals[1..].iter().map(|(a, v)| (*a, v)));
                prop_assert_ne!(base, fewer, "one element fewer");
            }
        }
    }

    #[test]
    fn a_multiset_is_not_a_set_and_keys_and_addresses_matter() {
        let h = MultisetHasher::derive(4);
        let v = value(9);
        let once = h.element(0x40, &v);
        assert_ne!(once.union(once), once, "an element twice is not an element once");
        assert_ne!(once.union(once), MultisetHash::EMPTY, "nor nothing (as it would be under XOR)");
        assert_ne!(h.element(0x80, &v), once, "the address is part of the element");
        assert_ne!(MultisetHasher::derive(5).element(0x40, &v), once, "another key, another hash");
        // The Read/Write Hash check of Kubo et al. Fig. 5: the cache holds
        // N0..N3 (all read in); N1 is updated to N1' and N2 evicted for N4.
        let n: Vec<[u8; 64]> = (0..6).map(value).collect();
        let mut read = h.of((0..4u64).map(|i| (i, &n[i as usize])));
        let mut write = MultisetHash::EMPTY;
        h.add(&mut read, 1, &n[5]); // N1' = value 5 at address 1
        h.add(&mut write, 1, &n[1]);
        h.add(&mut read, 4, &n[4]); // N4 replaces N2
        h.add(&mut write, 2, &n[2]);
        let cached = [(0u64, &n[0]), (1, &n[5]), (3, &n[3]), (4, &n[4])];
        assert_eq!(write.union(h.of(cached)), read, "adding every cached line to Write Hash gives Read Hash");
        let tampered = [(0u64, &n[0]), (1, &n[1]), (3, &n[3]), (4, &n[4])];
        assert_ne!(write.union(h.of(tampered)), read, "a stale line is caught");
    }
}
