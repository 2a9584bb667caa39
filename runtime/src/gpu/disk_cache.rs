//! Compiled pipelines on disk, per device and driver (DESIGN.md: "compiled
//! pipelines ... are cached on disk ...; a damaged cache entry is ignored
//! with a warning and rebuilt").
//!
//! One file per adapter (`wgpu::util::pipeline_cache_key`: Vulkan vendor
//! and device), holding a wgpu `PipelineCache`'s data and the keys of the
//! pipelines built into it, behind a header of our own: a magic word, the
//! payload's length, its and the keys' FNV-1a hash and the keys' count, so
//! a truncated or damaged file is recognised before the driver sees it.
//! wgpu itself checks that the payload was written for this adapter and
//! driver version, and otherwise starts empty (`fallback: true`); a key
//! hashes the pipeline's SPIR-V with the driver's name and version, so keys
//! of another driver never match.
//!
//! The file is rewritten (to a temporary name, then renamed, so readers
//! never see half a file) only when a process builds a pipeline whose key
//! it does not list: once the work that follows is submitted (so the write
//! overlaps the device's work instead of delaying the first dispatch),
//! then at most once a second while it builds more, and when the device is
//! dropped. A process whose pipelines all came from the file neither reads
//! the cache's data back nor writes it (on the H200 that took about 4 ms
//! of a warm start's first dispatch). A test suite that builds thousands of
//! pipelines must not rewrite a growing file thousands of times. Data
//! beyond [`MAX_BYTES`] is not saved.
//!
//! The directory is `PHOBOS_CACHE_DIR`, else `$XDG_CACHE_HOME/phobos`, else
//! `$HOME/.cache/phobos`; `PHOBOS_CACHE_DIR=off` turns the cache off. It
//! needs wgpu's `PIPELINE_CACHE` feature (Vulkan).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The format with the keys of the pipelines the payload holds.
const MAGIC: &[u8; 8] = b"PHOBOSP2";
/// The first format: a payload without keys (read, never written).
const MAGIC_V1: &[u8; 8] = b"PHOBOSPC";
const HEADER: usize = 8 + 8 + 8 + 8;
const HEADER_V1: usize = 8 + 8 + 8;
/// The largest cache file written.
pub(crate) const MAX_BYTES: usize = 32 << 20;
/// The shortest time between two saves while pipelines are being built.
const SAVE_EVERY: Duration = Duration::from_secs(1);

pub(crate) struct DiskCache {
    cache: wgpu::PipelineCache,
    path: PathBuf,
    /// When the file was last written, and whether pipelines it does not
    /// list were built since.
    saved: Mutex<(Option<Instant>, bool)>,
    /// The keys of the pipelines the file lists, and of those built since.
    keys: Mutex<HashSet<u64>>,
    /// Hashed into every key: the driver's name and version.
    driver: u64,
}

/// A pipeline's key: its SPIR-V and the driver (see the module's
/// documentation).
pub(crate) fn key(driver: u64, spirv: &[u32]) -> u64 {
    let mut h = driver;
    for w in spirv {
        h = (h ^ u64::from(*w)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl DiskCache {
    /// The cache of `info`'s adapter, loaded from disk when a sound file is
    /// there; `None` when the device or the environment rules it out.
    pub fn open(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Option<DiskCache> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        let path = dir()?.join(format!("{}.bin", wgpu::util::pipeline_cache_key(info)?));
        let (data, keys) = load(&path).unzip();
        // SAFETY: `data` is only ever what `PipelineCache::get_data` gave
        // (see `save`), checked against our own hash of it, and wgpu
        // validates its header for this adapter before the driver reads it.
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("phobos pipelines"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        Some(DiskCache {
            cache,
            path,
            saved: Mutex::new((None, false)),
            keys: Mutex::new(keys.unwrap_or_default()),
            driver: fnv1a(format!("{}\0{}", info.driver, info.driver_info).as_bytes()),
        })
    }

    pub fn cache(&self) -> &wgpu::PipelineCache {
        &self.cache
    }

    /// The key of a pipeline of `spirv` on this driver.
    pub fn key(&self, spirv: &[u32]) -> u64 {
        key(self.driver, spirv)
    }

    /// Notes that a pipeline was built (with its key, where it has one);
    /// [`DiskCache::flush`] saves it unless the file lists it already.
    pub fn built(&self, key: Option<u64>) {
        let new = match key {
            Some(k) => self.keys.lock().unwrap().insert(k),
            None => true,
        };
        if new {
            self.saved.lock().unwrap().1 = true;
        }
    }

    /// Writes the cache's data if pipelines were built since the last
    /// write and that write is old enough (see the module's documentation).
    pub fn flush(&self) {
        let mut saved = self.saved.lock().unwrap();
        if !saved.1 || saved.0.is_some_and(|t| t.elapsed() < SAVE_EVERY) {
            return;
        }
        *saved = (Some(Instant::now()), false);
        drop(saved);
        self.save();
    }

    /// Writes the cache's current data and keys; a failure is a warning,
    /// never an error of the launch.
    fn save(&self) {
        let Some(data) = self.cache.get_data() else {
            return;
        };
        if data.len() > MAX_BYTES {
            return;
        }
        let mut keys: Vec<u64> = self.keys.lock().unwrap().iter().copied().collect();
        keys.sort_unstable();
        if let Err(e) = write(&self.path, &data, &keys) {
            eprintln!(
                "phobos: warning: could not save the pipeline cache {}: {e}",
                self.path.display()
            );
        }
    }
}

impl Drop for DiskCache {
    fn drop(&mut self) {
        if self.saved.get_mut().map(|s| s.1).unwrap_or(false) {
            self.save();
        }
    }
}

pub(crate) fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PHOBOS_CACHE_DIR") {
        return (!d.is_empty() && d != "off").then(|| PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("phobos"))
}

/// The payload and keys of a sound file at `path`; `None` when there is
/// none, with a warning when there is one but it is damaged.
fn load(path: &Path) -> Option<(Vec<u8>, HashSet<u64>)> {
    let bytes = std::fs::read(path).ok()?;
    match unwrap(&bytes) {
        Some((payload, keys)) => Some((payload.to_vec(), keys)),
        None => {
            eprintln!(
                "phobos: warning: the pipeline cache {} is damaged; it is ignored and rebuilt",
                path.display()
            );
            None
        }
    }
}

/// The payload and keys if the header is ours and the lengths and hash
/// match (a file of the first format has no keys).
fn unwrap(bytes: &[u8]) -> Option<(&[u8], HashSet<u64>)> {
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    let magic = bytes.get(..8)?;
    if magic == MAGIC_V1 {
        let payload = bytes.get(HEADER_V1..)?;
        let ok = word(8)? == payload.len() as u64 && word(16)? == fnv1a(payload);
        return ok.then(|| (payload, HashSet::new()));
    }
    if magic != MAGIC {
        return None;
    }
    let (len, hash, count) = (word(8)?, word(16)?, word(24)?);
    let body = bytes.get(HEADER..)?;
    let keys_at = usize::try_from(len).ok()?;
    let keys_len = usize::try_from(count).ok()?.checked_mul(8)?;
    if keys_at.checked_add(keys_len)? != body.len() || fnv1a(body) != hash {
        return None;
    }
    let keys = body[keys_at..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Some((&body[..keys_at], keys))
}

fn write(path: &Path, payload: &[u8], keys: &[u64]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut body = Vec::with_capacity(payload.len() + 8 * keys.len());
    body.extend_from_slice(payload);
    for k in keys {
        body.extend_from_slice(&k.to_le_bytes());
    }
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(&body).to_le_bytes());
    bytes.extend_from_slice(&(keys.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&body);
    // A name per process, so concurrent writers never share a temporary.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, path)
}

/// 64-bit FNV-1a: a checksum against damage, not an adversary.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sound_files_round_trip_and_damage_is_caught() {
        let dir = std::env::temp_dir().join(format!("phobos-pc-{}", std::process::id()));
        let path = dir.join("x.bin");
        write(&path, b"payload bytes", &[7, 1 << 40]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (payload, keys) = unwrap(&bytes).expect("sound");
        assert_eq!(payload, b"payload bytes");
        assert_eq!(keys, HashSet::from([7, 1 << 40]));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(unwrap(&flipped).is_none());
        flipped = bytes.clone();
        flipped[HEADER] ^= 1;
        assert!(unwrap(&flipped).is_none());
        assert!(unwrap(&bytes[..bytes.len() - 1]).is_none());
        assert!(unwrap(&bytes[..10]).is_none());
        assert!(unwrap(b"not a cache file at all, of any length").is_none());
        // The first format: a payload and no keys.
        let mut v1 = MAGIC_V1.to_vec();
        v1.extend_from_slice(&3u64.to_le_bytes());
        v1.extend_from_slice(&fnv1a(b"abc").to_le_bytes());
        v1.extend_from_slice(b"abc");
        let (payload, keys) = unwrap(&v1).expect("the first format");
        assert_eq!((payload, keys.len()), (&b"abc"[..], 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_depend_on_the_driver_and_every_word() {
        assert_ne!(key(1, &[1, 2, 3]), key(2, &[1, 2, 3]));
        assert_ne!(key(1, &[1, 2, 3]), key(1, &[1, 2, 4]));
        assert_ne!(key(1, &[1, 2, 3]), key(1, &[1, 2, 3, 0]));
    }
}
