//! A copied history written into the embedded store (`modelc store copy`): one transaction for
//! every version, each read back and verified before the next.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{TransactionBehavior, params};

use super::SqliteStore;
use crate::StoreError;
use crate::copy::{History, Imported};
use crate::sqlite::Sql as _;

impl SqliteStore {
    /// Copies `history` into the store at `path`. Where there is none yet, it is built in a
    /// file beside `path` and put in place only once every version is verified, so a failed copy
    /// creates nothing.
    pub(crate) fn import_at(path: &Path, history: &mut dyn History) -> Result<u64, StoreError> {
        if path.exists() {
            return SqliteStore::open(path)?.import_history(history);
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Storage(format!("cannot create {}: {e}", dir.display())))?;
        }
        let temporary = super::full::build_path(path);
        let built = SqliteStore::open(&temporary).and_then(|mut store| store.import_history(history));
        let synced = built.and_then(|copied| {
            std::fs::File::open(&temporary)
                .and_then(|file| file.sync_all())
                .map_err(|e| StoreError::Storage(format!("cannot sync {}: {e}", temporary.display())))?;
            Ok(copied)
        });
        let linked = synced.map(|copied| (std::fs::hard_link(&temporary, path), copied));
        for suffix in ["", "-wal", "-shm"] {
            let mut name = temporary.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        match linked? {
            (Ok(()), copied) => Ok(copied),
            (Err(e), _) => Err(StoreError::Storage(format!("cannot create {}: {e}", path.display()))),
        }
    }

    pub(crate) fn import_history(&mut self, history: &mut dyn History) -> Result<u64, StoreError> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
        if let Some(latest) = SqliteStore::latest(&tx)? {
            return Err(crate::copy::not_empty(latest.version));
        }
        let mut copied = 0;
        while let Some(version) = history.next_version()? {
            let info = &version.snapshot.info;
            crate::copy::check_number(info.version, super::next_version(&tx)?)?;
            let current = super::full::current_digests(&tx)?;
            let plan = crate::copy::import_plan(&current, &version.snapshot.resources)?;
            drop(current);
            super::full::apply(&tx, &plan, info.version)?;
            SqliteStore::insert_version(&tx, info)?;
            let mut insert = tx
                .prepare_cached("INSERT OR IGNORE INTO contents (hash, first_version, data) VALUES (?1, ?2, ?3)")
                .sql()?;
            for (hash, data) in &version.contents {
                insert.execute(params![hash, info.version, data]).sql()?;
            }
            drop(insert);
            let written = Imported {
                snapshot: super::snapshot_in(&tx, Some(info.version))?,
                contents: super::deploys::contents_in::<BTreeMap<_, _>>(&tx, version.contents.keys())?,
            };
            history.verify(&version, &written)?;
            copied += 1;
        }
        tx.commit().sql()?;
        Ok(copied)
    }
}
