//! Ctrl-C: the first stops the run and prints what was measured; a second
//! one quits at once.

use pelt_engine::Canceller;

pub fn cancel_on_ctrl_c(canceller: Canceller) {
    // A small runtime of its own, so the engine's workers stay untouched.
    let spawned = std::thread::Builder::new()
        .name("pelt-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                eprintln!(
                    "\npelt: stopping; finishing requests in flight (Ctrl-C again to quit now)"
                );
                canceller.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("pelt: warning: Ctrl-C will not stop the run gracefully: {e}");
    }
}
