//! Parsers of the numeric flags, so that a flag's value is refused when it
//! is read, naming the flag (clap prefixes `invalid value 'X' for '--FLAG'`
//! and exits with code 2), rather than turning into a bound that means
//! nothing: `NaN` compares false with everything, so a NaN bound would
//! admit every scheme, and a negative one none.

/// A bound or a measured quantity: a finite number at least 0.
pub fn finite_non_negative(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_nan() {
        return Err("NaN is not a number: give a finite number at least 0".into());
    }
    if v.is_infinite() {
        return Err(format!("{v} is not finite: give a finite number at least 0 (or leave the flag out for no bound)"));
    }
    if v < 0.0 {
        return Err(format!("{v} is negative: give a finite number at least 0"));
    }
    // `-0` is 0.
    Ok(v + 0.0)
}

/// A count: a whole number from `min` to `max` (`max` = `u64::MAX`: no
/// upper bound but the type's).
pub fn whole(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let range = match max {
            u64::MAX => format!("a whole number at least {min}"),
            _ => format!("a whole number from {min} to {max}"),
        };
        let t = s.trim();
        if t.starts_with('-') && t[1..].parse::<u64>().is_ok_and(|v| v > 0) {
            return Err(format!("{t} is negative: give {range}"));
        }
        let v: u64 = t.parse().map_err(|_| format!("`{s}` is not {range}"))?;
        if !(min..=max).contains(&v) {
            return Err(format!("{v} is out of range: give {range}"));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::finite_non_negative as f;
    use super::whole;

    #[test]
    fn a_count_is_a_whole_number_in_its_range() {
        let ops = whole(1, 1000);
        assert_eq!(ops("1"), Ok(1));
        assert_eq!(ops("1000"), Ok(1000));
        for (text, says) in [
            ("0", "out of range"),
            ("1001", "out of range"),
            ("-5", "negative"),
            ("1.5", "not a whole number"),
            ("x", "not a whole number"),
        ] {
            let e = ops(text).unwrap_err();
            assert!(e.contains(says) && e.contains("from 1 to 1000"), "`{text}`: {e}");
        }
        let n = whole(0, u64::MAX);
        assert_eq!(n("0"), Ok(0));
        assert!(n("-1").unwrap_err().contains("negative"));
        assert!(n("99999999999999999999").unwrap_err().contains("at least 0"));
    }

    #[test]
    fn a_bound_is_a_finite_number_at_least_zero() {
        assert_eq!(f("1.5"), Ok(1.5));
        assert_eq!(f("0"), Ok(0.0));
        assert!(f("-0").unwrap().is_sign_positive());
        assert_eq!(f("1e3"), Ok(1000.0));
        for (text, says) in [
            ("NaN", "NaN"),
            ("nan", "NaN"),
            ("-1", "negative"),
            ("-0.5", "negative"),
            ("inf", "not finite"),
            ("-inf", "not finite"),
            ("1e999", "not finite"),
            ("x", "not a number"),
            ("", "not a number"),
        ] {
            let e = f(text).unwrap_err();
            assert!(e.contains(says), "`{text}`: {e}");
        }
    }
}
