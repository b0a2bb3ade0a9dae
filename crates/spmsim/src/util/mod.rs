//! Small pieces that know nothing of secure memory: a seedable generator,
//! the set-associative cache structure, writing results whole, content
//! digests of files, and the text printer of a stats tree.

pub mod digest;
pub mod output;
pub mod rng;
pub mod set_assoc;
pub mod stats_text;
