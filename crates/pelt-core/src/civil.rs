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

impl UtcTime {
    /// `2026-05-01 14:30:00`: a time in a table for people.
    pub fn plain(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `20261121-160301`: a file or folder name that sorts by time.
    pub fn stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

impl std::fmt::Display for UtcTime {
    /// RFC 3339 in UTC, like `2026-11-23T22:00:00Z`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// A span of time as a person reads one, to the unit that matters:
/// `4.2 s`, `12 min 5 s`, `3 h 12 min`, `2156 days`.
pub fn span(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    match secs {
        0..60 => format!("{:.1} s", ns as f64 / 1e9),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        3600..86_400 => format!("{} h {} min", secs / 3600, secs / 60 % 60),
        _ => format!("{} days", secs / 86_400),
    }
}

/// Days from 1970-01-01 to `year-month-day`, proleptic Gregorian (Howard Hinnant's
/// days_from_civil).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a point in time as nanoseconds since the Unix epoch: Unix
/// seconds (`1795276981`, `1795276981.25`) or RFC 3339
/// (`2026-11-21T16:03:01Z`, `2026-11-21T17:03:01.5+01:00`). `None` when it
/// is neither, or before 1970.
pub fn parse_time(text: &str) -> Option<u64> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        // Whole seconds and the fraction apart: f64 would round the
        // nanoseconds of a current time.
        let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
        let secs: u64 = whole.parse().ok().filter(|&s| s < 10_000_000_000)?;
        if frac.contains('.') || (whole.is_empty() && frac.is_empty()) {
            return None;
        }
        let digits = &frac[..frac.len().min(9)];
        let frac_ns = match digits {
            "" => 0,
            d => d.parse::<u64>().ok()? * 10u64.pow(9 - d.len() as u32),
        };
        return Some(secs * 1_000_000_000 + frac_ns);
    }
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)? as u32, num(8..10)? as u32);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut frac_ns = 0u64;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let d = &r[..digits.min(9)];
        frac_ns = d.parse::<u64>().ok()? * 10u64.pow(9 - d.len() as u32);
        rest = &r[digits..];
    }
    let offset_s: i64 = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let h: i64 = rest[1..3].parse().ok()?;
            let m: i64 = rest[4..6].parse().ok()?;
            let v = h * 3600 + m * 60;
            if &rest[..1] == "-" {
                -v
            } else {
                v
            }
        }
        _ => return None,
    };
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    u64::try_from(secs)
        .ok()
        .map(|s| s * 1_000_000_000 + frac_ns)
}

/// Milliseconds since the Unix epoch of `when`: a date (2026-05-01, UTC),
/// a date and time (`2026-05-01T14:30`, seconds optional), or a time ago from `now_ms`
/// (90m, 36h, 7d, 2w). `None` when it is none of these.
pub fn parse_when(when: &str, now_ms: i64) -> Option<i64> {
    let w = when.trim();
    if let Some(unit) = w.chars().last().filter(|c| "smhdw".contains(*c)) {
        if let Ok(n) = w[..w.len() - 1].parse::<u64>() {
            let secs = match unit {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86_400,
                _ => 7 * 86_400,
            };
            return Some(
                now_ms - (n.saturating_mul(secs).min(i64::MAX as u64 / 1000) as i64) * 1000,
            );
        }
    }
    let (date, time) = w.split_once(['T', ' ']).unwrap_or((w, "00:00:00"));
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || !(2..=3).contains(&t.len()) {
        return None;
    }
    let num = |s: &str| s.parse::<i64>().ok();
    let (y, m, day) = (num(d[0])?, num(d[1])?, num(d[2])?);
    let (h, min, s) = (
        num(t[0])?,
        num(t[1])?,
        t.get(2).map_or(Some(0), |s| num(s))?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    Some((days_from_civil(y, m as u32, day as u32) * 86_400 + h * 3600 + min * 60 + s) * 1000)
}

/// Now, in milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_and_times_ago() {
        assert_eq!(parse_when("1970-01-02", 0).unwrap(), 86_400_000);
        assert_eq!(parse_when("2000-03-01T00:00", 0).unwrap(), 951_868_800_000);
        assert_eq!(
            parse_when("2026-11-21 16:03:01", 0).unwrap(),
            1_795_276_981_000
        );
        assert_eq!(
            parse_when("2d", 200_000_000).unwrap(),
            200_000_000 - 172_800_000
        );
        for bad in ["yesterday", "2026-13-01", "12", "2026-01-01T25:00"] {
            assert!(parse_when(bad, 0).is_none(), "{bad}");
        }
    }

    use super::{parse_time, parse_when, span, UtcTime};

    #[test]
    fn times_print_as_rfc3339_and_spans_in_their_unit() {
        let t = UtcTime::from_unix(1_795_276_981);
        assert_eq!(t.to_string(), "2026-11-21T16:03:01Z");
        assert_eq!(
            parse_time(&t.to_string()),
            Some(1_795_276_981 * 1_000_000_000)
        );
        assert_eq!(span(4_200_000_000), "4.2 s");
        assert_eq!(span(725_000_000_000), "12 min 5 s");
        assert_eq!(span(11_520_000_000_000), "3 h 12 min");
        assert_eq!(span(2_156 * 86_400 * 1_000_000_000), "2156 days");
    }

    #[test]
    fn parses_rfc3339_and_unix_seconds() {
        let t = 1_795_276_981u64 * 1_000_000_000;
        assert_eq!(parse_time("1795276981"), Some(t));
        assert_eq!(parse_time("1795276981.25"), Some(t + 250_000_000));
        assert_eq!(parse_time("2026-11-21T16:03:01Z"), Some(t));
        assert_eq!(
            parse_time("2026-11-21T17:03:01.5+01:00"),
            Some(t + 500_000_000)
        );
        assert_eq!(parse_time("2026-11-21T15:03:01-01:00"), Some(t));
        assert_eq!(
            parse_time("2000-02-29T00:00:00Z"),
            Some(951_782_400 * 1_000_000_000)
        );
        for bad in [
            "",
            "now",
            "2026-11-21",
            "2026-13-21T16:03:01Z",
            "2026-11-21T16:03:01",
            "-5",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

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
