//! A status line on a terminal while long work runs: after a second without output, `compiling…
//! 2.4 s` on stderr, updated in place and cleared when the work ends. Nothing is shown when
//! stderr is not a terminal, with `--quiet`, or in JSON mode.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long work runs before its status is shown.
const DELAY: Duration = Duration::from_secs(1);
/// How often the status is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// The status line of one piece of work; dropping it clears the line.
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Shows `what` on stderr while the returned value lives, if stderr is a terminal and the
    /// output is for a person.
    pub(crate) fn start(what: &'static str, terminal: bool) -> Progress {
        if !terminal || !crate::chatty() || crate::json_output() {
            return Progress { stop: Arc::new(AtomicBool::new(true)), thread: None };
        }
        Progress::to(Box::new(std::io::stderr()), what, DELAY)
    }

    /// Shows `what` on `out` after `delay`.
    fn to(mut out: Box<dyn Write + Send>, what: &'static str, delay: Duration) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut shown = false;
            while !stopped.load(Ordering::Acquire) {
                std::thread::sleep(TICK.min(delay));
                let elapsed = started.elapsed();
                if elapsed >= delay && !stopped.load(Ordering::Acquire) {
                    let _ = write!(out, "\r{what}… {:.1} s", elapsed.as_secs_f64());
                    let _ = out.flush();
                    shown = true;
                }
            }
            if shown {
                // Back to the start of the line, and erase it.
                let _ = write!(out, "\r\x1b[K");
                let _ = out.flush();
            }
        });
        Progress { stop, thread: Some(thread) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(shared: &Shared) -> String {
        String::from_utf8_lossy(&shared.0.lock().map(|b| b.clone()).unwrap_or_default()).into_owned()
    }

    #[test]
    fn long_work_shows_its_status_and_clears_it() {
        let shared = Shared::default();
        let progress = Progress::to(Box::new(shared.clone()), "compiling", Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(250));
        drop(progress);
        let shown = text(&shared);
        assert!(shown.contains("\rcompiling… 0."), "{shown:?}");
        assert!(shown.ends_with("\r\x1b[K"), "the line is cleared: {shown:?}");
    }

    #[test]
    fn short_work_shows_nothing() {
        let shared = Shared::default();
        drop(Progress::to(Box::new(shared.clone()), "compiling", Duration::from_secs(5)));
        assert_eq!(text(&shared), "");
    }
}
