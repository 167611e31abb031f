//! `wai-checker` with its `mutants` feature, under its own name (`xtask::mutant_checker`): the same
//! program, so that the plain binary beside it in `target/` is never replaced by a mutated one.

#[path = "../main.rs"]
mod checker;

fn main() -> std::process::ExitCode {
    checker::main()
}
