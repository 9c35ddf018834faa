//! `--keep N`: prunes the store on a timer to its latest N versions. The store's prune never
//! removes the latest released version nor one an agent is deploying (it reads those in its
//! own transaction), so a timer here cannot pull a version from under an agent.

use std::sync::Arc;

use modelc_store::Store;

use crate::App;

/// Starts pruning when `--keep` asks for it.
pub(crate) fn start(state: Arc<App>) -> Option<tokio::task::JoinHandle<()>> {
    let keep = state.config.keep?;
    let every = state.config.prune_interval;
    Some(tokio::spawn(async move {
        let mut timer = tokio::time::interval(every);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            timer.tick().await;
            match state.pool.run(move |store| store.prune(keep, false)).await {
                Ok(report) if !report.removed.is_empty() => eprintln!(
                    "pruned versions {:?} ({} rows, {} contents); kept {} versions",
                    report.removed,
                    report.rows,
                    report.contents,
                    report.kept.len()
                ),
                Ok(_) => {}
                Err(error) => eprintln!("warning: pruning failed: {}", error.message()),
            }
        }
    }))
}
