//! The secure memory controller: counter-mode encryption, data MACs and the
//! integrity tree on the read and write paths (SecPB II-B, Fig. 4; Triad-NVM
//! II).
//!
//! ```text
//!  write(block, plaintext):
//!    counter block --fetch+verify--> ++minor (overflow: ++major, re-encrypt page)
//!    OTP = AES(addr, major, minor); ct = pt ^ OTP; MAC(ct, addr, ctr, spare)
//!    tree: BMT hashes up to the root register / SIT marks the leaf dirty
//!    WPQ <- ct [, MAC line, counter block, tree nodes if write-through]
//!  read(block):
//!    counter block --fetch+verify up to the first cached node-->
//!    ct, MAC line from NVM -> MAC check -> pt = ct ^ OTP
//! ```

use crate::config::{SimConfig, TreeConfig};
use crate::engine::chip::ChipState;
pub use crate::engine::counter::BlockCounter;
use crate::engine::counter::{CounterFormat, Increment};
use crate::engine::crypto::{CryptoEngine, MAC_BITS, MAC_MASK};
use crate::engine::hooks::Scheme;
use crate::engine::layout::Layout;
use crate::engine::metacache::MetaCaches;
use crate::engine::nvm::Nvm;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::{BonsaiMerkleTree, IntegrityTree, SgxIntegrityTree};

#[derive(Clone, Debug)]
pub struct MemoryController {
    pub st: MetaStore,
    /// The integrity tree and the scheme's runtime, passed down every
    /// operation that may reach a scheme's hook.
    pub rules: Rules,
    /// Blocks whose counter was advanced early (NoGap, M, CM) and whose new
    /// data is still in the SecPB: NVM holds their old ciphertext under the
    /// previous counter, so a page re-encryption must leave them alone.
    pub early_pending: rustc_hash::FxHashSet<u64>,
}

/// Metadata a SecPB entry produced early: OTP, ciphertext, MAC.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prepared {
    pub pad: Option<[u8; 64]>,
    pub ciphertext: Option<[u8; 64]>,
    pub mac: Option<u64>,
}

fn get_u64(line: &[u8; 64], slot: usize) -> u64 {
    u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap())
}
fn set_u64(line: &mut [u8; 64], slot: usize, v: u64) {
    line[slot * 8..slot * 8 + 8].copy_from_slice(&v.to_le_bytes());
}

impl MemoryController {
    /// A controller around a chip state and an NVM image, running the
    /// scheme `scheme` (built by `scheme::build` from the configuration's
    /// parameters) on an engine of shape `shape` (`scheme::shape`). The
    /// scheme's state in the chip, if the chip was loaded from a file, is
    /// handed to the runtime first.
    pub fn assemble(cfg: &SimConfig, mut chip: ChipState, nvm: Nvm, scheme: Box<dyn Scheme>, shape: SchemeShape) -> Self {
        if let Err(e) = scheme.adopt(&mut chip) {
            panic!("{e} (a chip file is checked when it is loaded)");
        }
        let layout = layout_for(cfg, &shape);
        let mut crypto = match cfg.security.crypto {
            crate::config::CryptoMode::Real => CryptoEngine::new(&chip.keys),
            crate::config::CryptoMode::TimingOnly => CryptoEngine::timing_only(&chip.keys),
        };
        if cfg.security.volatile_key {
            let keys = crate::engine::crypto::KeySet::derive_volatile(chip.seed, chip.boots, chip.keys.aes_bits);
            let kept = if shape.volatile_key_covers_all_memory { &[][..] } else { &layout.persistent[..] };
            crypto.set_volatile_keys(&keys, chip.boots, kept);
        }
        let tree = match cfg.tree {
            TreeConfig::Bmt { onchip_levels, .. } => IntegrityTree::Bmt(BonsaiMerkleTree::configured(
                &layout,
                &crypto,
                shape.level1_entry_hash_bits,
                shape.zero_level1_entry_marks_unwritten,
                onchip_levels,
            )),
            TreeConfig::Sit { .. } => IntegrityTree::Sit(SgxIntegrityTree { lsbs_in_mac: shape.sit_mac_carries_parent_lsbs }),
        };
        let caches = MetaCaches::new(&cfg.metadata_cache.organization).with_level_cache(shape.extra_level_cache);
        let work = cfg.scheme.work();
        let mut st = MetaStore::new(layout, crypto, nvm, caches, chip, work.metadata, shape.calls_cache_hooks);
        st.mac_in_data_line = cfg.security.mac_placement == crate::config::MacPlacement::DataLine;
        let rules = Rules { tree, scheme, shape, work, secure: cfg.security.enabled };
        MemoryController { st, rules, early_pending: Default::default() }
    }

    /// A new boot: the non-persistent regions' volatile key set moves on
    /// (Triad-NVM III-B1), when the configuration has one. Recovery calls
    /// it; the chip counts the boots, so a saved chip re-creates the keys.
    pub fn next_boot(&mut self, volatile_key: bool) {
        Self::next_boot_keys(&self.rules, &mut self.st, volatile_key);
    }

    /// [`Self::next_boot`] on a controller's parts (a scheme's recovery
    /// holds them apart).
    pub fn next_boot_keys(r: &Rules, st: &mut MetaStore, volatile_key: bool) {
        st.chip.boots += 1;
        if volatile_key {
            let chip = &st.chip;
            let keys = crate::engine::crypto::KeySet::derive_volatile(chip.seed, chip.boots, chip.keys.aes_bits);
            let persistent = if r.shape.volatile_key_covers_all_memory { Vec::new() } else { st.layout.persistent.clone() };
            st.crypto.set_volatile_keys(&keys, chip.boots, &persistent);
        }
    }

    /// `security.enabled`: the engine encrypts, MACs and keeps a tree.
    pub fn secure(&self) -> bool {
        self.rules.secure
    }

    /// The integrity tree.
    pub fn tree(&self) -> &IntegrityTree {
        &self.rules.tree
    }

    pub fn layout(&self) -> &Layout {
        &self.st.layout
    }

    /// The trusted chip state (keys, root registers, crash flag).
    pub fn chip(&self) -> &ChipState {
        &self.st.chip
    }

    /// The chip state as it stands, to save or to build another machine on.
    pub fn chip_state(&self) -> ChipState {
        self.st.chip.clone()
    }

    fn counter_addr(&self, block: u64) -> (u64, u64, usize) {
        let (idx, slot) = self.st.layout.counter_of(block);
        (self.st.layout.meta_addr(0, idx), idx, slot)
    }

    fn counter_format(&self) -> CounterFormat {
        self.st.layout.counter_format
    }

    /// The verified encryption counter of a block.
    pub fn block_counter(&mut self, block: u64) -> Result<BlockCounter, CheckFailure> {
        let (addr, _, slot) = self.counter_addr(block);
        let bytes = self.st.fetch(&self.rules, addr)?;
        Ok(self.counter_format().decode(&bytes, slot))
    }

    /// The plaintext a read of the block would return, with no side
    /// effect: nothing counted, fetched, verified or moved in a cache. The
    /// timing model fills a new SecPB entry with it when its caches (tags
    /// only) hold the block, where hardware would take the cached line.
    pub fn peek_plaintext(&self, block: u64) -> [u8; 64] {
        let ct = self.st.nvm.peek(block);
        if !self.rules.secure {
            return ct.unwrap_or([0; 64]);
        }
        let (addr, _, slot) = self.counter_addr(block);
        let counter_block = self.st.peek_line(addr).unwrap_or_else(|| self.rules.tree.default_block(0));
        match self.counter_format().decode(&counter_block, slot) {
            (0, 0) => [0; 64],
            (major, minor) => self.st.crypto.xor_pad_uncounted(block, major, minor, &ct.unwrap_or([0; 64])),
        }
    }

    /// Secure read of one 64 B data block (SecPB II-B).
    pub fn read(&mut self, block: u64) -> Result<[u8; 64], CheckFailure> {
        if !self.rules.secure {
            return Ok(self.st.nvm.read(&self.st.layout, block).unwrap_or([0; 64]));
        }
        let r = self.read_inner(block);
        self.rules.process_victims(&mut self.st)?;
        r
    }

    fn read_inner(&mut self, block: u64) -> Result<[u8; 64], CheckFailure> {
        let (major, minor) = self.block_counter(block)?;
        self.decrypt_verified(block, major, minor)
    }

    fn decrypt_verified(&mut self, block: u64, major: u64, minor: u64) -> Result<[u8; 64], CheckFailure> {
        let ct = self.st.nvm.read(&self.st.layout, block);
        let (line_addr, slot) = self.st.layout.mac_line_of(block);
        let line = match self.st.mac_in_data_line {
            // Synergy's ninth chip: the MAC came with the data just read.
            true => self.st.nvm.peek(line_addr).unwrap_or([0; 64]),
            false => self.st.fetch_mac_line(&self.rules, line_addr),
        };
        let stored = get_u64(&line, slot);
        if (major, minor) == (0, 0) {
            // Never written: the verified counter vouches for an all-zero block.
            return if ct.is_some_and(|c| c != [0; 64]) || stored != 0 { Err(CheckFailure::Unwritten { block }) } else { Ok([0; 64]) };
        }
        let ct = ct.unwrap_or([0; 64]);
        let spare = (stored >> MAC_BITS) as u16;
        if self.st.crypto.data_mac(&ct, block, major, minor, spare) != stored & MAC_MASK {
            return Err(CheckFailure::Mac { block });
        }
        Ok(self.st.crypto.xor_pad(block, major, minor, &ct))
    }

    /// Encrypt, MAC and queue one block under a given counter.
    fn encrypt_and_queue(&mut self, block: u64, major: u64, minor: u64, pt: &[u8; 64]) -> Result<(), CheckFailure> {
        let ct = self.st.crypto.xor_pad(block, major, minor, pt);
        self.st.crypto.note_encryption(block, (major, minor), &std::array::from_fn(|i| ct[i] ^ pt[i]));
        let spare = self.rules.scheme.data_mac_spare(&self.st, block, (major, minor));
        let mac = self.st.crypto.data_mac(&ct, block, major, minor, spare);
        self.store_ciphertext(block, ct, mac | (spare as u64) << MAC_BITS)
    }

    /// A store to the undo log, whose region would be `[start, end)` in
    /// bytes if software declared it with it (Secon 3.3's
    /// `set_log_region`): the scheme's to know, if it tells log writes by
    /// address.
    pub fn note_log_store(&mut self, start: u64, end: u64) {
        self.rules.scheme.on_log_store(&mut self.st, (start, end));
    }

    /// The one-time pad of a block under a counter (SecPB's O field).
    pub fn pad(&mut self, block: u64, ctr: BlockCounter) -> [u8; 64] {
        self.st.crypto.pad(block, ctr.0, ctr.1)
    }

    /// The data MAC of a ciphertext (SecPB's M field).
    pub fn data_mac(&mut self, block: u64, ct: &[u8; 64], ctr: BlockCounter) -> u64 {
        self.st.crypto.data_mac(ct, block, ctr.0, ctr.1, 0)
    }

    /// Complete a write whose counter was chosen early. `advanced`: the
    /// counter block and tree already hold `ctr` (NoGap, M, CM), else the
    /// increment is applied now (BCM, OBCM). Whatever `prep` carries (pad,
    /// ciphertext, MAC made early) is used as is. If the counter moved
    /// meanwhile (a neighbour's minor overflow re-encrypted the page), the
    /// early work is stale and the write is redone; returns false then.
    pub fn write_prepared(
        &mut self,
        block: u64,
        pt: &[u8; 64],
        ctr: BlockCounter,
        advanced: bool,
        prep: &Prepared,
    ) -> Result<bool, CheckFailure> {
        if !self.rules.secure {
            return self.write(block, pt).map(|_| true);
        }
        let r = self.write_prepared_inner(block, pt, ctr, advanced, prep);
        self.rules.process_victims(&mut self.st)?;
        r
    }

    fn write_prepared_inner(
        &mut self,
        block: u64,
        pt: &[u8; 64],
        ctr: BlockCounter,
        advanced: bool,
        prep: &Prepared,
    ) -> Result<bool, CheckFailure> {
        self.early_pending.remove(&block);
        let fresh = if advanced { self.block_counter(block)? == ctr } else { self.peek_next_counter(block)? == Some(ctr) };
        if !fresh {
            self.write_inner(block, pt)?;
            return Ok(false);
        }
        let ct = match (prep.ciphertext, prep.pad) {
            (Some(ct), _) => ct,
            (None, Some(pad)) => std::array::from_fn(|i| pt[i] ^ pad[i]),
            (None, None) => self.st.crypto.xor_pad(block, ctr.0, ctr.1, pt),
        };
        self.st.crypto.note_encryption(block, ctr, &std::array::from_fn(|i| ct[i] ^ pt[i]));
        let mac = match prep.mac {
            Some(m) => m,
            // Made here, late: with the scheme's spare bits, as any write
            // the controller secures (STAR's parent counter LSBs).
            None => {
                let spare = self.rules.scheme.data_mac_spare(&self.st, block, ctr);
                self.st.crypto.data_mac(&ct, block, ctr.0, ctr.1, spare) | (spare as u64) << MAC_BITS
            }
        };
        self.store_ciphertext(block, ct, mac)?;
        if !advanced {
            let (_, idx, _) = self.counter_addr(block);
            let (c2, bytes) = self.next_counter(block)?;
            debug_assert_eq!(c2, ctr);
            self.counter_updated(idx, bytes)?;
        }
        Ok(true)
    }

    /// Queue a ciphertext and its MAC (the data MAC line is updated).
    fn store_ciphertext(&mut self, block: u64, ct: [u8; 64], mac: u64) -> Result<(), CheckFailure> {
        self.st.nvm.write(&self.st.layout, block, ct);
        let (line_addr, slot) = self.st.layout.mac_line_of(block);
        if self.st.mac_in_data_line {
            // Synergy's ninth chip (STAR II-D): the MAC is written in the
            // same access as its data, atomically, with no write of its own.
            let mut line = self.st.nvm.peek(line_addr).unwrap_or([0; 64]);
            set_u64(&mut line, slot, mac);
            self.st.nvm.write_riding(&self.st.layout, line_addr, line);
            return Ok(());
        }
        let mut line = self.st.fetch_mac_line(&self.rules, line_addr);
        set_u64(&mut line, slot, mac);
        self.st.install(&self.rules, line_addr, line, true);
        self.st.metadata_dirtied(&self.rules, line_addr)
    }

    /// Secure write of one 64 B data block.
    pub fn write(&mut self, block: u64, pt: &[u8; 64]) -> Result<(), CheckFailure> {
        if !self.rules.secure {
            self.st.nvm.write(&self.st.layout, block, *pt);
            return Ok(());
        }
        let r = self.write_inner(block, pt);
        self.rules.process_victims(&mut self.st)?;
        r
    }

    fn write_inner(&mut self, block: u64, pt: &[u8; 64]) -> Result<(), CheckFailure> {
        self.early_pending.remove(&block);
        let (_, idx, _) = self.counter_addr(block);
        let (ctr, new_bytes) = self.next_counter(block)?;
        self.encrypt_and_queue(block, ctr.0, ctr.1, pt)?;
        self.counter_updated(idx, new_bytes)
    }

    /// The data path changed counter block `index`: the scheme's hook
    /// (default: the tree keeps itself consistent).
    fn counter_updated(&mut self, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        self.rules.scheme.on_counter_update(&self.rules, &mut self.st, index, bytes)
    }

    /// Increment the block's counter in its counter block (re-encrypting the
    /// page on a minor overflow); returns the new counter and block bytes.
    /// The tree is not touched.
    fn next_counter(&mut self, block: u64) -> Result<(BlockCounter, [u8; 64]), CheckFailure> {
        let (addr, idx, slot) = self.counter_addr(block);
        let bytes = self.st.fetch(&self.rules, addr)?;
        match self.counter_format().increment(&bytes, slot) {
            Increment::InPlace { counter, block } => Ok((counter, block)),
            Increment::PageOverflow { counter, old, block: next } => {
                self.reencrypt_page(idx, &old, &next, slot)?;
                Ok((counter, next))
            }
            Increment::Exhausted => Err(CheckFailure::CounterOverflow { level: 0, index: idx }),
        }
    }

    /// Early counter and BMT work (SecPB IV: NoGap, M, CM): increment the
    /// counter and update the tree to the root now; the data follows later
    /// with [`Self::write_with_counter`].
    pub fn advance_counter(&mut self, block: u64) -> Result<BlockCounter, CheckFailure> {
        let r = (|| {
            let (_, idx, _) = self.counter_addr(block);
            let (ctr, bytes) = self.next_counter(block)?;
            self.counter_updated(idx, bytes)?;
            self.early_pending.insert(block);
            Ok(ctr)
        })();
        self.rules.process_victims(&mut self.st)?;
        r
    }

    /// The counter the next write of `block` will use, when computing it
    /// needs no page re-encryption (early counter of BCM and OBCM, kept in
    /// the SecPB entry's C field, not in the counter cache).
    pub fn peek_next_counter(&mut self, block: u64) -> Result<Option<BlockCounter>, CheckFailure> {
        let ctr = self.block_counter(block)?;
        self.rules.process_victims(&mut self.st)?;
        Ok(self.counter_format().next_in_place(ctr))
    }

    /// Re-encrypt every block of a counter block's page from its counter in
    /// `old` to its counter in `new`. The block being written (`skip`) is
    /// left to the caller, so its new pad encrypts only its new plaintext.
    fn reencrypt_page(&mut self, page: u64, old: &[u8; 64], new: &[u8; 64], skip: usize) -> Result<(), CheckFailure> {
        let per = self.st.layout.blocks_per_counter_block();
        let first = page * per;
        let mut plains = Vec::with_capacity(per as usize);
        // Blocks with an early-advanced counter keep their new data in the
        // SecPB; their drain finds the counter moved and writes afresh.
        let todo: Vec<u64> = (0..per).filter(|&j| j as usize != skip && !self.early_pending.contains(&(first + j))).collect();
        let format = self.counter_format();
        for j in todo {
            let (major, minor) = format.decode(old, j as usize);
            // A non-persistent block with no write since a recovery started
            // its page afresh (Triad-NVM III-C) is free memory: it holds a
            // stale ciphertext no key reads, and starts again as zeros.
            if (major, minor) == (0, 0) && !self.st.layout.is_persistent(first + j) {
                plains.push((j, [0; 64]));
                continue;
            }
            plains.push((j, self.decrypt_verified(first + j, major, minor)?));
        }
        for (j, p) in &plains {
            let (major, minor) = format.decode(new, *j as usize);
            self.encrypt_and_queue(first + j, major, minor, p)?;
        }
        Ok(())
    }

    /// Wait for the MC's ACK of the latest write of `block`: whatever the
    /// scheme deferred past that write (Secon's background root update) is
    /// done now. A no-op for schemes that defer nothing.
    pub fn await_ack(&mut self, block: u64) -> Result<(), CheckFailure> {
        if !self.rules.secure {
            return Ok(());
        }
        let (_, idx, _) = self.counter_addr(block);
        let r = self.rules.scheme.settle(&self.rules, &mut self.st, Some(idx));
        self.rules.process_victims(&mut self.st)?;
        r
    }

    /// Wait for the ACKs of every write so far ([`Self::await_ack`] for all).
    pub fn await_all_acks(&mut self) -> Result<(), CheckFailure> {
        if !self.rules.secure {
            return Ok(());
        }
        let r = self.rules.scheme.settle(&self.rules, &mut self.st, None);
        self.rules.process_victims(&mut self.st)?;
        r
    }

    /// A block written by the battery with no security engine powered: the
    /// plaintext lands in the data region, no counter, MAC or root update.
    pub fn write_unsecured(&mut self, block: u64, pt: &[u8; 64]) {
        self.st.nvm.write(&self.st.layout, block, *pt);
    }

    /// Write every dirty metadata line (battery drain or orderly shutdown).
    pub fn flush_metadata(&mut self) -> Result<u64, CheckFailure> {
        // Deferred root updates complete first, so the lines written are
        // the ones the root registers vouch for.
        self.await_all_acks()?;
        self.rules.flush_all(&mut self.st)
    }

    /// Power is gone: the metadata caches are lost (after any flush).
    pub fn drop_volatile(&mut self) {
        self.st.caches.clear();
        self.st.victims.clear();
        self.rules.scheme.on_power_lost();
    }
}

#[cfg(test)]
mod tests;

/// The tree over the capacity of a machine configured by `cfg`, before a
/// scheme's recovery area and the persistent regions (what a scheme's
/// shape is answered over).
pub fn tree_layout(cfg: &SimConfig) -> Layout {
    let (format, tree_levels) = match &cfg.tree {
        TreeConfig::Bmt { levels, .. } => (CounterFormat::Split, *levels),
        TreeConfig::Sit { levels, .. } => (CounterFormat::Sit, *levels),
    };
    Layout::new(cfg.memory.capacity_bytes, format, cfg.tree.arity(), tree_levels)
}

/// The NVM layout of a machine configured by `cfg` under a scheme of shape
/// `shape`: the tree over its capacity, the scheme's recovery area and the
/// persistent regions.
pub fn layout_for(cfg: &SimConfig, shape: &SchemeShape) -> Layout {
    tree_layout(cfg)
        .with_recovery_area(shape.reserved_recovery_lines)
        .with_persistent_regions(cfg.memory.persistent_regions.iter().map(|p| (p.start_bytes, p.size_bytes)))
}
