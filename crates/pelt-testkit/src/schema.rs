//! pelt's JSON checked against the committed schemas in schema/.

use serde_json::Value;

/// Every schema in schema/, by file name. Compiled in, so a change to one
/// rebuilds the tests that check against it.
const SCHEMAS: [(&str, &str); 5] = [
    (
        "run.schema.json",
        include_str!("../../../schema/run.schema.json"),
    ),
    (
        "compare.schema.json",
        include_str!("../../../schema/compare.schema.json"),
    ),
    (
        "sweep.schema.json",
        include_str!("../../../schema/sweep.schema.json"),
    ),
    (
        "experiment.schema.json",
        include_str!("../../../schema/experiment.schema.json"),
    ),
    (
        "scenario.schema.json",
        include_str!("../../../schema/scenario.schema.json"),
    ),
];

/// Checks `doc` against schema/`file` (`run.schema.json`...); the others
/// are known too, for the references between them (an experiment's rows
/// are comparisons). Panics naming what does not match.
pub fn validate(doc: &Value, file: &str) {
    if let Err(e) = check(doc, file) {
        panic!("{doc:#}\ndoes not match schema/{file}: {e}");
    }
}

/// What in `doc` does not match schema/`file`, if anything (for tests
/// that a bad document is refused).
pub fn check(doc: &Value, file: &str) -> Result<(), String> {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let mut wanted = None;
    for (name, text) in SCHEMAS {
        let schema: Value = serde_json::from_str(text).unwrap();
        let id = schema["$id"].as_str().unwrap().to_string();
        if name == file {
            wanted = Some(id.clone());
        }
        compiler.add_resource(&id, schema).unwrap();
    }
    let id = wanted.unwrap_or_else(|| panic!("no schema/{file}"));
    let index = compiler.compile(&id, &mut schemas).unwrap();
    schemas.validate(doc, index).map_err(|e| format!("{e:#}"))
}

/// Checks a run report against schema/run.schema.json.
pub fn run(report: &Value) {
    validate(report, "run.schema.json");
}

/// Checks a comparison against schema/compare.schema.json.
pub fn compare(doc: &Value) {
    validate(doc, "compare.schema.json");
}

/// Checks a sweep's report against schema/sweep.schema.json.
pub fn sweep(report: &Value) {
    validate(report, "sweep.schema.json");
}

/// Checks a scenario file, as JSON (its TOML converted), against
/// schema/scenario.schema.json.
pub fn scenario(doc: &Value) {
    validate(doc, "scenario.schema.json");
}

/// Checks an experiment's report against schema/experiment.schema.json
/// (which refers to schema/compare.schema.json for its rows).
pub fn experiment(report: &Value) {
    validate(report, "experiment.schema.json");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "does not match schema/run.schema.json")]
    fn a_document_missing_what_the_schema_requires_fails() {
        run(&serde_json::json!({ "requests": "many" }));
    }

    #[test]
    #[should_panic(expected = "no schema/nosuch.schema.json")]
    fn an_unknown_schema_is_named() {
        validate(&serde_json::json!({}), "nosuch.schema.json");
    }
}
