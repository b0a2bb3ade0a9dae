//! The energy constants of SecPB Table III, the energy densities of V-B and
//! VI-C and the structure sizes of Table I / Fig. 5, read from
//! `configs/energy/*.toml`. No constant of the model lives in code: every
//! key is required and unknown keys are errors naming the file and key.

use super::read_toml;
use crate::config::{presets_dir, ConfigError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyConfig {
    pub description: String,
    pub movement: Movement,
    pub crypto: Crypto,
    pub storage: Storage,
    pub structure: Structure,
    pub secpb_entry: EntryFields,
}

/// Table III, data movement (per byte).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Movement {
    pub sram_access_pj_per_byte: f64,
    pub secpb_to_pm_nj_per_byte: f64,
    pub l1d_to_pm_nj_per_byte: f64,
    pub l2_to_pm_nj_per_byte: f64,
    pub l3_to_pm_nj_per_byte: f64,
    pub mc_to_pm_nj_per_byte: f64,
}

/// Table III, metadata generation (per byte hashed or encrypted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crypto {
    pub sha512_bmt_nj_per_byte: f64,
    pub aes192_nj_per_byte: f64,
    pub sha512_mac_nj_per_byte: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    pub supercap_wh_per_cm3: f64,
    pub li_thin_wh_per_cm3: f64,
    pub core_area_mm2: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Structure {
    pub block_bytes: u64,
    pub bmt_levels: u32,
    pub bmt_onchip_levels: u32,
    /// Bytes of one child digest in a BMT node (Table I: 8 x 64-bit hashes
    /// per 64 B node). Only the alternative reading of [`super::Reading`] uses it.
    pub bmt_digest_bytes: u64,
    pub l1d_bytes: u64,
    pub l2_bytes: u64,
    pub l3_bytes: u64,
    pub counter_cache_bytes: u64,
    pub mac_cache_bytes: u64,
    pub bmt_cache_bytes: u64,
    pub wpq_entries: u64,
    pub secpb_entries: u64,
}

/// The fields of one SecPB entry (Fig. 5), in bits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryFields {
    pub plaintext_bits: u64,
    pub otp_bits: u64,
    pub ciphertext_bits: u64,
    pub mac_bits: u64,
    pub counter_bits: u64,
    pub bmt_ack_bits: u64,
}

/// `configs/energy/secpb-table3.toml` (under `$SPMSIM_CONFIGS` if set).
pub fn default_energy_path() -> PathBuf {
    presets_dir().join("energy").join("secpb-table3.toml")
}

impl EnergyConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let cfg: Self = read_toml(path)?;
        cfg.validate().map_err(|(key, message)| ConfigError::Key { file, key, message })?;
        Ok(cfg)
    }

    /// Parse from text (`file` only names the source in errors).
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let cfg: Self = super::parse_toml(text, file)?;
        cfg.validate().map_err(|(key, message)| ConfigError::Key { file: file.into(), key, message })?;
        Ok(cfg)
    }

    /// Every value must make physical sense; the error is (key path, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let (m, c, st, s) = (&self.movement, &self.crypto, &self.storage, &self.structure);
        let non_negative = [
            ("movement.sram_access_pj_per_byte", m.sram_access_pj_per_byte),
            ("movement.secpb_to_pm_nj_per_byte", m.secpb_to_pm_nj_per_byte),
            ("movement.l1d_to_pm_nj_per_byte", m.l1d_to_pm_nj_per_byte),
            ("movement.l2_to_pm_nj_per_byte", m.l2_to_pm_nj_per_byte),
            ("movement.l3_to_pm_nj_per_byte", m.l3_to_pm_nj_per_byte),
            ("movement.mc_to_pm_nj_per_byte", m.mc_to_pm_nj_per_byte),
            ("crypto.sha512_bmt_nj_per_byte", c.sha512_bmt_nj_per_byte),
            ("crypto.aes192_nj_per_byte", c.aes192_nj_per_byte),
            ("crypto.sha512_mac_nj_per_byte", c.sha512_mac_nj_per_byte),
        ];
        for (key, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key.into(), format!("must be a finite number >= 0, got {v}")));
            }
        }
        let positive = [
            ("storage.supercap_wh_per_cm3", st.supercap_wh_per_cm3),
            ("storage.li_thin_wh_per_cm3", st.li_thin_wh_per_cm3),
            ("storage.core_area_mm2", st.core_area_mm2),
        ];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err((key.into(), format!("must be a finite number > 0, got {v}")));
            }
        }
        if s.block_bytes == 0 {
            return Err(("structure.block_bytes".into(), "must be at least 1".into()));
        }
        for (key, v) in [
            ("structure.l1d_bytes", s.l1d_bytes),
            ("structure.l2_bytes", s.l2_bytes),
            ("structure.l3_bytes", s.l3_bytes),
            ("structure.counter_cache_bytes", s.counter_cache_bytes),
            ("structure.mac_cache_bytes", s.mac_cache_bytes),
            ("structure.bmt_cache_bytes", s.bmt_cache_bytes),
        ] {
            if v % s.block_bytes != 0 {
                return Err((key.into(), format!("{v} is not a multiple of structure.block_bytes = {}", s.block_bytes)));
            }
        }
        if s.bmt_levels == 0 {
            return Err(("structure.bmt_levels".into(), "must be at least 1 (the counter-block level)".into()));
        }
        // The counter-block level is the leaf and always lives in PM.
        if s.bmt_onchip_levels >= s.bmt_levels {
            return Err((
                "structure.bmt_onchip_levels".into(),
                format!("must be below structure.bmt_levels = {} (the counter level is off chip)", s.bmt_levels),
            ));
        }
        if s.bmt_digest_bytes == 0 || s.bmt_digest_bytes > s.block_bytes {
            return Err(("structure.bmt_digest_bytes".into(), format!("must be 1..={} (structure.block_bytes)", s.block_bytes)));
        }
        if s.secpb_entries == 0 {
            return Err(("structure.secpb_entries".into(), "must be at least 1".into()));
        }
        if self.secpb_entry.plaintext_bits == 0 {
            return Err(("secpb_entry.plaintext_bits".into(), "must be at least 1".into()));
        }
        Ok(())
    }
}
