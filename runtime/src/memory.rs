//! How much host memory a launch may still take: the budget `phobosc run`
//! and the Python package give the binder for the tensors it makes, so
//! that a launch too large is refused by name rather than killed mid-run.

/// Bytes of memory available for new tensors: Linux's `MemAvailable`, or
/// no limit where it cannot be read.
pub fn available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(u64::MAX)
}
