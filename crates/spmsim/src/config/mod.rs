//! Typed configuration. Every field has a default; a preset TOML file in
//! `configs/` only changes defaults (as gem5's variants do). Unknown keys
//! are errors naming the key path; `validate` checks values.
//!
//! Each policy axis (`docs/architecture.md`) is a closed enum tagged by
//! `type`, so a new scheme is a new variant and a forgotten match arm is a
//! compile error.

mod compose;
mod keys;
pub mod limits;
mod load;
mod validate;

pub use load::{find_preset, list_presets, load_preset, load_str, presets_digests, presets_dir, ConfigError};

use crate::engine::crypto::AesKeyBits;
use crate::scheme::SchemeKind;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Preset name, as used on the command line.
    pub name: String,
    /// One line on what this configuration models and which paper it is from.
    pub description: String,
    /// A control configuration that is built to fail the crash oracle
    /// (the oracle must be able to fail). Used by `check-all` and the tests.
    pub expect_crash_violations: bool,
    /// An ablation that leaves out an integrity check on purpose
    /// (`star-no-cache-tree`): the attack harness must find some attack it
    /// misses, and no false alarm.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expect_undetected_attacks: bool,
    /// What the preset is for, beyond the controls above: a scheme of a
    /// paper or a baseline (the default), an ablation that leaves one of
    /// its scheme's mechanisms out, or a sensitivity of one parameter.
    /// `spmsim compare` takes every preset that is a scheme and no control.
    #[serde(skip_serializing_if = "PresetRole::is_scheme")]
    pub role: PresetRole,
    /// The scheme: what it does with security metadata (the plugin;
    /// `crate::scheme`). The other sections are its mechanism.
    pub scheme: SchemeKind,
    pub memory: MemoryConfig,
    pub security: SecurityConfig,
    pub tree: TreeConfig,
    pub metadata_cache: MetadataCacheConfig,
    pub persistence: PersistenceConfig,
    pub core: CoreConfig,
    pub caches: CacheHierarchyConfig,
    pub nvm: NvmConfig,
    pub memory_controller: MemoryControllerConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            name: "default".into(),
            description: String::new(),
            expect_crash_violations: false,
            expect_undetected_attacks: false,
            role: PresetRole::Scheme,
            scheme: SchemeKind::default(),
            memory: MemoryConfig::default(),
            security: SecurityConfig::default(),
            tree: TreeConfig::default(),
            metadata_cache: MetadataCacheConfig::default(),
            persistence: PersistenceConfig::default(),
            core: CoreConfig::default(),
            caches: CacheHierarchyConfig::default(),
            nvm: NvmConfig::default(),
            memory_controller: MemoryControllerConfig::default(),
        }
    }
}

/// What a preset is for (`SimConfig::role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PresetRole {
    /// A scheme of one of the papers, or a baseline one of them compares with.
    #[default]
    Scheme,
    /// The scheme of the preset it extends, with one of its mechanisms left out.
    Ablation,
    /// The scheme of the preset it extends, with one parameter varied.
    Sensitivity,
}

impl PresetRole {
    pub fn is_scheme(&self) -> bool {
        *self == PresetRole::Scheme
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Simulated NVM data capacity (SecPB Table I: 8 GB). Storage is sparse:
    /// host memory grows with the touched footprint only.
    pub capacity_bytes: u64,
    /// Page size; one split counter block covers one page.
    pub page_bytes: u64,
    /// The persistent regions of physical memory, as the kernel declares
    /// them (Triad-NVM III-B1: `memmap=4G!12G` is `{ start_bytes =
    /// 12 GiB, size_bytes = 4 GiB }`). Empty (the default): all of memory
    /// is persistent. With regions, a workload's persistent heap is placed
    /// in the first one and its volatile data outside them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub persistent_regions: Vec<PersistentRegion>,
    /// Bytes of volatile stack each transaction of a program writes as it
    /// begins (a PMDK transaction's frame: its arguments and the library's
    /// state), in the program's non-persistent memory. 0 (the default):
    /// not modelled. Triad-NVM's machines set it, so that the
    /// non-persistent region holds data a crash may lose.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub tx_stack_bytes: u64,
}

/// One persistent region `[start_bytes, start_bytes + size_bytes)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistentRegion {
    pub start_bytes: u64,
    pub size_bytes: u64,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { capacity_bytes: 8 << 30, page_bytes: 4096, persistent_regions: Vec::new(), tx_stack_bytes: 0 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecurityConfig {
    /// false models an insecure NVM (plaintext, no metadata).
    pub enabled: bool,
    pub aes_key_bits: AesKeyBits,
    /// `real` runs AES and HMAC on every block; `timing-only` skips the
    /// cryptography (pads and MACs are zero) but keeps every cache, queue
    /// and counter decision, for fast timing sweeps.
    pub crypto: CryptoMode,
    /// MAC and tree-hash latency (SecPB Table I: 40 cycles).
    pub mac_latency_cycles: u32,
    /// The integrity tree's hash latency alone, when it differs from the
    /// data MAC's (Secon 4.4.1 varies "the hashing latency in BMT update"
    /// only). Unset: `mac_latency_cycles`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_hash_latency_cycles: Option<u32>,
    /// One multiset hash computed or incremented, for the multiset-hash
    /// scheme's Read Hash and Write Hash registers (Kubo et al. Table 1:
    /// 160 cycles). Unset: 160. How a register's unit takes its
    /// increments is the scheme's (`scheme.register_unit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiset_hash_latency_cycles: Option<u32>,
    /// One-time-pad (AES) latency. Table I of SecPB gives none; 40 cycles is
    /// the MAC figure, used for AES too.
    pub aes_latency_cycles: u32,
    /// Metadata cache access (SecPB Table I: 2 cycles).
    pub metadata_cache_latency_cycles: u32,
    /// BMT updates at the memory controller are pipelined (SecPB V-B: only
    /// NoGap, M and CM do not pipeline their root updates).
    pub mc_bmt_pipelined: bool,
    /// Initiation interval of a pipelined hash engine: cycles between the
    /// starts of two BMT updates. 1 = a fully pipelined engine taking a new
    /// block every cycle; `mac_latency_cycles` = one hash unit per level.
    pub hash_pipeline_interval_cycles: u32,
    /// The security engine's units: AES (pads), MAC (data
    /// MACs) and hash (tree hashes) units, each of this many servers. A
    /// paper of this set states none: one of each, fully pipelined, is
    /// what an engine of their kind has (SecPB V-B pipelines its MC's BMT
    /// updates; Secon and STAR give a latency per operation, not a count).
    pub aes_units: u32,
    pub mac_units: u32,
    pub hash_units: u32,
    /// Initiation intervals of the AES and MAC units (1: a new operation
    /// every cycle); the hash unit's is `hash_pipeline_interval_cycles`.
    pub aes_interval_cycles: u32,
    pub mac_interval_cycles: u32,
    /// Entries of the engine's queue of background metadata work (tree
    /// updates a persist leaves running, metadata write-backs, register
    /// increments, page re-encryptions): a full queue stalls whoever hands
    /// it work. No paper of this set sizes such a queue for the schemes
    /// that use it (Secon 3.2's pending BMT update queue of 16 is Secon's
    /// own structure, `deferred_root_updates`). Unset, it is the hash
    /// unit's depth, [`Self::background_queue_entries`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_queue_entries: Option<u32>,
    /// Tag-check ports of the metadata cache (lookups a cycle) and its
    /// misses in flight (MSHRs). No paper of this set states them; they are
    /// ChampSim's defaults for a second-level cache of the metadata
    /// cache's kind (champsim_config.json, L2C: one tag check a cycle, 32
    /// MSHRs), set before any claim was run with them.
    pub metadata_cache_ports: u32,
    pub metadata_cache_mshrs: u32,
    /// Where a data block's MAC is stored: `mac-lines` (eight MACs to a
    /// metadata line, cached and written like other metadata) or
    /// `data-line` (Synergy's ninth chip, as STAR II-D assumes: read and
    /// written with its data in the same access, no line of its own).
    #[serde(skip_serializing_if = "MacPlacement::is_mac_lines")]
    pub mac_placement: MacPlacement,
    /// Data outside the persistent regions is encrypted and MACed under a
    /// volatile key set that changes at every recovery (Triad-NVM III-B1,
    /// Observation 3), so its counters may be lost in a crash without a
    /// one-time pad ever being used twice. false (the default): one key
    /// set for all of memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub volatile_key: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MacPlacement {
    #[default]
    MacLines,
    DataLine,
}

impl MacPlacement {
    pub fn is_mac_lines(&self) -> bool {
        *self == MacPlacement::MacLines
    }
}

impl SecurityConfig {
    /// The background queue's entries: as set, else one per op the hash
    /// units hold in flight (servers x latency / initiation interval). A
    /// tree update is a chain of hashes, each waiting for the one below,
    /// so it has one op in the pipeline at a time, and the queue holds one
    /// update per entry: with fewer entries than the pipeline's depth, a
    /// full queue would leave the hash units idle, capping them at
    /// entries x interval / latency of their throughput.
    pub fn background_queue_entries(&self) -> u32 {
        self.background_queue_entries.unwrap_or_else(|| {
            let latency = self.tree_hash_latency_cycles.unwrap_or(self.mac_latency_cycles).max(1);
            let interval = self.hash_pipeline_interval_cycles.max(1);
            self.hash_units.max(1).saturating_mul(latency.div_ceil(interval)).min(limits::MAX_ENTRIES)
        })
    }
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            enabled: true,
            aes_key_bits: AesKeyBits::Aes128,
            crypto: CryptoMode::Real,
            mac_latency_cycles: 40,
            tree_hash_latency_cycles: None,
            multiset_hash_latency_cycles: None,
            aes_latency_cycles: 40,
            metadata_cache_latency_cycles: 2,
            mc_bmt_pipelined: true,
            hash_pipeline_interval_cycles: 1,
            aes_units: 1,
            mac_units: 1,
            hash_units: 1,
            aes_interval_cycles: 1,
            mac_interval_cycles: 1,
            background_queue_entries: None,
            metadata_cache_ports: 1,
            metadata_cache_mshrs: 32,
            mac_placement: MacPlacement::MacLines,
            volatile_key: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CryptoMode {
    #[default]
    Real,
    TimingOnly,
}

/// The core (SecPB Table I: one out-of-order x86 core at 4 GHz). Each
/// parameter stands for one structure; none is fitted to results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreConfig {
    /// Cores (1-64): each has its own core, L1D, L2, store buffer and front
    /// end (a persist buffer per core); L3 and the memory controller, with
    /// its metadata caches, WPQ and security engine, are shared. A
    /// multi-threaded or multi-programmed workload runs one thread per core.
    /// Left out of the stats when 1, so single-core stats keep their bytes.
    #[serde(skip_serializing_if = "is_one")]
    pub count: u32,
    /// Report the multi-core statistics (per-core counts, transactions and
    /// throughput, security-engine load) with one core too, for a scaling
    /// curve's first point; off by default so single-core stats keep their
    /// bytes. Always on with more than one core.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multicore_stats: bool,
    /// `interval`: non-memory instructions issue at the full width with no
    /// dependences (fast; needs nothing but the trace). `ooo`: every
    /// instruction is scheduled by its register dependences, unit and
    /// branch prediction (needs the instruction stream a recorded trace
    /// has beside it, `TRACE.insn`, or a ChampSim trace's registers and
    /// branches). `auto` (the default): `ooo` where the workload has such
    /// a stream, `interval` otherwise.
    pub model: CoreModel,
    pub frequency_ghz: f64,
    /// Instructions dispatched and retired per cycle by the `interval`
    /// model. The `ooo` model has gem5's own widths (`core.ooo.*_width`).
    pub issue_width: u32,
    /// Reorder buffer: how far loads and misses may overlap. Under the
    /// `ooo` model its entries hold micro-ops (gem5 `numROBEntries`,
    /// see `core.ooo.micro_ops`).
    pub rob_entries: u32,
    /// Retired stores waiting to be released to L1D and the persist buffer.
    pub store_buffer_entries: u32,
    /// The `ooo` model's structures.
    pub ooo: OooConfig,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            count: 1,
            multicore_stats: false,
            model: CoreModel::default(),
            frequency_ghz: 4.0,
            issue_width: 4,
            rob_entries: 192,
            store_buffer_entries: 56,
            ooo: OooConfig::default(),
        }
    }
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CoreModel {
    /// The `ooo` core where the workload has an instruction stream (a
    /// recorded program's, or a ChampSim trace's registers and branches),
    /// the `interval` core otherwise; decided before the machine is built
    /// ([`crate::workload::WorkloadKind::auto_core`]) and said in the
    /// run's notes.
    #[default]
    Auto,
    Interval,
    Ooo,
}

/// The `ooo` core's front end (`core.ooo.front_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FrontEnd {
    /// Fetch by instruction address through L1I, a fetch queue and the
    /// front-end stages (gem5 O3's fetch, decode, rename).
    #[default]
    Fetch,
    /// A constant refill after a misprediction, no instruction cache.
    Constant,
}

/// What the `ooo` core's widths and queues hold (`core.ooo.micro_ops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MicroOps {
    /// Each instruction cracked into its micro-ops as gem5's x86 decoder
    /// cracks it (the rule of `trace/uops.rs`).
    #[default]
    X86,
    /// One slot and one entry per instruction (the model before micro-ops).
    OnePerInstruction,
}

/// A pool of identical functional units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FuPool {
    pub count: u32,
    /// Cycles from issue to result.
    pub latency: u32,
    /// Cycles before the unit takes another operation (1: pipelined).
    pub issue_interval: u32,
}

/// The out-of-order core's structures. The defaults are gem5's O3 CPU
/// (the core SecPB Table I names: "OOO, x86-64"): `src/cpu/o3/O3CPU.py`
/// (queue sizes, pipeline delays, `TournamentBP`) and
/// `src/cpu/o3/FuncUnitConfig.py` (unit counts and latencies).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OooConfig {
    /// Loads in flight (gem5 `LQEntries` 32).
    pub load_queue_entries: u32,
    /// `x86`: an instruction is cracked into micro-ops, one per access
    /// (load or store) plus one if it also computes, at least one (the
    /// rule of `trace/uops.rs`: `add (%rsi),%rax` is two, `add %rax,(%rsi)`
    /// three, as gem5's x86 microcode `ADD_R_M` and `ADD_M_R` in
    /// `src/arch/x86/isa/insts/general_purpose/arithmetic/add_and_subtract.py`).
    /// Each micro-op takes a slot of the fetch, dispatch and commit widths
    /// and an entry of the fetch queue, the reorder buffer and the
    /// instruction queue, as in gem5's O3 CPU (`src/cpu/o3/`):
    /// `Fetch::fetch` (`fetch.cc`) counts every micro-op it sends to
    /// decode against `fetchWidth` and `fetchQueueSize`;
    /// `Decode::decodeInsts`, `Rename::renameInsts` and
    /// `IEW::dispatchInsts` move micro-ops at their widths into the ROB
    /// (`ROB::insertInst`) and the IQ (`InstructionQueue::insert`);
    /// `Commit::commitInsts` commits micro-ops at `commitWidth`. An instruction retires with its last micro-op and
    /// the load queue holds a loading instruction once, as before.
    /// Instructions and IPC stay per instruction (gem5's
    /// `Commit::updateComInstStats` counts `numInsts` at an instruction's
    /// last micro-op and `numOps` at each). `one-per-instruction`: every
    /// instruction one slot and one entry (the model before this key).
    pub micro_ops: MicroOps,
    /// Micro-ops (instructions under `micro_ops = "one-per-instruction"`)
    /// dispatched per cycle into the reorder buffer and the
    /// instruction queue: gem5 `dispatchWidth` 8 (`src/cpu/o3/BaseO3CPU.py`;
    /// `decodeWidth` and `renameWidth` are 8 as well, so no earlier
    /// in-order stage is narrower). 4 is the width before this key.
    pub dispatch_width: u32,
    /// Micro-ops retired per cycle: gem5 `commitWidth` 8
    /// (`src/cpu/o3/BaseO3CPU.py`).
    pub commit_width: u32,
    /// Micro-ops dispatched and not yet issued: gem5 `numIQEntries` 64
    /// (`src/cpu/o3/BaseO3CPU.py`). A full queue holds dispatch back.
    pub iq_entries: u32,
    /// `fetch`: instructions are fetched by their address through L1I
    /// (`caches.l1i`) into the fetch queue and reach dispatch through the
    /// front-end stages below, so a misprediction costs the squash signal,
    /// the refetch through L1I and the stages. `constant`: no L1I or fetch
    /// queue; a misprediction costs `mispredict_refill_cycles` (the model
    /// before the front end was modelled).
    pub front_end: FrontEnd,
    /// Under `front_end = "constant"`: cycles from a mispredicted branch's
    /// execution to the first correct instruction's dispatch: gem5's
    /// squash signal to fetch (1), a fetch cycle (1), fetch to decode (1),
    /// decode to rename (1), rename to IEW (2), plus the L1I hit of the
    /// refetch (1).
    pub mispredict_refill_cycles: u32,
    /// Micro-ops fetched per cycle: gem5 `fetchWidth` 8
    /// (`src/cpu/o3/BaseO3CPU.py`).
    pub fetch_width: u32,
    /// Bytes fetch takes from L1I at once; an instruction outside them is
    /// a new L1I access: gem5 `fetchBufferSize` 64 (`BaseO3CPU.py`).
    pub fetch_buffer_bytes: u32,
    /// Fetched micro-ops waiting for decode: gem5 `fetchQueueSize` 32
    /// (`BaseO3CPU.py`).
    /// A full queue stops fetch.
    pub fetch_queue_entries: u32,
    /// Front-end stage delays, gem5 `BaseO3CPU.py`: `fetchToDecodeDelay`
    /// 1, `decodeToRenameDelay` 1, `renameToIEWDelay` 2 (an instruction
    /// dispatches in IEW), and `iewToFetchDelay` 1 (a mispredicted
    /// branch's squash reaching fetch).
    pub fetch_to_decode_cycles: u32,
    pub decode_to_rename_cycles: u32,
    pub rename_to_iew_cycles: u32,
    pub iew_to_fetch_cycles: u32,
    /// gem5 `IntALU`: 6 units, 1 cycle.
    pub int_alu: FuPool,
    /// gem5 `IntMultDiv`: 2 units; `IntMult` 3 cycles pipelined.
    pub int_mult: FuPool,
    /// gem5 `IntDiv` on the same 2 units: 20 cycles, issue every 19.
    pub int_div: FuPool,
    /// gem5 `FP_ALU`: 4 units; add, compare, convert 2 cycles.
    pub fp_add: FuPool,
    /// gem5 `FP_MultDiv`: 2 units; `FloatMult` 4 cycles.
    pub fp_mult: FuPool,
    /// `FloatDiv` 12 cycles, not pipelined.
    pub fp_div: FuPool,
    /// `FloatSqrt` 24 cycles, not pipelined.
    pub fp_sqrt: FuPool,
    /// gem5 `TournamentBP`: local history table and local counters (2048
    /// each), global and choice counters (8192 each, 13 bits of history).
    pub local_history_entries: u32,
    pub local_counter_entries: u32,
    pub global_counter_entries: u32,
    /// Indirect targets (gem5 `BTBEntries` 4096) and the return address
    /// stack (`RASSize` 16).
    pub btb_entries: u32,
    pub ras_entries: u32,
}

impl Default for OooConfig {
    fn default() -> Self {
        let pool = |count, latency, issue_interval| FuPool { count, latency, issue_interval };
        OooConfig {
            load_queue_entries: 32,
            micro_ops: MicroOps::X86,
            dispatch_width: 8,
            commit_width: 8,
            iq_entries: 64,
            front_end: FrontEnd::Fetch,
            mispredict_refill_cycles: 7,
            fetch_width: 8,
            fetch_buffer_bytes: 64,
            fetch_queue_entries: 32,
            fetch_to_decode_cycles: 1,
            decode_to_rename_cycles: 1,
            rename_to_iew_cycles: 2,
            iew_to_fetch_cycles: 1,
            int_alu: pool(6, 1, 1),
            int_mult: pool(2, 3, 1),
            int_div: pool(2, 20, 19),
            fp_add: pool(4, 2, 1),
            fp_mult: pool(2, 4, 1),
            fp_div: pool(2, 12, 12),
            fp_sqrt: pool(2, 24, 24),
            local_history_entries: 2048,
            local_counter_entries: 2048,
            global_counter_entries: 8192,
            btb_entries: 4096,
            ras_entries: 16,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheLevel {
    /// 0 for an L2 or L3 the machine does not have: every access passes it
    /// (`latency_cycles` is then the time a miss takes to get past it).
    pub capacity_bytes: u64,
    pub ways: u32,
    /// Load-to-use latency of a hit at this level, from the core.
    pub latency_cycles: u32,
    /// Miss status holding registers: the misses this level has in flight
    /// at once (gem5 `BaseCache.mshrs`). A full file blocks the cache.
    pub mshrs: u32,
    /// Accesses one MSHR holds: the miss and the accesses to its block
    /// merged into it while it is in flight (gem5 `tgts_per_mshr`). An
    /// MSHR that holds this many blocks the cache until its fill.
    pub targets_per_mshr: u32,
    /// Dirty victims on their way to the next level (gem5
    /// `BaseCache.write_buffers`). The cache blocks while this many are
    /// held; the fills already in flight may still add theirs (gem5
    /// reserves one entry per MSHR for them).
    pub write_buffers: u32,
}

impl Default for CacheLevel {
    fn default() -> Self {
        CacheHierarchyConfig::default().l1d
    }
}

/// How the data caches bound their misses in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MshrBounds {
    /// Each level's `mshrs`, `targets_per_mshr` and `write_buffers`, as
    /// gem5's classic caches have them.
    #[default]
    Bounded,
    /// Every miss in flight at once, no write buffer (a dirty victim's
    /// fill waits for its write-queue slot instead), and an access to a
    /// block whose miss is in flight a hit: the model before MSHRs were
    /// modelled, kept so that their effect can be shown side by side.
    Unbounded,
}

/// Data caches: sizes and latencies from SecPB Table I; MSHRs, targets
/// and write buffers from gem5's classic caches, which the papers' gem5
/// scripts build (SecPB Table I leaves them to the simulator):
/// - L1D: `configs/common/Caches.py` `L1Cache` (`mshrs = 4`,
///   `tgts_per_mshr = 20`; `write_buffers` not set there, so
///   `src/mem/cache/Cache.py` `BaseCache`'s default 8);
/// - L2: `configs/common/Caches.py` `L2Cache` (`mshrs = 20`,
///   `tgts_per_mshr = 12`, `write_buffers = 8`);
/// - L3: `Caches.py` has none and no paper states one; gem5's own L3 is
///   `configs/example/arm/devices.py` `L3` (`mshrs = 20`,
///   `tgts_per_mshr = 12`, `BaseCache`'s 8 write buffers), a parameter
///   to sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheHierarchyConfig {
    /// `bounded` (gem5's MSHRs and write buffers) or `unbounded`.
    pub mshrs: MshrBounds,
    /// The `ooo` core's instruction cache (under `core.ooo.front_end =
    /// "fetch"`): SecPB Table I's L1 size and latency, as L1D's; MSHRs
    /// and targets from `configs/common/Caches.py` `L1_ICache` (an
    /// `L1Cache`: 4, 20). It holds no dirty line, so its write buffers
    /// are never used.
    pub l1i: CacheLevel,
    pub l1d: CacheLevel,
    pub l2: CacheLevel,
    pub l3: CacheLevel,
}

impl Default for CacheHierarchyConfig {
    fn default() -> Self {
        let level = |capacity_bytes, ways, latency_cycles, mshrs, targets_per_mshr, write_buffers| CacheLevel {
            capacity_bytes,
            ways,
            latency_cycles,
            mshrs,
            targets_per_mshr,
            write_buffers,
        };
        CacheHierarchyConfig {
            mshrs: MshrBounds::Bounded,
            l1i: level(64 << 10, 8, 2, 4, 20, 8),
            l1d: level(64 << 10, 8, 2, 4, 20, 8),
            l2: level(512 << 10, 16, 20, 20, 12, 8),
            l3: level(4 << 20, 32, 30, 20, 12, 8),
        }
    }
}

/// PCM device (SecPB Table I: 8 GB, read 55 ns, write 150 ns, write queue
/// 128, read queue 64). The bank count is not given there: gem5's
/// `NVM_2400_1x64` has 16 (`banks_per_rank`, one rank).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NvmConfig {
    pub read_latency_ns: f64,
    pub write_latency_ns: f64,
    pub banks: u32,
    /// SecPB Table I: write queue 128, read queue 64 (gem5
    /// `NVM_2400_1x64.write_buffer_size = 128`, `read_buffer_size = 64`):
    /// the gem5 controller's queues. The reads-first controller's `posted`
    /// write model takes `write_queue_entries` as the writes the device
    /// may have in flight, and has no read queue.
    pub write_queue_entries: u32,
    pub read_queue_entries: u32,
    /// How a write occupies the device; see [`PcmWriteModel`].
    pub write_model: PcmWriteModel,
    /// Time a 64 B block takes on the channel (64 B over a 64-bit bus at
    /// 2400 MT/s, the 1200 MHz of SecPB Table I: 8 beats = 3.33 ns).
    pub burst_ns: f64,
    /// How a bank orders its reads; see [`ReadScheduling`].
    #[serde(skip_serializing_if = "ReadScheduling::is_auto")]
    pub read_scheduling: ReadScheduling,
    /// How a bank and the WPQ take writes; see [`WriteScheduling`].
    #[serde(skip_serializing_if = "WriteScheduling::is_auto")]
    pub write_scheduling: WriteScheduling,
    /// Bytes of a bank's row buffer (gem5 `src/mem/NVMInterface.py`,
    /// `NVM_2400_1x64.device_rowbuffer_size = "256B"`; NVMain
    /// `Config/PCM_ISSCC_2012_4GB.config` assumes the same 256 bits per
    /// device, 8 devices to the 64-bit bus). Consecutive blocks share a
    /// row buffer, then banks interleave (gem5's `RoRaBaCoCh` address map,
    /// `src/mem/MemInterface.py`). Read by the gem5 controller only.
    pub row_buffer_bytes: u64,
    /// Which bank a row buffer is in; see [`BankMap`]. Read by the gem5
    /// controller only (the reads-first one hashes each block).
    pub bank_map: BankMap,
    /// A read that finds its row open in the row buffer: the column access
    /// and the interface (gem5 `NVM_2400_1x64.tSEND = 14.16ns`; NVMain's
    /// tCAS/tCL). `read_latency_ns` is a read that misses it: the array
    /// read and the column access. Read by the gem5 controller only.
    pub row_hit_latency_ns: f64,
}

/// How PCM banks and the WPQ take writes. Writes reach the model out of
/// time order on every machine (a drained persist-buffer entry holds its
/// WPQ slot from now until its tuple is done, and its metadata lines
/// arrive then), so they are always booked by calendar: a write takes the
/// first free slot of its bank at or after it is ready, and holds its WPQ
/// slot from its arrival to its issue. `auto` and `calendar` are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WriteScheduling {
    #[default]
    Auto,
    Calendar,
}

impl WriteScheduling {
    fn is_auto(&self) -> bool {
        *self == WriteScheduling::Auto
    }
}

/// How a PCM bank takes reads that reach the model out of time order.
///
/// The timing model prices a core's operations in program order, so a
/// bank sees requests stamped with times that are not increasing: a
/// store's metadata reads at the persist path's time, up to a store
/// buffer ahead of the loads that follow it in the program, and, with
/// several cores, each core's requests at its own times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ReadScheduling {
    /// `frontier` with one core, `calendar` with more.
    #[default]
    Auto,
    /// One frontier per bank: a read starts after every read priced before
    /// it, even one stamped later (the single-core model of every result
    /// before the multi-core calendar; kept so they stay byte-identical).
    Frontier,
    /// Each bank keeps its reads' busy intervals: a read takes the first
    /// free slot at or after its own time. Needed with several cores,
    /// where one core's loads would otherwise wait behind another core's
    /// reads stamped far in the future.
    Calendar,
}

impl ReadScheduling {
    fn is_auto(&self) -> bool {
        *self == ReadScheduling::Auto
    }

    /// Whether reads use the calendar on a machine of `cores` cores.
    pub fn calendar(self, cores: u32) -> bool {
        match self {
            ReadScheduling::Auto => cores > 1,
            ReadScheduling::Frontier => false,
            ReadScheduling::Calendar => true,
        }
    }
}

impl Default for NvmConfig {
    fn default() -> Self {
        NvmConfig {
            read_latency_ns: 55.0,
            write_latency_ns: 150.0,
            banks: 16,
            write_queue_entries: 128,
            read_queue_entries: 64,
            write_model: PcmWriteModel::Posted,
            burst_ns: 3.33,
            read_scheduling: ReadScheduling::Auto,
            write_scheduling: WriteScheduling::Auto,
            row_buffer_bytes: 256,
            bank_map: BankMap::BitSlice,
            row_hit_latency_ns: 14.16,
        }
    }
}

/// Which bank each row buffer of the PCM is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BankMap {
    /// Row buffers to banks in turn: gem5's `RoRaBaCoCh` bit slicing
    /// (`src/mem/MemInterface.py`, `nvm_interface.cc::decodePacket`).
    #[default]
    BitSlice,
    /// A hash of the row buffer's index, which keeps each row buffer in
    /// one bank but spreads row buffers that bit slicing puts in one bank
    /// (spmsim lays the data, counter and MAC regions out back to back at
    /// power-of-two sizes, so the first page of memory, its counter block
    /// and its MAC line share a bank under bit slicing).
    Hash,
}

/// The memory controller in front of the PCM.
///
/// `gem5` (default) is gem5's `MemCtrl` (`src/mem/MemCtrl.py`,
/// `src/mem/mem_ctrl.cc`) driving its NVM interface (`src/mem/NVMInterface.py`,
/// `src/mem/nvm_interface.cc`), which SecPB (V-A, Table I), Triad-NVM and
/// the multiset-hash paper simulated, and, with NVMain's timing, Secon and
/// STAR: a read queue and a write queue of `nvm.read_queue_entries` and
/// `nvm.write_queue_entries` (SecPB Table I: 64 and 128), FR-FCFS, the
/// switch to a write drain at `write_high_thresh_perc` of the write queue
/// (or at `write_low_thresh_perc` when no read waits) during which reads
/// wait, banks with row buffers, and a bank busy for the whole of each
/// write (`nvm_interface.cc`: `actAllowedAt = ... + tWRITE`). How the
/// calendar of the timing model approximates it is in
/// docs/timing-order.md. `reads-first` is spmsim's controller before
/// this one (`nvm.write_model`, `nvm.read_scheduling`), kept so that a
/// result can be compared with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryControllerConfig {
    pub model: ControllerModel,
    /// Where the WPQ, the ADR domain's queue, sits; see [`WpqPlacement`].
    pub wpq: WpqPlacement,
    /// gem5 `MemCtrl.write_high_thresh_perc = 85`: a write queue fuller
    /// than this share forces a write drain (after `min_reads_per_switch`
    /// reads).
    pub write_high_thresh_perc: u32,
    /// gem5 `MemCtrl.write_low_thresh_perc = 50`: with no read waiting, a
    /// write queue fuller than this share is drained.
    pub write_low_thresh_perc: u32,
    /// gem5 `MemCtrl.min_writes_per_switch = 16`: writes a drain issues
    /// before the bus turns back to waiting reads.
    pub min_writes_per_switch: u32,
    /// gem5 `MemCtrl.min_reads_per_switch = 16`: reads served before a full
    /// write queue takes the bus again.
    pub min_reads_per_switch: u32,
    /// gem5 `MemCtrl.static_frontend_latency = "10ns"` and
    /// `static_backend_latency = "10ns"`: the controller's and PHY's
    /// pipeline; a read takes the front end before its queue and the back
    /// end on its way out, a write the front end between the WPQ (spmsim's
    /// security engine's side, where it is persistent) and the write queue,
    /// or before the WPQ when that is the write queue. NVMain, which Secon and
    /// STAR put in place of gem5's controller, has neither (0 in their
    /// presets).
    pub frontend_latency_ns: f64,
    pub backend_latency_ns: f64,
}

impl Default for MemoryControllerConfig {
    fn default() -> Self {
        MemoryControllerConfig {
            model: ControllerModel::Gem5,
            wpq: WpqPlacement::InFront,
            write_high_thresh_perc: 85,
            write_low_thresh_perc: 50,
            min_writes_per_switch: 16,
            min_reads_per_switch: 16,
            frontend_latency_ns: 10.0,
            backend_latency_ns: 10.0,
        }
    }
}

/// Which memory controller schedules the PCM's reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerModel {
    /// gem5's `MemCtrl` with the NVM interface (see
    /// [`MemoryControllerConfig`]).
    #[default]
    Gem5,
    /// Reads go ahead of every write not yet started at their bank, writes
    /// are posted or bank-serial (`nvm.write_model`) and no write drain
    /// ever holds reads back: spmsim's model before the gem5 controller.
    ReadsFirst,
}

/// Where the write pending queue, whose entries are in the ADR domain
/// (a write is persistent once it holds one), sits in the gem5
/// controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WpqPlacement {
    /// In front of the controller's write queue (SecPB Table I lists a
    /// 32-entry WPQ beside the NVM's 128-entry write queue): a write holds
    /// its WPQ entry from its arrival until the write queue takes it, once
    /// its data is secured and an entry is free there.
    #[default]
    InFront,
    /// It is the controller's write queue (Secon Table 1: "Memory
    /// Controller: FRFCFS, 32 entries of WPQ"): `persistence.wpq_entries`
    /// entries, each held until its write issues, the drain thresholds a
    /// share of them; `nvm.write_queue_entries` is not used.
    WriteQueue,
}

/// How PCM writes use the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PcmWriteModel {
    /// The write's data crosses the channel into its bank (one burst), then
    /// completes in the background within `write_latency_ns`; up to
    /// `write_queue_entries` writes are in flight. This is how gem5's NVM
    /// interface, which SecPB's evaluation ran on, treats writes.
    #[default]
    Posted,
    /// A write holds its bank for the whole `write_latency_ns`: a
    /// conservative device with a fraction of the write bandwidth.
    BankSerial,
}

/// The integrity tree axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TreeConfig {
    /// Bonsai Merkle tree over split counter blocks, eagerly updated to the
    /// root on every counter change (SecPB II-B).
    Bmt {
        #[serde(default = "default_arity")]
        arity: u64,
        /// Levels including the counter-block level; absent = derived.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        levels: Option<u32>,
        /// Levels of the tree above the top level kept in on-chip
        /// non-volatile registers (Triad-NVM Observation 5): never in NVM,
        /// so they need no persisting, but each root update hashes them
        /// too, and that work is counted. 0: the root registers alone.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        onchip_levels: u32,
    },
    /// SGX integrity tree over SIT counter blocks, lazily updated: a parent
    /// counter changes only when its child is written back (STAR II-C).
    Sit {
        #[serde(default = "default_arity")]
        arity: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        levels: Option<u32>,
    },
}

fn default_arity() -> u64 {
    8
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig::Bmt { arity: 8, levels: None, onchip_levels: 0 }
    }
}

impl TreeConfig {
    pub fn arity(&self) -> u64 {
        match self {
            TreeConfig::Bmt { arity, .. } | TreeConfig::Sit { arity, .. } => *arity,
        }
    }
    pub fn levels(&self) -> Option<u32> {
        match self {
            TreeConfig::Bmt { levels, .. } | TreeConfig::Sit { levels, .. } => *levels,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheGeometry {
    pub capacity_bytes: u64,
    pub ways: u32,
}

impl Default for CacheGeometry {
    fn default() -> Self {
        // SecPB Table I: 128 KB, 8-way per metadata cache.
        CacheGeometry { capacity_bytes: 128 << 10, ways: 8 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MetadataCacheOrganization {
    Separate {
        #[serde(default)]
        counter: CacheGeometry,
        #[serde(default)]
        mac: CacheGeometry,
        #[serde(default)]
        tree: CacheGeometry,
    },
    Unified {
        #[serde(default)]
        unified: CacheGeometry,
    },
}

impl Default for MetadataCacheOrganization {
    fn default() -> Self {
        MetadataCacheOrganization::Separate {
            counter: CacheGeometry::default(),
            mac: CacheGeometry::default(),
            tree: CacheGeometry::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct MetadataCacheConfig {
    /// Geometry only: how each kind of line is written is the scheme's
    /// (`SchemeWork::metadata`).
    pub organization: MetadataCacheOrganization,
}

/// Where a store becomes persistent (its point of persistency, PoP).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PersistPoint {
    /// Strict persistency enforced with a flush per store: the store is
    /// persistent once its secure write reaches the WPQ (PLP; SecPB's SP).
    MemoryController,
    /// A persist buffer beside L1D (BBB; SecPB Fig. 2a). A store is
    /// persistent once it enters the buffer.
    PersistBuffer {
        #[serde(default = "default_pb_entries")]
        entries: u32,
        /// Draining starts when occupancy reaches this share (SecPB: 75 %).
        #[serde(default = "default_high_wm")]
        high_watermark_pct: u32,
        /// ... and stops at this share.
        #[serde(default = "default_low_wm")]
        low_watermark_pct: u32,
        /// Data-value-independent metadata (counter, OTP, BMT root) once per
        /// dirty residency, not per store (SecPB IV-A). Only matters to a
        /// scheme that does some of it early.
        #[serde(default = "default_true")]
        coalesce_metadata: bool,
        /// SecPB access latency (SecPB Table I: 2 cycles).
        #[serde(default = "default_pb_latency")]
        access_latency_cycles: u32,
        /// Early BMT root updates allow one update in flight (SecPB VI-B:
        /// "constraining the system to one in-flight BMT update").
        #[serde(default = "default_true")]
        early_bmt_one_in_flight: bool,
    },
    /// eADR: the data cache hierarchy is in the persistence domain.
    CacheHierarchy {
        #[serde(default)]
        cache: DataCacheGeometry,
    },
}

fn default_true() -> bool {
    true
}
fn default_pb_latency() -> u32 {
    2
}

fn default_pb_entries() -> u32 {
    32
}
fn default_high_wm() -> u32 {
    75
}
fn default_low_wm() -> u32 {
    50
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataCacheGeometry {
    pub capacity_bytes: u64,
    pub ways: u32,
}

impl Default for DataCacheGeometry {
    fn default() -> Self {
        // One write-back level standing for the whole hierarchy in the
        // functional model (SecPB Table I L3: 4 MB, 32-way).
        DataCacheGeometry { capacity_bytes: 4 << 20, ways: 32 }
    }
}

/// Which structures survive power loss long enough to be drained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BatteryDomain {
    /// ADR: the WPQ drains to NVM.
    pub wpq: bool,
    /// The persist buffer drains (BBB, SecPB).
    pub persist_buffer: bool,
    /// eADR: the data caches drain.
    pub caches: bool,
    /// On-chip non-volatile registers (root register, ...).
    pub nv_registers: bool,
}

impl Default for BatteryDomain {
    fn default() -> Self {
        BatteryDomain { wpq: true, persist_buffer: false, caches: false, nv_registers: true }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PersistenceConfig {
    pub point: PersistPoint,
    pub battery: BatteryDomain,
    /// Write pending queue entries (SecPB Table I: 32).
    pub wpq_entries: u32,
    /// Kinds of block whose write merges into a queued, not yet issued
    /// write of the same block (timing model). Every kind by default, as
    /// memory controllers' write queues merge; Secon's WT coalesces no
    /// metadata, SuperMem coalesces counters (SuperMem, MICRO 2019) and
    /// Secon adds first-level BMT blocks (Secon 3.4.2, applied to SuperMem
    /// too in Secon 4.1).
    pub wpq_coalesce: Vec<crate::engine::layout::RegionKind>,
    /// The persistency model: in what order the stores of a core may
    /// persist (DESIGN.md's axis; Secon 3.3). `strict` for every preset
    /// that does not say otherwise.
    pub model: PersistencyModel,
    /// Transaction-specific epoch persistency's knobs (`model = "tep"` only).
    pub tep: TepConfig,
}

impl Default for PersistenceConfig {
    fn default() -> Self {
        PersistenceConfig {
            point: PersistPoint::MemoryController,
            battery: BatteryDomain::default(),
            wpq_entries: 32,
            wpq_coalesce: crate::engine::layout::RegionKind::COALESCED_BY_DEFAULT.to_vec(),
            model: PersistencyModel::default(),
            tep: TepConfig::default(),
        }
    }
}

/// The persistency model (Secon 3.3; Pelley et al.'s strict and epoch
/// persistency).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PersistencyModel {
    /// Every store persists in program order: the front end's own rule
    /// (a store at the MC is persistent once the MC holds it).
    #[default]
    Strict,
    /// Epoch persistency: stores of one epoch persist in any order; at each
    /// barrier every later store waits for the ACK of every earlier one.
    /// Secon's no-TEP ablation.
    Epoch,
    /// Secon's transaction-specific epoch persistency (Secon 3.3): paired
    /// epochs (a log epoch and the data epoch after it) persist in order
    /// within a pair and concurrently across pairs; a regular epoch (the
    /// commit) persists after every earlier epoch. Stores wait in a
    /// volatile L1D-like buffer (`persist::tep`); needs the memory
    /// controller as the persist point.
    Tep,
}

impl PersistencyModel {
    pub fn name(self) -> &'static str {
        match self {
            PersistencyModel::Strict => "strict",
            PersistencyModel::Epoch => "epoch",
            PersistencyModel::Tep => "tep",
        }
    }
}

/// What the TEP front end may do (Secon 3.3). The functional model keeps
/// lines volatile as long as TEP allows and flushes them in a seeded, legal
/// order, so that crash points see the states TEP permits and strict
/// persistency never produces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TepConfig {
    /// Keep the pair order: a data line of a paired epoch reaches the MC
    /// only after its log lines have been ACKed. `false` is the negative
    /// control (`tep-unordered`): a data write may persist before its log.
    pub pair_order: bool,
    /// Lines the volatile L1D-like buffer holds before it evicts one (a
    /// 32 KB L1D, Secon 3.3's sizing: 512 lines).
    pub buffer_lines: u32,
    /// After each store, the chance in percent that one buffered line,
    /// chosen at random, is flushed early (an eviction or write-back the
    /// cache would do on its own). 0 keeps every line until TEP forces it.
    pub early_flush_pct: u32,
}

impl Default for TepConfig {
    fn default() -> Self {
        TepConfig { pair_order: true, buffer_lines: 512, early_flush_pct: 25 }
    }
}

impl SimConfig {
    /// The configuration for a workload of `threads` threads, one per core:
    /// `core.count` left at its default of 1 becomes `threads`;
    /// a count set to something else is an error naming both.
    pub fn with_cores_for(&self, threads: usize) -> Result<SimConfig, String> {
        let count = self.core.count as usize;
        if count == threads {
            return Ok(self.clone());
        }
        if count == 1 && (1..=validate::MAX_CORES as usize).contains(&threads) {
            let mut c = self.clone();
            c.core.count = threads as u32;
            return Ok(c);
        }
        Err(format!(
            "core.count = {count} but the workload runs {threads} thread(s); one thread runs per core, so leave core.count at 1 (it follows the workload) or set it to {threads}"
        ))
    }

    /// The resolved configuration as TOML, as written beside every result.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serializes")
    }
}
