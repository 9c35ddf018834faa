//! The `std` module of the language (entities, typedefs and plugins every model can use),
//! embedded in the binary.
//!
//! This crate has no code yet: name resolution, which gives `std` its meaning, is the next
//! layer to be built. See `ARCHITECTURE.md`.
