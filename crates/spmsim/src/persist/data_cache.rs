//! The data cache hierarchy as one write-back level, for eADR (SecPB II-C):
//! a store is persistent once it is in the cache, because the battery
//! drains every dirty line on power loss.

use crate::engine::controller::MemoryController;
use crate::engine::store::CheckFailure;
use crate::util::set_assoc::LineCache;

#[derive(Clone, Debug)]
pub struct DataCache {
    cache: LineCache,
}

impl DataCache {
    pub fn new(capacity_bytes: u64, ways: u32) -> Self {
        DataCache { cache: LineCache::new(capacity_bytes / 64, ways) }
    }

    fn line(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        if let Some(l) = self.cache.get(block) {
            return Ok(l);
        }
        let l = mc.read(block)?;
        if let Some((vb, vd)) = self.cache.put(block, l, false) {
            mc.write(vb, &vd)?;
        }
        Ok(l)
    }

    pub fn store(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        let mut l = self.line(mc, block)?;
        l[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.cache.put(block, l, true);
        Ok(())
    }

    pub fn load(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        self.line(mc, block)
    }

    pub fn take_dirty(&mut self) -> Vec<(u64, [u8; 64])> {
        let mut d = self.cache.dirty_lines();
        d.sort_unstable_by_key(|(a, _)| *a);
        self.cache.clear();
        d
    }

    /// Dirty lines held.
    pub fn dirty_count(&self) -> usize {
        self.cache.dirty_lines().len()
    }

    /// Whether the cache holds `block` dirty.
    pub fn holds_dirty(&self, block: u64) -> bool {
        self.cache.peek(block).is_some_and(|(_, dirty)| dirty)
    }

    /// Write `block` back to memory and drop it, if the cache holds it
    /// dirty (another core takes the line: the owner's copy is written
    /// back, so no two cores hold it dirty). Returns whether it did.
    pub fn write_back(&mut self, mc: &mut MemoryController, block: u64) -> Result<bool, CheckFailure> {
        match self.cache.remove(block) {
            Some((data, true)) => mc.write(block, &data).map(|_| true),
            _ => Ok(false),
        }
    }
}
