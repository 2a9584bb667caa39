//! The wasm exports: raw `extern "C"` functions over linear memory, which
//! `web/src/wasm.js` wraps. The page allocates a buffer with
//! [`phobos_alloc`], writes the request into it in `Response::encode`'s
//! layout (the UTF-8 JSON's length as a little-endian u32, the JSON,
//! padding to a multiple of 4 bytes, then the blob: a `figure`'s words),
//! calls [`phobos_handle`], and reads [`phobos_response_len`] bytes at the
//! returned pointer (the same layout). The response stays
//! valid until the next call. A panic (which the compiler promises never
//! to raise) traps; the panic hook first keeps its message for
//! [`phobos_panic_message`], so the page can say what went wrong.

use std::cell::RefCell;

thread_local! {
    static RESPONSE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let text = info.to_string();
            PANIC.with(|p| *p.borrow_mut() = text);
        }));
    });
}

/// A buffer of `len` bytes for the page to write a request into.
#[unsafe(no_mangle)]
pub extern "C" fn phobos_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Frees a buffer from [`phobos_alloc`] of the same `len`.
///
/// # Safety
/// `ptr` and `len` must come from one call of [`phobos_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn phobos_free(ptr: *mut u8, len: usize) {
    // SAFETY: the caller passes back what phobos_alloc gave, whose
    // capacity was len.max(1) and whose length is 0.
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) });
}

/// Answers the request of `len` bytes at `ptr` (which it frees) and
/// returns a pointer to the encoded response.
///
/// # Safety
/// `ptr` and `len` must come from one call of [`phobos_alloc`], with `len`
/// bytes written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn phobos_handle(ptr: *mut u8, len: usize) -> *const u8 {
    install_hook();
    // SAFETY: as documented, the caller wrote len bytes into a buffer of
    // capacity len.max(1) from phobos_alloc; ownership passes here.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len.max(1)) };
    let encoded = match split_request(&bytes) {
        Some((Ok(text), blob)) => crate::handle_with(text, blob).encode(),
        Some((Err(_), _)) => crate::Response::fail("the request is not UTF-8").encode(),
        None => crate::Response::fail("the request is shorter than its header says").encode(),
    };
    RESPONSE.with(|r| {
        *r.borrow_mut() = encoded;
        r.borrow().as_ptr()
    })
}

/// A request's JSON text and its blob, from `Response::encode`'s layout.
fn split_request(bytes: &[u8]) -> Option<(Result<&str, std::str::Utf8Error>, &[u8])> {
    let len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let text = bytes.get(4..4 + len)?;
    let blob = bytes.get((4 + len).next_multiple_of(4)..).unwrap_or(&[]);
    Some((std::str::from_utf8(text), blob))
}

/// The length of the last response.
#[unsafe(no_mangle)]
pub extern "C" fn phobos_response_len() -> usize {
    RESPONSE.with(|r| r.borrow().len())
}

/// The message of the last panic (empty if none), as UTF-8 at the returned
/// pointer, [`phobos_panic_len`] bytes long.
#[unsafe(no_mangle)]
pub extern "C" fn phobos_panic_message() -> *const u8 {
    PANIC.with(|p| p.borrow().as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn phobos_panic_len() -> usize {
    PANIC.with(|p| p.borrow().len())
}
