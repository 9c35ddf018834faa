//! The executable that is copied to a target and run there as the helper: this modelc (or the
//! one a caller names), its content hash, and what a target needs to run it.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// An executable to run as the helper on targets.
#[derive(Debug, Clone)]
pub struct Binary {
    pub bytes: Arc<Vec<u8>>,
    /// SHA-256 of the bytes, hex: its name in a target's cache, checked before it is run.
    pub sha256: String,
    /// The machine it runs on, as `uname -m` says it (`x86_64`, `aarch64`).
    pub arch: String,
    /// The oldest GNU C library it runs with (`2.34`); `None` for a binary that needs none.
    pub glibc: Option<String>,
}

impl Binary {
    /// Reads the executable at `path`.
    pub fn read(path: &Path) -> Result<Binary, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read the helper {}: {e}", path.display()))?;
        Ok(Binary::from_bytes(bytes))
    }

    /// This process's own executable.
    pub fn this_process() -> Result<Binary, String> {
        Binary::read(Path::new("/proc/self/exe"))
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Binary {
        let sha256 = hex(&Sha256::digest(&bytes));
        let glibc = glibc_needed(&bytes);
        Binary { bytes: Arc::new(bytes), sha256, arch: std::env::consts::ARCH.to_owned(), glibc }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The newest `GLIBC_x.y` symbol version an ELF executable names in its dynamic string table:
/// the C library a target must have at least.
fn glibc_needed(elf: &[u8]) -> Option<String> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(elf).ok()?;
    let dynstr = file.section_by_name(".dynstr")?.data().ok()?;
    dynstr
        .split(|&b| b == 0)
        .filter_map(|name| std::str::from_utf8(name.strip_prefix(b"GLIBC_")?).ok())
        .filter_map(|version| {
            let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next().unwrap_or(Some(0))?))
        })
        .max()
        .map(|(major, minor)| format!("{major}.{minor}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_names_the_c_library_it_needs() {
        let binary = Binary::this_process().unwrap();
        assert_eq!(binary.sha256.len(), 64);
        let glibc = binary.glibc.expect("a test binary linked against glibc");
        let (major, minor) = glibc.split_once('.').unwrap();
        assert_eq!(major, "2");
        assert!(minor.parse::<u32>().unwrap() >= 2, "{glibc}");
    }

    #[test]
    fn not_an_elf_needs_nothing_known() {
        assert_eq!(Binary::from_bytes(b"#!/bin/sh\n".to_vec()).glibc, None);
    }
}
