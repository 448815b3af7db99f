//! The `dsh-tools` CLI, in process, on arbitrary arguments and files.
//!
//! Input: a first line of arguments (split on spaces; `@1` and `@2` stand for two files), then
//! the files' bytes separated by a line `---`. If the first byte is `!`, the output goes to a
//! writer that fails (a closed pipe or a full disk). The program name is prepended.
//!
//! Invariants: nothing panics (libFuzzer reports a panic as a crash); the exit status is 0, 1 or
//! 2; a failing output is status 2 unless the run printed nothing.
#![no_main]

#[path = "../../dsh-tools/src/bin/dsh-tools/main.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod cli;

use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::path::PathBuf;

struct Failing;

impl Write for Failing {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed"))
    }
}

/// Counts what reached the writer.
struct Counting(usize);

impl Write for Counting {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-tools-fuzz-cli-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fuzz_target!(|data: &[u8]| {
    let (failing, data) = match data.split_first() {
        Some((b'!', rest)) => (true, rest),
        _ => (false, data),
    };
    let (head, body) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(head) = std::str::from_utf8(head) else {
        return;
    };
    let dir = scratch();
    let files = [dir.join("1.json"), dir.join("2.json")];
    let split = body.windows(5).position(|w| w == b"\n---\n");
    let (one, two) = match split {
        Some(i) => (&body[..i], &body[i + 5..]),
        None => (body, &[][..]),
    };
    if std::fs::write(&files[0], one).is_err() || std::fs::write(&files[1], two).is_err() {
        return;
    }
    let mut args = vec!["dsh-tools".to_owned()];
    for token in head.split(' ').filter(|t| !t.is_empty()).take(16) {
        args.push(match token {
            "@1" => files[0].display().to_string(),
            "@2" => files[1].display().to_string(),
            // Never read the fuzzer's own standard input.
            "-" => continue,
            other => other.to_owned(),
        });
    }
    let code = if failing {
        cli::cli_main(args, &mut Failing)
    } else {
        let mut out = Counting(0);
        let code = cli::cli_main(args.clone(), &mut out);
        // The same run through a failing writer: status 2 whenever there was output.
        let failed = cli::cli_main(args, &mut Failing);
        assert!(out.0 == 0 || failed == 2, "output lost with status {failed}");
        code
    };
    assert!(code <= 2, "exit status {code}");
});
