//! Edge coverage from SanitizerCoverage's inline 8-bit counters, when the build has them.
//!
//! `scripts/fuzz` builds with `-C passes=sancov-module` and `inline-8bit-counters`: every edge
//! of every crate increments a byte, and each module hands its counters' range to
//! `__sanitizer_cov_8bit_counters_init` when the program starts (defined in `main.rs`, so the
//! linker always finds it). After each input the counters are read in buckets (1, 2, 3, 4–7,
//! 8–15, 16–31, 32–127, 128+ hits, as libFuzzer counts) and reset: an input with a bucket no
//! earlier input reached joins the corpus. An ordinary build registers nothing and the fuzzer
//! mutates without guidance.
#![allow(unsafe_code, reason = "reading and zeroing the counter arrays the instrumentation registered")]

use std::sync::Mutex;

/// The counter ranges the instrumented modules registered, as (address, length).
static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Records one module's counters (called by the instrumentation before `main`).
pub fn register(start: *mut u8, stop: *mut u8) {
    let length = (stop as usize).saturating_sub(start as usize);
    if length > 0
        && let Ok(mut regions) = REGIONS.lock()
    {
        regions.push((start as usize, length));
    }
}

pub struct Coverage {
    regions: Vec<(usize, usize)>,
    /// Per counter, the buckets any input has reached, one bit each.
    seen: Vec<u8>,
}

impl Coverage {
    pub fn new() -> Coverage {
        let regions = REGIONS.lock().map(|r| r.clone()).unwrap_or_default();
        let total = regions.iter().map(|(_, length)| length).sum();
        Coverage { regions, seen: vec![0; total] }
    }

    /// Whether the build is instrumented.
    pub fn measured(&self) -> bool {
        !self.seen.is_empty()
    }

    /// Zeroes the counters, before an input runs.
    pub fn reset(&self) {
        for &(start, length) in &self.regions {
            // SAFETY: the range is the counter array the instrumentation registered; it lives
            // as long as the program, and only this thread's code under test writes it.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, length) };
        }
    }

    /// Reads the counters after an input ran: whether it reached a new bucket of some edge.
    pub fn record(&mut self) -> bool {
        let mut new = false;
        let mut at = 0;
        for &(start, length) in &self.regions {
            // SAFETY: as in `reset`.
            let counters = unsafe { std::slice::from_raw_parts(start as *const u8, length) };
            for (seen, &count) in self.seen[at..at + length].iter_mut().zip(counters) {
                if count != 0 {
                    let bit = bucket(count);
                    if *seen & bit == 0 {
                        *seen |= bit;
                        new = true;
                    }
                }
            }
            at += length;
        }
        new
    }

    /// Edges reached by some input, and edges instrumented.
    pub fn edges(&self) -> (usize, usize) {
        (self.seen.iter().filter(|s| **s != 0).count(), self.seen.len())
    }
}

impl Default for Coverage {
    fn default() -> Self {
        Coverage::new()
    }
}

fn bucket(count: u8) -> u8 {
    match count {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 4,
        4..=7 => 8,
        8..=15 => 16,
        16..=31 => 32,
        32..=127 => 64,
        _ => 128,
    }
}
