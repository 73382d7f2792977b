//! `pelt import har FILE`: the scenario on stdout.

use crate::flags::UserError;
use crate::flags::{ImportArgs, ImportWhat};
use std::process::ExitCode;

pub fn command(args: ImportArgs) -> Result<ExitCode, UserError> {
    let a = match args.what {
        ImportWhat::Har(a) => a,
        ImportWhat::Targets(t) => {
            let format = t
                .format
                .as_deref()
                .map(str::parse::<pelt_core::TargetsFormat>)
                .transpose()
                .map_err(|e| UserError(e.to_string()))?;
            let (targets, _) = pelt_core::targets::read_detected(&t.file, format)
                .map_err(|e| UserError(e.to_string()))?;
            let text = pelt_scenario::targets::scenario(&targets, &t.file.display().to_string());
            crate::output::emit(text.as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let text = std::fs::read_to_string(&a.file).map_err(|e| {
        UserError(format!(
            "cannot read '{}': {e}; check the path",
            a.file.display()
        ))
    })?;
    let options = pelt_scenario::har::HarOptions {
        include_assets: a.include_assets,
        base: a.base,
        include_origins: a.include_origin,
    };
    let scenario = pelt_scenario::har::import(&text, &a.file, &options)
        .map_err(|e| UserError(e.to_string()))?;
    crate::output::emit(scenario.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
