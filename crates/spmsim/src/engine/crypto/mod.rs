//! Real cryptography of the secure memory controller.
//!
//! ```text
//!   seed --HMAC-SHA256 KDF--> { AES key, MAC key, tree-hash key }
//!   (block addr, major, minor) --AES--> 64 B one-time pad  (SecPB II-B)
//!   plaintext XOR pad = ciphertext
//!   HMAC(MAC key; ciphertext, addr, counter, spare bits) -> 54-bit MAC
//!   HMAC(tree key; node bytes [, node addr, parent counter]) -> 64-bit hash
//!   sum of HMAC(mset key; 1, addr, line) mod 2^128 -> multiset hash (mset.rs)
//! ```
//!
//! Every operation is counted in [`CryptoWork`] so that the battery and
//! recovery models can price the work (SecPB Table III prices AES and
//! SHA-512 per byte).

mod keys;
mod mac;
mod multiset;
mod otp;

pub use keys::{AesKeyBits, KeySet};
pub use mac::{MacEngine, MAC_BITS, MAC_MASK, SPARE_BITS};
pub use multiset::{MultisetHash, MultisetHasher};
pub use otp::OtpEngine;

use serde::Serialize;

/// Counts of cryptographic operations performed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CryptoWork {
    /// 16-byte AES block encryptions (four per 64 B one-time pad).
    pub aes_blocks: u64,
    /// Data MACs computed (write) or recomputed (verify).
    pub macs: u64,
    /// Integrity-tree node hashes / node MACs computed.
    pub tree_hashes: u64,
    /// Elements added to the multiset-hash scheme's Read Hash and Write
    /// Hash registers (Kubo et al. 4.2: one multiset-hash increment each).
    #[serde(skip_serializing_if = "is_zero")]
    pub read_hash_adds: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub write_hash_adds: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl CryptoWork {
    pub fn add(&mut self, other: &CryptoWork) {
        self.aes_blocks += other.aes_blocks;
        self.macs += other.macs;
        self.tree_hashes += other.tree_hashes;
        self.read_hash_adds += other.read_hash_adds;
        self.write_hash_adds += other.write_hash_adds;
    }
    pub fn since(&self, before: &CryptoWork) -> CryptoWork {
        CryptoWork {
            aes_blocks: self.aes_blocks - before.aes_blocks,
            macs: self.macs - before.macs,
            tree_hashes: self.tree_hashes - before.tree_hashes,
            read_hash_adds: self.read_hash_adds - before.read_hash_adds,
            write_hash_adds: self.write_hash_adds - before.write_hash_adds,
        }
    }
}

/// Tree hashes by input, shared by a machine and its copies.
type HashMemo = std::sync::Arc<std::sync::Mutex<rustc_hash::FxHashMap<MemoKey, u64>>>;

/// SIT node MACs by (counters, node address), with the parent counter
/// they were taken under: STAR's and Anubis's recoveries MAC the same
/// restored nodes at every crash point.
type SitMemo = std::sync::Arc<std::sync::Mutex<rustc_hash::FxHashMap<MemoKey, (u64, u64)>>>;

/// A memoized hash's input, compared as eight words in line rather than by
/// a call to `memcmp` (most of a lookup's time when it was).
#[derive(Clone, Copy)]
struct MemoKey([u8; 64]);

impl MemoKey {
    fn word(&self, i: usize) -> u64 {
        u64::from_ne_bytes(self.0[8 * i..8 * i + 8].try_into().expect("8 bytes"))
    }
}

impl PartialEq for MemoKey {
    fn eq(&self, other: &Self) -> bool {
        (0..8).fold(0, |d, i| d | (self.word(i) ^ other.word(i))) == 0
    }
}

impl std::hash::Hash for MemoKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (0..8).for_each(|i| state.write_u64(self.word(i)));
    }
}

impl Eq for MemoKey {}

/// The keys of the non-persistent regions (Triad-NVM III-B1), beside the
/// persistent ones, and where the persistent regions are.
#[derive(Clone)]
struct VolatileKeys {
    otp: OtpEngine,
    mac: MacEngine,
    /// The boot these keys belong to.
    boot: u64,
    /// Persistent data-block ranges `[start, end)`.
    persistent: Vec<(u64, u64)>,
}

impl VolatileKeys {
    fn covers(&self, block: u64) -> bool {
        !self.persistent.iter().any(|&(s, e)| block >= s && block < e)
    }
}

/// One use of a one-time pad for an encryption: the key it came from (0:
/// the persistent key set; 1 + boot: a volatile one), the block and its
/// counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PadUse {
    pub key: u64,
    pub block: u64,
    pub major: u64,
    pub minor: u64,
}

/// Every pad used for an encryption, with the pad: what an attacker who
/// saw a known plaintext's ciphertext knows (Triad-NVM II-A4).
pub type PadLedger = std::sync::Arc<std::sync::Mutex<rustc_hash::FxHashMap<PadUse, [u8; 64]>>>;

/// At most this many memoized tree hashes (72 MiB) before the memo starts over.
const MEMO_ENTRIES: usize = 1 << 20;

/// The crypto engine of one memory controller: keys plus work counters.
#[derive(Clone)]
pub struct CryptoEngine {
    pub otp: OtpEngine,
    pub mac: MacEngine,
    pub work: CryptoWork,
    /// false: timing-only mode. Operations are counted but not computed;
    /// pads and MACs are zero, so every check passes and the simulation
    /// makes the same cache and queue decisions as with real crypto.
    pub real: bool,
    /// Tree hashes already computed, by input, when set: the crash oracle
    /// recovers from nearly the same image at every crash point, so the
    /// same counter blocks and nodes are hashed again and again. Each value
    /// is the keyed hash, computed once; the work is counted every time.
    memo: Option<HashMemo>,
    sit_memo: Option<SitMemo>,
    volatile: Option<std::sync::Arc<VolatileKeys>>,
    /// Pads used for encryptions, when kept (the crash oracle's and the
    /// attack harness's pad-reuse checks).
    pub ledger: Option<PadLedger>,
}

impl CryptoEngine {
    pub fn new(keys: &KeySet) -> Self {
        CryptoEngine {
            otp: OtpEngine::new(keys),
            mac: MacEngine::new(keys),
            work: CryptoWork::default(),
            real: true,
            memo: None,
            sit_memo: None,
            volatile: None,
            ledger: None,
        }
    }

    /// Encrypt and MAC the data outside `persistent` (data-block ranges)
    /// under `keys`, the volatile key set of boot `boot`, from now on.
    pub fn set_volatile_keys(&mut self, keys: &KeySet, boot: u64, persistent: &[(u64, u64)]) {
        self.volatile = Some(std::sync::Arc::new(VolatileKeys {
            otp: OtpEngine::new(keys),
            mac: MacEngine::new(keys),
            boot,
            persistent: persistent.to_vec(),
        }));
    }

    /// The key set a block's pad and MAC come from: 0 for the persistent
    /// one, 1 + boot for a volatile one.
    pub fn key_of(&self, block: u64) -> u64 {
        match &self.volatile {
            Some(v) if v.covers(block) => 1 + v.boot,
            _ => 0,
        }
    }

    fn otp_for(&self, block: u64) -> &OtpEngine {
        match &self.volatile {
            Some(v) if v.covers(block) => &v.otp,
            _ => &self.otp,
        }
    }

    fn mac_for(&self, block: u64) -> &MacEngine {
        match &self.volatile {
            Some(v) if v.covers(block) => &v.mac,
            _ => &self.mac,
        }
    }

    /// Record that `block` was encrypted under `counter` with `pad`, when
    /// a ledger is kept.
    pub fn note_encryption(&self, block: u64, counter: (u64, u64), pad: &[u8; 64]) {
        if let Some(l) = &self.ledger {
            let u = PadUse { key: self.key_of(block), block, major: counter.0, minor: counter.1 };
            l.lock().expect("the pad ledger").insert(u, *pad);
        }
    }

    /// The pad an earlier encryption used for the key, block and counter
    /// the next encryption of `block` under `counter` would use, if any.
    pub fn pad_used_before(&self, block: u64, counter: (u64, u64)) -> Option<[u8; 64]> {
        let l = self.ledger.as_ref()?;
        let u = PadUse { key: self.key_of(block), block, major: counter.0, minor: counter.1 };
        l.lock().expect("the pad ledger").get(&u).copied()
    }

    pub fn timing_only(keys: &KeySet) -> Self {
        CryptoEngine { real: false, ..Self::new(keys) }
    }

    /// A BMT hash for set-up work (default nodes): not counted.
    pub fn bmt_hash_uncounted(&self, child: &[u8; 64]) -> u64 {
        if !self.real {
            return 0;
        }
        let Some(memo) = &self.memo else { return self.mac.bmt_hash(child) };
        let mut m = memo.lock().expect("the tree-hash memo");
        if let Some(&h) = m.get(&MemoKey(*child)) {
            return h;
        }
        if m.len() >= MEMO_ENTRIES {
            m.clear();
        }
        let h = self.mac.bmt_hash(child);
        m.insert(MemoKey(*child), h);
        h
    }

    /// Remember tree hashes from now on, this engine and its copies
    /// sharing them (for the crash oracle, which copies the machine at
    /// every crash point).
    pub fn memoize_tree_hashes(&mut self) {
        self.memo = Some(Default::default());
        self.sit_memo = Some(Default::default());
    }

    /// 64-byte one-time pad for a data block (SecPB II-B, Triad-NVM II).
    pub fn pad(&mut self, block_addr: u64, major: u64, minor: u64) -> [u8; 64] {
        self.work.aes_blocks += 4;
        if !self.real {
            return [0; 64];
        }
        self.otp_for(block_addr).pad(block_addr, major, minor)
    }

    /// Encrypt or decrypt (the same XOR) a block.
    pub fn xor_pad(&mut self, block_addr: u64, major: u64, minor: u64, data: &[u8; 64]) -> [u8; 64] {
        let pad = self.pad(block_addr, major, minor);
        let mut out = [0u8; 64];
        for i in 0..64 {
            out[i] = data[i] ^ pad[i];
        }
        out
    }

    /// [`Self::xor_pad`] for the simulator's own bookkeeping (not work the
    /// hardware does): not counted.
    pub fn xor_pad_uncounted(&self, block_addr: u64, major: u64, minor: u64, data: &[u8; 64]) -> [u8; 64] {
        if !self.real {
            return *data;
        }
        let pad = self.otp_for(block_addr).pad(block_addr, major, minor);
        std::array::from_fn(|i| data[i] ^ pad[i])
    }

    /// 54-bit data MAC over (ciphertext, address, counter, spare bits).
    pub fn data_mac(&mut self, ciphertext: &[u8; 64], block_addr: u64, major: u64, minor: u64, spare: u16) -> u64 {
        self.work.macs += 1;
        if !self.real {
            return 0;
        }
        self.mac_for(block_addr).data_mac(ciphertext, block_addr, major, minor, spare)
    }

    /// Keyed 64-bit hash of a Bonsai Merkle tree child (a counter block or node).
    pub fn bmt_hash(&mut self, child: &[u8; 64]) -> u64 {
        self.work.tree_hashes += 1;
        self.bmt_hash_uncounted(child)
    }

    /// 64-bit MAC of an SGX integrity-tree node: its counters, its address and
    /// the parent's counter for it (STAR II-C, Fig. 3).
    pub fn sit_mac(&mut self, counters: &[u8; 56], node_addr: u64, parent_counter: u64) -> u64 {
        self.work.tree_hashes += 1;
        self.sit_mac_uncounted(counters, node_addr, parent_counter)
    }
}

impl CryptoEngine {
    /// [`Self::sit_mac`] for the simulator's own bookkeeping (a value the
    /// hardware already holds, such as a register it kept current): not
    /// counted.
    pub fn sit_mac_uncounted(&self, counters: &[u8; 56], node_addr: u64, parent_counter: u64) -> u64 {
        if !self.real {
            return 0;
        }
        let Some(memo) = &self.sit_memo else { return self.mac.sit_mac(counters, node_addr, parent_counter) };
        let mut key = [0u8; 64];
        key[..56].copy_from_slice(counters);
        key[56..].copy_from_slice(&node_addr.to_le_bytes());
        let key = MemoKey(key);
        let mut m = memo.lock().expect("the SIT MAC memo");
        if let Some(&(pc, mac)) = m.get(&key) {
            if pc == parent_counter {
                return mac;
            }
        }
        if m.len() >= MEMO_ENTRIES {
            m.clear();
        }
        let mac = self.mac.sit_mac(counters, node_addr, parent_counter);
        m.insert(key, (parent_counter, mac));
        mac
    }
}

impl std::fmt::Debug for CryptoEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys are never printed.
        f.debug_struct("CryptoEngine").field("work", &self.work).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod golden {
    //! Pinned outputs of our own constructions (key derivation, pad, data
    //! MAC, BMT hash, SIT MAC) for seed 1. They were produced by this code
    //! when the format was fixed; a change here changes every saved image,
    //! so it must be deliberate (bump the image format version).
    use super::*;

    #[test]
    fn constructions_are_pinned() {
        let keys = KeySet::derive(1, AesKeyBits::Aes128);
        let mut e = CryptoEngine::new(&keys);
        let got = format!(
            "{} {} {:016x} {:016x} {:016x}",
            hex::encode(&keys.aes_key),
            hex::encode(&e.pad(0x40, 2, 3)[..16]),
            e.data_mac(&[0x11; 64], 0x40, 2, 3, 0),
            e.bmt_hash(&[0x22; 64]),
            e.sit_mac(&[0x33; 56], 0x1000, 4)
        );
        println!("{got}");
        assert_eq!(got, GOLDEN);
    }

    const GOLDEN: &str =
        "fd2dfc1d5bc41547b8d32edaf888eb40 a2fbc09cc5c1e78945242199cad3b3ac 0022cdc63c05bd56 d81e44ff46497d1f 432d874eab7b0d6a";
}
