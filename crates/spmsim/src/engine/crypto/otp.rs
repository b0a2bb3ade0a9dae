//! Counter-mode one-time pads (SecPB II-B; Triad-NVM II-A).
//!
//! The pad of a 64 B block is four AES blocks; AES block `i` encrypts the
//! 16-byte seed (block address: 6 B, major counter: 7 B, minor counter: 2 B,
//! chunk index i: 1 B). Address and counters together make every seed unique
//! as long as a (major, minor) pair is never reused for one address, which
//! the minor-overflow rule guarantees.

use super::keys::{AesKeyBits, KeySet};
use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use aes::{Aes128, Aes192};

#[derive(Clone)]
enum Cipher {
    A128(Aes128),
    A192(Aes192),
}

#[derive(Clone)]
pub struct OtpEngine {
    cipher: Cipher,
}

/// The 16-byte AES input for chunk `chunk` of the pad.
pub fn pad_seed(block_addr: u64, major: u64, minor: u64, chunk: u8) -> [u8; 16] {
    let mut s = [0u8; 16];
    s[0..6].copy_from_slice(&block_addr.to_le_bytes()[0..6]);
    s[6..13].copy_from_slice(&major.to_le_bytes()[0..7]);
    s[13..15].copy_from_slice(&(minor as u16).to_le_bytes());
    s[15] = chunk;
    s
}

impl OtpEngine {
    pub fn new(keys: &KeySet) -> Self {
        let cipher = match keys.aes_bits {
            AesKeyBits::Aes128 => Cipher::A128(Aes128::new_from_slice(&keys.aes_key).expect("16-byte key")),
            AesKeyBits::Aes192 => Cipher::A192(Aes192::new_from_slice(&keys.aes_key).expect("24-byte key")),
        };
        OtpEngine { cipher }
    }

    pub fn pad(&self, block_addr: u64, major: u64, minor: u64) -> [u8; 64] {
        let mut blocks = [GenericArray::default(); 4];
        for (i, b) in blocks.iter_mut().enumerate() {
            b.copy_from_slice(&pad_seed(block_addr, major, minor, i as u8));
        }
        match &self.cipher {
            Cipher::A128(c) => c.encrypt_blocks(&mut blocks),
            Cipher::A192(c) => c.encrypt_blocks(&mut blocks),
        }
        let mut out = [0u8; 64];
        for (i, b) in blocks.iter().enumerate() {
            out[i * 16..(i + 1) * 16].copy_from_slice(b);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hexb(s: &str) -> Vec<u8> {
        hex::decode(s).unwrap()
    }

    // FIPS-197 Appendix C.1 and C.2 known-answer vectors, run through the
    // same cipher objects the pad engine uses.
    #[test]
    fn fips197_aes128_known_answer() {
        let c = Aes128::new_from_slice(&hexb("000102030405060708090a0b0c0d0e0f")).unwrap();
        let mut b = GenericArray::clone_from_slice(&hexb("00112233445566778899aabbccddeeff"));
        c.encrypt_block(&mut b);
        assert_eq!(b.as_slice(), hexb("69c4e0d86a7b0430d8cdb78070b4c55a").as_slice());
    }

    #[test]
    fn fips197_aes192_known_answer() {
        let c = Aes192::new_from_slice(&hexb("000102030405060708090a0b0c0d0e0f1011121314151617")).unwrap();
        let mut b = GenericArray::clone_from_slice(&hexb("00112233445566778899aabbccddeeff"));
        c.encrypt_block(&mut b);
        assert_eq!(b.as_slice(), hexb("dda97ca4864cdfe06eaf70a0ec0d7191").as_slice());
    }

    #[test]
    fn pad_is_aes_of_the_documented_seed() {
        let keys = KeySet::derive(7, AesKeyBits::Aes128);
        let eng = OtpEngine::new(&keys);
        let pad = eng.pad(0x1234, 5, 9);
        let c = Aes128::new_from_slice(&keys.aes_key).unwrap();
        for chunk in 0..4u8 {
            let mut b = GenericArray::clone_from_slice(&pad_seed(0x1234, 5, 9, chunk));
            c.encrypt_block(&mut b);
            assert_eq!(&pad[chunk as usize * 16..chunk as usize * 16 + 16], b.as_slice());
        }
        assert_ne!(pad, eng.pad(0x1234, 5, 10), "a new minor counter gives a new pad");
        assert_ne!(pad, eng.pad(0x1234, 6, 9), "a new major counter gives a new pad");
        assert_ne!(pad, eng.pad(0x1235, 5, 9), "another address gives a new pad");
    }
}
