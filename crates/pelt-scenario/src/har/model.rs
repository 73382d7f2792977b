//! A HAR file as pelt reads it: the fields kept, and which entries and
//! headers are left out.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(super) struct Har {
    pub(super) log: Log,
}

#[derive(Debug, Deserialize)]
pub(super) struct Log {
    pub(super) entries: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Entry {
    pub(super) started_date_time: String,
    #[serde(default)]
    pub(super) time: f64,
    pub(super) request: Request,
    pub(super) response: Response,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Request {
    pub(super) method: String,
    pub(super) url: String,
    #[serde(default)]
    pub(super) headers: Vec<Header>,
    pub(super) post_data: Option<PostData>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Header {
    pub(super) name: String,
    pub(super) value: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PostData {
    #[serde(default)]
    pub(super) mime_type: String,
    #[serde(default)]
    pub(super) text: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct Response {
    #[serde(default)]
    pub(super) content: Content,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Content {
    #[serde(default)]
    pub(super) mime_type: String,
    pub(super) text: Option<String>,
    pub(super) encoding: Option<String>,
}

/// Headers never copied: the transport's own, the jar's, and those that
/// would change the response's encoding (pelt does not decompress).
pub(super) const DROPPED: &[&str] = &[
    "host",
    "content-length",
    "cookie",
    "connection",
    "keep-alive",
    "accept-encoding",
    "transfer-encoding",
    "upgrade",
    "te",
    "proxy-connection",
];

/// Headers whose values are secrets.
pub(super) const SECRET: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-auth-token",
    "api-key",
];

pub(super) const ASSET_EXTENSIONS: &[&str] = &[
    ".css", ".js", ".mjs", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".avif",
    ".woff", ".woff2", ".ttf", ".otf", ".eot", ".map", ".mp4", ".webm", ".mp3",
];

pub(super) fn is_asset(e: &Entry) -> bool {
    let mime = e.response.content.mime_type.to_ascii_lowercase();
    let path = e
        .request
        .url
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    [
        "image/",
        "font/",
        "text/css",
        "javascript",
        "video/",
        "audio/",
    ]
    .iter()
    .any(|m| mime.contains(m))
        || ASSET_EXTENSIONS.iter().any(|x| path.ends_with(x))
}

/// Milliseconds since the epoch of an ISO 8601 time (`2024-01-02T03:04:05.678Z`
/// or with an offset), for gaps between requests.
pub(super) fn millis(iso: &str) -> Option<f64> {
    let (date, rest) = iso.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (clock, offset_min) = match rest.find(['Z', '+', '-']) {
        Some(i) if &rest[i..i + 1] == "Z" => (&rest[..i], 0i64),
        Some(i) => {
            let sign = if &rest[i..i + 1] == "-" { -1 } else { 1 };
            let off = rest[i + 1..].replace(':', "");
            let h: i64 = off.get(..2)?.parse().ok()?;
            let mi: i64 = off.get(2..4).unwrap_or("0").parse().ok()?;
            (&rest[..i], sign * (h * 60 + mi))
        }
        None => (rest, 0),
    };
    let mut c = clock.split(':');
    let (h, mi): (i64, i64) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let s: f64 = c.next().unwrap_or("0").parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(((days * 86_400 + h * 3600 + mi * 60 - offset_min * 60) as f64 + s) * 1000.0)
}
