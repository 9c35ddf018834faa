//! API tokens: random secrets shown once; the store keeps only their SHA-256, which finds them.
//! The secrets are long and random, so a fast hash is enough: no one can guess one from its hash.

use sha2::{Digest, Sha256};

/// What every token starts with, so one pasted somewhere it should not be is recognisable.
const PREFIX: &str = "modelc_";

/// A new random token (256 bits from the operating system).
pub fn new_token() -> Result<String, modelc_store::StoreError> {
    let bytes = modelc_store::random_bytes(32)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{PREFIX}{hex}"))
}

/// What the store keeps of a token.
pub fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.trim().as_bytes()).to_vec()
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_random_and_hashed() {
        let (a, b) = (super::new_token().unwrap(), super::new_token().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with("modelc_") && a.len() == 7 + 64);
        assert_eq!(super::hash_token(&a), super::hash_token(&format!("{a}\n")));
        assert_ne!(super::hash_token(&a), super::hash_token(&b));
    }
}
