//! Unix time to a UTC calendar date, without a date crate: reports show
//! start times and saved runs are named by them.

/// A UTC date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    /// Year (proleptic Gregorian).
    pub year: i64,
    /// Month, 1 to 12.
    pub month: u32,
    /// Day of the month, from 1.
    pub day: u32,
    /// Hour, 0 to 23.
    pub hour: u32,
    /// Minute, 0 to 59.
    pub minute: u32,
    /// Second, 0 to 59.
    pub second: u32,
}

impl UtcTime {
    /// The UTC calendar time of `unix_secs` (Howard Hinnant's
    /// civil_from_days).
    pub fn from_unix(unix_secs: u64) -> UtcTime {
        let days = (unix_secs / 86_400) as i64;
        let rem = unix_secs % 86_400;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UtcTime;

    #[test]
    fn calendar_dates_match_date_u() {
        // Each checked with `date -u -d @SECS`.
        let t = UtcTime::from_unix(1_795_276_981);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2026, 11, 21, 16, 3, 1)
        );
        let leap = UtcTime::from_unix(951_782_400);
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
        assert_eq!(UtcTime::from_unix(0).year, 1970);
    }
}
