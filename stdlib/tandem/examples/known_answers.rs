//! Prints the known-answer vectors (the text of `kat.txt`); regenerate that
//! file with `cargo run -p phobos-tandem --example known_answers > stdlib/tandem/kat.txt`
//! only when the spec changes on purpose.

fn main() {
    print!("{}", phobos_tandem::kat::render());
}
