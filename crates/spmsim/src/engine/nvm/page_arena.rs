//! Storage for the pages of the sparse NVM image: 4 KiB pages (64 blocks)
//! in 2 MiB chunks that are never moved once made.
//!
//! A growing `Vec` of pages copied the whole image on every doubling and
//! faulted fresh memory in 4 KiB steps. Here each chunk is its own 2 MiB,
//! 2 MiB-aligned anonymous mapping, zero until written and advised for
//! transparent huge pages, so the image grows without copying, with one
//! host TLB entry per 512 pages, and resident memory follows the pages
//! actually touched (plus at most one partly used chunk).

/// One 4 KiB page of the image: 64 blocks of 64 bytes.
pub type PageBlocks = [[u8; 64]; 64];

/// Pages per chunk: 512 x 4 KiB = 2 MiB, one x86-64 huge page.
const CHUNK_PAGES: usize = 512;

pub struct PageArena {
    chunks: Vec<Chunk>,
    len: usize,
}

impl PageArena {
    pub fn new() -> Self {
        PageArena { chunks: Vec::new(), len: 0 }
    }

    /// Pages handed out so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// A new all-zero page; returns its slot.
    pub fn push_zeroed(&mut self) -> usize {
        if self.len == self.chunks.len() * CHUNK_PAGES {
            self.chunks.push(Chunk::zeroed());
        }
        self.len += 1;
        self.len - 1
    }

    pub fn page(&self, slot: usize) -> &PageBlocks {
        debug_assert!(slot < self.len);
        &self.chunks[slot / CHUNK_PAGES].pages()[slot % CHUNK_PAGES]
    }

    pub fn page_mut(&mut self, slot: usize) -> &mut PageBlocks {
        debug_assert!(slot < self.len);
        &mut self.chunks[slot / CHUNK_PAGES].pages_mut()[slot % CHUNK_PAGES]
    }
}

impl Default for PageArena {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for PageArena {
    fn clone(&self) -> Self {
        let mut copy = PageArena::new();
        for slot in 0..self.len() {
            let s = copy.push_zeroed();
            *copy.page_mut(s) = *self.page(slot);
        }
        copy
    }
}

impl std::fmt::Debug for PageArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageArena").field("pages", &self.len).field("chunks", &self.chunks.len()).finish()
    }
}

/// 2 MiB of zeroed pages, owned.
struct Chunk {
    ptr: std::ptr::NonNull<[PageBlocks; CHUNK_PAGES]>,
}

// SAFETY: a Chunk owns its memory exclusively, like a Box.
unsafe impl Send for Chunk {}
// SAFETY: shared access only reads through `&self`.
unsafe impl Sync for Chunk {}

const CHUNK_BYTES: usize = CHUNK_PAGES * std::mem::size_of::<PageBlocks>();

impl Chunk {
    fn pages(&self) -> &[PageBlocks; CHUNK_PAGES] {
        // SAFETY: `ptr` is a live, zero-initialised allocation of the right
        // size owned by `self`; any byte pattern is a valid page.
        unsafe { self.ptr.as_ref() }
    }

    fn pages_mut(&mut self) -> &mut [PageBlocks; CHUNK_PAGES] {
        // SAFETY: as in `pages`, and `&mut self` makes the access exclusive.
        unsafe { self.ptr.as_mut() }
    }

    #[cfg(target_os = "linux")]
    fn zeroed() -> Chunk {
        // Map twice the size, keep the 2 MiB-aligned half, return the rest:
        // only an aligned stretch can be backed by a huge page.
        let oom = || std::alloc::handle_alloc_error(std::alloc::Layout::new::<[PageBlocks; CHUNK_PAGES]>());
        // SAFETY: an anonymous private mapping with no address hint; the
        // result is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * CHUNK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            oom();
        }
        let start = base as usize;
        let aligned = start.next_multiple_of(CHUNK_BYTES);
        // SAFETY: both ranges lie inside the mapping just made and outside
        // the aligned chunk kept; anonymous memory is zero until written.
        unsafe {
            if aligned > start {
                libc::munmap(base, aligned - start);
            }
            let tail = aligned + CHUNK_BYTES;
            if tail < start + 2 * CHUNK_BYTES {
                libc::munmap(tail as *mut libc::c_void, start + 2 * CHUNK_BYTES - tail);
            }
            // A hint: its failure changes speed, never contents.
            libc::madvise(aligned as *mut libc::c_void, CHUNK_BYTES, libc::MADV_HUGEPAGE);
        }
        Chunk { ptr: std::ptr::NonNull::new(aligned as *mut _).unwrap_or_else(oom) }
    }

    #[cfg(not(target_os = "linux"))]
    fn zeroed() -> Chunk {
        let layout = std::alloc::Layout::new::<[PageBlocks; CHUNK_PAGES]>();
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        Chunk { ptr: std::ptr::NonNull::new(p as *mut _).unwrap_or_else(|| std::alloc::handle_alloc_error(layout)) }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the chunk is exactly the mapping kept in `zeroed`.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, CHUNK_BYTES);
        }
        #[cfg(not(target_os = "linux"))]
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe {
            std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, std::alloc::Layout::new::<[PageBlocks; CHUNK_PAGES]>());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_zero_keep_their_bytes_across_chunks_and_clone() {
        let mut a = PageArena::new();
        for i in 0..CHUNK_PAGES + 3 {
            let s = a.push_zeroed();
            assert_eq!(s, i);
            assert_eq!(a.page(s)[63], [0; 64]);
            a.page_mut(s)[i % 64][0] = (i % 251) as u8 + 1;
        }
        let b = a.clone();
        for arena in [&a, &b] {
            assert_eq!(arena.len(), CHUNK_PAGES + 3);
            for i in 0..arena.len() {
                assert_eq!(arena.page(i)[i % 64][0], (i % 251) as u8 + 1, "page {i}");
            }
        }
        a.page_mut(0)[0][0] = 0xee;
        assert_eq!(b.page(0)[0][0], 1, "a clone owns its own pages");
    }
}
