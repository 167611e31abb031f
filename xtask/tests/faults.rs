//! The checker's implementation faults (`wai_checker::mutants::FAULTS`, `cargo xtask faults`): the
//! table and the code name the same faults, and none of them counts in the mutation audit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use wai_checker::mutants::{CATALOGUE, FAULTS};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every fault named at a `fault!` site in the checker's sources (comment lines apart). Strict, as
/// the checker's own test: a site names its fault by a string literal, and no source but
/// `mutants.rs` calls `mutants::active` itself.
fn sites() -> BTreeSet<String> {
    let src = root().join("checker/src");
    let mut out = BTreeSet::new();
    for file in xtask::compare::files(&src).iter().filter(|f| f.ends_with(".rs")) {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .flat_map(|l| [l, "\n"])
            .collect();
        assert!(
            file == "mutants.rs" || !code.contains("mutants::active("),
            "{file}: a fault switched by `active` outside `fault!`"
        );
        for piece in code.split("fault!(").skip(1) {
            let name = piece.trim_start().strip_prefix('"').and_then(|n| n.split_once('"'));
            let (name, _) =
                name.unwrap_or_else(|| panic!("{file}: a `fault!` site whose first argument is not its name"));
            out.insert(name.to_string());
        }
    }
    out
}

fn fault_names() -> BTreeSet<&'static str> {
    FAULTS.iter().map(|f| f.name).collect()
}

#[test]
fn the_faults_are_the_code() {
    let faults = fault_names();
    assert_eq!(faults.len(), FAULTS.len(), "a fault is listed twice");
    let sites = sites();
    let unused: Vec<_> = faults.iter().filter(|f| !sites.contains(**f)).collect();
    assert!(unused.is_empty(), "faults with no site: {unused:?}");
    let listed = |s: &str| faults.contains(s) || CATALOGUE.iter().any(|m| m.name == s);
    let unlisted: Vec<_> = sites.iter().filter(|s| !listed(s)).collect();
    assert!(unlisted.is_empty(), "sites in neither table: {unlisted:?}");
}

#[test]
fn the_faults_do_not_count_in_the_audit() {
    let both: Vec<_> = CATALOGUE
        .iter()
        .filter(|m| fault_names().contains(m.name))
        .map(|m| m.name)
        .collect();
    assert!(both.is_empty(), "in the catalogue too: {both:?}");
    // The audit runs the catalogue alone: it refuses a fault by name, before it builds anything…
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["mutants", "--only", FAULTS[0].name])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not in the catalogue"));
    // …and its report counts the catalogue's faults and names none of these.
    let audit = std::fs::read_to_string(root().join("docs/mutation-audit.md")).unwrap();
    assert!(
        audit.contains(&format!("**{} faults: ", CATALOGUE.len())),
        "docs/mutation-audit.md"
    );
    for f in FAULTS {
        assert!(
            !audit.contains(&format!("`{}`", f.name)),
            "{} in docs/mutation-audit.md",
            f.name
        );
    }
}
