//! Data MACs and tree-node hashes, both keyed HMAC-SHA256, truncated.
//!
//! Data MAC (SecPB II-B, STAR III-B): 64 bits are stored per data block;
//! the low 54 are the MAC, the high 10 are spare bits that later schemes
//! (STAR's counter LSBs, Secon's bitmap unit id) use. The spare bits are an
//! input of the MAC, so tampering with them is detected, as in STAR.

use super::keys::KeySet;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const MAC_BITS: u32 = 54;
pub const SPARE_BITS: u32 = 10;
pub const MAC_MASK: u64 = (1u64 << MAC_BITS) - 1;

type HmacSha256 = Hmac<Sha256>;

#[derive(Clone)]
pub struct MacEngine {
    data: HmacSha256,
    tree: HmacSha256,
}

fn first_u64(m: HmacSha256) -> u64 {
    let out = m.finalize().into_bytes();
    u64::from_le_bytes(out[0..8].try_into().expect("32-byte digest"))
}

impl MacEngine {
    pub fn new(keys: &KeySet) -> Self {
        MacEngine {
            data: HmacSha256::new_from_slice(&keys.mac_key).expect("any key length"),
            tree: HmacSha256::new_from_slice(&keys.tree_key).expect("any key length"),
        }
    }

    /// The 54-bit MAC, in the low bits of the result.
    pub fn data_mac(&self, ciphertext: &[u8; 64], block_addr: u64, major: u64, minor: u64, spare: u16) -> u64 {
        let mut m = self.data.clone();
        m.update(b"D");
        m.update(ciphertext);
        m.update(&block_addr.to_le_bytes());
        m.update(&major.to_le_bytes());
        m.update(&minor.to_le_bytes());
        m.update(&spare.to_le_bytes());
        first_u64(m) & MAC_MASK
    }

    /// Bonsai Merkle tree: the parent stores this 64-bit hash of each child
    /// (a counter block or a lower node). The position in the parent binds
    /// the child's address, so the address is not an input.
    pub fn bmt_hash(&self, child: &[u8; 64]) -> u64 {
        let mut m = self.tree.clone();
        m.update(b"B");
        m.update(child);
        first_u64(m)
    }

    /// SGX integrity tree node MAC over the node's eight 56-bit counters,
    /// its address and the parent's counter for it (STAR Fig. 3).
    pub fn sit_mac(&self, counters: &[u8; 56], node_addr: u64, parent_counter: u64) -> u64 {
        let mut m = self.tree.clone();
        m.update(b"S");
        m.update(counters);
        m.update(&node_addr.to_le_bytes());
        m.update(&parent_counter.to_le_bytes());
        first_u64(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::crypto::AesKeyBits;

    /// RFC 4231 test case 2 pins the HMAC-SHA256 primitive itself.
    #[test]
    fn rfc4231_hmac_sha256_case2() {
        let mut m = HmacSha256::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(hex::encode(m.finalize().into_bytes()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    /// The data-MAC construction is HMAC over the documented byte string,
    /// truncated to the low 54 bits of the first 8 digest bytes.
    #[test]
    fn data_mac_construction_known_answer() {
        let keys = KeySet::derive(1, AesKeyBits::Aes128);
        let eng = MacEngine::new(&keys);
        let ct = [0xA5u8; 64];
        let mut msg = b"D".to_vec();
        msg.extend_from_slice(&ct);
        msg.extend_from_slice(&42u64.to_le_bytes());
        msg.extend_from_slice(&3u64.to_le_bytes());
        msg.extend_from_slice(&17u64.to_le_bytes());
        msg.extend_from_slice(&5u16.to_le_bytes());
        let mut m = HmacSha256::new_from_slice(&keys.mac_key).unwrap();
        m.update(&msg);
        let d = m.finalize().into_bytes();
        let expect = u64::from_le_bytes(d[0..8].try_into().unwrap()) & MAC_MASK;
        assert_eq!(eng.data_mac(&ct, 42, 3, 17, 5), expect);
        assert!(expect < (1 << 54));
        // Each input changes the MAC.
        assert_ne!(eng.data_mac(&ct, 43, 3, 17, 5), expect);
        assert_ne!(eng.data_mac(&ct, 42, 4, 17, 5), expect);
        assert_ne!(eng.data_mac(&ct, 42, 3, 18, 5), expect);
        assert_ne!(eng.data_mac(&ct, 42, 3, 17, 6), expect, "spare bits are covered");
    }

    #[test]
    fn tree_hash_constructions_known_answer() {
        let keys = KeySet::derive(1, AesKeyBits::Aes128);
        let eng = MacEngine::new(&keys);
        let node = [7u8; 64];
        let mut m = HmacSha256::new_from_slice(&keys.tree_key).unwrap();
        m.update(b"B");
        m.update(&node);
        let d = m.finalize().into_bytes();
        assert_eq!(eng.bmt_hash(&node), u64::from_le_bytes(d[0..8].try_into().unwrap()));

        let ctrs = [9u8; 56];
        let mut m = HmacSha256::new_from_slice(&keys.tree_key).unwrap();
        m.update(b"S");
        m.update(&ctrs);
        m.update(&100u64.to_le_bytes());
        m.update(&2u64.to_le_bytes());
        let d = m.finalize().into_bytes();
        assert_eq!(eng.sit_mac(&ctrs, 100, 2), u64::from_le_bytes(d[0..8].try_into().unwrap()));
        assert_ne!(eng.sit_mac(&ctrs, 100, 3), eng.sit_mac(&ctrs, 100, 2), "parent counter is bound");
    }
}
