//! The `pelt` binary: everything is in the library (src/lib.rs).

fn main() -> std::process::ExitCode {
    pelt::main()
}
