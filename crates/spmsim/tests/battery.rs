//! Tables V and VI of SecPB against the battery model: every row within
//! 5 % of the printed value except the two the paper's own accounting
//! leaves inconsistent (CM and s-eADR, see `battery` module docs), and
//! each of those is reproduced by a named alternative reading.

use spmsim::battery::{
    compare, default_energy_path, default_reference_path, estimate, explain, EnergyConfig, Reading, Reference, SchemeKind, SecPbVariant,
};

fn load() -> (EnergyConfig, Reference) {
    (EnergyConfig::load(&default_energy_path()).unwrap(), Reference::load(&default_reference_path()).unwrap())
}

#[test]
fn table_v_rows_match_except_the_documented_two() {
    let (cfg, rf) = load();
    for row in &rf.table_v.rows {
        let e = estimate(&cfg, row.scheme, rf.table_v.secpb_entries);
        let c = compare(&cfg, &e, "V", row);
        let documented_miss = [SchemeKind::secpb(SecPbVariant::Cm), SchemeKind::SECURE_EADR].contains(&row.scheme);
        assert_eq!(
            c.matches, !documented_miss,
            "{}: SuperCap {:.4} vs {}, Li-thin {:.5} vs {}",
            row.scheme, e.supercap.volume_mm3, row.supercap_mm3.text, e.li_thin.volume_mm3, row.li_thin_mm3.text
        );
        if documented_miss {
            let ex = explain(&cfg, &e, row);
            let want =
                if row.scheme == SchemeKind::secpb(SecPbVariant::Cm) { Reading::PendingRootUpdate } else { Reading::BmtHashesChildDigest };
            assert_eq!(ex.first().map(|x| x.reading), Some(want), "{}", row.scheme);
            assert!(ex[0].residual_pct.abs() < 1.0, "{}: {:?}", row.scheme, ex[0]);
        }
    }
}

#[test]
fn table_vi_rows_all_match() {
    let (cfg, rf) = load();
    for row in &rf.table_vi.rows {
        let n = row.entries.unwrap();
        let e = estimate(&cfg, row.scheme, n);
        let c = compare(&cfg, &e, "VI", row);
        assert!(
            c.matches,
            "{} at {n}: SuperCap {:.4} vs {} ({:+.2} %)",
            row.scheme, e.supercap.volume_mm3, row.supercap_mm3.text, c.supercap_mm3.residual_pct
        );
    }
}

#[test]
fn battery_size_follows_the_eagerness_of_the_scheme() {
    let (cfg, _) = load();
    let v = |s| estimate(&cfg, s, 32).energy_uj;
    // V-C: the later the metadata, the larger the battery (CM < BCM is the
    // big step: the BMT root update moves behind the crash).
    assert!(v(SchemeKind::BBB) < v(SchemeKind::secpb(SecPbVariant::Nogap)));
    assert!(v(SchemeKind::secpb(SecPbVariant::Nogap)) < v(SchemeKind::secpb(SecPbVariant::Cm)));
    assert!(v(SchemeKind::secpb(SecPbVariant::Cm)) * 5.0 < v(SchemeKind::secpb(SecPbVariant::Bcm)));
    assert!(
        v(SchemeKind::secpb(SecPbVariant::Bcm)) < v(SchemeKind::secpb(SecPbVariant::Obcm))
            && v(SchemeKind::secpb(SecPbVariant::Obcm)) < v(SchemeKind::secpb(SecPbVariant::Cobcm))
    );
    assert!(v(SchemeKind::secpb(SecPbVariant::Cobcm)) < v(SchemeKind::EADR) && v(SchemeKind::EADR) < v(SchemeKind::SECURE_EADR));
}
