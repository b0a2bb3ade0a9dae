//! The memory controller's security engine: what it is made of and the
//! rules it follows for every scheme alike.
//!
//! ```text
//!  controller  read/write paths: counters, one-time pads, data MACs
//!    |-- rules     the tree and the scheme's runtime (hooks.rs: what it is asked)
//!    |-- store     metadata fetch/verify/install, victim buffer (MetaStore)
//!    |     |-- metacache  the metadata caches     nvm   the untrusted NVM (WPQ, image)
//!    |     |-- chip       trusted state: keys, root registers (roots), the scheme's NV field
//!    |     `-- crypto     AES pads, MACs, tree hashes (counted)
//!    `-- tree      integrity trees over the counter blocks (BMT, SIT)
//!  layout   where every block, counter, MAC line and tree node lives
//!  shape    what a scheme answers once, when the controller is assembled
//!  counter  byte formats of counter blocks and tree nodes
//! ```
//! The engine knows no scheme by name: what a scheme changes it says in
//! its shape, read at assembly (`shape.rs`), and through the hooks the
//! engine calls (`hooks.rs`); what it remembers across a power failure it
//! keeps in one field of the chip state.

pub mod chip;
pub mod controller;
pub mod counter;
pub mod crypto;
pub mod hooks;
pub mod layout;
pub mod metacache;
pub mod nvm;
pub mod roots;
pub mod rules;
pub mod shape;
pub mod store;
pub mod tree;
