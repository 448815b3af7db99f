//! `dsh_tools::workspace::Workspace`: the escapes that a lexical path check lets through, each
//! tried as an attacker would (a cloned repository holds whatever links its author committed).

use dsh_tools::ToolError;
use dsh_tools::workspace::{EntryKind, Workspace, WorkspaceError};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A fresh directory holding `ws/` (the workspace) and `outside/secret.txt`.
struct Fixture {
    base: PathBuf,
    ws: Workspace,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let base =
            std::env::temp_dir().join(format!("dsh-workspace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), "secret").unwrap();
        let ws = Workspace::open(base.join("ws")).unwrap();
        Self { base, ws }
    }

    fn inside(&self, path: &str) -> PathBuf {
        self.base.join("ws").join(path)
    }

    fn outside(&self, path: &str) -> PathBuf {
        self.base.join("outside").join(path)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The error's code, after printing the error (shown when an assertion fails).
fn code<T: std::fmt::Debug>(result: Result<T, WorkspaceError>) -> &'static str {
    let error = result.expect_err("the operation must be refused");
    eprintln!("{error} ({error:?})");
    error.code()
}

#[tokio::test]
async fn a_link_to_a_file_outside_is_not_read() {
    let f = Fixture::new("read-link");
    symlink(f.outside("secret.txt"), f.inside("notes.txt")).unwrap();
    assert_eq!(
        code(f.ws.read_to_string("notes.txt").await),
        "NOT_A_REGULAR_FILE"
    );
    // Through a linked directory, the kernel refuses the escape itself.
    symlink(f.base.join("outside"), f.inside("docs")).unwrap();
    assert_eq!(
        code(f.ws.read_to_string("docs/secret.txt").await),
        "OUTSIDE_WORKSPACE"
    );
    assert_eq!(code(f.ws.list("docs").await), "NOT_A_REGULAR_FILE");
    // And the lexical escapes.
    assert_eq!(
        code(f.ws.read("../outside/secret.txt").await),
        "OUTSIDE_WORKSPACE"
    );
    let absolute = f.outside("secret.txt");
    assert_eq!(
        code(f.ws.read(absolute.to_str().unwrap()).await),
        "OUTSIDE_WORKSPACE"
    );
}

#[tokio::test]
async fn a_write_through_a_linked_directory_creates_nothing_outside() {
    let f = Fixture::new("write-dir-link");
    symlink(f.base.join("outside"), f.inside("docs")).unwrap();
    assert_eq!(
        code(f.ws.write("docs/new.txt", b"x").await),
        "OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        code(f.ws.write("docs/secret.txt", b"x").await),
        "OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        code(f.ws.write("docs/sub/deeper.txt", b"x").await),
        "OUTSIDE_WORKSPACE"
    );
    assert!(!f.outside("new.txt").exists());
    assert!(!f.outside("sub").exists());
    assert_eq!(
        std::fs::read_to_string(f.outside("secret.txt")).unwrap(),
        "secret"
    );
}

#[tokio::test]
async fn a_write_to_a_linked_file_leaves_the_target_alone() {
    let f = Fixture::new("write-file-link");
    symlink(f.outside("secret.txt"), f.inside("a.txt")).unwrap();
    assert_eq!(
        code(f.ws.write("a.txt", b"clobbered").await),
        "NOT_A_REGULAR_FILE"
    );
    assert_eq!(
        std::fs::read_to_string(f.outside("secret.txt")).unwrap(),
        "secret"
    );
    // A dangling link to a path outside is not followed to create it either.
    symlink(f.outside("planted.txt"), f.inside("b.txt")).unwrap();
    assert_eq!(code(f.ws.write("b.txt", b"x").await), "NOT_A_REGULAR_FILE");
    assert!(!f.outside("planted.txt").exists());
}

#[tokio::test]
async fn a_file_swapped_for_a_link_between_calls_is_refused() {
    let f = Fixture::new("swap");
    f.ws.write("a.txt", b"mine").await.unwrap();
    assert_eq!(f.ws.read_to_string("a.txt").await.unwrap(), "mine");
    std::fs::remove_file(f.inside("a.txt")).unwrap();
    symlink(f.outside("secret.txt"), f.inside("a.txt")).unwrap();
    assert_eq!(code(f.ws.read("a.txt").await), "NOT_A_REGULAR_FILE");
    // A directory swapped the same way.
    f.ws.write("d/b.txt", b"mine").await.unwrap();
    std::fs::remove_dir_all(f.inside("d")).unwrap();
    symlink(f.base.join("outside"), f.inside("d")).unwrap();
    assert_eq!(code(f.ws.read("d/secret.txt").await), "OUTSIDE_WORKSPACE");
}

#[tokio::test]
async fn links_to_the_process_own_descriptors_are_refused() {
    let f = Fixture::new("proc-fd");
    symlink("/proc/self/fd/1", f.inside("out")).unwrap();
    symlink("/proc/self/fd/0", f.inside("in")).unwrap();
    symlink("/proc/self", f.inside("me")).unwrap();
    assert_eq!(
        code(f.ws.write("out", b"{\"jsonrpc\":\"2.0\"}\n").await),
        "NOT_A_REGULAR_FILE"
    );
    assert_eq!(code(f.ws.read("in").await), "NOT_A_REGULAR_FILE");
    assert_eq!(
        code(f.ws.write("me/fd/1", b"forged").await),
        "OUTSIDE_WORKSPACE"
    );
    assert_eq!(code(f.ws.read("me/fd/0").await), "OUTSIDE_WORKSPACE");
}

/// Opening a FIFO for reading blocks until a writer comes; 600 of them would hold tokio's whole
/// blocking pool (512 threads) for good. They are refused at once instead, each without
/// holding a thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_are_refused_without_blocking() {
    let f = Fixture::new("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(f.inside("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let reads = (0..600).map(|_| {
        let ws = f.ws.clone();
        tokio::spawn(async move { ws.read("pipe").await })
    });
    let all = tokio::time::timeout(
        Duration::from_secs(60),
        futures_util::future::join_all(reads),
    )
    .await
    .expect("a FIFO read blocked");
    for result in all {
        assert_eq!(code(result.unwrap()), "NOT_A_REGULAR_FILE");
    }
    assert_eq!(code(f.ws.write("pipe", b"x").await), "NOT_A_REGULAR_FILE");
    let listed = f.ws.list("").await.unwrap();
    assert_eq!(listed[0].kind, EntryKind::Other);
}

#[tokio::test]
async fn reads_stop_at_the_size_limit() {
    let f = Fixture::new("size");
    let ws = Workspace::builder(f.base.join("ws"))
        .max_read_bytes(1024)
        .build()
        .unwrap();
    ws.write("small.txt", &[b'a'; 1024]).await.unwrap();
    ws.write("big.txt", &[b'a'; 1025]).await.unwrap();
    assert_eq!(ws.read("small.txt").await.unwrap().len(), 1024);
    let err = ws.read("big.txt").await.unwrap_err();
    assert_eq!(err.code(), "FILE_TOO_LARGE");
    assert_eq!(
        err.to_string(),
        "big.txt is 1025 bytes, over the workspace's read limit of 1024 bytes"
    );
    // As a tool error, with its code.
    let tool: ToolError = err.into();
    assert_eq!(tool.code(), Some("FILE_TOO_LARGE"));
}

#[tokio::test]
async fn links_inside_the_workspace_resolve_for_display() {
    let f = Fixture::new("resolve");
    f.ws.write("real/a.txt", b"x").await.unwrap();
    symlink("real", f.inside("alias")).unwrap();
    symlink(f.base.join("outside"), f.inside("away")).unwrap();
    assert_eq!(
        f.ws.resolve("alias/a.txt").unwrap(),
        Path::new("real/a.txt")
    );
    assert_eq!(
        f.ws.resolve("alias/new/b.txt").unwrap(),
        Path::new("real/new/b.txt")
    );
    assert_eq!(
        f.ws.resolve("fresh/c.txt").unwrap(),
        Path::new("fresh/c.txt")
    );
    assert_eq!(code(f.ws.resolve("away/secret.txt")), "OUTSIDE_WORKSPACE");
    assert_eq!(code(f.ws.resolve("away/new.txt")), "OUTSIDE_WORKSPACE");
    // A link in the middle of a path that stays inside is followed by reads and writes.
    assert_eq!(f.ws.read_to_string("alias/a.txt").await.unwrap(), "x");
    f.ws.write("alias/b.txt", b"y").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(f.inside("real/b.txt")).unwrap(),
        "y"
    );
    // Absolute paths inside the root are accepted.
    let absolute = f.ws.root().join("real/a.txt");
    assert_eq!(
        f.ws.read_to_string(absolute.to_str().unwrap())
            .await
            .unwrap(),
        "x"
    );
}

#[tokio::test]
async fn listing_is_sorted_typed_and_bounded() {
    let f = Fixture::new("list");
    let ws = Workspace::builder(f.base.join("ws"))
        .max_list_entries(3)
        .build()
        .unwrap();
    ws.write("b.txt", b"").await.unwrap();
    ws.write("a/x.txt", b"").await.unwrap();
    symlink("b.txt", f.inside("c")).unwrap();
    let listed = ws.list("").await.unwrap();
    let shown: Vec<_> = listed.iter().map(|e| (e.name.as_str(), e.kind)).collect();
    assert_eq!(
        shown,
        [
            ("a", EntryKind::Dir),
            ("b.txt", EntryKind::File),
            ("c", EntryKind::Symlink)
        ]
    );
    ws.write("d.txt", b"").await.unwrap();
    assert_eq!(code(ws.list("").await), "TOO_MANY_ENTRIES");
    assert_eq!(code(ws.list("b.txt").await), "NOT_A_REGULAR_FILE");
    assert_eq!(code(ws.list("missing").await), "NOT_FOUND");
    // A file where a parent directory should be.
    assert_eq!(
        code(ws.write("b.txt/x.txt", b"").await),
        "NOT_A_REGULAR_FILE"
    );
}
