//! Where a process's time goes: named phases (opening the device, uploading,
//! compiling, the kernel, reading back, ...) timed where they happen and
//! summed per name, for `phobosc run --verbose`.
//!
//! One process-wide record, because the phases happen in layers that do
//! not pass a context to each other (the GPU is opened once, inside the
//! first launch; uploads happen inside `Gpu::prepare_with`). Recording
//! costs one lock per phase, never per element. Phases may nest (the
//! kernel a launch's check runs): a phase timed inside [`scoped`] on the
//! same thread is recorded as `outer/inner`, so the top-level phases do
//! not overlap and a report can indent the nested ones under their parent.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every phase recorded so far, in the order each name was first seen,
/// with its total time and how many times it ran.
static RECORD: Mutex<Vec<(String, Duration, u32)>> = Mutex::new(Vec::new());

thread_local! {
    /// The enclosing [`scoped`] phases of this thread, as `outer/`.
    static PREFIX: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Adds `spent` to the phase `name` (within this thread's [`scoped`] phase).
pub fn add(name: &str, spent: Duration) {
    let name = PREFIX.with(|p| format!("{}{name}", p.borrow()));
    let name = name.as_str();
    let mut r = RECORD.lock().unwrap_or_else(|e| e.into_inner());
    match r.iter_mut().find(|(n, _, _)| n == name) {
        Some((_, total, count)) => {
            *total += spent;
            *count += 1;
        }
        None => r.push((name.to_string(), spent, 1)),
    }
}

/// Runs `f`, adding its wall time to the phase `name`.
pub fn time<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    add(name, started.elapsed());
    out
}

/// [`time`], with the phases `f` times on this thread recorded under
/// `name` (as `name/inner`) rather than beside it.
pub fn scoped<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let outer = PREFIX.with(|p| {
        let outer = p.borrow().clone();
        p.borrow_mut().push_str(&format!("{name}/"));
        outer
    });
    let out = f();
    PREFIX.with(|p| *p.borrow_mut() = outer);
    add(name, started.elapsed());
    out
}

/// This thread's enclosing [`scoped`] phases, for [`under`] on another
/// thread.
pub fn prefix() -> String {
    PREFIX.with(|p| p.borrow().clone())
}

/// Runs `f` with the phases it times on this thread recorded under
/// `prefix` (from [`prefix`] on the thread that started the work), without
/// timing anything itself: for a thread doing part of a phase that
/// another thread times, so that its phases nest there and are not
/// counted beside it.
pub fn under<T>(prefix: &str, f: impl FnOnce() -> T) -> T {
    let outer = PREFIX.with(|p| std::mem::replace(&mut *p.borrow_mut(), prefix.to_string()));
    let out = f();
    PREFIX.with(|p| *p.borrow_mut() = outer);
    out
}

/// The phases recorded so far: name, total time, and how many times it ran.
pub fn recorded() -> Vec<(String, Duration, u32)> {
    RECORD.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_sum_per_name_in_first_seen_order() {
        // Names of this test's own: tests share the record.
        add("sum a", Duration::from_millis(2));
        time("sum b", || std::thread::sleep(Duration::from_millis(1)));
        add("sum a", Duration::from_millis(3));
        let r: Vec<_> = recorded()
            .into_iter()
            .filter(|(n, _, _)| n == "sum a" || n == "sum b")
            .collect();
        assert_eq!(r[0].0, "sum a");
        assert_eq!((r[0].1, r[0].2), (Duration::from_millis(5), 2));
        assert_eq!(r[1].0, "sum b");
        assert!(r[1].1 >= Duration::from_millis(1));
    }

    #[test]
    fn phases_inside_a_scope_are_recorded_under_it() {
        scoped("test outer", || {
            add("test inner", Duration::from_millis(1));
        });
        add("test inner", Duration::from_millis(1));
        let names: Vec<String> = recorded()
            .into_iter()
            .map(|(n, _, _)| n)
            .filter(|n| n.contains("test inner") || n == "test outer")
            .collect();
        assert_eq!(names, ["test outer/test inner", "test outer", "test inner"]);
    }

    #[test]
    fn another_threads_phases_nest_under_the_prefix_it_is_given() {
        scoped("test parent", || {
            let prefix = prefix();
            std::thread::scope(|s| {
                s.spawn(|| under(&prefix, || add("test helper", Duration::from_millis(1))));
            });
        });
        let names: Vec<String> = recorded()
            .into_iter()
            .map(|(n, _, _)| n)
            .filter(|n| n.contains("test helper") || n == "test parent")
            .collect();
        assert_eq!(names, ["test parent/test helper", "test parent"]);
    }
}
