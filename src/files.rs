//! Files written whole or not at all. Each file is made as a temporary file beside its target and
//! renamed over it, so a run killed at any point leaves the old file or the new one, never a part
//! (ARCHITECTURE.md, Invariants). The temporary file is removed when the write fails.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path`, whole or not at all.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = Pending::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file being written: it takes the place of its target on [`Pending::commit`], and is removed
/// if dropped before.
pub struct Pending {
    file: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
}

impl Pending {
    /// A new temporary file in `target`'s folder, readable as an ordinary file would be (the
    /// umask's mode, not the temporary file's private one).
    pub fn create(target: &Path) -> io::Result<Pending> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let file = tempfile::Builder::new()
            .prefix(".pending-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir)?;
        Ok(Pending {
            file: BufWriter::new(file),
            target: target.to_path_buf(),
        })
    }

    /// Puts the file in its target's place.
    pub fn commit(self) -> io::Result<()> {
        let file = self.file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_file_leaves_the_old_one_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"old").unwrap();
        let mut p = Pending::create(&path).unwrap();
        p.write_all(b"new, not committed").unwrap();
        drop(p);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }
}
