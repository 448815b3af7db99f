//! A directory that file tools are confined to, enforced by the kernel rather than by string
//! checks (feature `workspace`).
//!
//! A lexical check (`..` refused, the root prefix stripped) is not confinement: `tokio::fs` then
//! follows every symbolic link, and a workspace is usually a cloned repository, where git stores
//! links. A link to `/etc` reads outside; a link to `/proc/self/fd/1` writes into the server's
//! own standard output; a linked directory makes `write_file` create files anywhere. (The
//! official filesystem MCP server had this hole: CVE-2025-53109 and CVE-2025-53110.)
//!
//! [`Workspace`] holds the root as an open directory handle (`cap-std`'s `Dir`). Every path is
//! resolved beneath that handle, by `openat2(RESOLVE_BENEATH)` where the kernel has it and
//! component by component otherwise, so a link may point anywhere inside the workspace and
//! nowhere outside it, whatever it was when the call was checked. The last component is opened
//! without following a link, only regular files are read or written (a FIFO, a device or a
//! socket is refused before any byte moves: files are opened non-blocking and checked on the
//! open handle), reads stop at a size cap, and the blocking work runs on tokio's blocking pool
//! under a small permit count, so a burst of calls cannot exhaust the pool that transports also
//! use.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use dsh_tools::workspace::Workspace;
//!
//! let dir = std::env::temp_dir().join(format!("dsh-ws-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let ws = Workspace::open(&dir)?;
//! ws.write("notes/a.txt", b"hello").await?;
//! assert_eq!(ws.read_to_string("notes/a.txt").await?, "hello");
//! assert_eq!(ws.read_to_string("../etc/passwd").await.unwrap_err().code(), "OUTSIDE_WORKSPACE");
//! # #[cfg(unix)] {
//! std::os::unix::fs::symlink("/etc", dir.join("etc"))?;
//! assert_eq!(ws.read_to_string("etc/passwd").await.unwrap_err().code(), "OUTSIDE_WORKSPACE");
//! # }
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! Errors convert into [`ToolError`]s with a code (`OUTSIDE_WORKSPACE`, `NOT_A_REGULAR_FILE`,
//! `FILE_TOO_LARGE`, `NOT_FOUND`, `IO`), so `?` in a tool body gives the model a message it can
//! act on.
//!
//! What it does not cover: hard links (a hard link inside the workspace to a file outside it on
//! the same file system is the same file; git does not create them), and processes the tools
//! start (`sh -c` runs with the server's authority wherever its working directory is).

use crate::ToolError;
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The default largest file [`Workspace::read`] returns: 8 MiB.
pub const DEFAULT_MAX_READ_BYTES: u64 = 8 << 20;
/// The default number of file operations that may block a thread at once: 8 (tokio's blocking
/// pool holds 512 threads).
pub const DEFAULT_MAX_BLOCKING: usize = 8;
/// The default most entries [`Workspace::list`] returns: 10,000.
pub const DEFAULT_MAX_LIST_ENTRIES: usize = 10_000;

/// Why a workspace operation failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The path leaves the workspace: `..` above the root, an absolute path elsewhere, or a
    /// symbolic link that points outside.
    #[error("{path} is outside the workspace")]
    Outside {
        /// The path as given.
        path: String,
    },
    /// The path names a link, directory, FIFO, device or socket where a regular file is needed
    /// (or a file where a directory is).
    #[error("{path} is not a {wanted}")]
    NotRegular {
        /// The path as given.
        path: String,
        /// "regular file" or "directory".
        wanted: &'static str,
    },
    /// The file is larger than the read limit.
    #[error("{path} is {size} bytes, over the workspace's read limit of {limit} bytes")]
    TooLarge {
        /// The path as given.
        path: String,
        /// Its size, as far as it was read (at least `limit + 1`).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The directory holds more entries than the listing limit.
    #[error("{path} holds more than {limit} entries")]
    TooManyEntries {
        /// The path as given.
        path: String,
        /// The limit.
        limit: usize,
    },
    /// The path does not exist.
    #[error("{path} does not exist")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// Any other I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl WorkspaceError {
    /// The code a tool result carries: `OUTSIDE_WORKSPACE`, `NOT_A_REGULAR_FILE`,
    /// `FILE_TOO_LARGE`, `TOO_MANY_ENTRIES`, `NOT_FOUND` or `IO`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Outside { .. } => "OUTSIDE_WORKSPACE",
            Self::NotRegular { .. } => "NOT_A_REGULAR_FILE",
            Self::TooLarge { .. } => "FILE_TOO_LARGE",
            Self::TooManyEntries { .. } => "TOO_MANY_ENTRIES",
            Self::NotFound { .. } => "NOT_FOUND",
            Self::Io { .. } => "IO",
        }
    }

    fn io(path: &str, e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => Self::NotFound {
                path: path.to_owned(),
            },
            // cap-std reports a resolution that would leave the directory as PermissionDenied
            // with this message; openat2 reports EXDEV.
            _ if escapes(&e) => Self::Outside {
                path: path.to_owned(),
            },
            _ => Self::Io {
                path: path.to_owned(),
                source: e,
            },
        }
    }
}

#[cfg(unix)]
use libc::{EISDIR, ELOOP, ENOTDIR, ENXIO, EXDEV};
// Not reported by these numbers elsewhere: the checks fall back to the error kinds.
#[cfg(not(unix))]
const ELOOP: i32 = i32::MIN;
#[cfg(not(unix))]
const EXDEV: i32 = i32::MIN;
#[cfg(not(unix))]
const ENOTDIR: i32 = i32::MIN;
#[cfg(not(unix))]
const EISDIR: i32 = i32::MIN;
#[cfg(not(unix))]
const ENXIO: i32 = i32::MIN;

fn escapes(e: &io::Error) -> bool {
    e.raw_os_error() == Some(EXDEV) || e.to_string().contains("outside of the filesystem")
}

impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        ToolError::coded("WorkspaceError", e.code(), e.to_string())
    }
}

/// One entry of [`Workspace::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file name (lossy UTF-8).
    pub name: String,
    /// What it is, without following a link.
    pub kind: EntryKind,
}

/// What a listed entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// A directory file tools are confined to. Cheap to clone (one shared handle).
#[derive(Clone, Debug)]
pub struct Workspace {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    dir: Dir,
    max_read_bytes: u64,
    max_list_entries: usize,
    blocking: Semaphore,
}

impl Workspace {
    /// Opens an existing directory as a workspace, with the default limits.
    ///
    /// # Errors
    ///
    /// The directory cannot be opened (absent, not a directory, no permission).
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        Self::builder(root).build()
    }

    /// A builder to change the limits.
    pub fn builder(root: impl AsRef<Path>) -> WorkspaceBuilder {
        WorkspaceBuilder {
            root: root.as_ref().to_path_buf(),
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
            max_blocking: DEFAULT_MAX_BLOCKING,
            max_list_entries: DEFAULT_MAX_LIST_ENTRIES,
        }
    }

    /// The root directory, canonical (as it was when opened; what is enforced is the handle).
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// `path` (relative to the workspace, or absolute inside the root) as a relative path of
    /// normal components. Lexical only: the kernel still resolves it beneath the root.
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::Outside`] for `..`, or an absolute path not under the root.
    pub fn relative(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let given = Path::new(path);
        let rest = if given.is_absolute() {
            given
                .strip_prefix(&self.inner.root)
                .map_err(|_| WorkspaceError::Outside {
                    path: path.to_owned(),
                })?
        } else {
            given
        };
        let mut out = PathBuf::new();
        for part in rest.components() {
            match part {
                Component::Normal(p) => out.push(p),
                Component::CurDir => {}
                _ => {
                    return Err(WorkspaceError::Outside {
                        path: path.to_owned(),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Where `path` leads, relative to the root, with every symbolic link inside the workspace
    /// resolved: what a permission dialog should show. For a path that does not exist yet, its
    /// deepest existing ancestor is resolved and the rest appended. Blocking (a few `stat`s).
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::Outside`] where a link leads out.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let relative = self.relative(path)?;
        let mut existing = relative.as_path();
        let mut rest = Vec::new();
        loop {
            if existing.as_os_str().is_empty() {
                break;
            }
            match self.inner.dir.canonicalize(existing) {
                Ok(resolved) => {
                    let mut out = resolved;
                    out.extend(rest.iter().rev());
                    return Ok(out);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    rest.push(existing.file_name().unwrap_or_default().to_owned());
                    existing = existing.parent().unwrap_or(Path::new(""));
                }
                Err(e) => return Err(WorkspaceError::io(path, e)),
            }
        }
        Ok(rest.iter().rev().collect())
    }

    /// The whole file, if it is a regular file no larger than the read limit.
    ///
    /// # Errors
    ///
    /// Outside the workspace, not a regular file (a link in the last component included), over
    /// the limit, or an I/O error.
    pub async fn read(&self, path: &str) -> Result<Vec<u8>, WorkspaceError> {
        let relative = self.relative(path)?;
        let path = path.to_owned();
        self.blocking(move |inner| {
            let mut file = open_regular(&inner.dir, &relative, &path, Access::Read)?;
            let limit = inner.max_read_bytes;
            let mut out = Vec::new();
            (&mut file)
                .take(limit.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| WorkspaceError::io(&path, e))?;
            if out.len() as u64 > limit {
                let size = file.metadata().map(|m| m.len()).unwrap_or(0).max(limit + 1);
                return Err(WorkspaceError::TooLarge { path, size, limit });
            }
            Ok(out)
        })
        .await
    }

    /// The whole file as UTF-8 text (see [`read`](Self::read)).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read), and [`WorkspaceError::Io`] (`InvalidData`) for a file that is
    /// not UTF-8.
    pub async fn read_to_string(&self, path: &str) -> Result<String, WorkspaceError> {
        let bytes = self.read(path).await?;
        String::from_utf8(bytes).map_err(|_| WorkspaceError::Io {
            path: path.to_owned(),
            source: io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8 text"),
        })
    }

    /// Creates or replaces a regular file, creating its parent directories beneath the root.
    ///
    /// # Errors
    ///
    /// Outside the workspace (a linked parent directory that leads out included), an existing
    /// entry that is not a regular file (a link, FIFO, device), or an I/O error.
    pub async fn write(&self, path: &str, contents: &[u8]) -> Result<(), WorkspaceError> {
        let relative = self.relative(path)?;
        if relative.as_os_str().is_empty() {
            return Err(WorkspaceError::NotRegular {
                path: path.to_owned(),
                wanted: "regular file",
            });
        }
        let path = path.to_owned();
        let contents = contents.to_vec();
        self.blocking(move |inner| {
            let parent = relative.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(parent) = parent
                && let Err(e) = inner.dir.create_dir_all(parent)
            {
                // An existing component that is not a directory beneath the root: say whether
                // it leads out (a link) or is a file.
                return Err(match inner.dir.canonicalize(parent) {
                    Err(resolving) if escapes(&resolving) => WorkspaceError::Outside { path },
                    _ if e.kind() == io::ErrorKind::AlreadyExists => WorkspaceError::NotRegular {
                        path,
                        wanted: "regular file (a parent is not a directory)",
                    },
                    _ => WorkspaceError::io(&path, e),
                });
            }
            let mut file = open_regular(&inner.dir, &relative, &path, Access::Write)?;
            // Truncated only once the open handle is known to be a regular file.
            file.set_len(0).map_err(|e| WorkspaceError::io(&path, e))?;
            file.write_all(&contents)
                .map_err(|e| WorkspaceError::io(&path, e))?;
            Ok(())
        })
        .await
    }

    /// The entries of a directory (`""` for the root), sorted by name. Links are listed, not
    /// followed.
    ///
    /// # Errors
    ///
    /// Outside the workspace, not a directory, more entries than the listing limit, or an I/O
    /// error.
    pub async fn list(&self, dir: &str) -> Result<Vec<Entry>, WorkspaceError> {
        let relative = self.relative(dir)?;
        let path = dir.to_owned();
        self.blocking(move |inner| {
            let opened;
            let target = if relative.as_os_str().is_empty() {
                &inner.dir
            } else {
                opened = inner
                    .dir
                    .open_dir_nofollow(&relative)
                    .map_err(|e| opening(&path, e, Want::Dir))?;
                &opened
            };
            let mut entries = Vec::new();
            for entry in target.entries().map_err(|e| WorkspaceError::io(&path, e))? {
                let entry = entry.map_err(|e| WorkspaceError::io(&path, e))?;
                if entries.len() == inner.max_list_entries {
                    return Err(WorkspaceError::TooManyEntries {
                        path,
                        limit: inner.max_list_entries,
                    });
                }
                let kind = match entry.file_type() {
                    Ok(t) if t.is_file() => EntryKind::File,
                    Ok(t) if t.is_dir() => EntryKind::Dir,
                    Ok(t) if t.is_symlink() => EntryKind::Symlink,
                    _ => EntryKind::Other,
                };
                entries.push(Entry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    kind,
                });
            }
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(entries)
        })
        .await
    }

    /// Runs blocking file work on tokio's blocking pool under the workspace's permit count.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Inner) -> Result<T, WorkspaceError> + Send + 'static,
    ) -> Result<T, WorkspaceError> {
        let _permit = self
            .inner
            .blocking
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let inner = Arc::clone(&self.inner);
        match tokio::task::spawn_blocking(move || work(&inner)).await {
            Ok(result) => result,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

/// Sets the limits of a [`Workspace`].
#[derive(Clone, Debug)]
pub struct WorkspaceBuilder {
    root: PathBuf,
    max_read_bytes: u64,
    max_blocking: usize,
    max_list_entries: usize,
}

impl WorkspaceBuilder {
    /// The largest file [`Workspace::read`] returns ([`DEFAULT_MAX_READ_BYTES`]).
    pub fn max_read_bytes(mut self, bytes: u64) -> Self {
        self.max_read_bytes = bytes;
        self
    }

    /// How many file operations may occupy a blocking thread at once ([`DEFAULT_MAX_BLOCKING`];
    /// at least 1).
    pub fn max_blocking(mut self, n: usize) -> Self {
        self.max_blocking = n.max(1);
        self
    }

    /// The most entries [`Workspace::list`] returns ([`DEFAULT_MAX_LIST_ENTRIES`]).
    pub fn max_list_entries(mut self, n: usize) -> Self {
        self.max_list_entries = n;
        self
    }

    /// Opens the directory.
    ///
    /// # Errors
    ///
    /// The directory cannot be opened (absent, not a directory, no permission).
    pub fn build(self) -> io::Result<Workspace> {
        let root = self.root.canonicalize()?;
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority())?;
        Ok(Workspace {
            inner: Arc::new(Inner {
                root,
                dir,
                max_read_bytes: self.max_read_bytes,
                max_list_entries: self.max_list_entries,
                blocking: Semaphore::new(self.max_blocking),
            }),
        })
    }
}

#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
}

/// Opens `relative` beneath `dir`, the last component without following a link, non-blocking
/// (a FIFO opens at once instead of waiting for a writer), and accepts only a regular file.
fn open_regular(
    dir: &Dir,
    relative: &Path,
    path: &str,
    access: Access,
) -> Result<cap_std::fs::File, WorkspaceError> {
    let mut options = OpenOptions::new();
    match access {
        Access::Read => options.read(true),
        Access::Write => options.write(true).create(true),
    };
    options.follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_fs_ext::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = dir
        .open_with(relative, &options)
        .map_err(|e| opening(path, e, Want::File))?;
    let metadata = file.metadata().map_err(|e| WorkspaceError::io(path, e))?;
    if !metadata.is_file() {
        return Err(WorkspaceError::NotRegular {
            path: path.to_owned(),
            wanted: "regular file",
        });
    }
    Ok(file)
}

/// What an open expected to find, for [`opening`]'s message.
#[derive(Clone, Copy)]
enum Want {
    File,
    Dir,
}

/// An error opening `path` as a `want`: the entry being of another kind (a link in the last
/// component opened without following gives ELOOP; ENXIO is a FIFO opened for writing without
/// a reader, or a device) as [`WorkspaceError::NotRegular`], anything else as
/// [`WorkspaceError::io`].
fn opening(path: &str, e: io::Error, want: Want) -> WorkspaceError {
    let wanted = match (want, e.raw_os_error()) {
        (Want::File, Some(ELOOP)) => "regular file (it is a symbolic link)",
        (Want::Dir, Some(ELOOP)) => "directory (it is a symbolic link)",
        (Want::File, Some(ENOTDIR | EISDIR | ENXIO)) => "regular file",
        (Want::Dir, Some(ENOTDIR | EISDIR | ENXIO)) => "directory",
        _ => return WorkspaceError::io(path, e),
    };
    WorkspaceError::NotRegular {
        path: path.to_owned(),
        wanted,
    }
}
