//! `pelt calibrate`: pelt-campaign measures this machine's ceiling as a
//! load generator; this prints it and saves it in the data directory, so
//! that `pelt run` can say when a run asks for more than the machine has
//! shown it can send.

use crate::flags::CalibrateArgs;
use crate::flags::UserError;
use crate::live::Campaign;
use pelt_campaign::calibrate::{measure, saved, Measured};
use pelt_core::RunConfig;
use std::process::ExitCode;

pub fn command(args: CalibrateArgs) -> Result<ExitCode, UserError> {
    let places = crate::flags::places();
    let data = places.data_dir.clone();
    // The rate search's steps are kept for a look afterwards.
    let folder = match places.dated_folder("calibrations", None) {
        Ok(folder) => folder,
        Err(_) => std::env::temp_dir().join(format!("pelt-calibrate-{}", std::process::id())),
    };
    let measured = measure(
        args.quick,
        folder,
        &crate::signals::token(),
        &mut Campaign {
            watch: None,
            prefix: "pelt calibrate: ",
            quiet: args.quiet,
            history: None,
        },
    )?;
    let (c, sweep) = match measured {
        Measured::Ceiling { calibration, sweep } => (calibration, sweep),
        Measured::TooBusy(why) => {
            // A ceiling of 0 req/s (or one far below the machine's) saved
            // would make every later `pelt run --rate` warn for nothing.
            eprintln!(
                "error: the machine was too busy to calibrate: {why}; nothing saved: run pelt \
                 calibrate again when it is quieter (top shows what else runs)"
            );
            return Ok(ExitCode::from(1));
        }
    };
    let mut o = c.text(sweep.first_fail);
    match data.filter(|_| !args.no_save) {
        Some(dir) => {
            let path = c.save(&dir)?;
            o += &format!(
                "Saved in {}: `pelt run` now says when a run asks for more than this.\n",
                path.display()
            );
        }
        None => o += "Not saved (--no-save, or no data directory).\n",
    }
    crate::output::emit(o.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A note when a rate run asks for more per worker thread than this
/// machine held on schedule when calibrated.
pub fn note_for(config: &RunConfig) -> Option<String> {
    let data = crate::flags::places().data_dir?;
    pelt_campaign::calibrate::note_for(config, &saved(&data)?.1)
}
