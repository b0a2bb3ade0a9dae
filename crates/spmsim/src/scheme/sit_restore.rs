//! What STAR's and Anubis's recoveries share on the SGX integrity tree: the
//! small Merkle trees they keep a root of on chip (STAR's cache-tree, III-E;
//! Anubis's shadow-table tree), and writing restored nodes back with their
//! MACs recomputed top-down (a SIT node's MAC needs its parent's counter,
//! STAR II-C, so parents are restored first).
//!
//! ```text
//!  leaves (set-MACs / shadow entries), 8 to a node, zero = empty
//!     node = 0 if its 8 children are 0, else hash(8 x 64-bit children)
//!     ... up to one root (an on-chip register)
//! ```
//! A subtree with nothing in it is 0 without a hash: the register then
//! costs the leaves in use, not the cache size, and an attacker cannot
//! empty a subtree without turning a non-zero hash into zero.

use crate::engine::counter::SitNode;
use crate::engine::crypto::CryptoEngine;
use crate::engine::store::MetaStore;
use crate::engine::tree::SgxIntegrityTree;
use std::collections::BTreeMap;

/// The hash of up to eight 64-bit values packed into one 64 B input.
pub fn hash8(crypto: &mut CryptoEngine, values: &[u64], counted: bool) -> u64 {
    debug_assert!(values.len() <= 8);
    let mut b = [0u8; 64];
    for (i, v) in values.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    match counted {
        true => crypto.bmt_hash(&b),
        false => crypto.bmt_hash_uncounted(&b),
    }
}

/// The hash of any number of 64-bit values: [`hash8`] of up to eight, else
/// [`hash8`] over the hashes of each eight in turn (a set-MAC of a cache
/// with more than eight ways, STAR III-E).
pub fn hash_values(crypto: &mut CryptoEngine, values: &[u64], counted: bool) -> u64 {
    if values.len() <= 8 {
        return hash8(crypto, values, counted);
    }
    let chunks: Vec<u64> = values.chunks(8).map(|c| hash8(crypto, c, counted)).collect();
    hash_values(crypto, &chunks, counted)
}

/// The root of an 8-ary Merkle tree over `n` leaves of which only `leaves`
/// (index, value) are non-zero; hashes are counted when `counted`.
pub fn small_tree_root(crypto: &mut CryptoEngine, n: u64, leaves: &BTreeMap<u64, u64>, counted: bool) -> u64 {
    let mut level: BTreeMap<u64, u64> = leaves.iter().filter(|(_, &v)| v != 0).map(|(&i, &v)| (i, v)).collect();
    let mut width = n.max(1);
    while width > 1 {
        let mut up: BTreeMap<u64, [u64; 8]> = BTreeMap::new();
        for (i, v) in level {
            up.entry(i / 8).or_default()[(i % 8) as usize] = v;
        }
        level = up.into_iter().map(|(i, kids)| (i, hash8(crypto, &kids, counted))).collect();
        width = width.div_ceil(8);
    }
    level.get(&0).copied().unwrap_or(0)
}

/// Write restored SIT nodes (address -> counters) to NVM, parents first so
/// each MAC is taken under its parent's restored counter. A parent not
/// restored is read from NVM (counted); a top node's counter is its root
/// register. Returns each node's MAC field.
pub fn write_restored(tree: &SgxIntegrityTree, st: &mut MetaStore, restored: &BTreeMap<u64, [u64; 8]>) -> BTreeMap<u64, u64> {
    let layout = st.layout.clone();
    let mut order: Vec<(u32, u64, u64)> =
        restored.keys().map(|&a| layout.meta_pos(a).map(|(l, i)| (l, i, a)).expect("restored lines are SIT nodes")).collect();
    order.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut macs = BTreeMap::new();
    for (level, index, addr) in order {
        let pc = match layout.parent_of(level, index) {
            None => st.chip.roots.value_or(index, 0),
            Some((pl, pi, slot)) => {
                let pa = layout.meta_addr(pl, pi);
                match restored.get(&pa) {
                    Some(c) => c[slot],
                    None => SitNode::decode(&st.nvm.read(&layout, pa).unwrap_or([0; 64])).counters[slot],
                }
            }
        };
        let mut n = SitNode { counters: restored[&addr], mac: 0 };
        n.mac = tree.mac_field(st, &n.counter_bytes(), addr, pc);
        st.nvm.write(&layout, addr, n.encode());
        macs.insert(addr, n.mac);
    }
    macs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::crypto::{AesKeyBits, KeySet};

    #[test]
    fn an_empty_tree_is_zero_and_every_leaf_moves_the_root() {
        let mut c = CryptoEngine::new(&KeySet::derive(1, AesKeyBits::Aes128));
        assert_eq!(small_tree_root(&mut c, 1024, &BTreeMap::new(), true), 0);
        assert_eq!(c.work.tree_hashes, 0, "nothing hashed for an empty tree");
        let one = BTreeMap::from([(5u64, 9u64)]);
        let r1 = small_tree_root(&mut c, 1024, &one, true);
        assert_eq!(c.work.tree_hashes, 4, "1024 leaves: four levels above them");
        assert_ne!(r1, 0);
        assert_ne!(small_tree_root(&mut c, 1024, &BTreeMap::from([(6u64, 9u64)]), false), r1, "position is bound");
        assert_ne!(small_tree_root(&mut c, 1024, &BTreeMap::from([(5u64, 8u64)]), false), r1, "value is bound");
        assert_eq!(small_tree_root(&mut c, 1024, &one, false), r1);
    }
}
