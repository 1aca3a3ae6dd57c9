//! The one gate through which every command reads a project's files (sources, `PROJECT`,
//! manifests, `Cargo.toml`, the journal, the scan's cache). It hands over the bytes of a regular
//! file of at most [`MAX_FILE_BYTES`] only: a FIFO, device, socket or directory is refused from
//! its metadata, before it is opened, so reading it never blocks nor runs on without end. A
//! symbolic link is followed wherever it leads, inside the project or out of it, when it ends
//! at such a regular file; a link to anything else, and a link loop, are refused by name.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The largest file the gate reads: far above any source, manifest or `PROJECT` a project
/// holds, far below what would exhaust memory.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// The largest rendering of the manifests (`dist/install.yaml`, every CRD in one file) the gate
/// reads for `edit --plugins helm`: each CRD may take up to 1.5 MiB.
pub const MAX_RENDERED_BYTES: u64 = 64 << 20;

/// The largest file of the scan's cache (under `target/`) the gate reads: the cache of a large
/// project outgrows [`MAX_FILE_BYTES`].
pub const MAX_CACHE_BYTES: u64 = 512 << 20;

/// Why the gate handed over no bytes.
#[derive(Debug)]
pub enum Refusal {
    /// Nothing is there (a symbolic link that leads nowhere included).
    Missing,
    /// Something other than a regular file: what it is and, for a symbolic link, where it leads.
    NotRegular {
        what: &'static str,
        target: Option<PathBuf>,
    },
    /// A symbolic link that leads back to itself, or a chain of them too long to follow.
    Loop,
    /// A regular file larger than the bound (its size, the bound).
    TooLarge(u64, u64),
    /// Another I/O failure.
    Io(std::io::Error),
}

impl Refusal {
    /// The problem and its fix, after the file's name: one line.
    pub fn reason(&self) -> String {
        match self {
            Refusal::Missing => "it does not exist (or is a symbolic link that leads nowhere); create it or restore it".to_owned(),
            Refusal::NotRegular { what, target: Some(t) } => format!(
                "it is a symbolic link to {}, a {what}, not a regular file; point it at a regular file or remove it",
                t.display()
            ),
            Refusal::NotRegular { what, target: None } => format!(
                "it is a {what}, not a regular file; replace it with a regular file or remove it"
            ),
            Refusal::Loop => "it is a symbolic link loop (it leads back to itself); point it at a regular file or remove it".to_owned(),
            Refusal::TooLarge(len, bound) => format!(
                "it is {}, more than the {} operator-gen reads from a project file; split it into smaller files or remove it",
                mib(*len),
                mib(*bound)
            ),
            Refusal::Io(e) => format!("{e}"),
        }
    }

    /// The CLI error for `path`: I/O failures classified as [`Error::io`] classifies them.
    pub fn into_error(self, path: &Path) -> Error {
        match self {
            Refusal::Io(e) => Error::io("read", path, e),
            other => Error::msg(format!(
                "cannot read {}: {}",
                path.display(),
                other.reason()
            )),
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// The metadata and bytes of the regular file at `path`, through the gate. The metadata is the
/// open file's, taken before its bytes are read (a change while reading changes it).
pub fn read(path: &Path) -> std::result::Result<(Metadata, Vec<u8>), Refusal> {
    read_up_to(path, MAX_FILE_BYTES)
}

/// The text of a file of the scan's cache, through the gate with [`MAX_CACHE_BYTES`] as its
/// bound; empty when it is refused (the cache is then rebuilt).
pub fn read_cache(path: &Path) -> String {
    read_up_to(path, MAX_CACHE_BYTES)
        .ok()
        .and_then(|(_, bytes)| String::from_utf8(bytes).ok())
        .unwrap_or_default()
}

/// [`read`] with `bound` for the largest size.
fn read_up_to(path: &Path, bound: u64) -> std::result::Result<(Metadata, Vec<u8>), Refusal> {
    let meta = std::fs::metadata(path).map_err(refusal)?;
    check(path, &meta, bound)?;
    let file = open(path).map_err(refusal)?;
    // what was opened may not be what was looked at: look again
    let meta = file.metadata().map_err(Refusal::Io)?;
    check(path, &meta, bound)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(bound + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() as u64 > bound {
        // it grew while it was read
        return Err(Refusal::TooLarge(bytes.len() as u64, bound));
    }
    Ok((meta, bytes))
}

/// The text of the regular file at `path`, through the gate; `None` when nothing is there.
/// Text that is not UTF-8 is refused, naming the file.
pub fn read_text(path: &Path) -> Result<Option<String>> {
    read_text_up_to(path, MAX_FILE_BYTES)
}

/// [`read_text`] with `bound` for the largest size.
pub fn read_text_up_to(path: &Path, bound: u64) -> Result<Option<String>> {
    let bytes = match read_up_to(path, bound) {
        Ok((_, bytes)) => bytes,
        Err(Refusal::Missing) => return Ok(None),
        Err(r) => return Err(r.into_error(path)),
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        Error::msg(format!(
            "cannot read {}: it is not UTF-8 text; save it as UTF-8",
            path.display()
        ))
    })
}

/// [`read_text`] for a file that must be there.
pub fn read_existing(path: &Path) -> Result<String> {
    read_text(path)?.ok_or_else(|| Refusal::Missing.into_error(path))
}

/// [`read_text`] for a file whose absence or refusal leaves its reader with nothing to use (a
/// cache, an optional setting): `None` then.
pub fn read_text_lenient(path: &Path) -> Option<String> {
    read_text(path).ok().flatten()
}

/// Refuses what is not a regular file of at most `bound` bytes.
fn check(path: &Path, meta: &Metadata, bound: u64) -> std::result::Result<(), Refusal> {
    if !meta.is_file() {
        let target = path
            .symlink_metadata()
            .is_ok_and(|m| m.is_symlink())
            .then(|| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
        return Err(Refusal::NotRegular {
            what: what_it_is(meta),
            target,
        });
    }
    if meta.len() > bound {
        return Err(Refusal::TooLarge(meta.len(), bound));
    }
    Ok(())
}

/// What a file that is not a regular one is.
fn what_it_is(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "character device";
        }
        if kind.is_block_device() {
            return "block device";
        }
        if kind.is_socket() {
            return "socket";
        }
    }
    "special file"
}

/// The refusal an I/O error means.
fn refusal(e: std::io::Error) -> Refusal {
    if e.kind() == std::io::ErrorKind::NotFound {
        return Refusal::Missing;
    }
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Refusal::Loop;
    }
    Refusal::Io(e)
}

/// Opens `path` for reading without blocking: a FIFO put in a regular file's place after it was
/// looked at opens at once (and is then refused from the open file's metadata).
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "fn a() {}\n").expect("write");
        assert_eq!(
            read_text(&path).expect("read").as_deref(),
            Some("fn a() {}\n")
        );
        assert_eq!(read_text(&dir.path().join("none")).expect("read"), None);
    }

    #[cfg(unix)]
    #[test]
    fn what_is_not_a_regular_file_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let zero = dir.path().join("zero.rs");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        let e = read_text(&zero).expect_err("a device").to_string();
        assert!(
            e.contains("zero.rs: it is a symbolic link to /dev/zero, a character device, not a regular file; point it at a regular file or remove it"),
            "{e}"
        );
        let looped = dir.path().join("loop.rs");
        std::os::unix::fs::symlink("loop.rs", &looped).expect("symlink");
        let e = read_text(&looped).expect_err("a loop").to_string();
        assert!(e.ends_with("loop.rs: it is a symbolic link loop (it leads back to itself); point it at a regular file or remove it"), "{e}");
        let e = read_text(dir.path()).expect_err("a directory").to_string();
        assert!(
            e.ends_with(
                "it is a directory, not a regular file; replace it with a regular file or remove it"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_file_over_the_bound_is_refused_with_the_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.yaml");
        let file = File::create(&path).expect("create");
        file.set_len(MAX_FILE_BYTES + (1 << 20)).expect("grow");
        let e = read_text(&path).expect_err("too large").to_string();
        assert!(
            e.ends_with("big.yaml: it is 9.0 MiB, more than the 8.0 MiB operator-gen reads from a project file; split it into smaller files or remove it"),
            "{e}"
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("latin1.rs");
        std::fs::write(&path, b"// caf\xe9\n").expect("write");
        let e = read_text(&path).expect_err("not UTF-8").to_string();
        assert!(
            e.ends_with("latin1.rs: it is not UTF-8 text; save it as UTF-8"),
            "{e}"
        );
    }
}
