//! A resource as every backend stores its row.

use modelc_ir::Resource;

use crate::StoreError;

/// A resource as its row stores it: its JSON, the digest a full export compares, and the
/// attribute hash a partial export compares (a shared resource's; a set's members are replaced
/// with their set, never compared, and store none).
pub(crate) struct EncodedRow {
    pub data: String,
    pub digest: [u8; 16],
    pub hash: String,
}

impl EncodedRow {
    pub(crate) fn of(resource: &Resource) -> Result<EncodedRow, StoreError> {
        let data = serde_json::to_string(resource).map_err(|e| StoreError::Storage(e.to_string()))?;
        let hash = if resource.resource_set.is_none() { crate::hash::attribute_hash(resource) } else { String::new() };
        let digest = crate::full::row_digest(data.as_bytes()).to_be_bytes();
        Ok(EncodedRow { data, digest, hash })
    }
}
