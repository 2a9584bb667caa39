//! Compiled pipelines on disk, per device and driver (DESIGN.md: "compiled
//! pipelines ... are cached on disk ...; a damaged cache entry is ignored
//! with a warning and rebuilt").
//!
//! One file per adapter (`wgpu::util::pipeline_cache_key`: Vulkan vendor
//! and device), holding a wgpu `PipelineCache`'s data behind a header of our
//! own: a magic word, the payload's length and its FNV-1a hash, so a
//! truncated or damaged file is recognised before the driver sees it. wgpu
//! itself checks that the payload was written for this adapter and driver
//! version, and otherwise starts empty (`fallback: true`). The file is
//! rewritten (to a temporary name, then renamed, so readers never see half
//! a file) once the work that follows the first pipeline a process builds
//! is submitted (so the write overlaps the device's work instead of
//! delaying the first dispatch), then at most once a second while it
//! builds more, and when the device is dropped: a test suite that builds
//! thousands of pipelines must not rewrite a growing file thousands of
//! times. Data equal to what the file holds (every pipeline came from the
//! cache) is not written again, and data beyond [`MAX_BYTES`] is not saved.
//!
//! The directory is `PHOBOS_CACHE_DIR`, else `$XDG_CACHE_HOME/phobos`, else
//! `$HOME/.cache/phobos`; `PHOBOS_CACHE_DIR=off` turns the cache off. It
//! needs wgpu's `PIPELINE_CACHE` feature (Vulkan).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 8] = b"PHOBOSPC";
const HEADER: usize = 8 + 8 + 8;
/// The largest cache file written.
pub(crate) const MAX_BYTES: usize = 32 << 20;
/// The shortest time between two saves while pipelines are being built.
const SAVE_EVERY: Duration = Duration::from_secs(1);

pub(crate) struct DiskCache {
    cache: wgpu::PipelineCache,
    path: PathBuf,
    /// When the file was last written, and whether pipelines were built
    /// since.
    saved: Mutex<(Option<Instant>, bool)>,
    /// The FNV-1a hash of the payload the file holds (loaded or written).
    on_disk: Mutex<Option<u64>>,
}

impl DiskCache {
    /// The cache of `info`'s adapter, loaded from disk when a sound file is
    /// there; `None` when the device or the environment rules it out.
    pub fn open(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Option<DiskCache> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        let path = dir()?.join(format!("{}.bin", wgpu::util::pipeline_cache_key(info)?));
        let data = load(&path);
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
            on_disk: Mutex::new(data.as_deref().map(fnv1a)),
        })
    }

    pub fn cache(&self) -> &wgpu::PipelineCache {
        &self.cache
    }

    /// Notes that a pipeline was built; [`DiskCache::flush`] saves it.
    pub fn built(&self) {
        self.saved.lock().unwrap().1 = true;
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

    /// Writes the cache's current data unless the file holds it already; a
    /// failure is a warning, never an error of the launch.
    fn save(&self) {
        let Some(data) = self.cache.get_data() else {
            return;
        };
        if data.len() > MAX_BYTES {
            return;
        }
        let hash = fnv1a(&data);
        let mut on_disk = self.on_disk.lock().unwrap();
        if *on_disk == Some(hash) {
            return;
        }
        *on_disk = Some(hash);
        drop(on_disk);
        if let Err(e) = write(&self.path, &data) {
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

/// The payload of a sound file at `path`; `None` when there is none, with a
/// warning when there is one but it is damaged.
fn load(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    match unwrap(&bytes) {
        Some(payload) => Some(payload.to_vec()),
        None => {
            eprintln!(
                "phobos: warning: the pipeline cache {} is damaged; it is ignored and rebuilt",
                path.display()
            );
            None
        }
    }
}

/// The payload if the header is ours and its length and hash match.
fn unwrap(bytes: &[u8]) -> Option<&[u8]> {
    let header = bytes.get(..HEADER)?;
    let payload = &bytes[HEADER..];
    let len = u64::from_le_bytes(header[8..16].try_into().ok()?);
    let hash = u64::from_le_bytes(header[16..24].try_into().ok()?);
    (&header[..8] == MAGIC && len == payload.len() as u64 && hash == fnv1a(payload))
        .then_some(payload)
}

fn write(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
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
        write(&path, b"payload bytes").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(unwrap(&bytes), Some(&b"payload bytes"[..]));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(unwrap(&flipped), None);
        assert_eq!(unwrap(&bytes[..bytes.len() - 1]), None);
        assert_eq!(unwrap(&bytes[..10]), None);
        assert_eq!(unwrap(b"not a cache file at all, of any length"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
