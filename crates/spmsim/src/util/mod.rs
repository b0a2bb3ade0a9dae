//! Small pieces that know nothing of secure memory: a seedable generator,
//! the set-associative cache structure, writing results whole (and what a
//! process ended by a signal removes of an unfinished one), content
//! digests of files, and the text printer of a stats tree.

pub mod digest;
pub mod output;
pub mod rng;
pub mod set_assoc;
pub mod stats_text;
pub mod unfinished;
