//! Key derivation: every key the chip holds is derived from one seed, so a
//! run is reproducible and a saved chip state can be re-created.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// AES key length of the one-time-pad engine. SecPB Table III prices
/// AES-192; 128 is the common choice of the other papers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum AesKeyBits {
    #[default]
    #[serde(rename = "128")]
    Aes128,
    #[serde(rename = "192")]
    Aes192,
}

/// The chip's secret keys. They live in the trusted chip state and are never
/// written to the NVM image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySet {
    pub aes_bits: AesKeyBits,
    #[serde(with = "hex::serde")]
    pub aes_key: Vec<u8>,
    #[serde(with = "hex::serde")]
    pub mac_key: [u8; 32],
    #[serde(with = "hex::serde")]
    pub tree_key: [u8; 32],
}

pub(super) fn kdf(seed: u64, label: &str) -> [u8; 32] {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(b"spmsim key derivation v1").expect("any key length");
    m.update(label.as_bytes());
    m.update(&seed.to_le_bytes());
    m.finalize().into_bytes().into()
}

impl KeySet {
    pub fn derive(seed: u64, aes_bits: AesKeyBits) -> Self {
        let aes_full = kdf(seed, "aes");
        let len = match aes_bits {
            AesKeyBits::Aes128 => 16,
            AesKeyBits::Aes192 => 24,
        };
        KeySet { aes_bits, aes_key: aes_full[..len].to_vec(), mac_key: kdf(seed, "mac"), tree_key: kdf(seed, "tree") }
    }

    /// The volatile key set of boot `boot` (Triad-NVM III-B1): the keys of
    /// the non-persistent regions, new at every recovery. Its tree key is
    /// the persistent one (one tree covers both kinds of region).
    pub fn derive_volatile(seed: u64, boot: u64, aes_bits: AesKeyBits) -> Self {
        let aes_full = kdf(seed ^ boot.rotate_left(32), &format!("aes volatile {boot}"));
        let len = match aes_bits {
            AesKeyBits::Aes128 => 16,
            AesKeyBits::Aes192 => 24,
        };
        KeySet {
            aes_bits,
            aes_key: aes_full[..len].to_vec(),
            mac_key: kdf(seed, &format!("mac volatile {boot}")),
            tree_key: kdf(seed, "tree"),
        }
    }
}
