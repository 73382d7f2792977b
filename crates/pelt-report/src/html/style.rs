//! The pages' one inline style sheet: no external fonts or files, so a
//! page opens offline and under a Content-Security-Policy that forbids
//! every load.

/// The style of every page: a run's report and [`super::document`] pages.
pub(super) const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f6f7f9; color: #1d2330;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 0 0 10px; }
header p { margin: 0; color: #555d6e; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 8px; padding: 16px 20px; margin-top: 18px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 14px 4px 0; text-align: left; vertical-align: top; border-bottom: 1px solid #eef0f4; }
thead th { border-bottom: 2px solid #cfd5df; }
td.num { text-align: right; white-space: nowrap; }
th.run { text-align: right; max-width: 22em; overflow-wrap: anywhere; }
tr.group th { padding-top: 14px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #5a6274; }
td.missing { color: #9aa1ad; }
span.none { display: block; text-align: right; }
table.config td.num { text-align: left; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", Menlo, monospace; overflow-wrap: anywhere; }
.warnings { background: #fff7e6; border-color: #f0c36d; }
.warnings li { margin: 4px 0; }
.note { color: #555d6e; font-size: 14px; margin: 6px 0 0; }
figure { margin: 0; }
figure svg { display: block; width: 100%; height: auto; }
ul { margin: 4px 0; padding-left: 20px; }
ul.plain { list-style: none; padding: 0; }
footer { margin-top: 18px; color: #7a8191; font-size: 13px; }
"#;

/// Verdict cells of comparison tables, on [`super::document`] pages.
pub(super) const VERDICT_STYLE: &str =
    "td.verdict-regression { color: #b3261e; font-weight: 600; }\n\
     td.verdict-improvement { color: #1e7b34; font-weight: 600; }";
