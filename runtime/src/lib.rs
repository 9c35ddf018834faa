//! The execution runtime layer: it applies a version of desired state to real machines.
//!
//! This crate has no code yet. Its place in the pipeline, and its one contract (it reads the
//! compiler's serialised IR and never depends on the compiler's own crates), are described in
//! `ARCHITECTURE.md`.
