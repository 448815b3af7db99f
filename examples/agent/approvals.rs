//! Pending approvals kept in a directory, one JSON file each, so that a turn that ended waiting
//! for a person can be answered by another process, after a restart (`--resume FILE`).
//!
//! An [`ApprovalStore`] in a few lines of `std::fs`: `ID.json` is a pending approval, `ID.claimed`
//! one an answer claimed. A claim is a rename (atomic on one file system: of two processes
//! answering the same approval, one rename succeeds and the other finds nothing), so a call is
//! never run twice; a `.claimed` file left behind means a process stopped while running it.

use dsh_tools::pipeline::{
    ApprovalPage, ApprovalStore, ApprovalStoreError, BoxFuture, PendingApproval,
};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Approvals as files in one directory.
#[derive(Clone, Debug)]
pub(crate) struct FileApprovalStore {
    dir: PathBuf,
}

fn failed(what: &str, e: impl std::fmt::Display) -> ApprovalStoreError {
    ApprovalStoreError::Unavailable(format!("{what}: {e}"))
}

/// An id the registry made: hex only (never a path).
fn checked(id: &str) -> Result<&str, ApprovalStoreError> {
    if !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(ApprovalStoreError::Unavailable(format!(
            "not an approval id: {id:?}"
        )))
    }
}

fn read(path: &Path) -> Result<Option<PendingApproval>, ApprovalStoreError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| failed(&path.display().to_string(), e)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failed(&path.display().to_string(), e)),
    }
}

impl FileApprovalStore {
    /// A store in `dir` (created if missing).
    pub(crate) fn open(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    fn path(&self, id: &str, ext: &str) -> Result<PathBuf, ApprovalStoreError> {
        Ok(self.dir.join(format!("{}.{ext}", checked(id)?)))
    }

    fn put_now(&self, approval: &PendingApproval) -> Result<(), ApprovalStoreError> {
        use std::io::Write;
        let path = self.path(&approval.id, "json")?;
        let bytes = serde_json::to_vec_pretty(approval).map_err(|e| failed("encode", e))?;
        // Written beside, flushed to disk, then renamed: a reader (or a restart after a crash)
        // never sees half a file.
        let partial = self.path(&approval.id, "partial")?;
        let mut file = std::fs::File::create(&partial).map_err(|e| failed("write", e))?;
        file.write_all(&bytes).map_err(|e| failed("write", e))?;
        file.sync_all().map_err(|e| failed("sync", e))?;
        std::fs::rename(&partial, &path).map_err(|e| failed("rename", e))
    }

    fn claim_now(&self, id: &str) -> Result<Option<PendingApproval>, ApprovalStoreError> {
        let pending = self.path(id, "json")?;
        let claimed = self.path(id, "claimed")?;
        match std::fs::rename(&pending, &claimed) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failed("claim", e)),
        }
        let mut approval = read(&claimed)?;
        if let Some(approval) = &mut approval {
            approval.claimed = true;
        }
        Ok(approval)
    }

    /// Every approval, oldest first (by when it was asked, then id). A file that cannot be
    /// read is left out of the listing, with a warning: one bad file does not hide the rest.
    fn all(&self) -> Result<Vec<PendingApproval>, ApprovalStoreError> {
        let mut approvals = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(|e| failed("list", e))? {
            let name = entry.map_err(|e| failed("list", e))?.file_name();
            let name = name.to_string_lossy();
            let (id, claimed) = match (name.strip_suffix(".json"), name.strip_suffix(".claimed")) {
                (Some(id), _) => (id.to_owned(), false),
                (_, Some(id)) => (id.to_owned(), true),
                _ => continue,
            };
            let ext = if claimed { "claimed" } else { "json" };
            let Ok(path) = self.path(&id, ext) else {
                continue;
            };
            match read(&path) {
                Ok(Some(mut approval)) => {
                    approval.claimed = claimed;
                    approvals.push(approval);
                }
                Ok(None) => {}
                Err(e) => eprintln!("approvals: {} left out of the listing: {e}", path.display()),
            }
        }
        approvals.sort_by(|a, b| (a.asked_at_ms, &a.id).cmp(&(b.asked_at_ms, &b.id)));
        Ok(approvals)
    }

    fn list_now(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<ApprovalPage, ApprovalStoreError> {
        // A cursor is the last approval's `asked_at_ms:id`.
        let after = match &cursor {
            None => None,
            Some(text) => {
                let parsed = text
                    .split_once(':')
                    .and_then(|(ms, id)| Some((ms.parse::<u64>().ok()?, checked(id).ok()?)));
                match parsed {
                    Some((ms, id)) => Some((ms, id.to_owned())),
                    None => return Err(ApprovalStoreError::BadCursor(text.clone())),
                }
            }
        };
        let mut approvals: Vec<PendingApproval> = self
            .all()?
            .into_iter()
            .filter(|a| {
                after
                    .as_ref()
                    .is_none_or(|(ms, id)| (a.asked_at_ms, &a.id) > (*ms, id))
            })
            .collect();
        let more = approvals.len() > limit;
        approvals.truncate(limit);
        let next = more
            .then(|| {
                approvals
                    .last()
                    .map(|a| format!("{}:{}", a.asked_at_ms, a.id))
            })
            .flatten();
        Ok(ApprovalPage { approvals, next })
    }
}

impl ApprovalStore for FileApprovalStore {
    fn put(&self, approval: PendingApproval) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let done = self.put_now(&approval);
        Box::pin(async move { done })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let found = self
            .path(id, "json")
            .and_then(|p| read(&p))
            .and_then(|found| match found {
                Some(found) => Ok(Some(found)),
                None => self
                    .path(id, "claimed")
                    .and_then(|p| read(&p))
                    .map(|claimed| {
                        claimed.map(|mut c| {
                            c.claimed = true;
                            c
                        })
                    }),
            });
        Box::pin(async move { found })
    }

    fn claim(&self, id: &str) -> BoxFuture<Result<Option<PendingApproval>, ApprovalStoreError>> {
        let claimed = self.claim_now(id);
        Box::pin(async move { claimed })
    }

    fn remove(&self, id: &str) -> BoxFuture<Result<(), ApprovalStoreError>> {
        let removed =
            ["json", "claimed"].into_iter().try_for_each(|ext| {
                match std::fs::remove_file(self.path(id, ext)?) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(failed("remove", e)),
                }
            });
        Box::pin(async move { removed })
    }

    fn list(
        &self,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<ApprovalPage, ApprovalStoreError>> {
        let page = self.list_now(cursor, limit.max(1));
        Box::pin(async move { page })
    }
}
