//! The bounds every configured number is held to. The upper ones keep a
//! run inside the host: caches and queues are allocated when the system is
//! built, so a size beyond them would abort the process on allocation
//! instead of naming the key; a latency beyond them would overflow the
//! cycle arithmetic or make one access outlast any simulation. They are
//! far above any real part.

/// Entries of a queue or buffer (ROB, store buffer, WPQ, persist buffer,
/// NVM queues).
pub const MAX_ENTRIES: u32 = 1 << 16;
/// Instructions per cycle.
pub const MAX_ISSUE_WIDTH: u32 = 64;
/// Cores of a multi-core run (`core.count`).
pub const MAX_CORES: u32 = 64;
/// Reorder-buffer entries of the `ooo` core: a producer further back than
/// its instruction stream records (`trace::insn::MAX_DISTANCE`; a test of
/// the `ooo` model checks the two agree) must have left the ROB.
pub const MAX_OOO_ROB_ENTRIES: u32 = 1023;
pub const MAX_BANKS: u32 = 1024;
/// MSHRs, targets per MSHR and write buffers of a data cache: a miss scans
/// the entries in flight.
pub const MAX_CACHE_BUFFERS: u32 = 4096;
/// Servers of one of the security engine's units: each keeps a calendar
/// its requests are looked up in.
pub const MAX_UNITS: u32 = 256;
/// Associativity: a lookup scans the ways of a set.
pub const MAX_WAYS: u32 = 1024;
/// Any latency given in cycles.
pub const MAX_LATENCY_CYCLES: u32 = 1_000_000;
/// Any latency given in nanoseconds (1 ms).
pub const MAX_LATENCY_NS: f64 = 1e6;
/// Timing data caches keep 8 B of tag per 64 B line: 128 MiB of host memory
/// at this size.
pub const MAX_TAG_CACHE_BYTES: u64 = 1 << 30;
/// Metadata caches and the functional eADR cache keep each line's bytes
/// (about 90 B of host memory per 64 B line: 90 MiB at this size).
pub const MAX_DATA_CACHE_BYTES: u64 = 64 << 20;
/// The pad seed encodes block addresses in 50 bits.
pub const MAX_MEMORY_BYTES: u64 = 1 << 50;
