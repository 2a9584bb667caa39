//! The tuning cache on disk: one small file per measured configuration, and
//! one per decision.
//!
//! - A **trial** file holds the median time of one configuration (its
//!   `@autotune` values and lowering choices) of one kernel, keyed by the
//!   hash of that configuration's checked IR, the backend, precision,
//!   device and driver (and threads on the CPU), and the shape bucket.
//!   The IR of `R=16` does not change when `R=64` is added to the list, so
//!   a changed list measures only what is new; a changed kernel changes
//!   the IR of every configuration and measures them all again.
//! - A **decision** file holds the winner and the whole table of one tune,
//!   keyed by the hash of the user's source file, the kernel, the same
//!   device fields and the bucket: a later process reads this one file and
//!   checks one configuration, which is what keeps a warm lookup within
//!   milliseconds.
//!
//! Every file is `phobos-tune FORMAT HASH\n` and a JSON body, `HASH` being
//! the FNV-1a of the body, so damage is caught before the body is trusted;
//! the body repeats its whole key, so a file for another key (a stale
//! format, another phobos version, a hash collision) is caught too. Either
//! is ignored with a warning and rewritten. Files are written to a name of
//! the process's own and renamed into place, so two processes tuning the
//! same kernel at once each leave a whole file, never a mixture.
//!
//! The directory is `tuning/` under the pipeline cache's
//! (`PHOBOS_CACHE_DIR`, else `$XDG_CACHE_HOME/phobos`, else
//! `$HOME/.cache/phobos`); `PHOBOS_CACHE_DIR=off` turns it off.

use crate::gpu::disk_cache::{dir, fnv1a};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped whenever the meaning of a file changes.
const FORMAT: u32 = 1;

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    Found(Value),
    Missing,
    /// A file was there but damaged or for another key; the warning was
    /// printed.
    Rejected,
}

/// An open tuning cache directory.
#[derive(Clone, Debug)]
pub struct TuneCache {
    dir: PathBuf,
}

/// Why there is no cache to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoCache {
    /// `PHOBOS_CACHE_DIR=off`, or no home directory to put one in.
    Off,
    /// The directory cannot be created or written; the message says why.
    Unwritable(String),
}

impl TuneCache {
    /// The cache in the configured directory, after checking that a file
    /// can be written there.
    pub fn open() -> Result<TuneCache, NoCache> {
        let dir = dir().ok_or(NoCache::Off)?.join("tuning");
        TuneCache::at(&dir)
    }

    /// The cache in `dir` (created if missing), after checking that a
    /// file can be written there.
    pub fn at(dir: &Path) -> Result<TuneCache, NoCache> {
        let unwritable = |e: std::io::Error| NoCache::Unwritable(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(unwritable)?;
        let probe = dir.join(format!(".probe{}", std::process::id()));
        std::fs::write(&probe, b"").map_err(unwritable)?;
        let _ = std::fs::remove_file(&probe);
        Ok(TuneCache {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: &Value) -> PathBuf {
        let text = key.to_string();
        self.dir
            .join(format!("{:016x}.json", fnv1a(text.as_bytes())))
    }

    /// The value stored for `key`, if a sound file for exactly this key is
    /// there.
    pub fn get(&self, key: &Value) -> Lookup {
        let path = self.path(key);
        let Ok(bytes) = std::fs::read(&path) else {
            return Lookup::Missing;
        };
        match unwrap(&bytes) {
            Err(why) => {
                eprintln!(
                    "phobos: warning: the tuning cache entry {} is {why}; it is ignored and rebuilt",
                    path.display()
                );
                Lookup::Rejected
            }
            Ok(body) if body.get("key") != Some(key) => {
                eprintln!(
                    "phobos: warning: the tuning cache entry {} is stale (written for another \
                     kernel, device or phobos version); it is ignored and rebuilt",
                    path.display()
                );
                Lookup::Rejected
            }
            Ok(mut body) => Lookup::Found(body.get_mut("value").map_or(Value::Null, Value::take)),
        }
    }

    /// Stores `value` for `key`: written whole to a temporary name, then
    /// renamed into place. A failure is returned for the caller to warn.
    pub fn put(&self, key: &Value, value: Value) -> std::io::Result<()> {
        let body = json!({"key": key, "value": value}).to_string();
        let text = format!(
            "phobos-tune {FORMAT} {:016x}\n{body}",
            fnv1a(body.as_bytes())
        );
        let path = self.path(key);
        // A name per process and write, so concurrent writers never share
        // a temporary file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("tmp{}.{n}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// The body of a file, or why it cannot be trusted.
fn unwrap(bytes: &[u8]) -> Result<Value, &'static str> {
    let text = std::str::from_utf8(bytes).map_err(|_| "damaged (not text)")?;
    let (header, body) = text.split_once('\n').ok_or("damaged (no header)")?;
    let mut words = header.split(' ');
    if words.next() != Some("phobos-tune") {
        return Err("damaged (not a tuning cache file)");
    }
    if words.next() != Some(FORMAT.to_string().as_str()) {
        return Err("stale (another format)");
    }
    let hash = words.next().and_then(|h| u64::from_str_radix(h, 16).ok());
    if hash != Some(fnv1a(body.as_bytes())) {
        return Err("damaged (its checksum does not match)");
    }
    serde_json::from_str(body).map_err(|_| "damaged (not JSON)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("phobos-tune-{name}-{}", std::process::id()))
    }

    #[test]
    fn entries_round_trip_and_damage_or_another_key_is_refused() {
        let dir = temp("unit");
        let cache = TuneCache::at(&dir).unwrap();
        let key = json!({"kernel": "k", "config": "R=16"});
        assert_eq!(cache.get(&key), Lookup::Missing);
        cache.put(&key, json!({"median_s": 0.5})).unwrap();
        assert_eq!(cache.get(&key), Lookup::Found(json!({"median_s": 0.5})));

        // One flipped byte in the body: the checksum catches it.
        let path = cache.path(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 3;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.get(&key), Lookup::Rejected);
        // Truncated.
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(cache.get(&key), Lookup::Rejected);
        // Sound, but written for another key at the same name.
        let other = json!({"key": {"kernel": "other"}, "value": 1}).to_string();
        let text = format!(
            "phobos-tune {FORMAT} {:016x}\n{other}",
            fnv1a(other.as_bytes())
        );
        std::fs::write(&path, text).unwrap();
        assert_eq!(cache.get(&key), Lookup::Rejected);
        // Rewritten, it is sound again; no temporary file is left behind.
        cache.put(&key, json!(2)).unwrap();
        assert_eq!(cache.get(&key), Lookup::Found(json!(2)));
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [path.file_name().unwrap().to_string_lossy()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_that_cannot_be_made_is_unwritable() {
        let file = temp("file");
        std::fs::write(&file, b"a file, not a directory").unwrap();
        match TuneCache::at(&file.join("tuning")) {
            Err(NoCache::Unwritable(why)) => assert!(why.contains("tuning"), "{why}"),
            other => panic!("expected Unwritable, got {other:?}"),
        }
        std::fs::remove_file(&file).unwrap();
    }
}
