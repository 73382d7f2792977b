//! `pelt import har FILE`: the scenario on stdout.

use crate::flags::{ImportArgs, ImportWhat};
use crate::UserError;
use std::process::ExitCode;

pub fn command(args: ImportArgs) -> Result<ExitCode, UserError> {
    let ImportWhat::Har(a) = args.what;
    let text = std::fs::read_to_string(&a.file).map_err(|e| {
        UserError(format!(
            "cannot read '{}': {e}; check the path",
            a.file.display()
        ))
    })?;
    let options = pelt_scenario::har::HarOptions {
        include_assets: a.include_assets,
        base: a.base,
    };
    let scenario = pelt_scenario::har::import(&text, &a.file, &options)
        .map_err(|e| UserError(e.to_string()))?;
    crate::emit(scenario.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
